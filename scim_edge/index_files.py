"""The integrity of a Tantivy index's files: every file `.managed.json` lists is there,
and each segment file's CRC32 footer matches its bytes. Tantivy checks neither when it
opens an index; `doctor --hashes` and `bundle` both read them here, so that a damaged
copy is named before it answers wrongly or is shipped with fresh hashes."""

from __future__ import annotations

from pathlib import Path

from scim_edge import jsonl

TANTIVY_FOOTER_MAGIC = 1337


def index_file_problems(d: Path, *, checksums: bool) -> list[str]:
    """Problems with the files of a Tantivy index: a file that `.managed.json` lists but
    is missing, and (with `checksums`) a file whose CRC32 footer does not match its
    bytes. Tantivy checks neither when it opens an index, so a damaged copy would
    otherwise answer wrongly or fail only when a query touches the bad part."""
    problems: list[str] = []
    try:
        managed = jsonl.loads((d / ".managed.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        managed = None
    if isinstance(managed, list):
        for name in managed:
            if isinstance(name, str) and not (d / name).is_file():
                problems.append(f"{d / name} is missing")
    if not checksums:
        return problems
    from scim_edge.embeddings import MATRIX

    # Tantivy's own files carry its footer; others beside them (the passage vectors'
    # `embeddings.f16`, the manifest) do not, and are no segment to check
    tantivy_files = (
        {n for n in managed if isinstance(n, str)} if isinstance(managed, list) else None
    )
    for f in sorted(d.iterdir()):
        if not f.is_file() or f.name.endswith((".json", ".lock")) or f.name.startswith("."):
            continue
        if f.name == MATRIX or (tantivy_files is not None and f.name not in tantivy_files):
            continue
        bad = _footer_crc_problem(f)
        if bad:
            problems.append(f"{f} {bad}")
    return problems


def _footer_crc_problem(f: Path) -> str | None:
    import struct
    import zlib

    size = f.stat().st_size
    if size < 8:
        return "is truncated (no footer)"
    with open(f, "rb") as fh:
        fh.seek(size - 8)
        length, magic = struct.unpack("<II", fh.read(8))
        if magic != TANTIVY_FOOTER_MAGIC or length + 8 > size:
            return "is truncated or corrupt (footer missing)"
        fh.seek(size - 8 - length)
        try:
            want = jsonl.loads(fh.read(length))["crc"]
        except (ValueError, KeyError, TypeError):
            return "is corrupt (unreadable footer)"
        fh.seek(0)
        crc, left = 0, size - 8 - length
        while left > 0:
            chunk = fh.read(min(left, 1 << 20))
            if not chunk:
                return "is truncated"
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    if crc != want:
        return "is corrupt (checksum mismatch)"
    return None
