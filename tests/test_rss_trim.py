"""The build's RSS trimmer: mapped index files are paged out of the resident set."""

from __future__ import annotations

import mmap
import os
import time
from pathlib import Path

import pytest

from index_builder import rss_trim

SIZE = 32 << 20


def _mapping_rss_kb(path: Path) -> int:
    """Resident kB of this process's mappings of `path` (from /proc/self/smaps)."""
    total, inside = 0, False
    with open("/proc/self/smaps", encoding="utf-8") as f:
        for line in f:
            head = line.split()
            if head and "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                inside = len(head) > 5 and head[5] == str(path)
            elif inside and head[:1] == ["Rss:"]:
                total += int(head[1])
    return total


@pytest.fixture
def mapped(tmp_path):
    """A 32 MB file under tmp_path/index, written, synced, mapped and read through."""
    index = tmp_path / "index"
    index.mkdir()
    path = index / "seg.store"
    with open(path, "wb") as f:
        f.write(os.urandom(SIZE))
        f.flush()
        os.fsync(f.fileno())
    f = open(path, "rb")  # kept open for the mapping's lifetime
    buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    sum(buf[i] for i in range(0, SIZE, mmap.PAGESIZE))  # touch every page
    yield index, path.resolve()
    buf.close()
    f.close()


def test_mapped_files_under_the_index_are_found(mapped):
    index, _ = mapped
    assert sum(length for _, length in rss_trim.mapped_ranges(index)) == SIZE


def test_files_elsewhere_are_left_alone(mapped, tmp_path):
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert rss_trim.mapped_ranges(other) == []


def test_page_out_drops_the_mapped_pages_from_rss(mapped):
    index, path = mapped
    before = _mapping_rss_kb(path)
    assert before > SIZE // 1024 // 2  # the fixture's read made the pages resident
    advised = rss_trim.page_out(index)
    if advised < 0:
        pytest.skip("this kernel has no MADV_PAGEOUT")
    after = _mapping_rss_kb(path)
    assert after < before // 4


def test_resident_file_bytes_counts_a_mapped_file(mapped):
    assert rss_trim.resident_file_bytes() >= SIZE


def test_the_trimming_thread_pages_out_when_the_budget_is_passed(mapped):
    index, path = mapped
    if rss_trim.page_out(index) < 0:
        pytest.skip("this kernel has no MADV_PAGEOUT")
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        with rss_trim.trimming(index):
            sum(buf[i] for i in range(0, SIZE, mmap.PAGESIZE))  # 32 MB resident again
            time.sleep(0.3)
            after = _mapping_rss_kb(path)
    assert after < SIZE // 1024 // 4


def _rss_anon_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("RssAnon:"))


def test_trim_heap_returns_freed_heap_to_the_kernel():
    # 2 kB blocks come from malloc's heap; the last one kept pins the heap's top, so the
    # freed 120 MB below it stays resident until malloc_trim gives it back
    blocks = [bytearray(2048) for _ in range(60_000)]
    blocks = blocks[-1:]
    before = _rss_anon_kb()
    if not rss_trim.trim_heap():
        pytest.skip("this C library has no malloc_trim")
    assert _rss_anon_kb() < before - 60_000
