"""Build a Tantivy passage index from a Wikipedia dump or a Kiwix ZIM, in one streaming pass.

Pipeline (2 CPU cores are the design point): worker processes decompress, parse, clean and
split the dump, and the main process only adds their passages to a multi-threaded Tantivy
writer (its threads run in Rust, outside the GIL).
- multistream dump: each worker takes a group of whole bz2 streams (from the index file);
- single-stream .bz2: each worker takes a byte range, finds the bz2 blocks that start in it
  and decompresses them on their own (`index_builder.bz2_blocks`); the parent joins the one
  page per range that straddles two ranges;
- stdin, plain .xml, gzip or UTF-16 XML: the parent reads and parses, the workers clean.
At most a few batches are in flight, so memory stays flat whatever the dump size.

Redirects are not documents. Their titles are collected (in an on-disk SQLite table, so
memory stays bounded on a full dump) and, after the pass, attached as `aliases` to the lead
passage of their target article, which is deleted and re-added with them before the one
commit. A page the cleaner raises on is skipped and counted by reason; the build never
aborts on one page.

A ZIM file (`index_builder.zim_reader`) goes out to the workers in ranges of entries; each
worker opens the archive itself and turns the HTML into sections (`index_builder.zim_html`).

The whole build happens in a hidden sibling directory, `.partial-NAME`, and is renamed into
place only when it is complete: an interrupted or failed build leaves any existing index
untouched and nothing half-built visible under the target name. The build commits and
checkpoints as it goes (`index_builder.checkpoint`), so after a kill or Ctrl+C `resume=True`
continues from the last checkpoint instead of from the start.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tantivy

from index_builder import checkpoint as CK
from index_builder import rss_trim
from index_builder import schema as S
from index_builder.dump_reader import DumpReader, Page, make_pool, stop_pool
from index_builder.passages import split_sections
from scim_edge import __version__, jsonl
from scim_edge.atomic import (
    atomic_dir,
    clear_stale,
    ensure_writable_dir,
    swap_into_place,
    write_text,
)
from scim_edge.errors import DumpError, UserError

MANIFEST = "manifest.json"
BATCH_BYTES = 1 << 20  # wikitext per worker task
# Tantivy's writer heap, split over its threads (Tantivy's least is 15 MB a thread): a
# thread writes a segment when its share fills. With 256 MB the share filled more between
# the checkpoint commits of a larger dump, so peak memory grew with the dump (1.31x from 0.5
# to 2 GB of XML, 227-304 MB); with 32 MB it is flat (237-254 MB, 1.02-1.04x), at the
# same build speed within noise, for more, smaller segments to merge
# (`benchmarks/bench_scale.py`, two rounds of each on 2 cores).
HEAP_BYTES = 32 << 20
WRITER_THREADS = 2
IN_PROCESS_BELOW = 1 << 20  # dumps smaller than this are built without a worker pool
STORE = ".build.sqlite"  # side tables of a build (articles, redirects), removed at the end
CHECKPOINT_SECONDS = 30.0  # commit and checkpoint a resumable build this often
CHECKPOINT_SHARE = 0.1  # ... and after each tenth of the input,
MIN_CHECKPOINT_GAP_S = 2.0  # ... but never more often than this

# (doc_id, page_id, n, title, section, text, disambiguation)
PassageRow = tuple[str, int, int, str, str, str, int]


@dataclass
class BatchResult:
    """What a worker returns for one batch of pages."""

    passages: list[PassageRow] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (alias, target title)
    articles: list[tuple[str, int]] = field(default_factory=list)  # (normalised title, id)
    pages: int = 0
    other_ns: int = 0
    disambiguation: int = 0
    skipped: collections.Counter[str] = field(default_factory=collections.Counter)

    def add_article(
        self, title: str, pid: int, chunks: list[tuple[str, str]], disambiguation: bool
    ) -> None:
        """One cleaned article's passages (section, text), whichever source it came from."""
        flag = int(disambiguation)
        self.disambiguation += flag
        self.articles.append((norm_title(title), pid))
        self.passages.extend(
            (f"{pid}-{n}", pid, n, title, section, text, flag)
            for n, (section, text) in enumerate(chunks)
        )


@dataclass
class ProgressInfo:
    """A snapshot of the build, handed to the progress callback after every batch."""

    phase: str  # reading | aliases | committing | done
    bytes_read: int
    total_bytes: int | None
    xml_bytes: int
    pages: int
    articles: int
    passages: int
    elapsed: float


