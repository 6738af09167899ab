"""Memory given back to the system when a running botemu lets go of much at once (``POST
/_botemu/reset``): the cycles collected, then, on glibc, the heap's free pages returned
(``malloc_trim``). Freed blocks of hundreds of kilobytes (attachments, activities) otherwise
stay in the process, ready for reuse, and its resident size does not fall."""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable


def _trimmer() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None
    return trim


_TRIM = _trimmer()


def give_back() -> None:
    """Collect what is no longer referenced, and return the freed heap to the system."""
    gc.collect()
    if _TRIM is not None:
        _TRIM(0)
