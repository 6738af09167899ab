"""Fresh ids: version-4 UUIDs that stay unique whatever seeds the ``random`` module."""

from __future__ import annotations

import os
import random
import uuid

import pytest

from emulator.ids import new_id


def test_ids_are_canonical_version_4_uuids() -> None:
    for _ in range(1000):
        text = new_id()
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_ids_do_not_repeat() -> None:
    ids = {new_id() for _ in range(100_000)}
    assert len(ids) == 100_000


def test_seeding_the_random_module_does_not_repeat_ids() -> None:
    random.seed(1)
    first = new_id()
    random.seed(1)
    assert new_id() != first


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_gets_ids_of_its_own() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: its next id, then out without running pytest's teardown
        os.write(write, new_id().encode())
        os._exit(0)
    os.close(write)
    mine = new_id()
    with os.fdopen(read) as pipe:
        child = pipe.read()
    os.waitpid(pid, 0)
    assert child and child != mine
