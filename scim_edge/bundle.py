"""Carry indexes, models and NLTK data to an air-gapped machine in one tar archive.

`create_bundle` streams the chosen directories into a tar, hashing every file as it goes
(one pass, constant memory), and writes `SHA256SUMS` and `BUNDLE.json` last, so the
archive is verifiable by `sha256sum -c` as well as by `unbundle`. The archive appears
under its final name only when complete (temp file + rename).

`install_bundle` streams the archive into a hidden staging directory beside the data
directories (same file system, so installing is a rename), hashing while it extracts.
Nothing is installed until every hash matches BUNDLE.json. Member names are checked
before any byte is written: no absolute paths, no `..`, no links, no device files, only
the top-level areas a bundle holds. Each index and each model is then swapped into
place atomically; an existing one is replaced only with `force`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import shutil
import sys
import tarfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Any

from scim_edge import __version__, jsonl, paths
from scim_edge.atomic import (
    TMP_PREFIX,
    alive,
    atomic_dir,
    clear_stale,
    ensure_writable_dir,
    is_hidden_temp,
)
from scim_edge.errors import UserError
from scim_edge.practice.store import PARTIAL as PRACTICE_PARTIAL

FORMAT = "scim-edge-bundle"
FORMAT_VERSION = 1
META_NAME = "BUNDLE.json"
SUMS_NAME = "SHA256SUMS"
AREAS = ("indexes", "models", "nltk_data", "wheelhouse")
CHUNK = 1 << 20
STAGING_NAME = "unbundle"  # staging dirs are named .tmp-unbundle-<pid>-<hex>
DISK_FULL = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)}
# Files a tool leaves in a directory that are not part of its content.
SKIP_FILES = {".tantivy-writer.lock", ".tantivy-meta.lock"}
# work in progress inside an index: an interrupted `practice`, a swap's temporary or old
# folder; none of it is the index a bundle carries
SKIP_DIRS = {PRACTICE_PARTIAL}
# NLTK resources scim_edge.textutil uses when present (category/name); the rest of NLTK
# (Treebank words, stopwords) needs no data.
NLTK_RESOURCES = ("tokenizers/punkt_tab", "taggers/averaged_perceptron_tagger_eng")

Progress = Callable[[int, int], None]  # (bytes done, bytes total)


# ---- progress ---------------------------------------------------------------------------


def _no_progress(done: int, total: int) -> None:
    return None


# ---- what goes in -----------------------------------------------------------------------


@dataclass
class Entry:
    """One file to bundle: its name inside the archive and where it is now."""

    arcname: str
    source: Path
    size: int


@dataclass
class BundlePlan:
    indexes: dict[str, Path] = field(default_factory=dict)
    models: dict[str, Path] = field(default_factory=dict)
    nltk: list[tuple[str, Path]] = field(default_factory=list)  # ("tokenizers/punkt", dir)
    wheelhouse: Path | None = None
    entries: list[Entry] = field(default_factory=list)

    @property
    def total_bytes(self) -> int:
        return sum(e.size for e in self.entries)


def _installed(base: Path) -> list[str]:
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and paths.is_plain_name(p.name))


def _resolve(kind: str, name: str, base: Path) -> tuple[str, Path]:
    """An installed index/model by name, or a directory given by path."""
    if not Path(name).expanduser().is_dir():
        name = paths.plain_name(name)  # "demo/", as a shell completes it
    given = Path(name).expanduser()
    if (given.is_dir() and (given / "manifest.json").is_file()) and (
        os.sep in name or not (base / name).exists()
    ):
        return given.resolve().name, given.resolve()
    target = base / name
    if not paths.is_plain_name(name) or not target.is_dir():
        have = ", ".join(_installed(base)) or "none"
        raise UserError(f"no {kind} named '{name}' in {base} (installed: {have})")
    if not (target / "manifest.json").is_file():
        raise UserError(
            f"{kind} '{name}' has no manifest.json: {target}",
            hint=f"rebuild or re-export the {kind}",
        )
    return name, target


def find_nltk_data() -> list[tuple[str, Path]]:
    """NLTK resources present on this machine: the project's own nltk_data dir first, then
    NLTK's search path. Returns (category/name, path) for each resource found once."""
    dirs = [paths.nltk_data_dir()]
    with contextlib.suppress(Exception):
        import nltk

        from scim_edge import textutil  # noqa: F401 - imports NLTK without SciPy/sklearn

        dirs += [Path(p) for p in nltk.data.path]
    found: list[tuple[str, Path]] = []
    for res in NLTK_RESOURCES:
        for d in dirs:
            for cand in (d / res, d / f"{res}.zip"):
                if cand.exists() and not cand.is_symlink():
                    rel = res if cand.is_dir() else f"{res}.zip"
                    found.append((rel, cand))
                    break
            else:
                continue
            break
    return found


