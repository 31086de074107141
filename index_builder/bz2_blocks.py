"""Parallel decompression of an ordinary (single-stream) `.bz2` file.

bzip2 compresses in independent blocks of up to 900 kB. Each block starts with the 48-bit
magic 0x314159265359 at an arbitrary *bit* offset, followed by its 32-bit CRC; a stream ends
with the magic 0x177245385090 and the combined CRC. So a run of consecutive blocks can be cut
out of the file, shifted to a byte boundary and wrapped as a stream of its own ("BZh9" +
blocks + end marker + the CRC recombined from the block CRCs), which any process can then
decompress independently. This is what lbzip2 does; here it lets a 2-core build decompress in
the worker processes instead of serially in the parent, where bz2 was the bottleneck.

The scan for magics runs over an mmap with `find` on the byte-aligned core of each of the
8 bit-shifts of the pattern, so it costs a few milliseconds per 100 MB. A false match (odds
about 2^-48 per bit) makes that group fail its CRC; the reader then reports corrupt data.
"""

from __future__ import annotations

import bz2
import mmap
from dataclasses import dataclass

BLOCK_MAGIC = 0x314159265359
EOS_MAGIC = 0x177245385090
MAGIC_BITS = 48
WINDOW = 16 << 20  # bytes per scan_blocks step
SCAN_STEP = 1 << 18  # bytes scanned at a time past a range's end


@dataclass(frozen=True, slots=True)
class Block:
    start: int  # bit offset of the block magic
    end: int  # bit offset where the block's data ends (next magic)
    crc: int
    closed: bool = True  # False: no magic after it, the file ends inside it (truncated)


def _shifted(magic: int) -> list[tuple[int, bytes, int, int]]:
    """For each bit shift k: (k, fully determined bytes to search, their offset in the
    window, window length in bytes)."""
    out = []
    for k in range(8):
        nbytes = (k + MAGIC_BITS + 7) // 8
        window = (magic << (nbytes * 8 - k - MAGIC_BITS)).to_bytes(nbytes, "big")
        lo = 0 if k == 0 else 1
        hi = nbytes if (k + MAGIC_BITS) % 8 == 0 else nbytes - 1
        out.append((k, window[lo:hi], lo, nbytes))
    return out


_PATTERNS = [(BLOCK_MAGIC, _shifted(BLOCK_MAGIC)), (EOS_MAGIC, _shifted(EOS_MAGIC))]


def _bits_at(buf: mmap.mmap | bytes, bit: int, n: int) -> int:
    first = bit // 8
    last = (bit + n + 7) // 8
    v = int.from_bytes(buf[first:last], "big")
    return (v >> ((last - first) * 8 - (bit % 8) - n)) & ((1 << n) - 1)


def _markers(buf: mmap.mmap, start: int, end: int) -> list[tuple[int, int]]:
    """(bit offset, magic) of every block/end-of-stream magic starting in bytes [start, end)."""
    found = []
    size = len(buf)
    for magic, shifts in _PATTERNS:
        for k, needle, lo, nbytes in shifts:
            pos = buf.find(needle, max(0, start + lo - 1), min(size, end + nbytes))
            while pos != -1:
                first = pos - lo
                if start <= first < end and first + nbytes <= size:
                    bit = first * 8 + k
                    if _bits_at(buf, bit, MAGIC_BITS) == magic:
                        found.append((bit, magic))
                pos = buf.find(needle, pos + 1, min(size, end + nbytes))
    found.sort()
    return found


def blocks_in_range(path: str, start: int, end: int) -> list[Block]:
    """The blocks whose magic starts in bytes [start, end) of a bz2 file, each with its true
    end (the next magic, which may lie past `end`). Ranges that tile the file give every
    block exactly once, so workers can each take a range without a serial scan first. A
    last block with no magic after it (a truncated file) ends at the end of the file."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size == 0 or start >= size:
            return []
        buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            markers = _markers(buf, start, min(end, size))
            pos = end
            while pos < size:  # the first magic at or after `end` closes the last block
                more = _markers(buf, pos, min(size, pos + SCAN_STEP))
                if more:
                    markers.append(more[0])
                    break
                pos += SCAN_STEP
            blocks = []
            for i, (bit, magic) in enumerate(markers):
                if magic != BLOCK_MAGIC or bit >= end * 8:
                    continue
                crc = _bits_at(buf, bit + MAGIC_BITS, 32) if bit + 80 <= size * 8 else 0
                if i + 1 < len(markers):
                    blocks.append(Block(bit, markers[i + 1][0], crc))
                else:
                    blocks.append(Block(bit, size * 8, crc, closed=False))
            return blocks
        finally:
            buf.close()


def scan_blocks(path: str) -> list[Block]:
    """All blocks of a bz2 file (any number of concatenated streams), in order."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
    out: list[Block] = []
    for start in range(0, size, WINDOW):
        out += blocks_in_range(path, start, start + WINDOW)
    return out


def decompress_blocks(path: str, blocks: list[Block]) -> bytes:
    """Decompress consecutive blocks of `path` as one stream of their own."""
    acc = 0
    nbits = 0
    with open(path, "rb") as f:
        for b in blocks:
            first, last = b.start // 8, (b.end + 7) // 8
            f.seek(first)
            chunk = f.read(last - first)
            n = b.end - b.start
            if len(chunk) < last - first:
                raise EOFError("the file ends inside a bz2 block")
            v = int.from_bytes(chunk, "big") >> (len(chunk) * 8 - (b.start % 8) - n)
            acc = (acc << n) | (v & ((1 << n) - 1))
            nbits += n
    combined = 0
    for b in blocks:
        combined = (((combined << 1) | (combined >> 31)) & 0xFFFFFFFF) ^ b.crc
    acc = (acc << 80) | (EOS_MAGIC << 32) | combined
    nbits += 80
    pad = -nbits % 8
    stream = b"BZh9" + (acc << pad).to_bytes((nbits + pad) // 8, "big")
    d = bz2.BZ2Decompressor()
    data = d.decompress(stream)
    if not d.eof:
        raise EOFError("bz2 data ends early")
    return data
