"""Passage embeddings beside a BM25 index, and the vector / hybrid retrievers over them.

Storage (written by `build-index … --embeddings MODEL`, or added to an existing index by
`build-index --embeddings MODEL --name NAME` without a dump; read by
`scim_edge.embeddings`):
- `embeddings.f16`: one flat little-endian float16 matrix, `count` rows × `dim` columns,
  row i = the L2-normalised embedding of passage `doc_ids[i]`. Memory-mapped at query
  time, so opening costs nothing and the OS pages in only what a scan touches; float16
  halves the disk and page-cache footprint of float32 at no ranking cost worth noting.
- `embeddings.json`: model name and variant (fp32 | int8), dim, count, dtype and the
  doc_id order. It is written last, so a half-written matrix is never picked up.

Writing is built for Wikipedia scale: passages stream from the index in chunks, each
chunk is embedded with token-length buckets (see `models.embedding`) by one worker thread
per core on the CPU (ONNX Runtime releases the GIL, and one single-threaded session run
per core beats one run spread over the cores for a model this small) or by the GPU, and
chunks are written in index order as they finish.

Retrievers keep the BM25 retriever's interface `search(query, k, exclude_ids)`:
- `VectorRetriever`: exact cosine scan (matrix · query) in chunks; passage text comes
  from the BM25 index by doc_id, so the two never disagree.
- `HybridRetriever`: reciprocal rank fusion of BM25 and vector rankings.
- HyDE (vector and hybrid retrieval): Flan-T5 writes a concise hypothetical passage and
  its embedding becomes the query vector. The hypothetical passage is a retrieval aid only;
  it is never returned as a passage and never reaches the generator.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scim_edge import jsonl
from scim_edge.embeddings import (
    MATRIX,
    META,
    Embeddings,
    embed_query,
    embed_texts,
    has_embeddings,
    index_dir_of,
    load_embedding_model,
    open_embeddings,
    passage_text,
)
from scim_edge.errors import ConfigError, IndexError_, ModelError, UserError
from scim_edge.types import Passage

if TYPE_CHECKING:
    from scim_edge.settings import Settings

EMBED_BATCH = 512  # texts per chunk: embed() buckets them by token count, so little padding
SCAN_CHUNK = 65536
RRF_K = 60  # the constant of Cormack et al.'s reciprocal rank fusion
HYDE_PROMPT = "Write a short encyclopedia passage that answers the question: {question}"
HYDE_MAX_TOKENS = 64

Progress = Callable[[int, int], None]


# ---- writing ------------------------------------------------------------------------


def iter_index_passages(index_dir: Path) -> Iterator[tuple[str, str, str]]:
    """(doc_id, title, text) of every passage in a Tantivy passage index, in a stable
    order (segment, then document)."""
    import tantivy

    from index_builder import schema as S

    tdir = _tantivy_dir(index_dir)
    index = tantivy.Index.open(str(tdir))
    index.reload()
    searcher = index.searcher()
    total = searcher.num_docs
    if total == 0:
        return
    hits = searcher.search(tantivy.Query.all_query(), limit=total).hits
    addrs = sorted((addr for _, addr in hits), key=lambda a: (a.segment_ord, a.doc))
    for addr in addrs:
        doc = searcher.doc(addr)
        yield (
            str(doc.get_first(S.DOC_ID)),
            str(doc.get_first(S.TITLE) or ""),
            str(doc.get_first(S.TEXT) or ""),
        )


def count_index_passages(index_dir: Path) -> int:
    import tantivy

    index = tantivy.Index.open(str(_tantivy_dir(index_dir)))
    index.reload()
    return int(index.searcher().num_docs)


def _tantivy_dir(index_dir: Path) -> Path:
    """The directory holding Tantivy's meta.json (the index dir itself or a child)."""
    if (index_dir / "meta.json").exists():
        return index_dir
    for child in sorted(p for p in index_dir.iterdir() if p.is_dir()):
        if (child / "meta.json").exists():
            return child
    raise IndexError_(f"{index_dir} holds no passage index")