def _walk(root: Path, prefix: str) -> Iterator[Entry]:
    """Regular files under `root`, sorted, as archive entries; links are refused."""
    if root.is_file():
        yield Entry(prefix, root, root.stat().st_size)
        return
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not is_hidden_temp(d))
        here = Path(dirpath)
        for d in dirnames:
            if (here / d).is_symlink():
                raise UserError(f"cannot bundle a symbolic link: {here / d}")
        for fname in sorted(filenames):
            path = here / fname
            if fname in SKIP_FILES:
                continue
            st = path.lstat()
            if path.is_symlink() or not path.is_file():
                raise UserError(f"cannot bundle {path}: only regular files can be bundled")
            rel = path.relative_to(root).as_posix()
            yield Entry(f"{prefix}/{rel}", path, st.st_size)


def plan_bundle(
    indexes: Iterable[str] = (),
    models: Iterable[str] = (),
    *,
    with_nltk_data: bool = False,
    wheelhouse: Path | None = None,
) -> BundlePlan:
    """Decide what goes in. With no index and no model named, all installed ones go in."""
    indexes, models = list(indexes), list(models)
    if not indexes and not models:
        indexes = _installed(paths.indexes_dir())
        models = _installed(paths.models_dir())
    plan = BundlePlan()
    _add_named(plan.indexes, "index", indexes, paths.indexes_dir())
    for key, path in plan.indexes.items():
        _check_whole(key, path)
    _add_named(plan.models, "model", models, paths.models_dir())
    if with_nltk_data:
        plan.nltk = find_nltk_data()
    if wheelhouse is not None:
        wheelhouse = Path(wheelhouse).expanduser()
        if not wheelhouse.is_dir():
            raise UserError(f"wheelhouse is not a directory: {wheelhouse}")
        plan.wheelhouse = wheelhouse
    plan.entries = _plan_entries(plan)
    if not plan.entries:
        raise UserError(
            "nothing to bundle: no index or model is installed",
            hint="build one with scim-edge build-index, or name one with --index/--model",
        )
    return plan


def _check_whole(key: str, index: Path) -> None:
    """Refuse a damaged index before anything is written. The bundle's hashes are taken as
    it is packed, so they would vouch for the damage on the other side; an index's files
    carry Tantivy's CRC32 footers (what `doctor --hashes` reads), checked here at the cost
    of reading the index once more."""
    from scim_edge.index_files import index_file_problems
    from scim_edge.retrieval import index_manifest, rebuild_hint

    index_manifest(index)  # one that search would refuse is not shipped either
    problems = index_file_problems(index, checksums=True)
    if problems:
        raise UserError(f"index '{key}' is damaged: {problems[0]}", hint=rebuild_hint(index))


def _add_named(into: dict[str, Path], kind: str, names: list[str], base: Path) -> None:
    for name in names:
        key, path = _resolve(kind, name, base)
        if key in into:
            raise UserError(f"{kind} '{key}' named twice")
        into[key] = path


