"""Build a Tantivy passage index from a Wikipedia dump, in one streaming pass.

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

The whole build happens in a temporary sibling directory (`scim_edge.atomic.atomic_dir`):
an interrupted or failed build leaves any existing index untouched and nothing half-built
visible under the target name.
"""

from __future__ import annotations

import collections
import functools
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tantivy

from index_builder import schema as S
from index_builder.dump_reader import DumpReader, Page, make_pool
from index_builder.passages import split_sections
from scim_edge import __version__
from scim_edge.atomic import atomic_dir, write_text
from scim_edge.errors import DumpError, UserError

MANIFEST = "manifest.json"
BATCH_BYTES = 1 << 20  # wikitext per worker task
HEAP_BYTES = 256 << 20  # Tantivy writer heap, split over its threads: bounds its memory
WRITER_THREADS = 2
IN_PROCESS_BELOW = 1 << 20  # dumps smaller than this are built without a worker pool

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
        flag = int(disamb)
        out.disambiguation += flag
        out.articles.append((norm_title(page.title), page.page_id))
        pid, title = page.page_id, page.title
        out.passages.extend(
            (f"{pid}-{n}", pid, n, title, section, text, flag)
            for n, (section, text) in enumerate(chunks)
        )
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
    """On-disk side tables of one build: articles, their lead passages, and redirects."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path)
        self.db.executescript(
            """
            PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
            CREATE TABLE articles(key TEXT PRIMARY KEY, page_id INTEGER, doc_id TEXT,
                                  title TEXT, section TEXT, text TEXT, dis INTEGER);
            CREATE TABLE redirects(alias TEXT, target TEXT);
            """
        )

    def add(self, res: BatchResult) -> None:
        leads = {row[1]: row for row in res.passages if row[2] == 0}
        self.db.executemany(
            "INSERT OR REPLACE INTO articles VALUES (?,?,?,?,?,?,?)",
            [
                (key, pid, lead[0], lead[3], lead[4], lead[5], lead[6])
                for key, pid in res.articles
                if (lead := leads.get(pid)) is not None
            ],
        )
        self.db.executemany("INSERT INTO redirects VALUES (?,?)", res.redirects)

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
        for suffix in ("", "-journal", "-wal", "-shm"):
            try:
                os.unlink(f"{self.path}{suffix}")
            except FileNotFoundError:
                pass


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
) -> dict[str, Any]:
    """Build the index of `source` into `out_dir` atomically; return its manifest.

    `embeddings_model`: also embed every passage with this embedding model (a name or a
    directory) and store the matrix inside the index before it is renamed into place, so
    an interrupted embedding pass never leaves an index without its vectors.

    `workers`: processes that clean pages (None: 2, or 0 for a small dump, which is
    faster in-process than with a pool)."""
    if passage_words <= 0:
        raise DumpError(f"--passage-words must be a positive number (got {passage_words})")
    nworkers = 2 if workers is None else workers
    reader = DumpReader(source, multistream_index=multistream_index, workers=max(1, nworkers))
    if (
        workers is None
        and not reader.multistream
        and (reader.total_bytes or 1 << 30) < (IN_PROCESS_BELOW)
    ):
        nworkers = 0
    out = Path(out_dir).expanduser()
    with atomic_dir(out, force=force, what="index") as tmp:
        manifest = _build(reader, tmp, passage_words, nworkers, progress)
        if embeddings_model is not None:
            from scim_edge.vector_index import write_embeddings

            meta = write_embeddings(tmp, embeddings_model, progress=embeddings_progress)
            manifest["embeddings"] = {k: meta[k] for k in ("model", "dim", "count") if k in meta}
        write_text(tmp / MANIFEST, json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


def _build(
    reader: DumpReader,
    tmp: Path,
    passage_words: int,
    nworkers: int,
    progress: Callable[[ProgressInfo], None] | None,
) -> dict[str, Any]:
    t0 = time.perf_counter()
    totals = BatchResult()
    n_articles = 0
    n_passages = 0
    n_redirects = 0

    def report(phase: str) -> None:
        if progress is not None:
            progress(
                ProgressInfo(
                    phase,
                    reader.bytes_read,
                    reader.total_bytes,
                    reader.xml_bytes,
                    reader.pages_read,
                    n_articles,
                    n_passages,
                    time.perf_counter() - t0,
                )
            )

    fn = functools.partial(process_pages, passage_words=passage_words)
    # The pool is forked before the Tantivy writer starts its threads.
    pool = make_pool(nworkers) if nworkers > 0 else None
    store = _Store(tmp / ".build.sqlite")
    writer = None
    try:
        # The analyzer depends on the dump's language (xml:lang), known once reading has
        # begun, so the index is created on the first batch.
        index: tantivy.Index | None = None
        analyzer = ""
        report("reading")
        for res in _results(reader, fn, pool):
            if writer is None:
                analyzer = S.analyzer_name(reader.lang)
                index = tantivy.Index(S.build_schema(analyzer), path=str(tmp))
                S.register_analyzer(index, analyzer)
                writer = index.writer(heap_size=HEAP_BYTES, num_threads=WRITER_THREADS)
            add = writer.add_document
            for row in res.passages:
                add(_doc(row))
            store.add(res)
            n_articles += len(res.articles)
            n_passages += len(res.passages)
            totals.pages += res.pages
            totals.other_ns += res.other_ns
            totals.disambiguation += res.disambiguation
            totals.skipped.update(res.skipped)
            n_redirects += len(res.redirects)
            report("reading")
        if pool is not None:
            pool.close()
        if n_articles == 0:
            raise DumpError(
                f"no articles in {reader.source}: {reader.pages_read} pages read, none a "
                "namespace-0 article with text"
            )
        assert writer is not None and index is not None
        report("aliases")
        aliased = aliases = 0
        for pid, doc_id, title, section, text, dis, joined in store.aliased():
            names = joined.split("\n")
            writer.delete_documents_by_term(S.DOC_ID, doc_id)
            writer.add_document(_doc((doc_id, pid, 0, title, section, text, dis), names))
            aliased += 1
            aliases += len(names)
        report("committing")
        writer.commit()
        writer.wait_merging_threads()
        writer = None
    except BaseException as e:
        if writer is not None:
            try:
                writer.rollback()
            except Exception:  # noqa: BLE001
                pass
            del writer
        # Tantivy reports a failed write (a full disk in a writer thread, say) as ValueError
        # or a Rust panic; SQLite as its own error. The user needs one line that says where.
        if isinstance(e, ValueError | RuntimeError | sqlite3.Error) or (
            type(e).__name__ == "PanicException"
        ):
            raise _write_failure(e, tmp) from None
        raise
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()
        store.close()
    elapsed = time.perf_counter() - t0
    report("done")
    index_bytes = sum(f.stat().st_size for f in tmp.rglob("*") if f.is_file())
    return {
        "format": "scim-edge-passage-index",
        "schema_version": S.SCHEMA_VERSION,
        "project_version": __version__,
        "source": {
            "name": reader.name,
            "path": str(reader.path) if reader.path else "-",
            "size_bytes": reader.total_bytes if reader.total_bytes is not None else 0,
            "xml_bytes": reader.xml_bytes,
            "compression": reader.compression,
            "multistream": reader.multistream,
            "lang": reader.lang or "",
        },
        "analyzer": analyzer,
        "passage_words": passage_words,
        "counts": {
            "pages_seen": reader.pages_read,
            "articles": n_articles,
            "passages": n_passages,
            "redirects": n_redirects,
            "aliases": aliases,
            "aliased_articles": aliased,
            "dangling_redirects": n_redirects - aliases,
            "disambiguation": totals.disambiguation,
            "other_namespaces": totals.other_ns,
            "skipped": sum(totals.skipped.values()),
            "skipped_reasons": dict(totals.skipped.most_common()),
        },
        "build_seconds": round(elapsed, 3),
        "xml_mb_per_s": round(reader.xml_bytes / 1e6 / elapsed, 2) if elapsed else 0.0,
        "workers": nworkers,
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
    return json.loads((Path(index_dir) / MANIFEST).read_text(encoding="utf-8"))


__all__ = ["build_index", "BatchResult", "ProgressInfo", "process_pages", "MANIFEST"]
