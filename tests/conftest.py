"""The suite's Hypothesis profiles. By default the property tests draw the same examples on
every run (``derandomize``), so that a run's verdict depends on the code, not on luck; an
example a random run found is kept in its test with ``@example``. ``HYPOTHESIS_PROFILE=explore
pytest`` draws new examples each run, to look for more."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from hypothesis import settings

from emulator.identity import keys

# Byte code is cached (``__pycache__``, git-ignored) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): the suite starts many Python processes (the CLI, bots, the SDKs'
# samples) and the xdist workers, and each would otherwise compile its modules again (importing
# botemu's explore command and service: 2.1-2.9 s with no byte code cached, 0.7-1.0 s with it).
# Loaded before the workers start, so they and every process they start inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before the xdist workers start (in the process that starts them): the byte code of
    botemu, the examples and the tests to run is compiled once, on every core, rather than by
    every worker at once (``tests/bytecode.py``: 26 s of wall time on a fresh clone; on a tree
    compiled already, only the files' headers are read)."""
    workers = getattr(config.option, "numprocesses", None)
    if hasattr(config, "workerinput") or not isinstance(workers, int) or workers < 2:
        return
    if config.getoption("assertmode") != "rewrite" or config.getini("enable_assertion_pass_hook"):
        return  # the rewrite cached would not be the one the workers make
    from tests import bytecode

    root, here = config.rootpath, config.invocation_params.dir
    tests = [here / arg.split("::")[0] for arg in config.args]  # testpaths when none are given
    bytecode.warm([root / "emulator", root / "examples", *tests], bytecode.cores())


def pytest_xdist_auto_num_workers(config: object) -> int | None:
    """``-n auto``: two workers a core (at most four more than the cores). Many tests wait more
    than they compute (on a bot's process, a browser, a node sample, a timer): with one worker a
    core the cores were busy 69 % of the run. On 2 cores, in turns on one clone: 304 s with 2
    workers, 241 s with 4. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides where it is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(2 * (cores or 1), (cores or 1) + 4)


@pytest.fixture(autouse=True, scope="session")
def temporary_files_under_basetemp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Temporary files go under the run's base temp dir (``$TMPDIR``, which every process a test
    starts inherits), which pytest keeps for the last three runs only: a bot that makes a folder
    of its own and never removes it (the reference IVR bot's voicemails without
    ``--voicemail-dir``) leaves nothing in /tmp for good."""
    folder = tmp_path_factory.getbasetemp() / "tmp"
    folder.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TMPDIR", str(folder))
        patch.setattr(tempfile, "tempdir", None)  # read $TMPDIR again
        yield


settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


class KeyPool:
    """botemu's signing keys for the tests of one process: real keys (RSA, 2048 bits), each
    made once and given again in the next test file. A key takes 30 to 300 ms of CPU to make,
    and the suite's workers made about 490 (85 s of CPU, a sixth of the suite's); now 127 in
    all (a file needs as many as it makes). A test file is given the pool's keys from its first, in order: every key made in
    one file (its tests and its fixtures, whatever their scope) is a different key, as made
    keys are. No key store a file makes outlives the file, but the session's botemu of the
    pytest plugin (``emulator.pytest_plugin``), which only ``tests/test_pytest_plugin.py`` uses.
    Keys that are not botemu's (the conformance probe's foreign key, a test's own) are
    made as before, never one of these."""

    def __init__(self) -> None:
        self.made: list[rsa.RSAPrivateKey] = []
        self.given = 0
        self.lock = threading.Lock()

    def next(self) -> rsa.RSAPrivateKey:
        with self.lock:
            if self.given == len(self.made):
                self.made.append(_NEW_PRIVATE_KEY())
            self.given += 1
            return self.made[self.given - 1]


_NEW_PRIVATE_KEY = keys.new_private_key
_POOL = KeyPool()


@pytest.fixture(autouse=True, scope="module")
def pooled_signing_keys() -> Iterator[None]:
    """botemu's signing keys come from ``KeyPool`` in the tests' own process, from its first
    key again in each test file (a botemu started as a process of its own makes its keys as it
    always does)."""
    with _POOL.lock:
        _POOL.given = 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keys, "new_private_key", _POOL.next)
        yield
