"""Embedding helpers shared by the vector retriever and the embedding reranker.

Both need the same three things, and neither should import the other to get them:
- the installed embedding model (all-MiniLM-L6-v2), opened once per engine and kept in
  `engine.cache`, so the retriever and the reranker share one ONNX session;
- what text stands for a passage when it is embedded (`passage_text`);
- the passage embeddings stored beside an index (`embeddings.f16` + `embeddings.json`),
  read memory-mapped; `vector_index` writes them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scim_edge import jsonl
from scim_edge.errors import IndexError_
from scim_edge.types import Passage

if TYPE_CHECKING:
    from scim_edge.settings import Settings

MATRIX = "embeddings.f16"
META = "embeddings.json"


def passage_text(p: Passage) -> str:
    """What gets embedded for a passage: its title gives the text its subject."""
    return f"{p.title}. {p.text}" if p.title else p.text


def embed_texts(model: Any, texts: list[str]) -> np.ndarray:
    """float32 (len(texts), dim) unit vectors from any model with `embed(list[str])`."""
    return np.asarray(model.embed(texts), dtype=np.float32)


def embed_query(model: Any, text: str) -> np.ndarray:
    return embed_texts(model, [text])[0]


# ---- the model ------------------------------------------------------------------------


def load_embedding_model(
    settings: Settings,
    engine: Any | None = None,
    name: str | None = None,
    *,
    variant: str | None = None,
    index_dir: Path | None = None,
    threads: int | None = None,
) -> tuple[Any, str]:
    """The installed embedding model (Settings.embedding_model, or the default one) and
    its name. `variant` pins fp32 or int8 (queries must be embedded the way the stored
    vectors were); None lets the runtime choose (int8 on the CPU when installed). With
    none installed, the model that made the vectors of the index (`index_dir`, else the
    engine's) where it still is. `threads`: the session's, None for every core.

    Cached in `engine.cache`, so every slot of a session shares one ONNX session."""
    wanted = name or settings.embedding_model
    cache = getattr(engine, "cache", None)
    if index_dir is None:
        index_dir = index_dir_of(getattr(engine, "retriever", None))

    def build() -> tuple[Any, str]:
        return _load_embedding(wanted, index_dir, variant, threads)

    if cache is None:
        return build()
    return cache.get(("embedding", wanted or "", variant or "", threads or 0), build)


def _load_embedding(
    wanted: str | None, index_dir: Path | None, variant: str | None, threads: int | None = None
):
    from models.embedding import EmbeddingModel
    from models.store import default_model, resolve_model
    from scim_edge.errors import ModelError

    try:
        path = resolve_model(wanted, "embedding") if wanted else default_model("embedding")
    except ModelError:  # not in the store: the index's own, if that is the one named
        path = _index_model_dir(index_dir, wanted)
        if path is None:
            raise
    if path is None:
        path = _index_model_dir(index_dir)  # the model that made the index's own vectors
    if path is None:
        raise ModelError(
            "no embedding model is installed",
            hint="install all-MiniLM-L6-v2 with `scim-edge models export --from "
            "sentence-transformers/all-MiniLM-L6-v2 --kind embedding` (the network once; "
            "for a machine without it, bring the model in a bundle: `scim-edge bundle`)",
        )
    path = Path(getattr(path, "path", path))
    model = EmbeddingModel.load(path, variant=available_variant(path, variant), threads=threads)
    return model, str(getattr(model, "name", "") or path.name)


def _index_model_dir(index_dir: Path | None, name: str | None = None) -> Path | None:
    """The directory of the model that wrote the index's vectors, if it is still there
    (an index carried with its model outside the store), and is `name` when given."""
    if index_dir is None or not (index_dir / META).is_file():
        return None
    try:
        meta = jsonl.loads((index_dir / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if name is not None and meta.get("model") != name:
        return None
    found = Path(str(meta.get("model_path") or ""))
    return found if (found / "manifest.json").is_file() else None


def available_variant(model_dir: Path, variant: str | None) -> str | None:
    """`variant` when the model has it, else None (the runtime's choice): a model exported
    before int8 existed still answers queries against vectors an int8 model made."""
    if variant is None:
        return None
    try:
        from models.store import read_manifest

        have = read_manifest(model_dir).get("variants") or {}
    except Exception:  # noqa: BLE001 - the load that follows reports a broken model
        return None
    return variant if variant in have else None


# ---- stored passage embeddings ---------------------------------------------------------


@dataclasses.dataclass
class Embeddings:
    meta: dict[str, Any]
    matrix: np.ndarray  # memory-mapped (count, dim) float16
    doc_ids: list[str]
    row_of: dict[str, int]

    @property
    def model(self) -> str:
        return str(self.meta.get("model", ""))

    @property
    def variant(self) -> str | None:
        v = self.meta.get("variant")
        return str(v) if v else None


def has_embeddings(index_dir: Path) -> bool:
    return (index_dir / META).exists() and (index_dir / MATRIX).exists()


def open_embeddings(index_dir: Path) -> Embeddings:
    if not has_embeddings(index_dir):
        raise IndexError_(
            f"index {index_dir.name} has no passage embeddings; "
            "add them with `scim-edge build-index --embeddings MODEL --name NAME`"
        )
    try:
        meta = jsonl.loads((index_dir / META).read_text(encoding="utf-8"))
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


def index_dir_of(retriever: Any | None) -> Path | None:
    """The directory of the index a (BM25) retriever reads, if it says."""
    for attr in ("index_dir", "path", "directory"):
        value = getattr(retriever, attr, None)
        if value:
            return Path(value)
    return None


def stored_embeddings(engine: Any | None, model_name: str) -> Embeddings | None:
    """The index's stored passage embeddings when the same model made them, else None."""
    index_dir = index_dir_of(getattr(engine, "retriever", None))
    if index_dir is None or not has_embeddings(index_dir):
        return None
    try:
        emb = open_embeddings(index_dir)
    except Exception:  # noqa: BLE001 - a broken store only means "embed afresh"
        return None
    return emb if emb.model == model_name else None
