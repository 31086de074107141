"""The model store: one directory per installed model under `paths.models_dir()`.

Each model directory carries a `manifest.json` that records what the directory must
contain (every file with its size and sha256), so a copy carried to an air-gapped box
can be checked before it is trusted. Layout:

    NAME/manifest.json
    NAME/tokenizer.json, config.json, generation_config.json, ...   (shared files)
    NAME/fp32/*.onnx                                              (full precision: CUDA)
    NAME/int8/*.onnx                                              (dynamic int8: CPU)

Loading always compares file sizes with the manifest (cheap, and catches truncated
copies before ONNX Runtime sees them); `verify` re-hashes everything.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scim_edge import jsonl, paths
from scim_edge.atomic import OLD_PREFIX, atomic_dir, is_hidden_temp
from scim_edge.errors import ModelError

MANIFEST = "manifest.json"
FORMAT = 1
KINDS = ("seq2seq", "embedding", "critic")
VARIANTS = ("fp32", "int8")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")
_VERIFY_HINT = "run `scim-edge models verify {name}`, then re-import or re-export the model"


@dataclass
class ModelInfo:
    """One entry of `list_models()`; `problem` is set when the manifest cannot be read."""

    name: str
    path: Path
    kind: str = ""
    source: str = ""
    created: str = ""
    variants: list[str] = field(default_factory=list)
    size_bytes: int = 0
    problem: str | None = None
    role: str = ""  # "critic": a Flan-T5 fine-tuned as the Critic (`is_fine_tuned_critic`)

    @property
    def fine_tuned_critic(self) -> bool:
        return self.kind == "seq2seq" and self.role == "critic"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "kind": self.kind,
            "source": self.source,
            "created": self.created,
            "variants": self.variants,
            "size_bytes": self.size_bytes,
            "problem": self.problem,
        }


# Names the commands give a meaning of their own: a model installed under one could never
# be chosen (`--model extractive` is the built-in reader, `--critic-model default` and
# `critic list` the shipped Critic).
RESERVED_NAMES = {
    "extractive": "the built-in extractive reader's",
    "default": "the shipped Critic's",
}


def check_name(name: str) -> str:
    """A name a model may be installed under."""
    if not _NAME_RE.match(name) or is_hidden_temp(name):
        raise ModelError(
            f"invalid model name {name!r}",
            hint="use letters, digits, '.', '_' and '-', starting with a letter or digit",
        )
    if name in RESERVED_NAMES:
        raise ModelError(
            f"the name '{name}' is {RESERVED_NAMES[name]}", hint="choose another --name"
        )
    return name


def name_from_source(source: str) -> str:
    """A store name derived from a hub id or directory (`google/flan-t5-base` → `flan-t5-base`)."""
    base = source.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1] or "model"
    base = re.sub(r"[^A-Za-z0-9._-]+", "-", base).strip("-._") or "model"
    return base[:100]


# ---- hashing and manifests ------------------------------------------------------------


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            h.update(block)
    return h.hexdigest()


def file_entry(path: Path) -> dict[str, Any]:
    return {"size": path.stat().st_size, "sha256": sha256_file(path)}


def build_manifest(
    model_dir: Path,
    *,
    name: str,
    kind: str,
    source: str,
    variants: dict[str, list[str]],
    shared: list[str],
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Hash the listed files of `model_dir` into a manifest dict (file paths are relative)."""
    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r}")
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "name": name,
        "kind": kind,
        "source": source,
        "created": _dt.datetime.now(_dt.UTC).replace(microsecond=0).isoformat(),
        "files": {rel: file_entry(model_dir / rel) for rel in sorted(shared)},
        "variants": {
            v: {"files": {rel: file_entry(model_dir / rel) for rel in sorted(files)}}
            for v, files in variants.items()
        },
    }
    manifest.update(extra or {})
    return manifest


