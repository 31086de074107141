"""Sentence embeddings with ONNX Runtime (for reranking and vector retrieval).

The exported graph returns token embeddings; pooling happens here exactly as
sentence-transformers does it: mean over the attention mask, then L2 normalisation
(when the source model had a Normalize module). Inputs are truncated to the model's
`max_seq_length`, as sentence-transformers truncates them.

Speed at Wikipedia scale (millions of passages):
- the int8 variant (dynamic quantisation of the fused graph, made by `models export`) is
  the CPU default when the model has one; fp32 runs on CUDA, and wherever int8 is absent;
- CUDA is used when a probe says it can load (never asked for blindly, so a CPU-only
  machine prints no provider errors);
- texts are tokenised once, sorted by token count and cut into batches under a token
  budget, so a batch pads to nearly its own length (short passages are not padded to the
  longest passage of a mixed batch).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from models import static_embedding, store
from models.seq2seq import cuda_available, load_tokenizer, open_session, read_json
from scim_edge.errors import ModelError

# Padded tokens per batch (rows x the longest row). On the CPU a batch of ~1k tokens keeps
# its activations in cache (measured: 1024 beats 4096 by ~15% and 16384 by ~2x on MiniLM
# int8); a GPU wants large batches.
BATCH_TOKENS = {"cpu": 1024, "cuda": 65536}
BATCH_ROWS = {"cpu": 64, "cuda": 1024}


class EmbeddingModel:
    def __init__(
        self,
        *,
        path: Path,
        name: str,
        session,
        tokenizer,
        pooling: dict,
        max_len: int,
        variant: str = "fp32",
        provider: str = "cpu",
        pad_id: int = 0,
    ):
        self.path = path
        self.name = name
        self.variant = variant
        self.provider = provider
        self.pad_id = pad_id
        self.tokenizer = tokenizer
        self._sess = session
        self._inputs = [i.name for i in session.get_inputs()]
        self._output = session.get_outputs()[0].name
        self._normalize = bool(pooling.get("normalize", True))
        self.max_seq_length = max_len
        last = session.get_outputs()[0].shape[-1]
        self.dim = (
            last if isinstance(last, int) else int(read_json(path / "config.json")["hidden_size"])
        )

    @classmethod
    def load(
        cls,
        path: Path | str,
        threads: int | None = None,
        *,
        verify_hashes: bool = False,
        variant: str | None = None,
        provider: str | None = None,
    ) -> EmbeddingModel | static_embedding.StaticEmbedding:
        """`variant`: "fp32" or "int8" (default: fp32 on CUDA, int8 on the CPU when the
        model has it), or "static" (token vectors distilled at export: never the default,
        chosen when passage vectors are written with it). `provider`: "cpu", "cuda" or
        None (CUDA when it can load)."""
        model_dir = Path(path)
        if not (model_dir / store.MANIFEST).is_file():
            model_dir = store.resolve_model(str(path), kind="embedding")
        manifest = store.read_manifest(model_dir)
        name = str(manifest.get("name") or model_dir.name)
        if manifest["kind"] != "embedding":
            raise ModelError(
                f"model '{name}' is a {manifest['kind']} model, not an embedding model"
            )
        have = list(manifest.get("variants") or {})
        if variant is not None and variant not in have:
            raise ModelError(
                f"model '{name}' has no {variant} variant (it has {', '.join(have) or 'none'})",
                hint="re-export it with `scim-edge models export --force` to add int8 and static",
            )
        if variant == static_embedding.VARIANT:
            _check_files(model_dir, name, variant, verify_hashes)
            return static_embedding.StaticEmbedding.load(model_dir, name)
        if provider not in (None, "cpu", "cuda"):
            raise ModelError(f"unknown provider {provider!r} (use cpu or cuda)")
        if provider == "cuda" and not cuda_available():
            raise ModelError(
                "the CUDA provider is not available",
                hint="pip install 'scim-edge[gpu]' where a GPU is visible",
            )
        if provider is None:
            provider = (
                "cuda" if variant != "int8" and "fp32" in have and cuda_available() else "cpu"
            )
        if variant is None:
            variant = "int8" if provider == "cpu" and "int8" in have else "fp32"
        if provider == "cuda" and variant == "int8":
            raise ModelError("the int8 variant runs on the CPU provider only; use fp32 on CUDA")
        _check_files(model_dir, name, variant, verify_hashes)
        files = store.variant_files(model_dir, manifest, variant)
        if "model" not in files:
            raise ModelError(f"model '{name}' lacks {variant}/model.onnx")
        session = open_session(files["model"], model_name=name, provider=provider, threads=threads)
        if provider == "cuda" and "CUDAExecutionProvider" not in session.get_providers():
            provider = "cpu"  # ONNX Runtime fell back (CUDA libraries missing)
        tokenizer = load_tokenizer(model_dir, name)
        st = read_json(model_dir / "sentence_bert_config.json")
        max_len = int(st.get("max_seq_length", 256))
        tokenizer.enable_truncation(max_length=max_len)
        pad_id = int(read_json(model_dir / "config.json").get("pad_token_id") or 0)
        return cls(
            path=model_dir,
            name=name,
            session=session,
            tokenizer=tokenizer,
            pooling=read_json(model_dir / "pooling.json"),
            max_len=max_len,
            variant=variant,
            provider=provider,
            pad_id=pad_id,
        )

    def embed(
        self, texts: Sequence[str], batch_size: int | None = None, batch_tokens: int | None = None
    ) -> np.ndarray:
        """float32 array (len(texts), dim); rows are unit length for normalising models.

        A batch holds at most `batch_size` texts and at most `batch_tokens` padded tokens;
        texts of similar token count go together. Order and batching do not change a
        vector beyond float rounding."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not a single string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        batch_size = batch_size or BATCH_ROWS.get(self.provider, 64)
        batch_tokens = batch_tokens or BATCH_TOKENS.get(self.provider, 1024)
        encs = self.tokenizer.encode_batch(list(texts))
        lengths = [max(1, len(e.ids)) for e in encs]
        for idx in length_buckets(lengths, batch_size, batch_tokens):
            width = max(lengths[i] for i in idx)
            ids = np.full((len(idx), width), self.pad_id, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            types = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                e = encs[i]
                n = len(e.ids)
                ids[row, :n] = e.ids
                mask[row, :n] = 1
                types[row, :n] = e.type_ids
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = types
            out[idx] = self._pool(self._sess.run([self._output], feeds)[0], mask)
        return out

    def _pool(self, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Mean over the attention mask, then L2 normalisation (sentence-transformers)."""
        m = mask[:, :, None].astype(np.float32)
        vecs = (tokens * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        if self._normalize:
            vecs = vecs / np.clip(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12, None)
        return vecs


def _check_files(model_dir: Path, name: str, variant: str, verify_hashes: bool) -> None:
    """Sizes against the manifest always (cheap: a truncated copy fails here, in one line),
    hashes too when asked."""
    store.check_sizes(model_dir, variant)
    if verify_hashes and (problems := store.verify(model_dir)):
        raise ModelError(f"model '{name}' failed verification: {problems[0]}")


def length_buckets(lengths: Sequence[int], batch_size: int, batch_tokens: int) -> list[list[int]]:
    """Indices grouped into batches of similar length: sorted by length, each batch cut
    when one more row would take it over `batch_size` rows or `batch_tokens` padded
    tokens (rows x the longest row). A row longer than the budget gets a batch alone."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    batches: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        # sorted ascending, so the new row is the batch's longest
        if cur and (len(cur) + 1 > batch_size or (len(cur) + 1) * lengths[i] > batch_tokens):
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches
