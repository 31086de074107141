"""Keep a build's resident memory flat while Tantivy merges segments.

Tantivy reads segments through mmap when it merges them, and every page it touches stays
in the process's resident set until that segment is unmapped. So the peak RSS of a build
grew with the index: 333 MB at 0.5 GB of XML, 695 MB at 2 GB; at the peak of a 1 GB build,
129 MB of the main process were pages of `.store` files and 56 MB of `.idx`/`.pos` files,
against 150 MB of its own heap. Those are clean file pages the kernel may drop at any time,
but RSS (what a user watches, and what the build's limits are stated in) counts them.

While a build runs, a thread counts the process's resident file pages every `PERIOD_S`
(/proc/self/statm) and, past `FILE_BUDGET`, asks the kernel to page out the mappings of
files under the index directory (madvise `MADV_PAGEOUT`, Linux 5.4+). Counting often and
paging out only past the budget catches a big merge, which reads a hundred MB of segments
in a tenth of a second, without re-faulting pages Tantivy is still using. The advice never
changes data: a page touched again is read back from the page cache or the file. If the
range was unmapped and reused between reading `/proc/self/maps` and the call, the advice
falls on other memory, and costs at most a page fault there.

Every second the thread also gives freed heap back to the kernel (glibc's `malloc_trim`):
Tantivy's merge threads free their buffers, but glibc keeps freed memory in its arenas,
and the build's anonymous RSS crept up with each larger merge. Where the kernel or C
library lacks these calls, the trimmer does nothing.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from scim_edge import libc

MADV_PAGEOUT = 21
PERIOD_S = 0.01  # how often the resident file pages are counted (/proc/self/statm)
FILE_BUDGET = 32 << 20  # resident file pages that trigger a page-out
TRIM_EVERY = 100  # periods between returns of freed heap to the kernel (malloc_trim)
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def mapped_ranges(under: Path, maps: str = "/proc/self/maps") -> list[tuple[int, int]]:
    """(start, length) of this process's mappings of files below `under`."""
    prefix = str(under.resolve()) + os.sep
    out = []
    try:
        with open(maps, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split(maxsplit=5)
                if len(parts) < 6 or not parts[5].startswith(prefix):
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                out.append((lo, hi - lo))
    except OSError:
        return []
    return out


def page_out(under: Path) -> int:
    """Advise the kernel to page out the mappings of files below `under`; returns the bytes
    advised, or -1 when the kernel refuses the advice (too old: EINVAL)."""
    fn = libc.function("madvise", (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int))
    if fn is None:
        return -1
    total = 0
    for start, length in mapped_ranges(under):
        if fn(start, length, MADV_PAGEOUT) != 0:
            if ctypes.get_errno() == 22:  # EINVAL: no MADV_PAGEOUT in this kernel
                return -1
            continue  # ENOMEM: unmapped since the read of maps
        total += length
    return total


def resident_file_bytes(statm: str = "/proc/self/statm") -> int:
    """Bytes of this process's resident pages that are file-backed or shared (statm's third
    field); -1 where there is no statm."""
    try:
        with open(statm, encoding="ascii") as f:
            return int(f.read().split()[2]) * _PAGE
    except (OSError, IndexError, ValueError):
        return -1


def trim_heap() -> bool:
    """Give the heap's free memory back to the kernel (glibc's malloc_trim); False where
    the C library has no such call."""
    fn = libc.function("malloc_trim", (ctypes.c_size_t,))
    if fn is None:
        return False
    fn(0)
    return True


@contextlib.contextmanager
def trimming(under: Path, period: float = PERIOD_S) -> Iterator[None]:
    """While the block runs: every `period` seconds count the resident file pages and, past
    FILE_BUDGET, page out the mapped files below `under`; every TRIM_EVERY periods give
    freed heap back to the kernel."""
    stop = threading.Event()

    def loop() -> None:
        paging, n = True, 0
        while not stop.wait(period):
            n += 1
            # A merge can read a hundred MB of segment files in a tenth of a second: count
            # often, and page out only when there is much to page out, since a page that
            # is paged out and touched again costs a fault.
            if paging and resident_file_bytes() > FILE_BUDGET and page_out(under) < 0:
                paging = False
            if n % TRIM_EVERY == 0 and not trim_heap() and not paging:
                return

    thread = threading.Thread(target=loop, name="rss-trim", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
