"""Fresh ids for calls and messages, in the version-4 UUID form the platform uses.

``uuid.uuid4()`` reads the operating system's entropy with a system call for each id and builds
a ``UUID`` object; a calling session needs one per message on its hot path. These ids come from a
private generator seeded from the operating system (and reseeded in a forked child), so they are
as unique as ``uuid4``'s and never repeat when a test or a ``--seed`` seeds the ``random``
module. They are not secrets: nothing in botemu uses an id for security.
"""

from __future__ import annotations

import os
import random

_VERSION_4 = (0xFFFFFFFF_FFFF_0FFF_3FFF_FFFFFFFFFFFF, 0x00000000_0000_4000_8000_000000000000)
"""(mask, bits): version 4 in the time_hi field, the RFC 4122 variant in clock_seq."""

_generator = random.Random()


def _reseed() -> None:
    _generator.seed(os.urandom(32))


_reseed()
os.register_at_fork(after_in_child=_reseed)


def new_id() -> str:
    """A random version-4 UUID in its canonical text form (``8-4-4-4-12`` lowercase hex)."""
    mask, bits = _VERSION_4
    h = f"{(_generator.getrandbits(128) & mask) | bits:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