def _plan_entries(plan: BundlePlan) -> list[Entry]:
    """Every file of the planned indexes, models, NLTK resources and wheelhouse."""
    entries: list[Entry] = []
    for key, path in plan.indexes.items():
        entries += _walk(path, f"indexes/{key}")
    for key, path in plan.models.items():
        entries += _walk(path, f"models/{key}")
    for rel, path in plan.nltk:
        entries += _walk(path, f"nltk_data/{rel}")
    if plan.wheelhouse is not None:
        for e in _walk(plan.wheelhouse, "wheelhouse"):
            if "/" not in e.arcname[len("wheelhouse/") :]:
                entries.append(e)  # pip's --find-links reads one flat directory
    return entries


# ---- writing ----------------------------------------------------------------------------


class _HashingReader:
    """A file wrapper that hashes and counts what tarfile reads through it."""

    def __init__(self, f: IO[bytes], on_bytes: Callable[[int], None]) -> None:
        self.f = f
        self.sha = hashlib.sha256()
        self.n = 0
        self.on_bytes = on_bytes

    def read(self, size: int = -1) -> bytes:
        data = self.f.read(size)
        self.sha.update(data)
        self.n += len(data)
        self.on_bytes(len(data))
        return data


def _tarinfo(name: str, size: int, mtime: float | None = None) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    info.mtime = int(mtime if mtime is not None else time.time())
    info.mode = 0o644
    info.type = tarfile.REGTYPE
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def _disk_full(where: Path, need: int | None = None) -> str:
    free = _free_bytes(where)
    need_s = f", about {need / 1e6:,.1f} MB needed" if need else ""
    return f"{free / 1e6:,.1f} MB free on {where}{need_s}"


def _free_bytes(where: Path) -> int:
    p = Path(where)
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p).free
    except OSError:
        return 0


@dataclass
class BundleResult:
    path: Path
    files: int
    bytes: int
    indexes: list[str]
    models: list[str]
    nltk: list[str]
    wheelhouse_files: int
    seconds: float


ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz")


def _check_out(out: Path, force: bool) -> Path:
    """The directory the bundle `out` will be written in (one-line errors for bad targets)."""
    if out.is_dir():
        raise UserError(f"{out} is a directory; give a file name such as scim-edge.tar")
    if not out.name.endswith(ARCHIVE_SUFFIXES):
        # `unbundle` reads a plain or gzipped tar; any other name would promise a format
        # (.zip, .tar.bz2) that the file is not
        raise UserError(
            f"{out.name}: a bundle is written as a .tar or .tar.gz archive",
            hint="name it OUT.tar, OUT.tar.gz or OUT.tgz",
        )
    if out.exists() and not force:
        raise UserError(f"{out} already exists", hint="use --force to replace it")
    parent = out.parent if str(out.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"directory does not exist: {parent}")
    return parent


def _add_file(tar: tarfile.TarFile, e: Entry, advance: Callable[[int], None]) -> dict[str, Any]:
    """Stream one file into `tar`, hashing it on the way; its BUNDLE.json record."""
    try:
        f = open(e.source, "rb")  # closed by the `with` below
    except OSError as err:
        raise UserError(f"cannot read {e.source}: {err.strerror}") from None
    with f:
        st = os.fstat(f.fileno())
        reader = _HashingReader(f, advance)
        try:
            tar.addfile(_tarinfo(e.arcname, st.st_size, st.st_mtime), reader)
        except OSError as err:
            if err.errno is None and "end of data" in str(err):
                raise UserError(
                    f"{e.source} shrank while it was being bundled; run the bundle again"
                ) from None
            raise
    return {"sha256": reader.sha.hexdigest(), "size": reader.n}


