"""One Linux libc function by name, or None where there is no such function (another
platform, or an older libc): the few system calls Python does not wrap (renameat2,
madvise with MADV_PAGEOUT) are reached through here."""

from __future__ import annotations

import ctypes
import sys
from functools import cache
from typing import Any


@cache
def function(name: str) -> Any:
    """libc's `name`, set to record errno, or None off Linux or when libc lacks it."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None