def write_manifest(model_dir: Path, manifest: dict[str, Any]) -> None:
    (model_dir / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


def read_manifest(model_dir: Path) -> dict[str, Any]:
    """The parsed manifest, or a one-line ModelError saying what is wrong with it."""
    path = Path(model_dir) / MANIFEST
    if not path.is_file():
        raise ModelError(
            f"{model_dir} is not an exported model: {MANIFEST} is missing",
            hint="export one with `scim-edge models export --from DIR_OR_HUB_ID`",
        )
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"cannot read {path}: {e}") from None
    if not isinstance(data, dict) or data.get("kind") not in KINDS:
        raise ModelError(f"{path} is not a valid model manifest (kind missing or unknown)")
    variants = data.get("variants")
    if not isinstance(variants, dict) or not variants:
        raise ModelError(f"{path} is not a valid model manifest (no variants)")
    for v, spec in variants.items():
        if not isinstance(spec, dict) or not isinstance(spec.get("files"), dict):
            raise ModelError(f"{path} is not a valid model manifest (variant {v} has no files)")
    if not isinstance(data.get("files", {}), dict):
        raise ModelError(f"{path} is not a valid model manifest (files)")
    return data


def manifest_files(manifest: dict[str, Any], variant: str | None = None) -> dict[str, dict]:
    """Relative path → {size, sha256} for the shared files plus one variant (or all)."""
    files = dict(manifest.get("files", {}))
    for v, spec in manifest["variants"].items():
        if variant is None or v == variant:
            files.update(spec["files"])
    return files


def _safe_rel(model_dir: Path, rel: str) -> Path:
    path = (model_dir / rel).resolve()
    if not path.is_relative_to(model_dir.resolve()):
        raise ModelError(f"manifest of {model_dir} names a file outside the model: {rel}")
    return path


def check_sizes(model_dir: Path, variant: str | None = None) -> dict[str, Any]:
    """Compare file sizes with the manifest; raise a one-line ModelError naming the bad file.

    Cheap enough for every load, and it catches the common damage (a truncated copy)
    before ONNX Runtime parses the file.
    """
    model_dir = Path(model_dir)
    manifest = read_manifest(model_dir)
    name = manifest.get("name") or model_dir.name
    for rel, entry in manifest_files(manifest, variant).items():
        path = _safe_rel(model_dir, rel)
        if not path.is_file():
            raise ModelError(
                f"model '{name}' is missing {rel}", hint=_VERIFY_HINT.format(name=name)
            )
        size = path.stat().st_size
        if size != entry.get("size"):
            raise ModelError(
                f"model file {rel} of '{name}' is truncated or corrupt "
                f"({size} bytes, expected {entry.get('size')})",
                hint=_VERIFY_HINT.format(name=name),
            )
    return manifest


def verify(model_dir: Path) -> list[str]:
    """Re-hash every file in the manifest; return one line per problem (empty when sound)."""
    model_dir = Path(model_dir)
    try:
        manifest = read_manifest(model_dir)
    except ModelError as e:
        return [e.one_line()]
    problems: list[str] = []
    for rel, entry in manifest_files(manifest).items():
        try:
            path = _safe_rel(model_dir, rel)
        except ModelError as e:
            problems.append(e.one_line())
            continue
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        size = path.stat().st_size
        if size != entry.get("size"):
            problems.append(f"{rel}: size {size}, expected {entry.get('size')}")
            continue
        if sha256_file(path) != entry.get("sha256"):
            problems.append(f"{rel}: sha256 mismatch (file corrupted or modified)")
    return problems


# ---- the store ------------------------------------------------------------------------


def is_fine_tuned_critic(model_dir: Path) -> bool:
    """A Flan-T5 model that `critic train --fine-tune` made (kind seq2seq, marked `role:
    critic`): simrag's model critic runs it, not the trained Critic's code."""
    try:
        manifest = read_manifest(model_dir)
    except ModelError:
        return False
    return ModelInfo("", model_dir, str(manifest["kind"]), role=_role(manifest)).fine_tuned_critic


def _role(manifest: dict[str, Any]) -> str:
    return str(manifest.get("role", ""))


def list_models() -> list[ModelInfo]:
    """Installed models, sorted by name (hidden temp dirs of running exports are skipped)."""
    root = paths.models_dir()
    if not root.is_dir():
        return []
    out: list[ModelInfo] = []
    for child in sorted(root.iterdir(), key=lambda p: p.name):
        if not child.is_dir() or is_hidden_temp(child.name) or child.name.startswith("."):
            continue
        info = ModelInfo(name=child.name, path=child)
        try:
            m = read_manifest(child)
        except ModelError as e:
            info.problem = e.one_line()
            out.append(info)
            continue
        info.kind = m["kind"]
        info.role = _role(m)
        info.source = str(m.get("source", ""))
        info.created = str(m.get("created", ""))
        info.variants = sorted(m["variants"])
        info.size_bytes = sum(int(e.get("size", 0)) for e in manifest_files(m).values())
        out.append(info)
    return out


