"""Generators: Flan-T5 through ONNX Runtime, or the built-in extractive generator.

`make_generator(settings)` picks one:
- `settings.model == "extractive"` → the extractive generator;
- a model name (or directory) → that ONNX model (not installed → ModelError, exit 2);
- None → the installed default seq2seq model, else the extractive generator with one
  note saying so.
`models.*` is imported lazily, so the extractive path needs no ONNX Runtime.
"""

from __future__ import annotations

from typing import Any

from scim_edge.errors import ModelError
from scim_edge.settings import Settings

NO_MODEL_NOTE = "no Flan-T5 model installed: using the extractive generator"


def make_generator(settings: Settings) -> tuple[Any, list[str]]:
    from scim_edge.generation.extractive import ExtractiveGenerator

    if settings.model == "extractive":
        return ExtractiveGenerator(settings), []
    try:
        from models import store
    except ImportError:
        store = None  # type: ignore[assignment]
    if settings.model:
        if store is None:
            raise ModelError(
                f"model '{settings.model}' cannot be loaded: the model store is missing"
            )
        path = store.resolve_model(settings.model, "seq2seq")
        return _load_onnx(path, settings), []
    path = store.default_model("seq2seq") if store is not None else None
    if path is None:
        return ExtractiveGenerator(settings), [NO_MODEL_NOTE]
    return _load_onnx(path, settings), []


def _load_onnx(path, settings: Settings):
    from scim_edge.generation.onnx_generator import OnnxGenerator

    try:
        return OnnxGenerator.load(path, settings)
    except ImportError as e:
        raise ModelError(f"cannot load the ONNX runtime for {path}: {e}") from None