def embedding_workers(model: Any) -> int:
    """Threads that embed at once: one per usable core on the CPU, one on a GPU."""
    if getattr(model, "provider", "cpu") != "cpu":
        return 1
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def load_writer_model(model_path: Path | str, variant: str | None = None) -> Any:
    """The embedding model for writing vectors: single-threaded sessions on the CPU (the
    writer runs one per core), CUDA when it can load; `variant` (`static`, `int8`, `fp32`)
    when given. A one-line error if it cannot."""
    from models.embedding import EmbeddingModel

    try:  # a directory or a store name
        return EmbeddingModel.load(model_path, threads=1, variant=variant)
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - any load failure is the user's model dir
        raise ModelError(f"cannot load embedding model {model_path}: {e}") from None


def write_embeddings(
    index_dir: Path | str,
    model_path: Path | str,
    progress: Progress | None = None,
    *,
    model_name: str | None = None,
    batch_size: int = EMBED_BATCH,
    model: Any | None = None,
    workers: int | None = None,
    variant: str | None = None,
) -> dict[str, Any]:
    """Embed every passage of the index with the embedding model `model_path` (a model
    directory or an installed model's name) and store the float16 matrix and its JSON
    description beside the index. Returns the description.

    `build-index … --embeddings MODEL` calls this after the BM25 index is built (inside
    its temporary directory); `add_embeddings` calls it for an index that exists."""
    from scim_edge.atomic import write_text

    index_dir = Path(index_dir)
    if model is None:
        model = load_writer_model(model_path, variant)
    nworkers = workers or embedding_workers(model)
    total = count_index_passages(index_dir)
    doc_ids: list[str] = []
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".f16", dir=index_dir)
    dim = 0

    try:
        with os.fdopen(fd, "wb") as f:
            for ids, vecs in embed_stream(
                model, iter_index_passages(index_dir), workers=nworkers, chunk=batch_size
            ):
                dim = vecs.shape[1]
                f.write(vecs.astype("<f2").tobytes())
                doc_ids.extend(ids)
                if progress is not None:
                    progress(len(doc_ids), total)
            f.flush()
            os.fsync(f.fileno())
        total = len(doc_ids)
        if total and dim == 0:
            raise ModelError(f"embedding model {model_path} returned no vectors")
        dim = dim or int(getattr(model, "dim", 0) or 0)
        os.replace(tmp, index_dir / MATRIX)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    path = Path(getattr(model, "path", model_path))
    meta = {
        "model": model_name or str(getattr(model, "name", "") or path.name),
        "model_path": str(path.resolve()),
        "variant": str(getattr(model, "variant", "") or "fp32"),
        "dim": dim,
        "count": total,
        "dtype": "float16",
        "normalized": True,
        "doc_ids": doc_ids,
    }
    write_text(index_dir / META, json.dumps(meta, ensure_ascii=False))
    return meta


def embed_stream(
    model: Any,
    records: Iterable[tuple[str, str, str]],
    *,
    workers: int | None = None,
    chunk: int = EMBED_BATCH,
) -> Iterator[tuple[list[str], np.ndarray]]:
    """(doc_ids, float32 vectors) for consecutive chunks of (doc_id, title, text)
    records, in input order. `workers` chunks are embedded at once (threads: ONNX
    Runtime releases the GIL), and at most one more waits, so memory stays flat."""
    nworkers = workers or embedding_workers(model)

    def embed(part: list[tuple[str, str, str]]) -> np.ndarray:
        return embed_texts(model, [passage_text(Passage(d, t, "", x)) for d, t, x in part])

    with ThreadPoolExecutor(max_workers=nworkers) as pool:
        pending: collections.deque[tuple[list[str], Future[np.ndarray]]] = collections.deque()
        try:
            for part in _chunks(iter(records), chunk):
                pending.append(([d for d, _, _ in part], pool.submit(embed, part)))
                while len(pending) > nworkers:
                    ids, fut = pending.popleft()
                    yield ids, fut.result()
            while pending:
                ids, fut = pending.popleft()
                yield ids, fut.result()
        finally:
            for _, fut in pending:
                fut.cancel()