def create_bundle(
    out: Path,
    plan: BundlePlan,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> BundleResult:
    """Stream `plan` into the tar `out` (gzip when it ends in .gz/.tgz)."""
    out = Path(out).expanduser()
    progress = progress or _no_progress
    parent = _check_out(out, force)
    _clear_stale_files(parent, out.name)
    total = plan.total_bytes
    need = total + 1024 * (len(plan.entries) + 4) + (1 << 20)
    gz = out.name.endswith((".tar.gz", ".tgz"))
    if not gz and _free_bytes(parent) < need:
        raise UserError(f"not enough disk space for the bundle: {_disk_full(parent, need)}")
    tmp = parent / f"{TMP_PREFIX}{out.name}-{os.getpid()}-{os.urandom(3).hex()}"
    started = time.monotonic()
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        progress(done, total)

    files: dict[str, dict[str, Any]] = {}
    try:
        with open(tmp, "xb") as raw:
            mode = "w|gz" if gz else "w|"
            with tarfile.open(fileobj=raw, mode=mode, format=tarfile.PAX_FORMAT) as tar:
                for e in plan.entries:
                    files[e.arcname] = _add_file(tar, e, advance)
                sums = "".join(f"{v['sha256']}  {k}\n" for k, v in files.items()).encode()
                tar.addfile(_tarinfo(SUMS_NAME, len(sums)), _BytesReader(sums))
                meta = json.dumps(_meta(plan, files), indent=1, ensure_ascii=False).encode()
                tar.addfile(_tarinfo(META_NAME, len(meta)), _BytesReader(meta))
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, out)
    except OSError as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if err.errno in DISK_FULL:
            raise UserError(
                f"disk full while writing {out} ({_disk_full(parent, need)}); no bundle written"
            ) from None
        raise
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    progress(total, total)
    return BundleResult(
        path=out,
        files=len(files),
        bytes=out.stat().st_size,
        indexes=list(plan.indexes),
        models=list(plan.models),
        nltk=[rel for rel, _ in plan.nltk],
        wheelhouse_files=sum(1 for k in files if k.startswith("wheelhouse/")),
        seconds=time.monotonic() - started,
    )


def _clear_stale_files(parent: Path, name: str) -> None:
    """Remove temp files of bundle runs that were killed (their PID is gone)."""
    for p in parent.glob(f"{TMP_PREFIX}{name}-*"):
        pid = p.name[len(f"{TMP_PREFIX}{name}-") :].split("-")[0]
        if p.is_file() and pid.isdigit() and not alive(int(pid)):
            with contextlib.suppress(OSError):
                p.unlink()


class _BytesReader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.data) if size < 0 else self.pos + size
        chunk = self.data[self.pos : end]
        self.pos += len(chunk)
        return chunk


def _meta(plan: BundlePlan, files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "scim_edge_version": __version__,
        "python": ".".join(map(str, sys.version_info[:3])),
        "contents": {
            "indexes": sorted(plan.indexes),
            "models": sorted(plan.models),
            "nltk_data": [rel for rel, _ in plan.nltk],
            "wheelhouse": sorted(k.split("/", 1)[1] for k in files if k.startswith("wheelhouse/")),
        },
        "files": files,
    }


# ---- reading ----------------------------------------------------------------------------


@dataclass
class Unit:
    """One thing unbundle installs atomically: an index, a model, an NLTK resource, or
    the wheelhouse."""

    kind: str  # index | model | nltk | wheelhouse
    name: str
    rel: str  # path inside the staging dir / the archive, e.g. "indexes/demo"
    target: Path
    files: int = 0
    bytes: int = 0
    replaced: bool = False
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "path": str(self.target),
            "files": self.files,
            "bytes": self.bytes,
            "replaced": self.replaced,
            "detail": self.detail,
        }


def _bad(archive: Path, why: str) -> UserError:
    return UserError(f"refusing {archive}: {why}; nothing was installed")