def _not_installed(name: str) -> ModelError:
    return ModelError(f"model '{name}' is not installed (see scim-edge models list)")


def default_model(kind: str = "seq2seq") -> Path | None:
    """The first sound installed model of `kind` (by name), or None when there is none. A
    Flan-T5 fine-tuned as the Critic is never the generator by default."""
    for info in list_models():
        if info.problem is None and info.kind == kind and not info.fine_tuned_critic:
            return info.path
    return None


def _installed_dir(name: str) -> Path | None:
    """The folder of installed model `name` ("flan/", as a shell completes it, is "flan"),
    or None when no model of that name is installed."""
    bare = paths.plain_name(name)
    path = paths.models_dir() / bare
    if _NAME_RE.match(bare) and not is_hidden_temp(bare) and path.is_dir():
        return path
    return None


def resolve_model(name: str | None, kind: str | None = "seq2seq") -> Path:
    """Directory of model `name` (a store name or a path to an exported model directory).

    With `name=None`, the only/first installed model of `kind`; none → ModelError.
    """
    if name is None:
        found = default_model(kind or "seq2seq")
        if found is None:
            raise ModelError(
                f"no {kind or 'seq2seq'} model is installed",
                hint="run `scim-edge models export --from DIR_OR_HUB_ID` or `models import DIR`",
            )
        return found
    local = ("/" in name or os.sep in name or name.startswith(".")) and (
        Path(name) / MANIFEST
    ).is_file()
    if local:
        path = Path(name).expanduser().resolve()
    elif (installed := _installed_dir(name)) is not None:
        path = installed
    else:
        raise _not_installed(name)
    manifest = read_manifest(path)
    if kind is not None and manifest["kind"] != kind:
        raise ModelError(f"model '{name}' is a {manifest['kind']} model, not {kind}")
    return path


def import_model(src_dir: Path | str, name: str | None = None, force: bool = False) -> Path:
    """Validate an exported model directory (manifest + hashes) and copy it into the store."""
    src = Path(src_dir).expanduser()
    if src.exists() and not src.is_dir():
        raise ModelError(
            f"{src} is a file; `models import` takes the directory a model was exported to",
            hint="the folder that holds its manifest.json",
        )
    if not src.is_dir():
        raise ModelError(f"no such directory: {src}")
    manifest = read_manifest(src)
    problems = verify(src)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ModelError(f"cannot import {src}: {problems[0]}{more}")
    name = check_name(name or str(manifest.get("name") or "") or name_from_source(src.name))
    target = paths.models_dir() / name
    if target.resolve() == src.resolve():
        raise ModelError(f"{src} is already the installed model '{name}'")
    with atomic_dir(target, force=force, what="model") as tmp:
        for rel in manifest_files(manifest):
            dst = tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / rel, dst)
        manifest = dict(manifest, name=name)
        write_manifest(tmp, manifest)
        copied = verify(tmp)
        if copied:
            raise ModelError(f"copy of {src} failed verification: {copied[0]}")
    return target


def remove(name: str) -> Path:
    """Remove an installed model (renamed aside first, so a crash leaves no half model)."""
    path = _installed_dir(name)
    if path is None:
        raise _not_installed(name)
    aside = path.parent / f"{OLD_PREFIX}{path.name}-{os.getpid()}-{os.urandom(3).hex()}"
    os.rename(path, aside)
    shutil.rmtree(aside, ignore_errors=True)
    return path


def variant_files(model_dir: Path, manifest: dict[str, Any], variant: str) -> dict[str, Path]:
    """Stem (`encoder_model`, `decoder_model`, ...) → path of that variant's ONNX files."""
    spec = manifest["variants"].get(variant)
    if spec is None:
        raise ModelError(
            f"model '{manifest.get('name') or model_dir.name}' has no {variant} variant",
            hint=f"it has: {', '.join(sorted(manifest['variants']))}",
        )
    return {Path(rel).stem: model_dir / rel for rel in spec["files"] if rel.endswith(".onnx")}
