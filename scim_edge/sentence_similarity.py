"""How close a passage sentence is in meaning to the question, by MiniLM, where vectors exist.

The learned reader's word-overlap features miss a sentence that states the answer in other
words ("ended in 2001" for "When did … end its run?"). MiniLM sentence embeddings see that;
answer-sentence selection has long used them. They cost an encoder pass per sentence, so the
reader only gets them on an index whose passages already have MiniLM vectors (the user chose
semantic search and installed the model): the same model, in the same variant, embeds the
question and the sentences of the reader's top passages. On an index without vectors the
features are zero, and the shipped weights, fitted on one, give them no weight; `practice` on
an index with vectors fits them.

`SentenceSimilarity.for_index(dir)` is None when the index has no vectors or their model is
not installed. Sentence vectors are cached, so the rounds of one question, which share most of
their passages, embed each sentence once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from scim_edge import embeddings as emb

CACHE_SENTENCES = 20_000


class SentenceSimilarity:
    """Cosine similarity of a question to sentences, with the index's embedding model."""

    def __init__(self, model: Any, name: str = "") -> None:
        self.model = model
        self.name = name
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    @classmethod
    def for_index(
        cls, index_dir: Path | None, threads: int | None = None
    ) -> SentenceSimilarity | None:
        """The model that made the index's passage vectors, or None (no vectors, or the
        model is not installed: then the reader reads without this signal). `threads`:
        one per worker process where several share the cores (practice)."""
        from scim_edge.settings import Settings

        if index_dir is None or not emb.has_embeddings(Path(index_dir)):
            return None
        try:
            stored = emb.open_embeddings(Path(index_dir))
            model, name = emb.load_embedding_model(
                Settings(),
                None,
                stored.model or None,
                variant=stored.variant,
                index_dir=index_dir,
                threads=threads,
            )
        except Exception:  # noqa: BLE001 - a missing or broken model only drops the signal
            return None
        return cls(model, name)

    def cached(self) -> int:
        """How many texts (sentences and questions) have their vectors kept (not `__len__`:
        an empty cache must not make the measure falsy)."""
        return len(self._cache)

    def forget(self) -> None:
        """Drop every kept vector (a benchmark's cold start)."""
        self._cache.clear()

    def _vectors(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for t, v in zip(missing, emb.embed_texts(self.model, missing), strict=True):
                self._cache[t] = v
        out = np.stack([self._cache[t] for t in texts])
        for t in texts:  # least recently used first out
            self._cache.move_to_end(t)
        while len(self._cache) > CACHE_SENTENCES:
            self._cache.popitem(last=False)
        return out

    def __call__(self, question: str, sentences: Sequence[str]) -> np.ndarray:
        """Cosine of the question to each sentence (the model's vectors are unit length)."""
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        vecs = self._vectors([question, *sentences])
        return (vecs[1:] @ vecs[0]).astype(np.float32)
