"""Stream pages out of a MediaWiki XML export, in constant memory.

Reads `.xml`, `.xml.bz2` (single-stream or multistream) and standard input (`-`). The
parser is expat (through `xml.etree.ElementTree.XMLPullParser`), fed in fixed-size chunks;
each `<page>` is cut loose from the tree as soon as it is complete, so memory does not grow
with the dump. Expat reads the encoding from the BOM or the XML declaration, which is how a
UTF-16 dump (bgwiki-sample) works without special cases.

Parallel reading (`DumpReader.map`) hands decompression and parsing to a process pool:
- a multistream dump (independent bz2 streams of ~100 pages, with an index file of stream
  offsets beside it) goes out in groups of whole streams;
- a seekable single-stream .bz2 in UTF-8 goes out in byte ranges, each worker decompressing
  the bz2 blocks that start in its range (`index_builder.bz2_blocks`); the parent joins the
  page that straddles each pair of neighbouring ranges;
- anything else (stdin, plain XML, gzip, UTF-16) is read here, in order.

Every way a dump can be unreadable becomes a one-line `DumpError` that says how far reading got.
"""

from __future__ import annotations

import base64
import bz2
import collections
import gzip
import io
import multiprocessing
import os
import signal
import sys
import threading
import xml.etree.ElementTree as ET
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from index_builder.bz2_blocks import blocks_in_range, decompress_blocks
from scim_edge.errors import DumpError

CHUNK = 1 << 16  # bytes fed to expat at a time
GROUP_BYTES = 1 << 19  # compressed bytes of multistream streams handed to one worker task
RANGE_BYTES = 1 << 20  # compressed bytes of a single-stream bz2 handed to one worker task
BZ2_MAGIC = b"BZh"
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(slots=True)
class Page:
    page_id: int
    ns: int
    title: str
    redirect: str | None  # target title of a redirect page, else None
    text: str  # wikitext of the latest revision


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def worker_init() -> None:
    """A worker process's signals: Ctrl-C is handled by the parent, which tears the pool
    down; workers must not print their own KeyboardInterrupt tracebacks, nor die holding
    a queue's lock, on which the parent's exit would then wait for ever. SIGTERM is how
    a pool's terminate() stops a worker, so it must keep its default action even if the
    parent installed a handler."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _parse_worker_init() -> None:
    """A parsing pool worker's signals: `worker_init`'s, and a SIGTERM that never leaves
    a lock taken or a message half sent.

    SIGTERM is what a service manager or `kill -- -PGID` sends to every process of the
    command at once. Killed by it outright, a worker could hold the task queue's read
    lock (an idle worker waits for its next task holding it), or stop halfway through
    sending its result, and the parent's `Pool.terminate()` then waited on the lock, or
    on the rest of the message, until `stop_pool` gave up (10 s). So it leaves by
    SystemExit, which unwinds the `with lock:` it is in, and not while it is sending."""
    worker_init()
    signal.signal(signal.SIGTERM, _leave)
    if hasattr(signal, "setitimer"):  # no alarm timer on Windows
        signal.signal(signal.SIGALRM, _leave)


_SENDING = frozenset({"send_bytes", "_send_bytes", "_send", "send", "put"})
LEAVE_RETRY_SECONDS = 0.02


def _leave(signum: int, frame: Any) -> None:
    """A parsing worker's SIGTERM (and its retry alarm): leave now, or as soon as a
    result being sent down the pool's pipe has gone whole."""
    f = frame if hasattr(signal, "setitimer") else None  # no alarm timer on Windows
    while f is not None:
        code = f.f_code
        if code.co_name in _SENDING and code.co_filename.endswith(
            ("multiprocessing/connection.py", "multiprocessing/queues.py")
        ):
            signal.setitimer(signal.ITIMER_REAL, LEAVE_RETRY_SECONDS)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            return
        f = f.f_back
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # terminate()'s own SIGTERM, after the group's
    raise SystemExit(128 + signal.SIGTERM)


