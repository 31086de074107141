"""Read a Kiwix ZIM file (`wikipedia_en_all_nopic_*.zim`) as a build source, with `libzim`.

Air-gapped sites often have Wikipedia as ZIM files, not as dumps. A ZIM holds one entry per
path: HTML articles, redirects, images, stylesheets. libzim's Python API does not expose the
front-article flag, so articles are the HTML entries that are not redirects (in mwoffliner's
Wikipedia ZIMs those are the front articles); a redirect becomes an alias of the article at
the end of its chain, as a dump's `#REDIRECT` pages do; everything else is counted and skipped.

The entries go to the worker processes in ranges (`ENTRIES_PER_TASK`); each worker opens the
archive itself (libzim reads with `pread`, so processes share nothing) and returns a
`BatchResult` like the dump workers do, with entry number + 1 as the page id. A checkpoint's
position is the number of entries done.

Before libzim sees the file, the header is checked here, so the common ways a file is bad
are one line each: wrong magic number, a file shorter than its header says (a truncated
download), and, after reading, no articles. libzim is an optional extra (`scim-edge[zim]`);
without it a ZIM source is a one-line error that names the extra.
"""

from __future__ import annotations

import collections
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from index_builder.dump_reader import readable_file, result_of
from scim_edge.errors import DumpError, UserError

ZIM_MAGIC = b"ZIM\x04"  # 72173914, little-endian
HEADER = struct.Struct("<IHH16sIIQQQQIIQ")  # the 80-byte ZIM header
ENTRIES_PER_TASK = 400
METADATA_KEYS = ("Title", "Language", "Date", "Name", "Creator", "Publisher", "Description")
# ZIM Language metadata is ISO 639-3 (sometimes a comma list); the analyzer takes 639-1.
ISO639_3 = {
    "ara": "ar", "dan": "da", "nld": "nl", "eng": "en", "fin": "fi", "fra": "fr", "deu": "de",
    "ell": "el", "hun": "hu", "ita": "it", "nor": "no", "nob": "nb", "por": "pt", "ron": "ro",
    "rus": "ru", "spa": "es", "swe": "sv", "tam": "ta", "tur": "tr", "bul": "bg",
}  # fmt: skip


def looks_like_zim(source: str | os.PathLike[str]) -> bool:
    """A `.zim` name, or the ZIM magic number at the start of the file."""
    s = str(source)
    if s == "-":
        return False
    if s.lower().endswith(".zim"):
        return True
    try:
        with open(Path(s).expanduser(), "rb") as f:
            return f.read(4) == ZIM_MAGIC
    except OSError:
        return False


def _libzim_archive(path: str) -> Any:
    try:
        from libzim.reader import Archive
    except ImportError:
        raise UserError(
            "reading ZIM files needs libzim: install the extra with pip install 'scim-edge[zim]'"
        ) from None
    return Archive(path)