def _chunks(
    records: Iterator[tuple[str, str, str]], size: int
) -> Iterator[list[tuple[str, str, str]]]:
    chunk: list[tuple[str, str, str]] = []
    for record in records:
        chunk.append(record)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def add_embeddings(
    index_dir: Path | str,
    model_path: Path | str,
    progress: Progress | None = None,
    *,
    model_name: str | None = None,
    variant: str | None = None,
) -> dict[str, Any]:
    """Add (or replace) the passage embeddings of an index that already exists, without
    the dump: the passages are read back from the index itself.

    Atomic: the new index is a hidden sibling made of hard links to the old one's files
    (no copy of the BM25 index), the matrix, its description and the manifest are
    written there, and the two directories are swapped in one step. An interrupted or
    failed add removes the sibling and leaves the index as it was."""
    from scim_edge.atomic import atomic_dir, write_text

    index_dir = Path(index_dir)
    manifest_path = index_dir / "manifest.json"
    if not manifest_path.is_file():
        raise IndexError_(f"{index_dir} is not a scim-edge index (no manifest.json)")
    try:
        manifest = jsonl.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise IndexError_(f"{manifest_path} is unreadable ({e}); rebuild the index") from None
    model = load_writer_model(model_path, variant)  # a bad model fails before anything
    with atomic_dir(index_dir, force=True, what="index") as tmp:
        _link_tree(index_dir, tmp)
        meta = write_embeddings(tmp, model_path, progress, model_name=model_name, model=model)
        manifest["embeddings"] = embeddings_summary(meta)
        write_text(tmp / "manifest.json", json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return meta


def embeddings_summary(meta: dict[str, Any]) -> dict[str, Any]:
    """What an index's manifest says of its vectors: model, variant, dimensions, count."""
    return {k: meta[k] for k in ("model", "variant", "dim", "count") if k in meta}


def _link_tree(src: Path, dst: Path) -> None:
    """Hard links to every file of `src` under `dst` (copies where links are refused).
    Files are only ever replaced by rename, never written in place, so a link shares
    nothing that can change under the old index."""
    from scim_edge.atomic import is_hidden_temp

    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    for child in src.iterdir():
        if is_hidden_temp(child.name) or child.name in (MATRIX, META):
            continue
        if child.is_dir():
            shutil.copytree(child, dst / child.name, copy_function=link)
        else:
            link(str(child), str(dst / child.name))


# ---- searching ----------------------------------------------------------------------


def top_rows(
    matrix: np.ndarray, query: np.ndarray, k: int, skip: set[int]
) -> list[tuple[int, float]]:
    """The k rows of highest dot product with `query`, skipping `skip`, best first."""
    n = matrix.shape[0]
    if n == 0 or k <= 0:
        return []
    want = min(n, k + len(skip))
    q = query.astype(np.float32)
    best_idx: list[np.ndarray] = []
    best_sim: list[np.ndarray] = []
    for start in range(0, n, SCAN_CHUNK):
        sims = np.asarray(matrix[start : start + SCAN_CHUNK], dtype=np.float32) @ q
        m = min(want, sims.shape[0])
        part = np.argpartition(-sims, m - 1)[:m]
        best_idx.append(part + start)
        best_sim.append(sims[part])
    idx = np.concatenate(best_idx)
    sim = np.concatenate(best_sim)
    order = np.lexsort((idx, -sim))  # by similarity, ties by row (deterministic)
    out: list[tuple[int, float]] = []
    for j in order:
        row = int(idx[j])
        if row in skip:
            continue
        out.append((row, float(sim[j])))
        if len(out) == k:
            break
    return out


class VectorRetriever:
    """Exact cosine search over the memory-mapped passage embeddings."""

    kind = "vector"

    def __init__(
        self,
        embeddings: Embeddings,
        model: Any,
        passages: Any,
        *,
        hyde: Callable[[str], str] | None = None,
    ) -> None:
        self.embeddings = embeddings
        self.model = model
        self.passages = passages  # the BM25 retriever: get(doc_id) -> Passage
        self.hyde = hyde
        self.last_hypothesis: str | None = None
        static = " (static)" if embeddings.variant == "static" else ""  # another measure
        self.name = f"vector:{embeddings.model}{static}" + ("+hyde" if hyde else "")
        self.passage_count = len(embeddings.doc_ids)

    def query_vector(self, query: str) -> np.ndarray:
        text = query
        self.last_hypothesis = None
        if self.hyde is not None:
            hypothesis = self.hyde(query).strip()
            if hypothesis:
                self.last_hypothesis = hypothesis
                text = hypothesis
        return embed_query(self.model, text)

    def search(self, query: str, k: int, exclude_ids: Collection[str] = ()) -> list[Passage]:
        vec = self.query_vector(query)
        return self.search_vector(vec, k, exclude_ids)

    def search_vector(
        self, vec: np.ndarray, k: int, exclude_ids: Collection[str] = ()
    ) -> list[Passage]:
        row_of = self.embeddings.row_of
        skip = {row_of[d] for d in exclude_ids if d in row_of}
        out: list[Passage] = []
        for row, sim in top_rows(self.embeddings.matrix, vec, k, skip):
            p = self.passages.get(self.embeddings.doc_ids[row])
            if p is not None:
                out.append(dataclasses.replace(p, score=sim))
        return out

    def get(self, doc_id: str) -> Passage | None:
        return self.passages.get(doc_id)


class HybridRetriever:
    """BM25 and vector rankings fused by reciprocal rank (Σ 1 / (RRF_K + rank)): the fused
    order, with each passage's BM25 score for the query.

    The reader's passage-score feature and the Critic's retrieval-score features were
    fitted on BM25 scores; fused scores (~0.03) read to them as a search that matched
    nothing, and the shipped Critic rejected most hybrid rounds (simrag answered 39 of 175
    of our vital-en questions with static vectors, 111 without vectors). So the order is
    the fusion's and the score is BM25's, 0.0 for a passage only the vectors found that
    shares no term with the query. `score_of`, `article_lead` and `lead_naming` are BM25's
    too, so the loops' named leads are looked up and scored as on a BM25 index."""

    kind = "hybrid"

    def __init__(self, bm25: Any, vector: VectorRetriever, candidates: int = 50) -> None:
        self.bm25 = bm25
        self.vector = vector
        self.candidates = candidates
        self.name = f"hybrid:{getattr(bm25, 'name', 'bm25')}+{vector.name}"
        self.passage_count = getattr(bm25, "passage_count", vector.passage_count)

    @property
    def last_hypothesis(self) -> str | None:
        return self.vector.last_hypothesis

    def search(self, query: str, k: int, exclude_ids: Collection[str] = ()) -> list[Passage]:
        n = max(k, self.candidates)
        lists = [self.bm25.search(query, n, exclude_ids), self.vector.search(query, n, exclude_ids)]
        fused: dict[str, float] = {}
        first: dict[str, Passage] = {}
        for ranked in lists:
            for rank, p in enumerate(ranked, start=1):
                fused[p.doc_id] = fused.get(p.doc_id, 0.0) + 1.0 / (RRF_K + rank)
                first.setdefault(p.doc_id, p)
        order = sorted(fused, key=lambda d: -fused[d])[:k]
        by_bm25 = {p.doc_id for p in lists[0]}  # `first` holds these with their BM25 score
        return [
            first[d]
            if d in by_bm25
            else dataclasses.replace(first[d], score=self.score_of(query, d))
            for d in order
        ]

    def get(self, doc_id: str) -> Passage | None:
        return self.bm25.get(doc_id)

    def score_of(self, query: str, doc_id: str) -> float:
        score_of = getattr(self.bm25, "score_of", None)
        return float(score_of(query, doc_id)) if score_of is not None else 0.0

    def article_lead(self, name: str) -> Passage | None:
        lookup = getattr(self.bm25, "article_lead", None)
        return lookup(name) if lookup is not None else None

    def lead_naming(self, name: str) -> Passage | None:
        lookup = getattr(self.bm25, "lead_naming", None)
        return lookup(name) if lookup is not None else None


# ---- factory ------------------------------------------------------------------------


def _index_dir_of(settings: Settings, bm25: Any) -> Path:
    found = index_dir_of(bm25)
    if found is not None:
        return found
    from scim_edge.retrieval import resolve_index_dir

    return Path(resolve_index_dir(settings))


def _embedding_model_for(emb: Embeddings, settings: Settings, engine: Any | None) -> Any:
    """The model that made the stored vectors: queries must live in the same space (and,
    where installed, the same variant: int8 queries for int8 rows)."""
    wanted = settings.embedding_model
    if wanted and wanted != emb.model and Path(wanted).name != emb.model:
        raise ConfigError(
            f"the index's embeddings were made with '{emb.model}', not '{wanted}'; "
            "rebuild them or drop --embedding-model"
        )

    def build() -> Any:
        try:
            model, _ = load_embedding_model(
                settings, engine, name=wanted or emb.model, variant=emb.variant
            )
            return model
        except (UserError, LookupError, FileNotFoundError, ImportError):
            path = Path(str(emb.meta.get("model_path", "")))
            if not (path.is_dir() and path.exists()):
                raise ModelError(
                    f"the embedding model '{emb.model}' that built this index is not installed"
                ) from None
            from models.embedding import EmbeddingModel
            from scim_edge.embeddings import available_variant

            return EmbeddingModel.load(path, variant=available_variant(path, emb.variant))

    cache = getattr(engine, "cache", None)
    if cache is None:
        return build()
    key = ("embedding-path", str(emb.meta.get("model_path", "")), emb.variant or "")
    return cache.get(key, build)


def make_hyde(settings: Settings, engine: Any | None) -> Callable[[str], str]:
    from scim_edge.critic import load_seq2seq

    model, _ = load_seq2seq(settings, engine)
    if model is None:
        raise ModelError(
            "HyDE needs an installed Flan-T5 model to write the hypothetical passage",
            hint="install one with `scim-edge models import DIR`, or drop --hyde",
        )

    def hypothesise(question: str) -> str:
        out = model.generate_text(
            HYDE_PROMPT.format(question=question),
            max_input_tokens=256,
            max_new_tokens=HYDE_MAX_TOKENS,
        )
        return out[0] if isinstance(out, tuple) else str(out)

    return hypothesise


def make_retriever(settings: Settings, bm25: Any, engine: Any | None = None) -> Any:
    """The retriever `--retriever` names, over the BM25 retriever already open."""
    return resolve_retriever(settings, bm25, engine)[0]


def resolve_retriever(settings: Settings, bm25: Any, engine: Any | None = None) -> tuple[Any, str]:
    """The retriever `--retriever` names, over the BM25 retriever already open, and a
    note saying what `auto` chose and why ("" for an explicit choice).

    `bm25` costs nothing extra; `vector` and `hybrid` need the index's embeddings (a
    one-line error says how to add them); `auto` is hybrid when they can be used, else
    BM25; `--hyde` needs vector or hybrid retrieval."""
    if isinstance(bm25, VectorRetriever | HybridRetriever):
        return bm25, ""
    kind = settings.retriever
    note = ""
    if kind == "auto":
        why = _vectors_unusable(settings, bm25, engine)
        if why:
            if settings.hyde:
                raise ConfigError(f"--hyde needs passage embeddings, and {why}")
            return bm25, f"auto: bm25, because {why}"
        kind, note = "hybrid", "auto: hybrid, because the index has passage embeddings"
    if kind == "bm25":
        if settings.hyde:
            raise ConfigError("--hyde works only with --retriever vector or hybrid")
        return bm25, note
    if kind not in ("vector", "hybrid"):
        raise ConfigError(f"unknown retriever '{kind}' (choose auto, bm25, vector, hybrid)")
    index_dir = _index_dir_of(settings, bm25)
    if not has_embeddings(index_dir):
        raise IndexError_(
            f"--retriever {kind} needs passage embeddings, and index {index_dir.name} has none; "
            f"add them with `scim-edge build-index --embeddings MODEL --name {index_dir.name}`"
        )
    emb = open_embeddings(index_dir)
    model = _embedding_model_for(emb, settings, engine)
    hyde = make_hyde(settings, engine) if settings.hyde else None
    vector = VectorRetriever(emb, model, bm25, hyde=hyde)
    if kind == "vector":
        return vector, note
    return HybridRetriever(bm25, vector, candidates=settings.candidates), note


def _vectors_unusable(settings: Settings, bm25: Any, engine: Any | None) -> str:
    """Why `auto` cannot use vectors over this index ("" when it can)."""
    index_dir = index_dir_of(bm25)
    if index_dir is None or not has_embeddings(index_dir):
        return "the index has no passage embeddings"
    try:
        emb = open_embeddings(index_dir)
        _embedding_model_for(emb, settings, engine)
    except UserError as e:
        return " ".join(str(e).split())
    return ""
