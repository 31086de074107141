"""Static token vectors distilled from a sentence embedding model (the `static` variant).

MiniLM costs ~2.3 G operations per passage, so two CPU cores embed ~146 passages/s and full
English Wikipedia (~20M passages) would take days. A static model costs one table look-up per
token: every vocabulary token is passed once through the exported model (`[CLS] token
[SEP]`, mean-pooled), the table is reduced by PCA and each row weighted by its Zipf rank
(rarer word pieces count more), and a text's vector is the mean of its tokens' rows,
L2-normalised. This is Model2Vec's recipe (Tulkens & van Dongen, 2024): no data and no
torch, only the fp32 ONNX graph `models export` has just written, so an air-gapped install
can make it too.

It reads word order and context not at all, so alone it finds fewer of the right passages
than MiniLM; fused with BM25 (hybrid retrieval) it keeps most of what MiniLM adds. The
figures, measured on our vital-en questions, are in the README's Benchmarks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from models.seq2seq import load_tokenizer
from scim_edge.errors import ModelError

VARIANT = "static"
TABLE = f"{VARIANT}/vectors.npy"
DIM = 256  # PCA dimensions kept (MiniLM's 384 → 256: Model2Vec's default)
BATCH = 512  # vocabulary tokens per forward pass while distilling
_REEXPORT = "re-export it with `scim-edge models export --force`"


def distill(model_dir: Path, session: Any, *, batch: int = BATCH) -> float:
    """Write `static/vectors.npy` (float16, vocabulary × DIM) into `model_dir` from its
    tokenizer and an open ONNX session of its fp32 graph; return the seconds it took."""
    t0 = time.perf_counter()
    tok = load_tokenizer(model_dir, model_dir.name)
    vocab = tok.get_vocab_size(with_added_tokens=True)
    wrap = tok.encode("").ids  # the special tokens around any text: [CLS] [SEP] for BERT
    head, tail = wrap[:1], wrap[1:]
    inputs = {i.name for i in session.get_inputs()}
    output = session.get_outputs()[0].name
    rows: list[np.ndarray] = []
    for start in range(0, vocab, batch):
        ids = np.arange(start, min(vocab, start + batch), dtype=np.int64)[:, None]
        n = ids.shape[0]
        x = np.hstack([np.full((n, len(head)), head, np.int64), ids,
                       np.full((n, len(tail)), tail, np.int64)])  # fmt: skip
        feeds = {"input_ids": x, "attention_mask": np.ones_like(x)}
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(x)
        rows.append(session.run([output], feeds)[0].mean(axis=1))
    table = np.concatenate(rows).astype(np.float64)
    table -= table.mean(axis=0)
    _, _, vt = np.linalg.svd(table, full_matrices=False)
    table = table @ vt[: min(DIM, vt.shape[0])].T
    table *= np.log1p(np.arange(vocab, dtype=np.float64))[:, None]  # Zipf: id ~ frequency rank
    (model_dir / VARIANT).mkdir(exist_ok=True)
    np.save(model_dir / TABLE, table.astype("<f2"), allow_pickle=False)
    return time.perf_counter() - t0


class StaticEmbedding:
    """`embed(texts)` like `EmbeddingModel`'s: the mean of the texts' token rows, unit length."""

    variant = VARIANT
    provider = "cpu"

    def __init__(self, *, path: Path, name: str, table: np.ndarray, tokenizer: Any) -> None:
        self.path = path
        self.name = name
        self.tokenizer = tokenizer
        self._table = table
        self.dim = int(table.shape[1])

    @classmethod
    def load(cls, model_dir: Path, name: str) -> StaticEmbedding:
        """The distilled table of an exported model; a one-line error if it is unreadable."""
        try:
            table = np.load(model_dir / TABLE, allow_pickle=False)
        except (OSError, ValueError, EOFError) as e:
            raise ModelError(
                f"cannot read {TABLE} of '{name}': {' '.join(str(e).split())[:160]}",
                hint=_REEXPORT,
            ) from None
        if table.ndim != 2 or not table.shape[0]:
            raise ModelError(
                f"{TABLE} of '{name}' is not a token table (shape {table.shape})",
                hint=_REEXPORT,
            )
        tokenizer = load_tokenizer(model_dir, name)
        if tokenizer.get_vocab_size(with_added_tokens=True) != table.shape[0]:
            raise ModelError(
                f"{TABLE} of '{name}' has {table.shape[0]} rows for a vocabulary of "
                f"{tokenizer.get_vocab_size(with_added_tokens=True)}",
                hint=_REEXPORT,
            )
        return cls(path=model_dir, name=name, table=table.astype(np.float32), tokenizer=tokenizer)

    def embed(self, texts: Sequence[str], *_: Any, **__: Any) -> np.ndarray:
        """float32 (len(texts), dim); a text with no tokens is the zero vector."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not a single string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encs = self.tokenizer.encode_batch(list(texts), add_special_tokens=False)
        lengths = np.array([len(e.ids) for e in encs], dtype=np.int64)
        full = np.flatnonzero(lengths)
        if not full.size:
            return out
        ids = np.fromiter((t for i in full for t in encs[i].ids), np.int64, int(lengths.sum()))
        starts = np.concatenate(([0], np.cumsum(lengths[full])[:-1]))
        sums = np.add.reduceat(self._table[ids], starts, axis=0)
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        out[full] = sums / np.clip(norms, 1e-12, None)
        return out