def make_pool(workers: int) -> Any:
    """A process pool for parsing/cleaning. Fork where available: no re-import cost."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    return multiprocessing.get_context(method).Pool(workers, initializer=_parse_worker_init)


RESULT_POLL_SECONDS = 0.5


def result_of(res: Any) -> Any:
    """`res.get()` of a pool's task, waited for in short steps. A signal sent to the whole
    process is taken by whichever thread the kernel picks; when that is one of the pool's
    threads, the main thread, blocked in a lock wait with no timeout, never runs Python's
    handler, and a build whose workers that signal stopped waited for their results for
    ever. Each step's end lets the handler run."""
    while True:
        try:
            return res.get(RESULT_POLL_SECONDS)
        except multiprocessing.TimeoutError:
            continue


STOP_POOL_SECONDS = 10.0
STOP_POOL_GRACE = 2.0


def stop_pool(pool: Any, timeout: float = STOP_POOL_SECONDS) -> bool:
    """Terminate and join a pool, but never wait on it for more than `timeout` seconds;
    True when it stopped in time.

    `Pool.terminate()` can hang for ever: it kills the workers, and one killed while it
    held the result queue's write lock (it was sending a batch of parsed pages) leaves
    that lock taken, so the pool's task thread waits on it in `terminate` without end. A
    build interrupted with Ctrl+C then hung instead of keeping its checkpoint and
    exiting. The workers are dead by then; only the pool's own daemon threads are left,
    so past the timeout they are abandoned.

    A worker can also miss terminate()'s SIGTERM: one the pool forked an instant before
    (to replace a worker that a signal to the whole command stopped) drops a signal that
    arrives before Python has set itself up in the new process, and terminate() then
    waits for it to exit. After STOP_POOL_GRACE seconds, workers still alive are killed."""

    def stop() -> None:
        pool.terminate()
        pool.join()

    stopper = threading.Thread(target=stop, name="stop-pool", daemon=True)
    stopper.start()
    grace = min(STOP_POOL_GRACE, timeout)
    stopper.join(grace)
    if stopper.is_alive():
        for worker in list(getattr(pool, "_pool", ())):  # the pool's worker processes
            if worker.is_alive():
                worker.kill()
        stopper.join(timeout - grace)
    return not stopper.is_alive()


class _Counting(io.RawIOBase):
    """A read-only wrapper that counts the bytes taken from the underlying file."""

    def __init__(self, f: BinaryIO) -> None:
        self.f = f
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self.f.read(len(b))
        n = len(data)
        b[:n] = data
        self.count += n
        return n


