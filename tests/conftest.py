"""The suite's Hypothesis profiles. By default the property tests draw the same examples on
every run (``derandomize``), so that a run's verdict depends on the code, not on luck; an
example a random run found is kept in its test with ``@example``. ``HYPOTHESIS_PROFILE=explore
pytest`` draws new examples each run, to look for more."""

from __future__ import annotations

import os
import sys

from hypothesis import settings

# Byte code is cached (``__pycache__``, git-ignored) even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): the suite starts hundreds of Python processes (the CLI, bots, the
# SDKs' samples) and two xdist workers, and each would otherwise compile botemu's modules again
# (0.5 s a process). Loaded before the workers start, so they and every process they start
# inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
