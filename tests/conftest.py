"""The suite's Hypothesis profiles. By default the property tests draw the same examples on
every run (``derandomize``), so that a run's verdict depends on the code, not on luck; an
example a random run found is kept in its test with ``@example``. ``HYPOTHESIS_PROFILE=explore
pytest`` draws new examples each run, to look for more."""

from __future__ import annotations

import os
import sys

from hypothesis import settings

# Byte code is cached (``__pycache__``, git-ignored) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): the suite starts many Python processes (the CLI, bots, the SDKs'
# samples) and the xdist workers, and each would otherwise compile its modules again (importing
# botemu's explore command and service: 2.1-2.9 s with no byte code cached, 0.7-1.0 s with it).
# Loaded before the workers start, so they and every process they start inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config: object) -> int | None:
    """``-n auto``: two workers a core (at most four more than the cores). Many tests wait more
    than they compute (on a bot's process, a browser, a node sample, a timer): with one worker a
    core the cores were busy 69 % of the run. On 2 cores, in turns on one clone: 304 s with 2
    workers, 241 s with 4. ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still decides where it is set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return min(2 * (cores or 1), (cores or 1) + 4)


settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
