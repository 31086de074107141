"""Sentence embeddings with ONNX Runtime (for reranking and vector retrieval).

The exported graph returns token embeddings; pooling happens here exactly as
sentence-transformers does it: mean over the attention mask, then L2 normalisation
(when the source model had a Normalize module). Inputs are truncated to the model's
`max_seq_length`, as sentence-transformers truncates them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from models import store
from models.seq2seq import load_tokenizer, open_session, read_json
from scim_edge.errors import ModelError


class EmbeddingModel:
    def __init__(self, *, path: Path, name: str, session, tokenizer, pooling: dict, max_len: int):
        self.path = path
        self.name = name
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
        cls, path: Path | str, threads: int | None = None, *, verify_hashes: bool = False
    ) -> EmbeddingModel:
        model_dir = Path(path)
        if not (model_dir / store.MANIFEST).is_file():
            model_dir = store.resolve_model(str(path), kind="embedding")
        manifest = store.read_manifest(model_dir)
        name = str(manifest.get("name") or model_dir.name)
        if manifest["kind"] != "embedding":
            raise ModelError(
                f"model '{name}' is a {manifest['kind']} model, not an embedding model"
            )
        store.check_sizes(model_dir, "fp32")
        if verify_hashes and (problems := store.verify(model_dir)):
            raise ModelError(f"model '{name}' failed verification: {problems[0]}")
        files = store.variant_files(model_dir, manifest, "fp32")
        if "model" not in files:
            raise ModelError(f"model '{name}' lacks fp32/model.onnx")
        session = open_session(files["model"], model_name=name, provider="cpu", threads=threads)
        tokenizer = load_tokenizer(model_dir, name)
        st = read_json(model_dir / "sentence_bert_config.json")
        max_len = int(st.get("max_seq_length", 256))
        tokenizer.enable_truncation(max_length=max_len)
        pad_id = int(read_json(model_dir / "config.json").get("pad_token_id") or 0)
        tokenizer.enable_padding(pad_id=pad_id, pad_token=tokenizer.id_to_token(pad_id) or "[PAD]")
        return cls(
            path=model_dir,
            name=name,
            session=session,
            tokenizer=tokenizer,
            pooling=read_json(model_dir / "pooling.json"),
            max_len=max_len,
        )

    def embed(self, texts: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """float32 array (len(texts), dim); rows are unit length for normalising models."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a list of texts, not a single string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Sorting by length keeps padding (wasted compute) small within each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            encs = self.tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.asarray([e.ids for e in encs], dtype=np.int64)
            mask = np.asarray([e.attention_mask for e in encs], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.asarray([e.type_ids for e in encs], dtype=np.int64)
            tokens = self._sess.run([self._output], feeds)[0]
            m = mask[:, :, None].astype(np.float32)
            summed = (tokens * m).sum(axis=1)
            counts = np.clip(m.sum(axis=1), 1e-9, None)
            vecs = summed / counts
            if self._normalize:
                norms = np.linalg.norm(vecs, axis=1, keepdims=True)
                vecs = vecs / np.clip(norms, 1e-12, None)
            out[idx] = vecs
        return out