def check_header(path: Path) -> None:
    """One-line errors for a file that is not a ZIM or is shorter than its header says."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(HEADER.size)
    if head[:4] != ZIM_MAGIC:
        raise DumpError(f"not a ZIM file: {path} (wrong magic number {head[:4]!r})")
    if len(head) < HEADER.size:
        raise DumpError(f"truncated ZIM file: {path} ends inside its {HEADER.size}-byte header")
    fields = HEADER.unpack(head)
    checksum_pos = fields[-1]
    # url, title, cluster and mime-list pointer lists; an absent one is all ones
    ptr_positions = [p for p in fields[6:10] if p != 2**64 - 1]
    needed = max(checksum_pos + 16, *ptr_positions)
    if size < needed:
        raise DumpError(f"truncated ZIM file: {path} has {size} bytes but its header says {needed}")


class ZimReader:
    """One pass over a ZIM's entries. Counters as `DumpReader`'s: `bytes_read` is an estimate
    (entries done as a share of the file), `xml_bytes` counts the article HTML read."""

    article_kind = "an HTML article with text"
    is_stdin = False
    compression = "zim"
    multistream = False
    mode = "entries"

    def __init__(self, source: str | os.PathLike[str], *, workers: int = 2) -> None:
        self.source = str(source)
        path = self.path = readable_file(self.source, "ZIM")
        self.total_bytes: int | None = path.stat().st_size
        check_header(path)
        try:
            archive = _libzim_archive(str(path))
        except RuntimeError as e:
            raise DumpError(f"unreadable ZIM file {path}: {' '.join(str(e).split())}") from None
        self.entry_count = int(archive.entry_count)
        self.metadata = _metadata(archive)
        lang = self.metadata.get("Language", "").split(",")[0].strip().lower()
        self.lang: str | None = ISO639_3.get(lang, lang[:2] if len(lang) == 2 else None)
        self.workers = max(1, workers)
        self.bytes_read = 0
        self.xml_bytes = 0
        self.pages_read = 0
        self.position: dict[str, Any] | None = None
        self._start = 0

    @property
    def name(self) -> str:
        return self.path.name

    def fingerprint(self) -> dict[str, Any]:
        from index_builder.checkpoint import source_fingerprint

        return source_fingerprint(self.path)

    def manifest_source(self, xml_bytes: int) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "size_bytes": self.total_bytes or 0,
            "xml_bytes": xml_bytes,
            "compression": "zim",
            "multistream": False,
            "zim": self.metadata,
        }

    def resume_from(self, position: dict[str, Any] | None) -> None:
        if position is None:
            return
        if position.get("kind") not in ("entries", "end"):
            raise DumpError(f"cannot resume {self.source}: its checkpoint is not for a ZIM file")
        self._start = int(position.get("entry", self.entry_count))
        self.pages_read = int(position.get("pages", 0))
        self.xml_bytes = int(position.get("xml_bytes", 0))
        self.bytes_read = int(position.get("bytes_read", 0))

    def results(self, passage_words: int, pool: Any, batch_bytes: int = 0) -> Iterator[Any]:
        """BatchResults for every entry range, in order, at most a few ranges in flight."""
        path = str(self.path)
        ranges = iter(range(self._start, self.entry_count, ENTRIES_PER_TASK))
        pending: collections.deque[tuple[Any, int, int]] = collections.deque()
        window = 2 * self.workers + 2
        while True:
            while len(pending) < window:
                start = next(ranges, None)
                if start is None:
                    break
                end = min(self.entry_count, start + ENTRIES_PER_TASK)
                args = (path, start, end, passage_words)
                task = pool.apply_async(process_entries, args) if pool is not None else args
                pending.append((task, start, end))
            if not pending:
                return
            task, start, end = pending.popleft()
            try:
                res, html_bytes = result_of(task) if pool is not None else process_entries(*task)
            except RuntimeError as e:
                raise DumpError(
                    f"unreadable ZIM file {path}: {' '.join(str(e).split())} (entries "
                    f"{start}-{end}, {self.pages_read} read before them)"
                ) from None
            self.pages_read += end - start
            self.xml_bytes += html_bytes
            self.bytes_read = int((self.total_bytes or 0) * end / max(1, self.entry_count))
            self.position = {
                "kind": "entries",
                "entry": end,
                "pages": self.pages_read,
                "xml_bytes": self.xml_bytes,
                "bytes_read": self.bytes_read,
            }
            yield res


def _metadata(archive: Any) -> dict[str, str]:
    keys = set(archive.metadata_keys)
    out = {}
    for key in METADATA_KEYS:
        if key in keys:
            try:
                out[key] = bytes(archive.get_metadata(key)).decode("utf-8", "replace").strip()
            except (RuntimeError, KeyError):
                continue
    return out


_ARCHIVES: dict[tuple[int, str], Any] = {}


def _archive(path: str) -> Any:
    """This process's own handle on the archive (one per process, opened once)."""
    key = (os.getpid(), path)
    if key not in _ARCHIVES:
        _ARCHIVES.clear()
        _ARCHIVES[key] = _libzim_archive(path)
    return _ARCHIVES[key]


MAX_REDIRECT_HOPS = 5


def _redirect_target(entry: Any) -> str | None:
    """Title of the entry at the end of a redirect chain (None: dangling or a loop)."""
    for _ in range(MAX_REDIRECT_HOPS):
        try:
            entry = entry.get_redirect_entry()
        except (RuntimeError, KeyError):
            return None
        if not entry.is_redirect:
            return str(entry.title)
    return None


def process_entries(path: str, start: int, end: int, passage_words: int) -> tuple[Any, int]:
    """Turn entries [start, end) into a BatchResult (runs in a worker). Returns it and the
    bytes of article HTML read."""
    from index_builder.build import BatchResult, norm_title
    from index_builder.passages import split_sections
    from index_builder.zim_html import html_sections, is_disambiguation

    archive = _archive(path)
    out = BatchResult(pages=end - start)
    html_bytes = 0
    for i in range(start, end):
        entry = archive._get_entry_by_id(i)
        if entry.is_redirect:
            target = _redirect_target(entry)
            if target is None:
                out.skipped["dangling ZIM redirect"] += 1
            else:
                out.redirects.append((entry.title, norm_title(target)))
            continue
        item = entry.get_item()
        if not item.mimetype.startswith("text/html"):
            out.other_ns += 1
            continue
        raw = bytes(item.content)
        html_bytes += len(raw)
        title = entry.title
        try:
            sections = html_sections(raw.decode("utf-8", "replace"))
            chunks = split_sections(sections, passage_words)
        except Exception as e:  # noqa: BLE001  # one bad page never aborts the build
            out.skipped[f"cleaner error: {type(e).__name__}"] += 1
            continue
        if not chunks:
            out.skipped["no text after cleaning"] += 1
            continue
        out.add_article(title, i + 1, chunks, bool(is_disambiguation(title, sections)))
    return out, html_bytes