class _PageParser:
    """Feeds bytes to expat and turns each completed `<page>` element into a `Page`."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.parser = ET.XMLPullParser(events=("start", "end"))
        self.root: ET.Element | None = None
        self.prefix = ""
        self.lang: str | None = None
        self.pages = 0
        self.fed = 0

    def feed(self, data: bytes) -> Iterator[Page]:
        self.fed += len(data)
        try:
            self.parser.feed(data)
            yield from self._drain()
        except ET.ParseError as e:
            raise self._error(e) from None
        except LookupError as e:  # an encoding Python does not know
            raise DumpError(f"unsupported XML encoding in {self.where}: {e}") from None

    def close(self) -> Iterator[Page]:
        try:
            self.parser.close()
            yield from self._drain()
        except ET.ParseError as e:
            raise self._error(e) from None
        except LookupError as e:
            raise DumpError(f"unsupported XML encoding in {self.where}: {e}") from None

    def _error(self, e: ET.ParseError) -> DumpError:
        line, col = getattr(e, "position", (0, 0))
        msg = str(e).split(":")[0]
        got = f"after {self.pages} pages ({_mb(self.fed)} of XML read)"
        if self.root is None and self.pages == 0 and self.fed < 4096:
            return DumpError(f"not an XML dump: {self.where} ({msg})")
        if msg.startswith("no element found") or msg.startswith("unclosed token"):
            return DumpError(f"XML ends early in {self.where}: broke off {got}")
        return DumpError(f"malformed XML in {self.where} at line {line}, column {col} {got}: {msg}")

    def _drain(self) -> Iterator[Page]:
        for event, el in self.parser.read_events():
            if event == "start":
                if self.root is None:
                    self.root = el
                    tag = el.tag
                    if tag.startswith("{"):
                        self.prefix = tag[: tag.index("}") + 1]
                    local = tag[len(self.prefix) :]
                    if local not in ("mediawiki", "chunk"):
                        raise DumpError(
                            f"not a MediaWiki dump: {self.where} (root element <{local}>)"
                        )
                    self.lang = el.get("{http://www.w3.org/XML/1998/namespace}lang")
                continue
            if el.tag != self.prefix + "page":
                continue
            page = self._page(el)
            self.root.clear()  # type: ignore[union-attr]  # drop finished pages: flat memory
            if page is not None:
                self.pages += 1
                yield page

    def _page(self, el: ET.Element) -> Page | None:
        p = self.prefix
        title = el.findtext(p + "title") or ""
        try:
            ns = int(el.findtext(p + "ns") or 0)
            page_id = int(el.findtext(p + "id") or 0)
        except ValueError:
            return None
        red = el.find(p + "redirect")
        redirect = red.get("title") if red is not None else None
        text = ""
        rev = el.find(p + "revision")
        if rev is not None:
            text = rev.findtext(p + "text") or ""
        return Page(page_id, ns, title, redirect, text)


def default_index_path(dump: Path) -> Path | None:
    """The multistream index beside `dump` (Wikimedia and make_big_dump naming), if present."""
    name = dump.name
    if not name.endswith(".xml.bz2"):
        return None
    base = name[: -len(".xml.bz2")]
    for cand in (base + "-index.txt.bz2", base + "-index.txt"):
        p = dump.with_name(cand)
        if p.is_file():
            return p
    return None


def read_stream_offsets(index: Path, dump_size: int) -> list[int]:
    """Sorted unique stream offsets from a multistream index (`offset:page_id:title` lines)."""
    if not index.exists():
        raise DumpError(f"multistream index not found: {index}")
    if index.is_dir():
        raise DumpError(f"multistream index is a directory: {index}")
    opener = bz2.open if index.name.endswith(".bz2") else open
    offsets: set[int] = set()
    try:
        with opener(index, "rt", encoding="utf-8") as f:  # type: ignore[operator]
            for line in f:
                head = line.split(":", 1)[0].strip()
                if head:
                    offsets.add(int(head))
    except (OSError, EOFError, ValueError, UnicodeDecodeError) as e:
        raise DumpError(f"unreadable multistream index {index}: {e}") from None
    if not offsets:
        raise DumpError(f"multistream index {index} lists no streams")
    out = sorted(offsets)
    if out[0] <= 0:
        raise DumpError(f"multistream index {index} has a stream at offset 0 (no header stream)")
    if out[-1] >= dump_size:
        raise DumpError(
            f"truncated multistream dump: its index lists a stream at byte {out[-1]} "
            f"but the file has {dump_size} bytes"
        )
    return out


def parse_stream_group(path: str, start: int, end: int) -> tuple[list[Page], int]:
    """Decompress the bz2 streams in bytes [start, end) of a multistream dump and parse their
    pages. Runs in a worker process. Returns (pages, XML bytes)."""
    with open(path, "rb") as f:
        f.seek(start)
        raw = f.read(end - start)
    parts = []
    pos = 0
    view = memoryview(raw)
    while pos < len(raw):
        d = bz2.BZ2Decompressor()
        parts.append(d.decompress(view[pos:]))
        if not d.eof:
            raise EOFError(f"bz2 stream at byte {start + pos} ends early")
        pos = len(raw) - len(d.unused_data)
    data = b"".join(parts)
    body = data.replace(b"</mediawiki>", b"")
    return parse_chunk(body, f"{path} (bytes {start}-{end})"), len(data)


def parse_chunk(body: bytes, where: str) -> list[Page]:
    """Parse a run of complete `<page>` elements cut out of a UTF-8 dump."""
    parser = _PageParser(where)
    pages = list(parser.feed(b"<chunk>"))
    pages += parser.feed(body)
    pages += parser.feed(b"</chunk>")
    pages += parser.close()
    return pages


def _split_pages(data: bytes) -> tuple[bytes, bytes, bytes | None]:
    """(head, middle, tail) of decompressed XML cut at arbitrary points: `head` ends the
    page begun in earlier data, `middle` holds only complete pages, `tail` starts a page
    that ends in later data. tail is None when no page starts here (all of it is head)."""
    first = data.find(b"<page>")
    if first < 0:
        return data, b"", None
    close = data.rfind(b"</page>")
    if close < first:
        return data[:first], b"", data[first:]
    cut = close + len(b"</page>")
    return data[:first], data[first:cut], data[cut:]


def _blocks_and_apply(
    fn: Callable[[list[Page]], Any] | None, path: str, start: int, end: int
) -> tuple[bytes, Any, bytes | None, int, int]:
    """Worker task for a single-stream bz2 dump: decompress the blocks that start in bytes
    [start, end), parse the complete pages in them and apply `fn`. The page fragments at
    either edge go back to the parent, which joins them with its neighbours'."""
    blocks = blocks_in_range(path, start, end)
    if not blocks:
        return b"", (fn([]) if fn is not None else []), None, 0, 0
    try:
        data = decompress_blocks(path, blocks)
    except (EOFError, OSError, ValueError) as e:
        if not blocks[-1].closed:
            raise EOFError("the file ends inside a bz2 block") from None
        raise OSError(f"corrupt bz2 block near byte {blocks[0].start // 8}: {e}") from None
    head, middle, tail = _split_pages(data)
    pages = parse_chunk(middle, f"{path} (bz2 blocks at bytes {start}-{end})") if middle else []
    return head, (fn(pages) if fn is not None else pages), tail, len(pages), len(data)


