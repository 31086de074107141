"""Rerankers for every loop's optional reranker slot.

A reranker reorders the retriever's candidates (the top `candidates` = 50 hits) by
how well each one fits the user's *original* question, then keeps the top k. Rewritten
queries only fetch candidates; they never decide the order (contract 2). A reranker
changes the order only: each passage keeps the score its retriever gave it (BM25's, for
every retriever but `vector`), which is what the reader's passage-score feature and the
Critic's retrieval-score features were fitted on; a cosine or a lexical overlap in its
place reads to them as a search that matched almost nothing.

- `hybrid`: the SCIM hybrid lexical score from `scim_edge.ranking`
  (0.7 content-word overlap + 0.3 title similarity).
- `embedding`: cosine between the question and each candidate under the
  all-MiniLM-L6-v2 ONNX embedding model.
- `none`: no object at all, so an empty slot costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from scim_edge.embeddings import (
    embed_query,
    embed_texts,
    load_embedding_model,
    passage_text,
    stored_embeddings,
)
from scim_edge.types import Passage

if TYPE_CHECKING:
    from scim_edge.settings import Settings


class Reranker(Protocol):
    name: str

    def rerank(self, question: str, passages: Sequence[Passage], k: int) -> list[Passage]: ...


class EmbeddingReranker:
    """Cosine between the question and each candidate (vectors are L2-normalised).

    When the index stores passage embeddings made by the same model, a candidate's vector
    is read from that memory-mapped matrix instead of being recomputed, so a rerank costs
    one embedding (the question's) rather than fifty."""

    def __init__(
        self, model: Any, model_name: str = "all-MiniLM-L6-v2", stored: Any | None = None
    ) -> None:
        self.model = model
        self.name = f"embedding:{model_name}"
        self.stored = stored  # embeddings.Embeddings of the same model, or None

    def vectors(self, passages: Sequence[Passage]) -> np.ndarray:
        out = np.zeros((len(passages), 0), dtype=np.float32)
        todo = list(range(len(passages)))
        rows: dict[int, np.ndarray] = {}
        if self.stored is not None:
            row_of = self.stored.row_of
            for i, p in enumerate(passages):
                r = row_of.get(p.doc_id)
                if r is not None:
                    rows[i] = np.asarray(self.stored.matrix[r], dtype=np.float32)
            todo = [i for i in todo if i not in rows]
        if todo:
            fresh = embed_texts(self.model, [passage_text(passages[i]) for i in todo])
            rows.update(zip(todo, fresh, strict=True))
        if rows:
            out = np.stack([rows[i] for i in range(len(passages))])
        return out

    def scores(self, question: str, passages: Sequence[Passage]) -> np.ndarray:
        if not passages:
            return np.zeros(0, dtype=np.float32)
        q = embed_query(self.model, question)
        return self.vectors(passages) @ q

    def rerank(self, question: str, passages: Sequence[Passage], k: int) -> list[Passage]:
        sims = self.scores(question, passages)
        # Stable: ties keep the retriever's order; each passage keeps its retriever's score.
        order = sorted(range(len(passages)), key=lambda i: -float(sims[i]))
        return [passages[i] for i in order[:k]]


class HybridReranker:
    """The SCIM hybrid lexical score, reused as a reranker."""

    name = "hybrid"

    def rerank(self, question: str, passages: Sequence[Passage], k: int) -> list[Passage]:
        from scim_edge.ranking import rank_hybrid

        return rank_hybrid(passages, question, k)  # stable: ties keep the retriever's order


def make_reranker(settings: Settings, engine: Any | None = None) -> Reranker | None:
    """The reranker Settings name; None for `none`, which costs nothing."""
    if settings.reranker == "none":
        return None
    if settings.reranker == "hybrid":
        return HybridReranker()
    if settings.reranker == "embedding":
        model, name = load_embedding_model(settings, engine)
        stored = stored_embeddings(engine, name)
        if stored is not None and stored.variant not in (None, getattr(model, "variant", None)):
            # Embed the question the way the stored rows were embedded, when installed.
            model, name = load_embedding_model(settings, engine, variant=stored.variant)
        return EmbeddingReranker(model, name, stored)
    from scim_edge.errors import ConfigError

    raise ConfigError(f"unknown reranker '{settings.reranker}' (choose none, hybrid, embedding)")


__all__ = [
    "EmbeddingReranker",
    "HybridReranker",
    "Reranker",
    "load_embedding_model",  # re-exported: it lives in scim_edge.embeddings
    "make_reranker",
    "passage_text",
    "stored_embeddings",
]