def check_member(archive: Path, member: tarfile.TarInfo) -> PurePosixPath | None:
    """The safe relative path of `member`, None for a directory entry, or UserError."""
    name = member.name
    if "\x00" in name or "\\" in name:
        raise _bad(archive, f"member {name!r} has a bad name")
    if name.startswith("/") or PurePosixPath(name).is_absolute():
        raise _bad(archive, f"member {name!r} has an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise _bad(archive, f"member {name!r} points outside the archive (..)")
    if member.issym() or member.islnk():
        raise _bad(archive, f"member {name!r} is a link")
    if member.isdev() or member.isfifo():
        raise _bad(archive, f"member {name!r} is a device or pipe")
    if not parts:
        return None
    if member.isdir():
        if parts[0] not in AREAS:
            raise _bad(archive, f"unexpected member {name!r}")
        return None
    if member.type not in (tarfile.REGTYPE, tarfile.AREGTYPE):
        raise _bad(archive, f"member {name!r} is not a regular file")
    rel = PurePosixPath(*parts)
    if len(parts) == 1:
        if parts[0] not in (META_NAME, SUMS_NAME):
            raise _bad(archive, f"unexpected member {name!r}")
        return rel
    area = parts[0]
    if area not in AREAS:
        raise _bad(archive, f"unexpected member {name!r}")
    if any(p.startswith(".") for p in parts[1:2]):
        raise _bad(archive, f"member {name!r} has a hidden name")
    need = {"indexes": 3, "models": 3, "nltk_data": 3, "wheelhouse": 2}[area]
    if len(parts) < need or (area == "wheelhouse" and len(parts) != 2):
        raise _bad(archive, f"member {name!r} is not inside an index, model or resource")
    return rel


def _unit_of(rel: PurePosixPath, home: Path) -> tuple[str, str, str, Path]:
    parts = rel.parts
    area = parts[0]
    if area == "indexes":
        return "index", parts[1], f"indexes/{parts[1]}", home / "indexes" / parts[1]
    if area == "models":
        return "model", parts[1], f"models/{parts[1]}", home / "models" / parts[1]
    if area == "nltk_data":
        res = f"{parts[1]}/{parts[2]}"
        return "nltk", res, f"nltk_data/{res}", home / "nltk_data" / parts[1] / parts[2]
    return "wheelhouse", "wheelhouse", "wheelhouse", home / "wheelhouse"


def _write_member(src: IO[bytes], dest: Path) -> tuple[str, int]:
    """Copy one member into the staging dir, hashing it; never follows links."""
    sha = hashlib.sha256()
    n = 0
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as out:
        while True:
            chunk = src.read(CHUNK)
            if not chunk:
                break
            sha.update(chunk)
            out.write(chunk)
            n += len(chunk)
        out.flush()
        os.fsync(out.fileno())
    return sha.hexdigest(), n


@dataclass
class UnbundleResult:
    archive: Path
    home: Path
    installed: list[Unit]
    files: int
    bytes: int
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "archive": str(self.archive),
            "home": str(self.home),
            "installed": [u.to_dict() for u in self.installed],
            "files": self.files,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
        }


def install_bundle(
    archive: Path,
    home: Path | None = None,
    *,
    force: bool = False,
    progress: Progress | None = None,
) -> UnbundleResult:
    """Verify then install a bundle into `home` (default: the data directory)."""
    archive = Path(archive).expanduser()
    home = Path(home).expanduser().resolve() if home is not None else paths.home()
    progress = progress or _no_progress
    started = time.monotonic()
    if not archive.exists():
        raise UserError(f"no such file: {archive}")
    if not archive.is_file():
        raise UserError(f"not a file: {archive}")
    ensure_writable_dir(home)
    size = archive.stat().st_size
    compressed = _is_compressed(archive)
    if not compressed and _free_bytes(home) < size:
        raise UserError(
            f"not enough disk space to unpack {archive.name}: {_disk_full(home, size)}; "
            "nothing was installed"
        )
    clear_stale(home, STAGING_NAME)
    staging = home / f"{TMP_PREFIX}{STAGING_NAME}-{os.getpid()}-{os.urandom(3).hex()}"
    try:
        staging.mkdir()
        units = _stage(archive, staging, home, size, progress, force)
        installed = [_install(u, staging, force) for u in units.values()]
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        if err.errno in DISK_FULL:
            raise UserError(
                f"disk full while unpacking {archive.name} into {home} "
                f"({_disk_full(home, None if compressed else size)}); nothing was installed"
            ) from None
        raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return UnbundleResult(
        archive=archive,
        home=home,
        installed=installed,
        files=sum(u.files for u in installed),
        bytes=sum(u.bytes for u in installed),
        seconds=time.monotonic() - started,
    )