def _group_and_apply(
    fn: Callable[[list[Page]], Any] | None, path: str, start: int, end: int
) -> tuple[Any, int, int]:
    pages, xml_bytes = parse_stream_group(path, start, end)
    return (fn(pages) if fn is not None else pages), len(pages), xml_bytes


def readable_file(source: str, what: str) -> Path:
    """`source` as a path to a non-empty file we may read, or a one-line DumpError."""
    path = Path(source).expanduser()
    if not path.exists():
        raise DumpError(f"no such file: {path}")
    if path.is_dir():
        raise DumpError(f"{path} is a directory, not a {what} file")
    if not os.access(path, os.R_OK):
        raise DumpError(f"cannot read {path}: permission denied")
    if path.stat().st_size == 0:
        raise DumpError(f"{path} is empty")
    return path


class DumpReader:
    """One pass over a dump. Counters (`bytes_read`, `xml_bytes`, `pages_read`) advance as
    pages are produced, for progress reporting; `total_bytes` is the file size (None on stdin).
    """

    def __init__(
        self,
        source: str | os.PathLike[str],
        *,
        multistream_index: str | os.PathLike[str] | None = None,
        workers: int = 2,
    ) -> None:
        self.source = str(source)
        self.is_stdin = self.source == "-"
        self.workers = max(1, workers)
        self.bytes_read = 0
        self.xml_bytes = 0
        self.pages_read = 0
        self.lang: str | None = None
        self.total_bytes: int | None = None
        self.compression = "none"
        self.offsets: list[int] | None = None
        self.path: Path | None = None
        self.index_path: Path | None = None
        # Resume support: `position` describes the state after the last result yielded
        # (None where that is not a clean cut); `resume_from` starts a pass at one.
        self.position: dict[str, Any] | None = None
        self._resume: dict[str, Any] | None = None
        if self.is_stdin:
            if multistream_index is not None:
                raise DumpError("--multistream-index needs a dump file, not standard input")
            return
        path = self.path = readable_file(self.source, "dump")
        self.total_bytes = path.stat().st_size
        with open(path, "rb") as f:
            magic = f.read(3)
        if magic == BZ2_MAGIC:
            self.compression = "bz2"
        elif magic[:2] == GZIP_MAGIC:
            self.compression = "gzip"
        index = Path(multistream_index).expanduser() if multistream_index else None
        if index is None and self.compression == "bz2":
            index = default_index_path(path)
        if index is not None:
            if self.compression != "bz2":
                raise DumpError(f"a multistream index needs a .bz2 dump; {path} is not bz2")
            self.offsets = read_stream_offsets(index, self.total_bytes)
            self.index_path = index

    @property
    def mode(self) -> str:
        """How `map` reads this dump (part of a checkpoint's identity)."""
        if self.multistream:
            return "streams"
        return "blocks" if self._blocks_ok() else "pages"

    def resume_from(self, position: dict[str, Any] | None) -> None:
        """Start the next pass where a checkpoint's `position` says the last one stopped."""
        self._resume = position
        if position is not None:
            self.pages_read = int(position.get("pages", 0))
            self.xml_bytes = int(position.get("xml_bytes", 0))
            self.bytes_read = int(position.get("bytes_read", 0))

    def _resume_at(self, kind: str) -> dict[str, Any] | None:
        pos = self._resume
        if pos is None:
            return None
        if pos.get("kind") != kind:
            raise DumpError(f"cannot resume {self.source}: its checkpoint is not for {kind}")
        return pos

    article_kind = "a namespace-0 article with text"

    def fingerprint(self) -> dict[str, Any]:
        """What a checkpoint must match to be resumed with this dump."""
        from index_builder.checkpoint import source_fingerprint

        assert self.path is not None
        return source_fingerprint(self.path, self.index_path if self.multistream else None)

    def manifest_source(self, xml_bytes: int) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path) if self.path else "-",
            "size_bytes": self.total_bytes if self.total_bytes is not None else 0,
            "xml_bytes": xml_bytes,
            "compression": self.compression,
            "multistream": self.multistream,
        }

    @property
    def multistream(self) -> bool:
        return self.offsets is not None

    @property
    def name(self) -> str:
        return "stdin" if self.is_stdin else self.path.name  # type: ignore[union-attr]

    # ---- plain iteration ---------------------------------------------------------------

    def __iter__(self) -> Iterator[Page]:
        if self.multistream:
            pool = make_pool(self.workers)
            try:
                for pages in self.map_groups(None, pool):
                    yield from pages
            finally:
                stop_pool(pool)
        else:
            yield from self._iter_single()

    def batches(self, max_bytes: int = 1 << 20) -> Iterator[list[Page]]:
        """Pages in lists of about `max_bytes` of wikitext (single-stream reading)."""
        pos = self._resume_at("pages")
        skip = int(pos["pages"]) if pos else 0
        # Without a seekable cut, a resumed pass re-reads the pages done and drops them
        # unparsed by the cleaner: parsing is cheap next to cleaning and indexing.
        self.pages_read = self.xml_bytes = 0
        batch: list[Page] = []
        size = 0
        for page in self._iter_single():
            if skip > 0:
                skip -= 1
                continue
            batch.append(page)
            size += len(page.text) + 200
            if size >= max_bytes:
                self.position = self._pages_position(self.pages_read)
                yield batch
                batch, size = [], 0
        if batch:
            self.position = self._pages_position(self.pages_read)
            yield batch

    def _pages_position(self, pages: int) -> dict[str, Any]:
        return {"kind": "pages", "pages": pages, "bytes_read": self.bytes_read,
                "xml_bytes": self.xml_bytes}  # fmt: skip

    # ---- single stream -----------------------------------------------------------------

    def _open_raw(self) -> tuple[BinaryIO, _Counting]:
        raw: BinaryIO
        if self.is_stdin:
            raw = sys.stdin.buffer
        else:
            raw = open(self.path, "rb")  # type: ignore[arg-type]
        counting = _Counting(raw)
        buffered = io.BufferedReader(counting, CHUNK)
        magic = buffered.peek(3)[:3]
        stream: BinaryIO
        if magic == BZ2_MAGIC:
            self.compression = "bz2"
            stream = bz2.BZ2File(buffered)  # type: ignore[assignment]
        elif magic[:2] == GZIP_MAGIC:
            self.compression = "gzip"
            stream = gzip.GzipFile(fileobj=buffered)  # type: ignore[assignment]
        else:
            stream = buffered  # type: ignore[assignment]
        return stream, counting

    def _read_chunk(
        self, stream: BinaryIO, counting: _Counting, where: str, *, first: bool
    ) -> bytes:
        """The next CHUNK of XML; a decompression failure as a one-line DumpError."""
        try:
            return stream.read(CHUNK)
        except EOFError:
            raise DumpError(
                f"truncated {self.compression} file {where}: it ends early after "
                f"{self.pages_read} pages ({_mb(self.xml_bytes)} of XML, "
                f"{counting.count} of {self.total_bytes or '?'} bytes read)"
            ) from None
        except (OSError, zlib.error) as e:
            if first:
                raise DumpError(f"not a valid {self.compression} file: {where} ({e})") from None
            raise DumpError(
                f"corrupt {self.compression} data in {where} after {self.pages_read} "
                f"pages ({counting.count} bytes read): {e}"
            ) from None

    def _iter_single(self) -> Iterator[Page]:
        where = self.name if self.is_stdin else str(self.path)
        stream, counting = self._open_raw()
        parser = _PageParser(where)
        first = True
        try:
            while True:
                data = self._read_chunk(stream, counting, where, first=first)
                if first:
                    _sniff_xml(data, where)
                    first = False
                if not data:
                    break
                self.xml_bytes += len(data)
                self.bytes_read = counting.count
                for page in parser.feed(data):
                    self.pages_read += 1
                    self.lang = self.lang or parser.lang
                    yield page
            if parser.root is None:
                raise DumpError(f"not an XML dump: {where} (no root element)")
            for page in parser.close():
                self.pages_read += 1
                yield page
            self.lang = self.lang or parser.lang
            self.bytes_read = counting.count
        finally:
            if not self.is_stdin:
                stream.close()

    # ---- parallel reading ---------------------------------------------------------------

    def map(
        self, fn: Callable[[list[Page]], Any] | None, pool: Any, batch_bytes: int = 1 << 20
    ) -> Iterator[Any]:
        """`fn` applied to every page of the dump in `pool`, batch by batch, results in
        dump order. A multistream dump is read stream group by stream group and a seekable
        UTF-8 .bz2 block range by block range, decompressing and parsing in the workers;
        anything else (stdin, .xml, gzip, UTF-16) is read here and only `fn` runs there."""
        by_pages = self._resume is not None and self._resume.get("kind") == "pages"
        if self.multistream and not by_pages:
            yield from self.map_groups(fn, pool)
        elif not by_pages and self._blocks_ok():
            yield from self.map_blocks(fn, pool)
        else:
            window = 2 * self.workers + 1
            pending: collections.deque[tuple[Any, dict[str, Any] | None]] = collections.deque()
            for batch in self.batches(batch_bytes):
                if fn is None:
                    yield batch
                    continue
                pending.append((pool.apply_async(fn, (batch,)), self.position))
                if len(pending) >= window:
                    res, self.position = pending.popleft()
                    yield result_of(res)
            while pending:
                res, self.position = pending.popleft()
                yield result_of(res)

    def _blocks_ok(self) -> bool:
        """Block-parallel reading needs a seekable bz2 file whose XML is UTF-8 (byte search
        for `<page>` must be valid)."""
        if self.is_stdin or self.compression != "bz2" or self.path is None:
            return False
        try:
            with bz2.open(self.path, "rb") as f:
                head = f.read(4096)
        except (OSError, EOFError, ValueError):
            return False  # let the sequential reader report it
        if head.startswith((b"\xff\xfe", b"\xfe\xff")) or head[:2] in (b"<\x00", b"\x00<"):
            return False
        decl = head.split(b"?>", 1)[0] if head.lstrip().startswith(b"<?xml") else b""
        if b"encoding" in decl:
            enc = decl.split(b"encoding", 1)[1].split(b'"' if b'"' in decl else b"'")[1]
            if enc.strip().lower() not in (b"utf-8", b"utf8", b"us-ascii", b"ascii"):
                return False
        return True

    def map_blocks(self, fn: Callable[[list[Page]], Any] | None, pool: Any) -> Iterator[Any]:
        """Single-stream bz2, block-parallel: see `_blocks_and_apply`. The parent joins the
        fragments of pages that straddle two ranges and runs `fn` on those itself."""
        assert self.path is not None and self.total_bytes is not None
        where = str(self.path)
        pos = self._resume_at("blocks")
        carry = base64.b64decode(pos["carry"]) if pos else b""
        header_seen = pos is not None
        for head, out, tail, n_pages, end in self._block_results(fn, pool, pos):
            carry += head
            if tail is None:
                continue
            if not header_seen:
                self._check_header(carry, where)
                header_seen = True
            else:
                yield from self._run_here(fn, carry, where)
            carry = tail
            self.pages_read += n_pages
            self.position = {"kind": "blocks", "offset": end, "pages": self.pages_read,
                             "xml_bytes": self.xml_bytes, "bytes_read": end,
                             "carry": base64.b64encode(tail).decode("ascii")}  # fmt: skip
            yield out
        if header_seen:
            yield from self._blocks_tail(fn, carry, where)
        else:
            yield from self._headerless(fn, carry, where)

    def _block_results(
        self, fn: Callable[[list[Page]], Any] | None, pool: Any, pos: dict[str, Any] | None
    ) -> Iterator[tuple[bytes, Any, bytes | None, int, int]]:
        """Worker results for each byte range, in order, a bounded number in flight."""
        assert self.path is not None and self.total_bytes is not None
        path, size = str(self.path), self.total_bytes
        window = 2 * self.workers + 2
        ranges = iter(range(int(pos["offset"]) if pos else 0, size, RANGE_BYTES))
        pending: collections.deque[tuple[Any, int]] = collections.deque()
        while True:
            while len(pending) < window:
                start = next(ranges, None)
                if start is None:
                    break
                end = min(size, start + RANGE_BYTES)
                pending.append((pool.apply_async(_blocks_and_apply, (fn, path, start, end)), end))
            if not pending:
                return
            res, end = pending.popleft()
            try:
                head, out, tail, n_pages, xml_bytes = result_of(res)
            except EOFError:
                raise DumpError(
                    f"truncated bz2 file {path}: it ends early after {self.pages_read} pages "
                    f"({_mb(self.xml_bytes)} of XML, {self.bytes_read} of {size} bytes read)"
                ) from None
            except (OSError, ValueError) as e:
                raise DumpError(
                    f"corrupt bz2 data in {path} after {self.pages_read} pages "
                    f"({self.bytes_read} bytes read): {e}"
                ) from None
            except DumpError as e:
                raise DumpError(f"{e} ({self.pages_read} pages read before it)") from None
            self.xml_bytes += xml_bytes
            self.bytes_read = end
            yield head, out, tail, n_pages, end

    def _run_here(
        self, fn: Callable[[list[Page]], Any] | None, xml: bytes, where: str
    ) -> Iterator[Any]:
        """Parse (and apply `fn` to) a page joined from two ranges' fragments, here."""
        self.position = None  # mid-range: no clean cut until the range's own result
        pages = parse_chunk(xml.replace(b"</mediawiki>", b""), where)
        if pages:
            self.pages_read += len(pages)
            yield fn(pages) if fn is not None else pages

    def _blocks_tail(
        self, fn: Callable[[list[Page]], Any] | None, carry: bytes, where: str
    ) -> Iterator[Any]:
        """The page that began in the last range, after checking the dump's end tag."""
        body = carry.rstrip()
        if not body.endswith(b"</mediawiki>"):
            raise DumpError(
                f"XML ends early in {where}: broke off after {self.pages_read} pages "
                f"({_mb(self.xml_bytes)} of XML read)"
            )
        body = body[: -len(b"</mediawiki>")]
        if body.strip():
            yield from self._run_here(fn, body, where)

    def _headerless(
        self, fn: Callable[[list[Page]], Any] | None, carry: bytes, where: str
    ) -> Iterator[Any]:
        """No <page> anywhere: read it all with the full parser for the right error."""
        parser = _PageParser(where)
        _sniff_xml(carry, where)
        pages = [*parser.feed(carry), *parser.close()]
        self.lang = parser.lang
        if pages:
            self.pages_read += len(pages)
            yield fn(pages) if fn is not None else pages

    def _check_header(self, head: bytes, where: str) -> _PageParser:
        """Validate the prolog and <siteinfo> before the first page; read the language."""
        _sniff_xml(head, where)
        parser = _PageParser(where)
        list(parser.feed(head))
        if parser.root is None:
            raise DumpError(f"not an XML dump: {where} (no root element)")
        self.lang = parser.lang
        return parser

    # ---- multistream -------------------------------------------------------------------

    def _header(self) -> None:
        assert self.path is not None and self.offsets is not None
        with open(self.path, "rb") as f:
            head = f.read(self.offsets[0])
        try:
            data = bz2.decompress(head)
        except (OSError, ValueError, EOFError) as e:
            raise DumpError(f"unreadable header stream in {self.path}: {e}") from None
        _sniff_xml(data, str(self.path))
        parser = _PageParser(str(self.path))
        list(parser.feed(data))  # siteinfo only; the root stays open
        if parser.root is None:
            raise DumpError(f"not a MediaWiki dump: {self.path} (no root element in header)")
        self.lang = parser.lang
        self.xml_bytes += len(data)
        self.bytes_read = self.offsets[0]

    def groups(self) -> list[tuple[int, int]]:
        """Byte ranges of whole streams, ~GROUP_BYTES each, after the header stream."""
        assert self.offsets is not None and self.total_bytes is not None
        bounds = [*self.offsets, self.total_bytes]
        out: list[tuple[int, int]] = []
        start = bounds[0]
        for b in bounds[1:]:
            if b - start >= GROUP_BYTES:
                out.append((start, b))
                start = b
        if start < self.total_bytes:
            out.append((start, self.total_bytes))
        return out

    def map_groups(
        self, fn: Callable[[list[Page]], Any] | None, pool: Any, window: int | None = None
    ) -> Iterator[Any]:
        """Decompress, parse and apply `fn` to each group of streams in `pool`; yield the
        results in dump order. At most `window` groups are in flight (bounded memory)."""
        self._header()
        pos = self._resume_at("streams")
        if pos is not None:
            self.resume_from(pos)  # the header stream counted again: restore the counters
        first = int(pos["offset"]) if pos else 0
        window = window or 2 * self.workers + 2
        pending: collections.deque[tuple[Any, tuple[int, int]]] = collections.deque()
        groups = iter([g for g in self.groups() if g[0] >= first])
        path = str(self.path)
        while True:
            while len(pending) < window:
                g = next(groups, None)
                if g is None:
                    break
                pending.append((pool.apply_async(_group_and_apply, (fn, path, *g)), g))
            if not pending:
                break
            res, (start, end) = pending.popleft()
            try:
                out, n_pages, xml_bytes = result_of(res)
            except (EOFError, OSError, ValueError) as e:
                raise DumpError(
                    f"truncated or corrupt bz2 stream in {self.path}: {e}; {self.pages_read} "
                    f"pages ({_mb(self.xml_bytes)} of XML) were read before the group of streams "
                    f"at bytes {start}-{end}"
                ) from None
            except DumpError as e:
                raise DumpError(f"{e} ({self.pages_read} pages read before it)") from None
            self.pages_read += n_pages
            self.xml_bytes += xml_bytes
            self.bytes_read = end
            self.position = {"kind": "streams", "offset": end, "pages": self.pages_read,
                             "xml_bytes": self.xml_bytes, "bytes_read": end}  # fmt: skip
            yield out


def _sniff_xml(data: bytes, where: str) -> None:
    """Reject non-XML input early with a clear message (before expat's cryptic one)."""
    head = data[:512]
    if head.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return  # a BOM: UTF-8 or UTF-16 XML
    if head[:2] in (b"<\x00", b"\x00<"):
        return  # UTF-16 without BOM
    if not head.strip():
        raise DumpError(f"not an XML dump: {where} (no content)")
    if not head.lstrip().startswith(b"<"):
        raise DumpError(f"not an XML dump: {where} (does not start with '<')")
