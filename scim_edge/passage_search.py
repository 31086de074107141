"""One retrieval pipeline for every loop: the retriever slot, HyDE and the reranker slot.

Every loop (scim, standard, iter-retgen, fixed-N, single-dim and simrag) fetches its
passages through a `PassageSearch`, so `--retriever`, `--reranker` and `--hyde` mean the
same thing whichever loop runs:

- retriever (Settings.retriever): `bm25`, `vector` (exact cosine over the index's MiniLM
  passage embeddings), `hybrid` (reciprocal rank fusion of the two), or `auto` (the
  default): hybrid when the index has embeddings and the model that made them is
  installed, BM25 otherwise. An explicit choice is kept, and fails with one line when it
  cannot be served.
- HyDE (Settings.hyde, vector and hybrid only): Flan-T5 writes a hypothetical passage
  whose embedding is the query vector; it is never evidence.
- reranker (Settings.reranker): `none`, `hybrid` (the SCIM lexical score) or `embedding`
  (MiniLM cosine). It reorders the top `Settings.candidates` hits by their fit to the
  user's ORIGINAL question and keeps k: queries (rewrites, follow-ups, augment/refine
  terms) only fetch candidates, they never decide the order.

The slot objects are built once per engine (kept in `engine.cache`): an embedding
model or a memory-mapped matrix is opened once per session, not once per question.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from scim_edge.types import Passage

if TYPE_CHECKING:
    from scim_edge.settings import Settings

_UNSET: Any = object()


class PassageSearch:
    """The bound retriever and reranker of one run, behind one `retrieve` call."""

    def __init__(
        self,
        settings: Settings,
        engine: Any,
        retriever: Any,
        reranker: Any | None,
        *,
        auto_note: str = "",
    ) -> None:
        self.settings = settings
        self.engine = engine
        self.retriever = retriever
        self.reranker = reranker
        self.auto_note = auto_note  # why `auto` chose what it chose

    # -- what is bound ------------------------------------------------------------------
    def retriever_binding(self) -> str:
        """The retriever's kind ("bm25", "vector:MODEL", "hybrid:…"); the index it reads
        is the separate `index` binding. A BM25 retriever names itself after its index,
        so its kind is stated here rather than read from it."""
        from scim_edge.retrieval import BM25Retriever

        r = self.retriever
        if r is getattr(self.engine, "retriever", None) or isinstance(r, BM25Retriever):
            return "bm25"
        return _name(r, "bm25")

    def bindings(self) -> dict[str, str]:
        """The retriever's kind, and the reranker's name (a key only when one is bound, so
        a loop with its own ordering can name that instead; simrag names "none")."""
        out = {"retriever": self.retriever_binding()}
        if self.reranker is not None:
            out["reranker"] = _name(self.reranker, "none")
        return out

    @property
    def last_hypothesis(self) -> str | None:
        """The HyDE passage of the latest search (a query vector only; never evidence)."""
        return getattr(self.retriever, "last_hypothesis", None)

    # -- retrieval ----------------------------------------------------------------------
    def retrieve(
        self, question: str, queries: Sequence[str], k: int, exclude_ids: Collection[str]
    ) -> list[Passage]:
        """Up to k new passages per query, none of `exclude_ids` and none twice. With a
        reranker bound, each query's top `candidates` hits are reordered by their fit to
        `question` (the user's original question) and the best k kept."""
        taken: list[Passage] = []
        exclude = set(exclude_ids)
        for query in queries:
            if self.reranker is None:
                hits = self.retriever.search(query, k, exclude_ids=exclude)
            else:
                n = max(k, self.settings.candidates)
                hits = self.reranker.rerank(
                    question, self.retriever.search(query, n, exclude_ids=exclude), k
                )
            for p in hits[:k]:
                if p.doc_id not in exclude:
                    exclude.add(p.doc_id)
                    taken.append(p)
        return taken

    def retrieve_ranked(
        self,
        question: str,
        k: int,
        exclude_ids: Collection[str],
        shortlist: Callable[..., list[Passage]],
    ) -> list[Passage]:
        """For loops that rank candidates themselves (the SCIM family's augment/refine
        scorers): `shortlist(retriever, k=n)` fetches through the bound retriever and
        returns its best n. With no reranker that ranking stands (n = k); with one, the loop's
        top `candidates` are reordered by fit to the original question and k kept."""
        if self.reranker is None:
            return shortlist(self.retriever, k=k)[:k]
        pool = [
            p
            for p in shortlist(self.retriever, k=max(k, self.settings.candidates))
            if p.doc_id not in exclude_ids
        ]
        return self.reranker.rerank(question, pool, k)


def _name(obj: Any, default: str) -> str:
    if obj is None:
        return default
    return str(getattr(obj, "name", None) or type(obj).__name__)


def _cached(engine: Any, key: str, build: Callable[[], Any]) -> Any:
    cache = getattr(engine, "cache", None)
    if cache is None:
        return build()
    return cache.get(("passage-search", key), build)


def make_passage_search(
    settings: Settings, engine: Any, *, retriever: Any = _UNSET, reranker: Any = _UNSET
) -> PassageSearch:
    """The pipeline `settings` names over the engine's BM25 index. `retriever` and
    `reranker` bind given objects instead (None for `reranker` binds none); a retriever
    bound in `engine.slots` is used by every loop, and is never cached."""
    note = ""
    if retriever is _UNSET or retriever is None:
        retriever = getattr(getattr(engine, "slots", None), "retriever", None)  # in a slot
    if retriever is None:
        from scim_edge.vector_index import resolve_retriever

        s = settings
        key = f"retriever:{s.retriever}:{s.hyde}:{s.embedding_model}:{s.candidates}"
        retriever, note = _cached(
            engine, key, lambda: resolve_retriever(s, engine.retriever, engine)
        )
    if reranker is _UNSET:
        from scim_edge.rerank import make_reranker

        reranker = _cached(
            engine,
            f"reranker:{settings.reranker}:{settings.embedding_model}",
            lambda: make_reranker(settings, engine),
        )
    return PassageSearch(settings, engine, retriever, reranker, auto_note=note)
