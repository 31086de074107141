"""One Linux libc function by name, or None where there is no such function (another
platform, or an older libc): the few system calls Python does not wrap (renameat2,
madvise with MADV_PAGEOUT) are reached through here."""

from __future__ import annotations

import ctypes
import sys
from functools import cache
from typing import Any


@cache
def function(
    name: str, argtypes: tuple[Any, ...] | None = None, restype: Any = ctypes.c_int
) -> Any:
    """libc's `name`, set to record errno (and, given `argtypes`, typed), loaded once per
    signature; None off Linux or when libc lacks it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
    if argtypes is not None:
        fn.argtypes = list(argtypes)
        fn.restype = restype
    return fn
