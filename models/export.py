"""Export a Hugging Face model to the store as ONNX (needs the `export` extra).

Seq2seq (T5 family): optimum-onnx writes an encoder, a decoder (first step, which also
yields the cross-attention keys/values) and a decoder with past (every later step). The
full-precision graphs are kept for CUDA; a dynamic int8 copy is made for CPU, where it
is roughly twice as fast. Embedding (sentence-transformers dirs): one graph plus the
tokenizer and the pooling config, full precision, so the vectors match
sentence-transformers; a fused int8 copy for the CPU; and a `static` table of token vectors
distilled from the fp32 graph (`models.static_embedding`), for passage vectors at
Wikipedia scale.

Everything is written into a temporary sibling of the target and renamed into place, so
an export that fails or is interrupted leaves nothing in the store. The network is used
only when `source` is a hub id; a local directory is read with `local_files_only`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import re
import shutil
import time
import warnings
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from models import static_embedding, store
from models.seq2seq import open_session
from scim_edge import jsonl, paths
from scim_edge.atomic import atomic_dir
from scim_edge.errors import ModelError, UserError

PIP_HINT = "pip install 'scim-edge[export]'"
SEQ2SEQ_TYPES = ("t5", "mt5", "umt5")
SEQ2SEQ_GRAPHS = ("encoder_model", "decoder_model", "decoder_with_past_model")
SHARED_FILES = (
    "tokenizer.json",
    "config.json",
    "generation_config.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
)
EMBEDDING_FILES = ("tokenizer.json", "config.json", "pooling.json", "sentence_bert_config.json")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


class ExportExtraMissing(UserError):
    """torch / transformers / optimum-onnx are not importable."""


def require_export_extra() -> None:
    """Fail with the one pip command when the export dependencies are missing."""
    missing = []
    for module in ("torch", "transformers", "optimum.exporters.onnx", "onnx"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module.split(".")[0])
    if missing:
        raise ExportExtraMissing(
            f"exporting needs the export extra ({', '.join(missing)} missing): {PIP_HINT}"
        )


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return ""


def exporter_versions() -> dict[str, str]:
    return {
        d: _version(d)
        for d in ("optimum-onnx", "optimum", "transformers", "torch", "onnx", "onnxruntime")
    }


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"cannot read {path}: {e}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{path} is not a JSON object")
    return data


def resolve_source(source: str) -> tuple[str, bool]:
    """(source string for from_pretrained, is_local). Local dirs never touch the network."""
    path = Path(source).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ModelError(f"export source {source} is not a directory")
        if not (path / "config.json").is_file():
            raise ModelError(
                f"{source} is not a Hugging Face model directory (config.json is missing)"
            )
        return str(path.resolve()), True
    if source.startswith((".", "/", "~")) or not _HUB_ID.match(source):
        raise ModelError(f"no such directory: {source}")
    return source, False


def detect_kind(source: str, local: bool) -> str:
    """`embedding` for sentence-transformers dirs, else `seq2seq`."""
    if local:
        p = Path(source)
        if (p / "modules.json").is_file() or (p / "sentence_bert_config.json").is_file():
            return "embedding"
        return "seq2seq"
    return "embedding" if source.startswith("sentence-transformers/") else "seq2seq"


def _check_hub_reachable(source: str) -> None:
    """A hub id not in the local cache needs the hub: when its host name does not even
    resolve (no network), say so at once, in one line, instead of letting the hub
    library retry for half a minute with a warning each time."""
    import socket
    from urllib.parse import urlsplit
    from urllib.request import getproxies

    from huggingface_hub import constants, try_to_load_from_cache

    try:
        cached = isinstance(try_to_load_from_cache(source, "config.json"), str)
    except ValueError:  # an id the hub refuses: the config's load says so in one line
        return
    if constants.HF_HUB_OFFLINE or cached:
        return  # the hub library answers these from its cache, or says it is offline
    if {"https", "all"} & set(getproxies()):
        return  # a proxy resolves the hub's name, not this machine
    host = urlsplit(constants.ENDPOINT).hostname or constants.ENDPOINT
    try:
        socket.getaddrinfo(host, 443)
    except (socket.gaierror, UnicodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise ModelError(
            f"cannot download {source}: {host} cannot be reached ({reason}); export on a "
            "connected machine and bring the model here with `scim-edge bundle` and "
            "`scim-edge unbundle`, or give --from a local model folder"
        ) from None


def _load_config(source: str, local: bool) -> Any:
    from transformers import AutoConfig

    if not local:
        _check_hub_reachable(source)
    try:
        return AutoConfig.from_pretrained(source, local_files_only=local)
    except Exception as e:  # noqa: BLE001 - any failure here is the user's source
        msg = " ".join(str(e).split())[:200]
        raise ModelError(f"cannot read the model config of {source}: {msg}") from None


@contextlib.contextmanager
def _quiet(verbose: bool):
    """Silence the exporters' warnings and progress chatter unless asked for."""
    if verbose:
        yield
        return
    loggers = [logging.getLogger(n) for n in ("transformers", "optimum", "torch.onnx", "root")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def quantize_int8(src: Path, dst: Path) -> None:
    """Dynamic int8 (weights int8, activations quantized on the fly) for the CPU provider."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    dst.parent.mkdir(parents=True, exist_ok=True)
    quantize_dynamic(
        src,
        dst,
        weight_type=QuantType.QInt8,
        per_channel=False,
        extra_options={"MatMulConstBOnly": True},
    )


def onnx_opset(path: Path) -> int | None:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx"):
            return int(imp.version)
    return None


def export_model(
    source: str,
    *,
    name: str | None = None,
    kind: str | None = None,
    quantize: bool = True,
    force: bool = False,
    verbose: bool = False,
    log: Callable[[str], None] = lambda s: None,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Export `source` (hub id or local dir) into the store; return the model directory.

    `log` gets a line per stage; `progress` gets (stages done, stages in all): the ONNX
    export, each graph's int8 quantisation, and the hashing."""
    require_export_extra()
    src, local = resolve_source(source)
    if kind is None:
        kind = detect_kind(src, local)
    if kind not in store.KINDS:
        raise ModelError(f"unknown model kind {kind!r} (use seq2seq or embedding)")
    name = store.check_name(name or store.name_from_source(source))
    target = paths.models_dir() / name
    if target.exists() and not force:
        raise ModelError(f"model '{name}' already exists", hint="use --force to replace it")
    config = _load_config(src, local)
    if kind == "seq2seq":
        if (
            not getattr(config, "is_encoder_decoder", False)
            or config.model_type not in SEQ2SEQ_TYPES
        ):
            raise ModelError(
                f"{source} is not a T5/seq2seq model (model_type "
                f"'{config.model_type}'; expected one of {', '.join(SEQ2SEQ_TYPES)})"
            )
    elif getattr(config, "is_encoder_decoder", False):
        raise ModelError(f"{source} is an encoder-decoder model, not a sentence embedding model")

    n_quantize = (len(SEQ2SEQ_GRAPHS) if kind == "seq2seq" else 1) if quantize else 0
    n_distill = 1 if kind == "embedding" else 0  # the static variant
    steps = _Steps(2 + n_quantize + n_distill, progress)
    with atomic_dir(target, force=force, what="model") as tmp:
        if kind == "seq2seq":
            manifest = _export_seq2seq(src, local, tmp, name, src, quantize, verbose, log, steps)
        else:
            manifest = _export_embedding(src, local, tmp, name, src, quantize, verbose, log, steps)
        store.write_manifest(tmp, manifest)
        steps.advance()
    return target


class _Steps:
    """Counts finished export stages for a (done, total) progress callback."""

    def __init__(self, total: int, progress: Callable[[int, int], None] | None) -> None:
        self.total = total
        self.done = 0
        self.progress = progress
        if progress is not None:
            progress(0, total)

    def advance(self) -> None:
        self.done = min(self.total, self.done + 1)
        if self.progress is not None:
            self.progress(self.done, self.total)


def _main_export(src: str, local: bool, out: Path, task: str, verbose: bool) -> None:
    from optimum.exporters.onnx import main_export

    try:
        with _quiet(verbose):
            main_export(
                src,
                out,
                task=task,
                no_post_process=True,
                do_validation=False,
                local_files_only=local,
                library_name="transformers",
            )
    except (KeyboardInterrupt, MemoryError):
        raise
    except OSError as e:
        raise ModelError(f"export of {src} failed: {' '.join(str(e).split())[:300]}") from None
    except Exception as e:  # noqa: BLE001 - exporter errors become one line
        msg = " ".join(f"{type(e).__name__}: {e}".split())[:300]
        raise ModelError(f"export of {src} failed: {msg}") from None


def _ensure_tokenizer_json(src: str, local: bool, out: Path) -> None:
    """T5 checkpoints sometimes ship only spiece.model; convert it with transformers."""
    if (out / "tokenizer.json").is_file():
        return
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(src, local_files_only=local, use_fast=True)
        tok.backend_tokenizer.save(str(out / "tokenizer.json"))
    except Exception as e:  # noqa: BLE001
        msg = " ".join(str(e).split())[:200]
        raise ModelError(f"{src} has no usable fast tokenizer (tokenizer.json): {msg}") from None


def _export_seq2seq(
    src: str,
    local: bool,
    tmp: Path,
    name: str,
    source: str,
    quantize: bool,
    verbose: bool,
    log: Callable[[str], None],
    steps: _Steps,
) -> dict[str, Any]:
    raw = tmp / ".raw"
    t0 = time.perf_counter()
    log(f"exporting {source} to ONNX (encoder, decoder, decoder with past)...")
    _main_export(src, local, raw, "text2text-generation-with-past", verbose)
    export_s = time.perf_counter() - t0
    steps.advance()
    missing = [g for g in SEQ2SEQ_GRAPHS if not (raw / f"{g}.onnx").is_file()]
    if missing:
        raise ModelError(f"export of {source} produced no {missing[0]}.onnx")
    _ensure_tokenizer_json(src, local, raw)
    fp32 = tmp / "fp32"
    fp32.mkdir()
    for child in raw.iterdir():
        dest = fp32 if child.suffix == ".onnx" or child.name.endswith(".onnx_data") else tmp
        shutil.move(str(child), dest / child.name)
    shutil.rmtree(raw)
    variants = {"fp32": [f"fp32/{p.name}" for p in sorted(fp32.iterdir())]}
    quantize_s = None
    if quantize:
        t1 = time.perf_counter()
        log("quantising to int8 for the CPU provider...")
        for g in SEQ2SEQ_GRAPHS:
            with _quiet(verbose):
                quantize_int8(fp32 / f"{g}.onnx", tmp / "int8" / f"{g}.onnx")
            steps.advance()
        quantize_s = time.perf_counter() - t1
        variants["int8"] = [f"int8/{g}.onnx" for g in SEQ2SEQ_GRAPHS]
    if not (tmp / "generation_config.json").is_file():
        cfg = _read_json(tmp / "config.json")
        gen = {
            k: cfg[k]
            for k in ("decoder_start_token_id", "eos_token_id", "pad_token_id")
            if k in cfg
        }
        (tmp / "generation_config.json").write_text(json.dumps(gen, indent=2), encoding="utf-8")
    shared = [f for f in SHARED_FILES if (tmp / f).is_file()]
    log("hashing files...")
    return store.build_manifest(
        tmp,
        name=name,
        kind="seq2seq",
        source=source,
        variants=variants,
        shared=shared,
        extra={
            "opset": onnx_opset(fp32 / "encoder_model.onnx"),
            "exporter": exporter_versions(),
            "timings_s": {
                "export": round(export_s, 3),
                "quantize": None if quantize_s is None else round(quantize_s, 3),
            },
        },
    )


def _export_embedding(
    src: str,
    local: bool,
    tmp: Path,
    name: str,
    source: str,
    quantize: bool,
    verbose: bool,
    log: Callable[[str], None],
    steps: _Steps,
) -> dict[str, Any]:
    raw = tmp / ".raw"
    t0 = time.perf_counter()
    log(f"exporting {source} to ONNX (one graph)...")
    _main_export(src, local, raw, "feature-extraction", verbose)
    export_s = time.perf_counter() - t0
    steps.advance()
    if not (raw / "model.onnx").is_file():
        raise ModelError(f"export of {source} produced no model.onnx")
    _ensure_tokenizer_json(src, local, raw)
    (tmp / "fp32").mkdir()
    shutil.move(str(raw / "model.onnx"), tmp / "fp32" / "model.onnx")
    for f in ("tokenizer.json", "config.json"):
        shutil.move(str(raw / f), tmp / f)
    shutil.rmtree(raw)
    pooling, st_config = _sentence_transformers_config(src, local)
    (tmp / "pooling.json").write_text(json.dumps(pooling, indent=2), encoding="utf-8")
    (tmp / "sentence_bert_config.json").write_text(json.dumps(st_config, indent=2), "utf-8")
    variants = {"fp32": ["fp32/model.onnx"]}
    quantize_s = None
    if quantize:
        t1 = time.perf_counter()
        log("fusing and quantising to int8 for the CPU provider...")
        with _quiet(verbose):
            quantize_embedding_int8(tmp / "fp32" / "model.onnx", tmp / "int8" / "model.onnx")
        steps.advance()
        quantize_s = time.perf_counter() - t1
        variants["int8"] = ["int8/model.onnx"]
    log("distilling static token vectors for fast passage vectors...")
    session = open_session(
        tmp / "fp32" / "model.onnx", model_name=name, provider="cpu", threads=None
    )
    distill_s = static_embedding.distill(tmp, session)
    del session
    steps.advance()
    variants[static_embedding.VARIANT] = [static_embedding.TABLE]
    return store.build_manifest(
        tmp,
        name=name,
        kind="embedding",
        source=source,
        variants=variants,
        shared=list(EMBEDDING_FILES),
        extra={
            "opset": onnx_opset(tmp / "fp32" / "model.onnx"),
            "exporter": exporter_versions(),
            "timings_s": {
                "export": round(export_s, 3),
                "quantize": None if quantize_s is None else round(quantize_s, 3),
                "distill": round(distill_s, 3),
            },
        },
    )


def quantize_embedding_int8(src: Path, dst: Path) -> None:
    """The int8 embedding graph: BERT fusions first (fused attention, skip layer norm,
    bias GELU, embedding layer norm), then dynamic int8 quantisation, which turns the
    fused attention into QAttention. Fusing first is what makes int8 pay on the CPU: the
    plain graph keeps attention as float MatMuls between (de)quantise steps.

    A graph the fusions do not recognise (not BERT-like) is quantised as it is."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from onnxruntime.transformers import optimizer

    cfg = _read_json(src.parent.parent / "config.json")
    dst.parent.mkdir(parents=True, exist_ok=True)
    fused = dst.parent / ".fused.onnx"
    try:
        opt = optimizer.optimize_model(
            str(src),
            model_type="bert",
            num_heads=int(cfg.get("num_attention_heads", 0) or 0),
            hidden_size=int(cfg.get("hidden_size", 0) or 0),
            opt_level=0,
        )
        opt.save_model_to_file(str(fused))
        quantize_dynamic(
            fused,
            dst,
            weight_type=QuantType.QInt8,
            # per output channel: per-tensor scales cost MiniLM ~0.04 of cosine with fp32
            per_channel=True,
            extra_options={"MatMulConstBOnly": True, "DefaultTensorType": onnx.TensorProto.FLOAT},
        )
    finally:
        fused.unlink(missing_ok=True)


def _sentence_transformers_config(src: str, local: bool) -> tuple[dict, dict]:
    """Pooling and max_seq_length as sentence-transformers would apply them."""
    pooling: dict[str, Any] = {"pooling_mode_mean_tokens": True}
    st: dict[str, Any] = {}
    normalize = True
    if local:
        root = Path(src)
        modules_path = root / "modules.json"
        if modules_path.is_file():
            modules = jsonl.loads(modules_path.read_text(encoding="utf-8"))
            normalize = any(str(m.get("type", "")).endswith(".Normalize") for m in modules)
            for m in modules:
                if str(m.get("type", "")).endswith(".Pooling"):
                    cfg = root / m.get("path", "") / "config.json"
                    if cfg.is_file():
                        pooling = _read_json(cfg)
        if (root / "sentence_bert_config.json").is_file():
            st = _read_json(root / "sentence_bert_config.json")
    else:
        from huggingface_hub import hf_hub_download

        with contextlib.suppress(Exception):
            st = _read_json(Path(hf_hub_download(src, "sentence_bert_config.json")))
        with contextlib.suppress(Exception):
            pooling = _read_json(Path(hf_hub_download(src, "1_Pooling/config.json")))
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
    if modes and modes != ["pooling_mode_mean_tokens"]:
        raise ModelError(f"{src} uses {', '.join(modes)} pooling; only mean pooling is supported")
    pooling = dict(pooling, pooling_mode_mean_tokens=True, normalize=normalize)
    return pooling, {
        "max_seq_length": int(st.get("max_seq_length", 256)),
        "do_lower_case": bool(st.get("do_lower_case", False)),
    }