def norm_title(title: str) -> str:
    """MediaWiki title identity: no fragment, underscores are spaces, first letter upper."""
    t = " ".join(title.split("#", 1)[0].replace("_", " ").split())
    return t[:1].upper() + t[1:]


def _cleaner() -> tuple[
    Callable[[str], list[tuple[str, str]]],
    Callable[[str, str], bool],
    Callable[[str], str | None],
]:
    from index_builder import wikitext

    # Old dumps mark redirects only in the text (#REDIRECT [[Target]]), not with a tag.
    redirect_target = getattr(wikitext, "redirect_target", lambda text: None)
    return wikitext.clean_article, wikitext.is_disambiguation, redirect_target


def process_pages(pages: list[Page], passage_words: int) -> BatchResult:
    """Clean and split one batch of pages (runs in a worker process)."""
    clean_article, is_disambiguation, redirect_target = _cleaner()
    out = BatchResult(pages=len(pages))
    for page in pages:
        if page.ns != 0:
            out.other_ns += 1
            continue
        if page.redirect is None and page.text[:1] == "#":
            page.redirect = redirect_target(page.text)
        if page.redirect is not None:
            if page.redirect.strip():
                out.redirects.append((page.title, norm_title(page.redirect)))
            continue
        try:
            disamb = bool(is_disambiguation(page.text, page.title))
            sections = clean_article(page.text)
            chunks = split_sections(sections, passage_words)
        except Exception as e:  # noqa: BLE001  # one bad page never aborts the build
            out.skipped[f"cleaner error: {type(e).__name__}"] += 1
            continue
        if not chunks:
            out.skipped["no text after cleaning"] += 1
            continue
        out.add_article(page.title, page.page_id, chunks, disamb)
    return out


def _doc(row: PassageRow, aliases: Iterable[str] = ()) -> tantivy.Document:
    doc_id, pid, n, title, section, text, flag = row
    return tantivy.Document(
        doc_id=doc_id,
        page_id=pid,
        n=n,
        title=title,
        aliases=list(aliases),
        section=section,
        text=text,
        disambiguation=flag,
    )