def _is_compressed(archive: Path) -> bool:
    with open(archive, "rb") as f:
        head = f.read(6)
    return head.startswith((b"\x1f\x8b", b"BZh", b"\xfd7zXZ"))


def _new_unit(kind: str, name: str, unit_rel: str, target: Path, force: bool) -> Unit:
    """A unit met for the first time in the archive: one that is installed already is
    refused at once, before the rest of a bundle of gigabytes is read and verified."""
    unit = Unit(kind, name, unit_rel, target)
    if target.exists() or target.is_symlink():
        if not force:
            raise UserError(
                f"{kind} '{name}' already exists at {target}; nothing was installed",
                hint="use --force to replace it",
            )
        unit.replaced = True
    return unit


def _stage(
    archive: Path, staging: Path, home: Path, total: int, progress: Progress, force: bool
) -> dict[str, Unit]:
    """Extract every member into `staging`, checking names and hashing; then compare with
    BUNDLE.json. Returns the units to install, keyed by their archive path."""
    seen: dict[str, tuple[str, int]] = {}
    meta_bytes: bytes | None = None
    sums_bytes: bytes | None = None
    units: dict[str, Unit] = {}
    try:
        with open(archive, "rb") as raw, tarfile.open(fileobj=raw, mode="r|*") as tar:
            for member in tar:
                rel = check_member(archive, member)
                if rel is None:
                    continue
                key = rel.as_posix()
                if key in seen or (key == META_NAME and meta_bytes is not None):
                    raise _bad(archive, f"member {key!r} appears twice")
                src = tar.extractfile(member)
                if src is None:
                    raise _bad(archive, f"member {key!r} cannot be read")
                if len(rel.parts) == 1:
                    if member.size > 64 << 20:
                        raise _bad(archive, f"{key} is implausibly large")
                    data = src.read()
                    if key == META_NAME:
                        meta_bytes = data
                    else:
                        sums_bytes = data
                    seen[key] = ("", len(data))
                    continue
                kind, name, unit_rel, target = _unit_of(rel, home)
                if unit_rel not in units:
                    units[unit_rel] = _new_unit(kind, name, unit_rel, target, force)
                unit = units[unit_rel]
                dest = staging / rel
                dest.parent.mkdir(parents=True, exist_ok=True)
                digest, n = _write_member(src, dest)
                if n != member.size:
                    raise _bad(archive, f"member {key!r} is truncated")
                seen[key] = (digest, n)
                unit.files += 1
                unit.bytes += n
                progress(min(raw.tell(), total), total)
    except (tarfile.TarError, EOFError, zlib.error) as e:
        raise UserError(
            f"{archive} is not a complete bundle ({' '.join(str(e).split()) or 'truncated'}); "
            "nothing was installed",
            hint="copy it again and compare its size",
        ) from None
    progress(total, total)
    _verify(archive, meta_bytes, sums_bytes, seen)
    _check_artefacts(archive, staging, units, seen)
    return units


def _verify(
    archive: Path,
    meta_bytes: bytes | None,
    sums_bytes: bytes | None,
    seen: dict[str, tuple[str, int]],
) -> None:
    if meta_bytes is None:
        raise _bad(archive, f"it has no {META_NAME} (not a scim-edge bundle, or truncated)")
    try:
        meta = jsonl.loads(meta_bytes)
    except (ValueError, UnicodeDecodeError):
        raise _bad(archive, f"its {META_NAME} is not valid JSON") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise _bad(archive, f"its {META_NAME} is not a scim-edge bundle manifest")
    if meta.get("format_version") != FORMAT_VERSION:
        raise _bad(
            archive,
            f"bundle format {meta.get('format_version')!r} is not supported "
            f"(this scim-edge reads format {FORMAT_VERSION})",
        )
    listed = meta.get("files")
    if not isinstance(listed, dict):
        raise _bad(archive, f"its {META_NAME} lists no files")
    content = {k: v for k, v in seen.items() if k not in (META_NAME, SUMS_NAME)}
    for name, want in listed.items():
        if not isinstance(want, dict) or name not in content:
            raise _bad(archive, f"{name} is listed in {META_NAME} but missing from the archive")
        size, sha = want.get("size"), want.get("sha256")
        if not (isinstance(size, int) and not isinstance(size, bool)) or not isinstance(sha, str):
            raise _bad(archive, f"its {META_NAME} gives no size and sha256 for {name}")
        digest, n = content[name]
        if n != size or digest != sha:
            raise _bad(
                archive,
                f"{name} is corrupt (sha256 {digest[:12]}…, {n} bytes; expected "
                f"{sha[:12]}…, {size} bytes)",
            )
    extra = sorted(set(content) - set(listed))
    if extra:
        raise _bad(archive, f"{extra[0]} is in the archive but not listed in {META_NAME}")
    if sums_bytes is not None:
        sums = {}
        for line in sums_bytes.decode("utf-8", "replace").splitlines():
            digest, _, name = line.partition("  ")
            sums[name] = digest
        if sums != {k: v["sha256"] for k, v in listed.items()}:
            raise _bad(archive, f"{SUMS_NAME} disagrees with {META_NAME}")


