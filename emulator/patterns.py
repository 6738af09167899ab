"""Regular expressions written by users: in scenarios, caller scripts and manifests.

Python accepts some patterns today while warning that their meaning may change (``[[a]`` is a
"possible nested set"). Such a pattern is valid, so botemu compiles it quietly: a
``FutureWarning`` printed in the middle of a report helps nobody, and where warnings are errors
(a test run) it must not turn a valid file into a crash.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager


@functools.lru_cache(maxsize=512)
def compile_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile`` without FutureWarnings; raises what ``re.compile`` raises for a bad one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern, flags)


@contextmanager
def quiet_patterns() -> Iterator[None]:
    """Validate against a user's JSON Schema (its ``pattern`` keywords) without FutureWarnings.
    Consume the validator's errors inside the block: they are produced lazily."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        yield