class _Store:
    """On-disk side tables of one build: articles, their lead passages, and redirects.

    Every row carries the number of the batch that wrote it, and the tables are committed
    (WAL, synchronous=FULL: a commit survives a power cut) at each checkpoint, so a resumed
    build can drop what came after its checkpoint (`truncate`) and add those batches again
    without counting anything twice."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.executescript(
            """
            PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;
            CREATE TABLE IF NOT EXISTS articles(key TEXT PRIMARY KEY, page_id INTEGER,
                doc_id TEXT, title TEXT, section TEXT, text TEXT, dis INTEGER, batch INTEGER);
            CREATE TABLE IF NOT EXISTS redirects(alias TEXT, target TEXT, batch INTEGER);
            """
        )

    def add(self, res: BatchResult, batch: int) -> None:
        leads = {row[1]: row for row in res.passages if row[2] == 0}
        self.db.executemany(
            "INSERT OR REPLACE INTO articles VALUES (?,?,?,?,?,?,?,?)",
            [
                (key, pid, lead[0], lead[3], lead[4], lead[5], lead[6], batch)
                for key, pid in res.articles
                if (lead := leads.get(pid)) is not None
            ],
        )
        self.db.executemany(
            "INSERT INTO redirects VALUES (?,?,?)", [(a, t, batch) for a, t in res.redirects]
        )

    def truncate(self, batch: int) -> None:
        """Forget the rows of batches numbered `batch` and later (past the checkpoint)."""
        self.db.execute("DELETE FROM articles WHERE batch >= ?", (batch,))
        self.db.execute("DELETE FROM redirects WHERE batch >= ?", (batch,))
        self.db.commit()

    def commit(self) -> None:
        self.db.commit()

    def aliased(self) -> Iterable[tuple[int, str, str, str, str, int, str]]:
        """(page_id, doc_id, title, section, text, dis, aliases joined by \\n) per target."""
        return self.db.execute(
            """
            SELECT a.page_id, a.doc_id, a.title, a.section, a.text, a.dis,
                   group_concat(r.alias, char(10))
            FROM redirects r JOIN articles a ON a.key = r.target
            GROUP BY a.key ORDER BY a.page_id
            """
        )

    def close(self) -> None:
        self.db.close()

    @staticmethod
    def remove(path: Path) -> None:
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f"{path}{suffix}")


@dataclass
class Tally:
    """The counts of a build, carried across a resume in its checkpoint."""

    articles: int = 0
    passages: int = 0
    redirects: int = 0
    other_ns: int = 0
    disambiguation: int = 0
    skipped: collections.Counter[str] = field(default_factory=collections.Counter)
    pages_seen: int = 0
    xml_bytes: int = 0

    def add(self, res: BatchResult) -> None:
        self.articles += len(res.articles)
        self.passages += len(res.passages)
        self.redirects += len(res.redirects)
        self.other_ns += res.other_ns
        self.disambiguation += res.disambiguation
        self.skipped.update(res.skipped)

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["skipped"] = dict(self.skipped)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Tally:
        t = cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__})
        t.skipped = collections.Counter(d.get("skipped", {}))
        return t


def open_source(
    source: str | os.PathLike[str],
    *,
    multistream_index: str | os.PathLike[str] | None = None,
    workers: int = 2,
) -> Any:
    """A `DumpReader` for a MediaWiki XML dump, or a `ZimReader` for a Kiwix ZIM file."""
    from index_builder import zim_reader

    if zim_reader.looks_like_zim(source):
        if multistream_index is not None:
            raise DumpError("--multistream-index is for multistream XML dumps, not ZIM files")
        return zim_reader.ZimReader(source, workers=workers)
    return DumpReader(source, multistream_index=multistream_index, workers=workers)


def default_workers() -> int:
    """Every core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def build_index(
    source: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    *,
    force: bool = False,
    passage_words: int = 100,
    multistream_index: str | os.PathLike[str] | None = None,
    progress: Callable[[ProgressInfo], None] | None = None,
    workers: int | None = None,
    embeddings_model: str | os.PathLike[str] | None = None,
    embeddings_progress: Callable[[int, int], None] | None = None,
    embeddings_variant: str | None = None,
    resume: bool = False,
    restart: bool = False,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
) -> dict[str, Any]:
    """Build the index of `source` (an XML dump or a ZIM file) into `out_dir` atomically;
    return its manifest.

    A build from a file is resumable (see `index_builder.checkpoint`): it runs in the hidden
    `.partial-NAME` beside `out_dir`, checkpointing every `checkpoint_seconds`. After a kill,
    `resume=True` continues from the last checkpoint; `restart=True` discards it; with
    neither, an existing checkpoint is a one-line error that says so. A build from standard
    input cannot be resumed and runs in a throwaway temporary directory.

    `embeddings_model`: also embed every passage with this embedding model (a name or a
    directory) and store the matrix inside the index before it is renamed into place, so
    an interrupted embedding pass never leaves an index without its vectors.
    `embeddings_variant`: the model's variant that writes them (`static`, `int8`, `fp32`;
    None: the runtime's choice, int8 on the CPU).

    `workers`: processes that read and clean pages (None: every core, or none for a dump
    under 1 MB, which is faster in-process than with a pool). The index does not depend on
    it, so a build may be resumed with another number."""
    if passage_words <= 0:
        raise DumpError(f"--passage-words must be a positive number (got {passage_words})")
    if workers is not None and workers < 0:
        raise UserError(f"--workers must be 0 or more (got {workers})")
    nworkers = default_workers() if workers is None else workers
    reader = open_source(source, multistream_index=multistream_index, workers=max(1, nworkers))
    if (
        workers is None
        and reader.mode == "pages"
        and (reader.total_bytes or 1 << 30) < (IN_PROCESS_BELOW)
    ):
        nworkers = 0
    out = Path(out_dir).expanduser()
    options: dict[str, Any] = {
        "passage_words": passage_words,
        "embeddings": str(embeddings_model) if embeddings_model is not None else None,
    }
    if embeddings_variant is not None:  # absent otherwise: older checkpoints still resume
        options["embedding_variant"] = embeddings_variant
    job = _Build(reader, passage_words, nworkers, progress, checkpoint_seconds)

    def finish(work: Path) -> dict[str, Any]:
        manifest = job.run(work)
        if embeddings_model is not None:
            from scim_edge.vector_index import embeddings_summary, write_embeddings

            meta = write_embeddings(
                work, embeddings_model, progress=embeddings_progress, variant=embeddings_variant
            )
            manifest["embeddings"] = embeddings_summary(meta)
        write_text(work / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
        return manifest

    if reader.is_stdin:
        if resume:
            raise UserError("a build from standard input cannot be resumed")
        job.checkpoint_seconds = float("inf")
        with atomic_dir(out, force=force, what="index") as tmp:
            manifest = finish(tmp)
            _drop_checkpoint(tmp)
            return manifest
    if out.exists() and not force:
        raise UserError(f"index already exists: {out}", hint="use --force to replace it")
    ensure_writable_dir(out.parent)
    clear_stale(out.parent, out.name)  # temp dirs of killed non-resumable writers
    fingerprint = {**reader.fingerprint(), "mode": reader.mode}
    work = CK.partial_dir(out)
    with _resumable(work, fingerprint, options, resume=resume, restart=restart) as ckpt:
        job.checkpoint = ckpt
        manifest = finish(work)
        _drop_checkpoint(work)
        swap_into_place(work, out)
    return manifest


def _drop_checkpoint(work: Path) -> None:
    """A finished index holds no checkpoint: it is not a build to resume."""
    _Store.remove(work / STORE)
    for name in (CK.CHECKPOINT, CK.COMMITTING, CK.LOCK):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(work / name)


@contextlib.contextmanager
def _resumable(
    work: Path,
    source: dict[str, Any],
    options: dict[str, Any],
    *,
    resume: bool,
    restart: bool,
) -> Iterator[CK.Checkpoint]:
    """The checkpoint to build from (an old one when resuming, else a fresh one), with the
    partial build directory locked. Ctrl+C (or SIGTERM) keeps the partial build for
    `--resume`; any other failure removes it, as the old temporary directory was."""
    old: CK.Checkpoint | None = None
    if work.is_dir():
        with CK.locked(work):
            old = CK.Checkpoint.load(work)
        if old is not None and not (resume or restart):
            raise UserError(
                f"a resumable build of {work.parent / work.name[len(CK.PARTIAL_PREFIX) :]} "
                f"exists ({CK.describe(work, old)}): add --resume to continue it, or "
                "--restart to discard it and start over"
            )
        if old is not None and resume and (why := CK.mismatch(old, source, options)):
            raise UserError(f"cannot resume: {why} (--restart discards that build)")
        if old is None or restart:
            CK.discard(work)
            old = None
    work.mkdir(exist_ok=True)
    with CK.locked(work):
        if old is None:
            for child in work.iterdir():  # leftovers of a build killed before its checkpoint
                if child.name != CK.LOCK:
                    shutil.rmtree(child) if child.is_dir() else child.unlink()
        else:
            old.runs += 1
        try:
            yield old or CK.Checkpoint(source=source, options=options)
        except KeyboardInterrupt:
            raise  # the last checkpoint stays, for --resume
        except BaseException:
            CK.discard(work)
            raise


class _Build:
    """One pass (or the rest of one, after a resume) of a resumable build into `work`."""

    def __init__(
        self,
        reader: Any,
        passage_words: int,
        nworkers: int,
        progress: Callable[[ProgressInfo], None] | None,
        checkpoint_seconds: float,
    ) -> None:
        self.reader = reader
        self.passage_words = passage_words
        self.nworkers = nworkers
        self.progress = progress
        self.checkpoint_seconds = checkpoint_seconds
        self.checkpoint = CK.Checkpoint(source={}, options={})
        self.tally = Tally()
        self.t0 = time.perf_counter()
        self.writer: Any = None
        self.store: _Store | None = None
        self.work = Path()
        self.before = 0.0  # build seconds of earlier runs

    # ---- the parts of a build -----------------------------------------------------------

    def run(self, work: Path) -> dict[str, Any]:
        """Read (the rest of) the source, attach aliases, commit; return the manifest."""
        self.work = work
        self.t0 = time.perf_counter()
        ck = self.checkpoint
        self.before = ck.elapsed
        self.tally = Tally.from_dict(ck.counters)
        if ck.position is not None:
            self.reader.lang = ck.lang
            self.reader.resume_from(ck.position)
            if ck.position.get("kind") != "pages":
                self.nworkers = max(1, self.nworkers)  # a seekable cut is read by a pool
        # The pool is forked before the Tantivy writer starts its threads.
        pool = make_pool(self.nworkers) if self.nworkers > 0 and ck.phase == "reading" else None
        self.store = _Store(work / STORE)
        try:
            # Started after the pool's fork; keeps merges' mapped segment pages out of RSS.
            with rss_trim.trimming(work):
                if ck.position is not None:
                    self._open_writer(ck.analyzer)
                    self.store.truncate(ck.batches)
                if ck.phase == "reading":
                    self._read_all(pool)
                aliases = self._attach_aliases()
                self._report("committing")
                self.writer.commit()
                self.writer.wait_merging_threads()
                self.writer = None
        except BaseException as e:
            self._abandon_writer()
            if isinstance(e, ValueError | RuntimeError | sqlite3.Error) or (
                type(e).__name__ == "PanicException"
            ):
                # Tantivy reports a failed write (a full disk in a writer thread, say) as
                # ValueError or a Rust panic; SQLite as its own error: one line, and where.
                raise _write_failure(e, work) from None
            raise
        finally:
            if pool is not None:
                stop_pool(pool)
            self.store.close()  # kept until the swap: a resume may redo the alias pass
        self._report("done")
        return self._manifest(aliases)

    def _open_writer(self, analyzer: str) -> None:
        index = tantivy.Index(S.build_schema(analyzer), path=str(self.work), reuse=True)
        S.register_analyzer(index, analyzer)
        self.writer = index.writer(heap_size=HEAP_BYTES, num_threads=WRITER_THREADS)
        self.checkpoint.analyzer = analyzer

    def _abandon_writer(self) -> None:
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.rollback()
            self.writer = None

    def _read_all(self, pool: Any) -> None:
        """Add every batch of the source, checkpointing every `checkpoint_seconds`."""
        ck = self.checkpoint
        replay = CK.committing(self.work) if ck.position is not None else 0
        batch = start = ck.batches
        last_ckpt = time.perf_counter()
        last_bytes = self.reader.bytes_read
        self._report("reading")
        for res in self._results(pool):
            if self.writer is None:
                # The analyzer depends on the source's language, known once reading began.
                self._open_writer(S.analyzer_name(self.reader.lang))
            self._add(res, batch, forget_first=batch - start < replay)
            batch += 1
            self._report("reading")
            if self.reader.position is not None and self._checkpoint_due(last_ckpt, last_bytes):
                self._save(batch, self.reader.position, "reading")
                last_ckpt = time.perf_counter()
                last_bytes = self.reader.bytes_read
        if pool is not None:
            pool.close()
        if self.tally.articles == 0:
            raise DumpError(
                f"no articles in {self.reader.source}: {self.reader.pages_read} pages read, "
                f"none {self.reader.article_kind}"
            )
        self.tally.pages_seen = self.reader.pages_read
        self.tally.xml_bytes = self.reader.xml_bytes
        self._save(batch, {"kind": "end", "bytes_read": self.reader.total_bytes or 0}, "aliases")

    def _checkpoint_due(self, last_ckpt: float, last_bytes: int) -> bool:
        """Every `checkpoint_seconds`, and also after each CHECKPOINT_SHARE of the input
        (at most every MIN_CHECKPOINT_GAP_S): a build shorter than the interval still has
        checkpoints to resume from, and a long one loses at most the interval."""
        elapsed = time.perf_counter() - last_ckpt
        if elapsed >= self.checkpoint_seconds:
            return True
        total = self.reader.total_bytes or 0
        done = (self.reader.bytes_read - last_bytes) / total if total else 0.0
        return elapsed >= MIN_CHECKPOINT_GAP_S and done >= CHECKPOINT_SHARE

    def _results(self, pool: Any) -> Iterable[BatchResult]:
        if hasattr(self.reader, "results"):
            return self.reader.results(self.passage_words, pool, BATCH_BYTES)
        fn = functools.partial(process_pages, passage_words=self.passage_words)
        return _results(self.reader, fn, pool)

    def _add(self, res: BatchResult, batch: int, *, forget_first: bool) -> None:
        """Add one batch to the index and side tables. `forget_first`: this batch may have
        been committed just before a kill (after its checkpoint): delete its passages first."""
        writer = self.writer
        assert writer is not None and self.store is not None
        if forget_first:
            for row in res.passages:
                writer.delete_documents_by_term(S.DOC_ID, row[0])
        add = writer.add_document
        for row in res.passages:
            add(_doc(row))
        self.store.add(res, batch)
        self.tally.add(res)

    def _save(self, batch: int, position: dict[str, Any], phase: str) -> None:
        """Commit the index and side tables, then record the checkpoint (module doc of
        `index_builder.checkpoint` for the order and why)."""
        ck = self.checkpoint
        assert self.writer is not None and self.store is not None
        CK.mark_committing(self.work, batch - ck.batches)
        self.writer.commit()
        self.store.commit()
        ck.position = dict(position)
        ck.batches = batch
        ck.phase = phase
        ck.lang = self.reader.lang
        self.tally.pages_seen = self.reader.pages_read
        self.tally.xml_bytes = self.reader.xml_bytes
        ck.counters = self.tally.to_dict()
        ck.elapsed = self._elapsed()
        ck.save(self.work)
        CK.clear_committing(self.work)

    def _attach_aliases(self) -> tuple[int, int]:
        """Re-add each redirect target's lead passage with its redirect titles as aliases.
        Deleting and re-adding by doc_id makes this safe to repeat after a resume."""
        assert self.writer is not None and self.store is not None
        self._report("aliases")
        aliased = aliases = 0
        for pid, doc_id, title, section, text, dis, joined in self.store.aliased():
            names = joined.split("\n")
            self.writer.delete_documents_by_term(S.DOC_ID, doc_id)
            self.writer.add_document(_doc((doc_id, pid, 0, title, section, text, dis), names))
            aliased += 1
            aliases += len(names)
        return aliased, aliases

    # ---- reporting ----------------------------------------------------------------------

    def _elapsed(self) -> float:
        return self.before + time.perf_counter() - self.t0

    def _report(self, phase: str) -> None:
        if self.progress is None:
            return
        r = self.reader
        reading = phase == "reading"
        self.progress(
            ProgressInfo(
                phase,
                r.bytes_read if reading else (r.total_bytes or r.bytes_read),
                r.total_bytes,
                r.xml_bytes if reading else self.tally.xml_bytes,
                r.pages_read if reading else self.tally.pages_seen,
                self.tally.articles,
                self.tally.passages,
                self._elapsed(),
            )
        )

    def _manifest(self, aliases: tuple[int, int]) -> dict[str, Any]:
        t, r = self.tally, self.reader
        aliased, n_aliases = aliases
        elapsed = self._elapsed()
        index_bytes = sum(
            f.stat().st_size
            for f in self.work.rglob("*")
            if f.is_file()
            and f.name not in (CK.CHECKPOINT, CK.COMMITTING, CK.LOCK)
            and not f.name.startswith(STORE)
        )
        return {
            "format": "scim-edge-passage-index",
            "schema_version": S.SCHEMA_VERSION,
            "project_version": __version__,
            "source": {**r.manifest_source(t.xml_bytes), "lang": r.lang or ""},
            "analyzer": self.checkpoint.analyzer,
            "passage_words": self.passage_words,
            "counts": {
                "pages_seen": t.pages_seen,
                "articles": t.articles,
                "passages": t.passages,
                "redirects": t.redirects,
                "aliases": n_aliases,
                "aliased_articles": aliased,
                "dangling_redirects": t.redirects - n_aliases,
                "disambiguation": t.disambiguation,
                "other_namespaces": t.other_ns,
                "skipped": sum(t.skipped.values()),
                "skipped_reasons": dict(t.skipped.most_common()),
            },
            "build_seconds": round(elapsed, 3),
            "xml_mb_per_s": round(t.xml_bytes / 1e6 / elapsed, 2) if elapsed else 0.0,
            "workers": self.nworkers,
            "runs": self.checkpoint.runs,
            "index_bytes": index_bytes,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }


LOW_SPACE = 64 << 20  # free bytes under which a failed write is blamed on a full disk


def _write_failure(e: BaseException, tmp: Path) -> UserError:
    msg = " ".join(str(e).split())[:200] or type(e).__name__
    try:
        free: int | None = shutil.disk_usage(tmp.parent).free
    except OSError:
        free = None
    if "space" in msg.lower() or (free is not None and free < LOW_SPACE):
        left = f"{free / 1e6:.0f} MB free" if free is not None else "disk full"
        return UserError(
            f"no space left on device while writing the index in {tmp.parent} ({left}): {msg}"
        )
    return UserError(f"writing the index in {tmp.parent} failed: {msg}")


def _results(
    reader: DumpReader,
    fn: Callable[[list[Page]], BatchResult],
    pool: Any,
) -> Iterable[BatchResult]:
    """BatchResults in dump order, with a bounded number of batches in flight."""
    if pool is None:
        for batch in reader.batches(BATCH_BYTES):
            yield fn(batch)
        return
    yield from reader.map(fn, pool, BATCH_BYTES)


def read_manifest(index_dir: Path) -> dict[str, Any]:
    return jsonl.loads((Path(index_dir) / MANIFEST).read_text(encoding="utf-8"))


__all__ = ["build_index", "BatchResult", "ProgressInfo", "process_pages", "MANIFEST"]