def _check_artefacts(
    archive: Path, staging: Path, units: dict[str, Unit], seen: dict[str, tuple[str, int]]
) -> None:
    """Each index must carry its manifest; each model's own manifest (sizes and sha256 of
    its files, written at export) must agree with what arrived, so a model damaged before
    it was bundled is caught here too, without hashing anything twice."""
    for unit in units.values():
        if unit.kind not in ("index", "model"):
            continue
        if f"{unit.rel}/manifest.json" not in seen:
            raise _bad(archive, f"{unit.kind} '{unit.name}' has no manifest.json")
        if unit.kind == "index":
            from scim_edge.retrieval import manifest_problem, read_index_manifest

            problem = manifest_problem(read_index_manifest(staging / unit.rel))
            if problem:  # said of the archive's index, not of the staging folder
                raise _bad(archive, f"index '{unit.name}': {problem}")
        if unit.kind != "model":
            continue
        try:
            from models.store import manifest_files, read_manifest
        except ImportError:
            continue
        try:
            files = manifest_files(read_manifest(staging / unit.rel))
        except UserError as e:
            raise _bad(archive, f"model '{unit.name}': {e}") from None
        for rel, entry in files.items():
            got = seen.get(f"{unit.rel}/{rel}")
            if got is None:
                raise _bad(archive, f"model '{unit.name}' is missing {rel}")
            if got[1] != entry.get("size") or got[0] != entry.get("sha256"):
                raise _bad(
                    archive,
                    f"model '{unit.name}' file {rel} does not match the model's own manifest "
                    "(it was damaged before it was bundled; re-export it)",
                )


def _install(unit: Unit, staging: Path, force: bool) -> Unit:
    src = staging / unit.rel
    if unit.kind == "index":
        unit.detail = _index_detail(src)
    elif unit.kind == "model":
        unit.detail = _model_detail(src)
    if src.is_dir():
        what = {"index": "index", "model": "model"}.get(unit.kind, unit.kind)
        with atomic_dir(unit.target, force=force, what=what) as tmp:
            for child in src.iterdir():
                os.rename(child, tmp / child.name)
    else:
        unit.target.parent.mkdir(parents=True, exist_ok=True)
        if unit.target.exists() and not force:
            raise UserError(f"{unit.target} already exists", hint="use --force to replace it")
        os.replace(src, unit.target)
    return unit


def _read_manifest(path: Path) -> dict[str, Any]:
    return jsonl.read_object(path / "manifest.json") or {}  # an index's or a model's


def _index_detail(path: Path) -> str:
    m = _read_manifest(path)
    counts = m.get("counts") if isinstance(m.get("counts"), dict) else {}
    passages = counts.get("passages", m.get("passages"))
    return f"{passages:,} passages" if isinstance(passages, int) else ""


def _model_detail(path: Path) -> str:
    m = _read_manifest(path)
    kind = m.get("kind")
    return f"{kind} model" if isinstance(kind, str) else ""
