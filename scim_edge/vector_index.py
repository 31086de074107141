"""Passage embeddings beside a BM25 index, and the vector / hybrid retrievers over them.

Storage (written by `build-index … --embeddings MODEL`):
- `embeddings.f16`: one flat little-endian float16 matrix, `count` rows × `dim` columns,
  row i = the L2-normalised embedding of passage `doc_ids[i]`. Memory-mapped at query
  time, so opening costs nothing and the OS pages in only what a scan touches; float16
  halves the disk and page-cache footprint of float32 at no ranking cost worth noting.
- `embeddings.json`: model name, dim, count, dtype and the doc_id order. It is written
  last, so a half-written matrix is never picked up.

Retrievers keep the BM25 retriever's interface `search(query, k, exclude_ids)`:
- `VectorRetriever`: exact cosine scan (matrix · query) in chunks; passage text comes
  from the BM25 index by doc_id, so the two never disagree.
- `HybridRetriever`: reciprocal rank fusion of BM25 and vector rankings.
- HyDE (vector retrieval only): Flan-T5 writes a concise hypothetical passage and its
  embedding becomes the query vector. The hypothetical passage is a retrieval aid only;
  it is never returned as a passage and never reaches the generator.
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scim_edge.errors import ConfigError, IndexError_, ModelError, UserError
from scim_edge.types import Passage

if TYPE_CHECKING:
    from scim_edge.settings import Settings

MATRIX = "embeddings.f16"
META = "embeddings.json"
EMBED_BATCH = 512  # texts per embed() call: it sorts them by length, so less padding
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


def write_embeddings(
    index_dir: Path | str,
    model_path: Path | str,
    progress: Progress | None = None,
    *,
    model_name: str | None = None,
    batch_size: int = EMBED_BATCH,
) -> dict[str, Any]:
    """Embed every passage of the index with the embedding model `model_path` (a model
    directory or an installed model's name) and store the float16 matrix and its JSON
    description beside the index. Returns the description.

    `build-index … --embeddings MODEL` calls this after the BM25 index is built."""
    from models.embedding import EmbeddingModel
    from scim_edge.atomic import write_text
    from scim_edge.rerank import passage_text

    index_dir = Path(index_dir)
    try:
        model = EmbeddingModel.load(model_path)  # a directory or an installed model's name
    except UserError:
        raise
    except Exception as e:  # noqa: BLE001 - any load failure is the user's model dir
        raise ModelError(f"cannot load embedding model {model_path}: {e}") from None
    total = count_index_passages(index_dir)
    doc_ids: list[str] = []
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".f16", dir=index_dir)
    dim = 0
    try:
        with os.fdopen(fd, "wb") as f:
            batch: list[tuple[str, str, str]] = []

            def flush() -> None:
                nonlocal dim
                texts = [passage_text(Passage(d, t, "", x)) for d, t, x in batch]
                vecs = np.asarray(model.embed(texts), dtype=np.float32)
                dim = vecs.shape[1]
                f.write(vecs.astype("<f2").tobytes())
                doc_ids.extend(d for d, _, _ in batch)
                batch.clear()
                if progress is not None:
                    progress(len(doc_ids), total)

            # Streamed in batches: a large index never sits in memory as text.
            for record in iter_index_passages(index_dir):
                batch.append(record)
                if len(batch) == batch_size:
                    flush()
            if batch:
                flush()
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
        "dim": dim,
        "count": total,
        "dtype": "float16",
        "normalized": True,
        "doc_ids": doc_ids,
    }
    write_text(index_dir / META, json.dumps(meta, ensure_ascii=False))
    return meta


# ---- reading ------------------------------------------------------------------------


@dataclasses.dataclass
class Embeddings:
    meta: dict[str, Any]
    matrix: np.ndarray  # memory-mapped (count, dim) float16
    doc_ids: list[str]
    row_of: dict[str, int]

    @property
    def model(self) -> str:
        return str(self.meta.get("model", ""))


def has_embeddings(index_dir: Path) -> bool:
    return (index_dir / META).exists() and (index_dir / MATRIX).exists()


def open_embeddings(index_dir: Path) -> Embeddings:
    if not has_embeddings(index_dir):
        raise IndexError_(
            f"index {index_dir.name} has no passage embeddings; "
            "rebuild it with `scim-edge build-index … --embeddings MODEL`"
        )
    try:
        meta = json.loads((index_dir / META).read_text(encoding="utf-8"))
        count, dim = int(meta["count"]), int(meta["dim"])
        doc_ids = [str(d) for d in meta["doc_ids"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise IndexError_(
            f"{index_dir / META} is unreadable ({e}); rebuild the embeddings"
        ) from None
    size = (index_dir / MATRIX).stat().st_size
    if len(doc_ids) != count or size != count * dim * 2:
        raise IndexError_(
            f"{index_dir / MATRIX} does not match {META} (truncated?); rebuild the embeddings"
        )
    if count == 0:
        matrix = np.zeros((0, dim), dtype="<f2")
    else:
        matrix = np.memmap(index_dir / MATRIX, dtype="<f2", mode="r", shape=(count, dim))
    return Embeddings(meta, matrix, doc_ids, {d: i for i, d in enumerate(doc_ids)})


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
        self.name = f"vector:{embeddings.model}" + ("+hyde" if hyde else "")
        self.passage_count = len(embeddings.doc_ids)

    def query_vector(self, query: str) -> np.ndarray:
        text = query
        self.last_hypothesis = None
        if self.hyde is not None:
            hypothesis = self.hyde(query).strip()
            if hypothesis:
                self.last_hypothesis = hypothesis
                text = hypothesis
        return np.asarray(self.model.embed([text]), dtype=np.float32)[0]

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
    """BM25 and vector rankings fused by reciprocal rank: score = Σ 1 / (RRF_K + rank)."""

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
        return [dataclasses.replace(first[d], score=fused[d]) for d in order]

    def get(self, doc_id: str) -> Passage | None:
        return self.bm25.get(doc_id)


# ---- factory ------------------------------------------------------------------------


def _index_dir_of(settings: Settings, bm25: Any) -> Path:
    for attr in ("index_dir", "path", "directory"):
        value = getattr(bm25, attr, None)
        if value:
            return Path(value)
    from scim_edge.retrieval import resolve_index_dir

    return Path(resolve_index_dir(settings))


def _embedding_model_for(emb: Embeddings, settings: Settings, engine: Any | None) -> Any:
    """The model that made the stored vectors: queries must live in the same space."""
    from scim_edge.rerank import load_embedding_model

    wanted = settings.embedding_model
    if wanted and wanted != emb.model and Path(wanted).name != emb.model:
        raise ConfigError(
            f"the index's embeddings were made with '{emb.model}', not '{wanted}'; "
            "rebuild them or drop --embedding-model"
        )
    extras = getattr(engine, "extras", None)
    key = f"embedding-path:{emb.meta.get('model_path', '')}"
    if extras is not None and key in extras:
        return extras[key]
    try:
        model, _ = load_embedding_model(settings, engine, name=wanted or emb.model)
    except (UserError, LookupError, FileNotFoundError, ImportError):
        path = Path(str(emb.meta.get("model_path", "")))
        if not (path.is_dir() and path.exists()):
            raise ModelError(
                f"the embedding model '{emb.model}' that built this index is not installed"
            ) from None
        from models.embedding import EmbeddingModel

        model = EmbeddingModel.load(path)
    if extras is not None:
        extras[key] = model
    return model


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
    """The retriever `--retriever` names, over the BM25 retriever already open.

    `bm25` costs nothing extra; `vector` and `hybrid` need the index's embeddings (a
    one-line error says how to add them); `--hyde` needs vector retrieval."""
    if isinstance(bm25, VectorRetriever | HybridRetriever):
        return bm25
    kind = settings.retriever
    if kind == "bm25":
        if settings.hyde:
            raise ConfigError("--hyde works only with --retriever vector or hybrid")
        return bm25
    if kind not in ("vector", "hybrid"):
        raise ConfigError(f"unknown retriever '{kind}' (choose bm25, vector, hybrid)")
    index_dir = _index_dir_of(settings, bm25)
    if not has_embeddings(index_dir):
        raise IndexError_(
            f"--retriever {kind} needs passage embeddings, and index {index_dir.name} has none; "
            "rebuild it with `scim-edge build-index … --embeddings MODEL`"
        )
    emb = open_embeddings(index_dir)
    model = _embedding_model_for(emb, settings, engine)
    hyde = make_hyde(settings, engine) if settings.hyde else None
    vector = VectorRetriever(emb, model, bm25, hyde=hyde)
    if kind == "vector":
        return vector
    return HybridRetriever(bm25, vector, candidates=settings.candidates)
