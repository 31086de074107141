"""Trained Critics in the model store: install, list and verify (`scim-edge critic …`).

A Critic trained by `scim-edge critic train` is a model of kind `critic`: a directory with
`critic.json` (the weights and the Platt map) and the store's usual manifest, which adds
the generator and settings it was trained for and its held-out accuracy, AUROC and
calibration, so `models list|verify|remove` and bundles treat it like any other model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scim_edge import paths
from scim_edge.errors import ModelError
from scim_edge.trained_critic import CRITIC_FILE, TrainedCritic, default_path, load_file


def install(critic: TrainedCritic, name: str, *, source: str, force: bool = False) -> Path:
    """Write `critic` into the store as model `name`, atomically."""
    from models import store
    from scim_edge.atomic import atomic_dir

    name = store.check_name(name)
    target = paths.models_dir() / name
    with atomic_dir(target, force=force, what="model") as tmp:
        (tmp / CRITIC_FILE).write_text(json.dumps(critic.to_dict(), indent=1) + "\n", "utf-8")
        manifest = store.build_manifest(
            tmp,
            name=name,
            kind="critic",
            source=source,
            variants={"numpy": [CRITIC_FILE]},
            shared=[],
            extra={
                "generator": critic.generator,
                "trained_for": critic.meta.get("trained_for", {}),
                "heldout": critic.heldout,
                "rounds": critic.meta.get("rounds", {}),
            },
        )
        store.write_manifest(tmp, manifest)
    return target


def check_replaceable(name: str, force: bool) -> None:
    """Before any training: a name taken by a model is refused, and with --force only a
    Critic is replaced (a generator or an embedding model is never overwritten by one;
    `ask --model NAME` would then find a Critic where its Flan-T5 was)."""
    from models import store
    from scim_edge.errors import UserError

    target = paths.models_dir() / store.check_name(name)
    if not (target.exists() or target.is_symlink()):
        return
    try:
        manifest = store.read_manifest(target)
    except ModelError:
        manifest = {}  # a damaged model: --force may replace it
    kind = str(manifest.get("kind", ""))
    role = str(manifest.get("role", ""))
    critic = kind == "critic" or store.ModelInfo(name, target, kind, role=role).fine_tuned_critic
    if kind and not critic:
        raise UserError(
            f"model '{name}' is a {kind} model, not a Critic; nothing was trained",
            hint="choose another --name (--force replaces only a Critic)",
        )
    if not force:
        raise UserError(f"model already exists: {target}", hint="use --force to replace it")


@dataclass
class CriticEntry:
    name: str
    where: str  # store | index | default
    path: Path
    generator: str = ""
    heldout: dict[str, Any] | None = None
    problem: str | None = None
    # a Flan-T5 model fine-tuned as the Critic (`critic train --fine-tune`): it judges
    # simrag's rounds under --critic model; `path` is its model folder
    fine_tuned: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "where": self.where, "path": str(self.path),
                "generator": self.generator, "heldout": self.heldout or {},
                "problem": self.problem, "fine_tuned": self.fine_tuned}  # fmt: skip


def _entry(name: str, where: str, path: Path) -> CriticEntry:
    try:
        c = load_file(path)
    except ModelError as e:
        return CriticEntry(name, where, path, problem=e.one_line())
    return CriticEntry(name, where, path, c.generator, c.heldout)


def entries() -> list[CriticEntry]:
    """Every Critic this installation can use: the store's, each index's, the default."""
    from models import store
    from scim_edge.retrieval import list_indexes

    out = []
    for info in store.list_models():
        if info.kind == "critic":
            out.append(_entry(info.name, "store", info.path / CRITIC_FILE))
        elif info.fine_tuned_critic:
            out.append(CriticEntry(info.name, "store", info.path, fine_tuned=True))
    for idx in list_indexes():
        own = idx.path / "practice" / CRITIC_FILE
        if own.is_file():
            out.append(_entry(f"index:{idx.name}", "index", own))
    if default_path().is_file():
        out.append(_entry("default", "default", default_path()))
    return out


def verify(name: str | None = None) -> list[tuple[CriticEntry, list[str]]]:
    """(entry, problems) for each Critic (or the one named): store Critics are re-hashed
    against their manifest, and every Critic must load."""
    from models import store

    results = []
    for e in entries():
        if name is not None and e.name != name:
            continue
        problems = [e.problem] if e.problem else []
        if e.where == "store":
            problems += store.verify(e.path if e.fine_tuned else e.path.parent)
        results.append((e, problems))
    if name is not None and not results:
        raise ModelError(f"no Critic named '{name}' (see `scim-edge critic list`)")
    return results
