"""The suite's Hypothesis profiles. By default the property tests draw the same examples on
every run (``derandomize``), so that a run's verdict depends on the code, not on luck; an
example a random run found is kept in its test with ``@example``. ``HYPOTHESIS_PROFILE=explore
pytest`` draws new examples each run, to look for more."""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
