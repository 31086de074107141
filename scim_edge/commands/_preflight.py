"""Checks a command makes before it starts its real work (and before a UI opens), so a
wrong `--index` or `--model` is one line, exit 2, with advice that works as typed.

Kept to what is cheap: reading directories and manifests, never opening an index or
loading a model."""

from __future__ import annotations

from pathlib import Path

from scim_edge import paths
from scim_edge.errors import IndexError_, ModelError


def installed_model_names(kind: str = "seq2seq") -> list[str]:
    try:
        from models.store import list_models
    except ImportError:
        return []
    return [m.name for m in list_models() if m.problem is None and m.kind == kind]


def check_model(name: str | None) -> None:
    """Fail now when `--model NAME` names no installed model, listing those that are."""
    if not name or name == "extractive":
        return
    try:
        from models.store import resolve_model
    except ImportError:
        raise ModelError(f"model '{name}' cannot be loaded: the model store is missing") from None
    try:
        resolve_model(name, "seq2seq")
    except ModelError:
        names = ["extractive", *installed_model_names()]
        raise ModelError(
            f"model '{name}' is not installed (installed: {', '.join(names)})",
            hint="install one with `scim-edge models import DIR`, or use --model extractive",
        ) from None


def check_index(name: str | None) -> Path | None:
    """The index directory `--index` means, failing now (one line) when it is not one.

    A directory outside the indexes directory that holds no index is told how to build
    one there, by a path the `--index` flag then accepts."""
    if not name:
        return None
    from scim_edge.retrieval import MANIFEST, list_indexes, resolve_index_dir

    where = resolve_index_dir(name)
    if (where / MANIFEST).is_file():
        return where
    if where.parent.resolve() == paths.indexes_dir().resolve():
        return where  # an installed index that is broken: the opener's own advice fits
    installed = ", ".join(i.name for i in list_indexes()) or "none"
    target = where / "wiki-index"
    raise IndexError_(
        f"{where} is a directory but not a scim-edge index (no {MANIFEST}; "
        f"installed indexes: {installed})",
        hint=f"build one there with `scim-edge build-index DUMP --out {target}` and pass "
        f"--index {target}",
    )
