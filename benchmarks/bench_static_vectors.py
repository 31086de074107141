"""Static passage vectors against MiniLM int8: what the writer's speed costs in retrieval.

The `static` variant of an embedding model (`models.static_embedding`) is a token table
distilled from all-MiniLM-L6-v2 when `models export` writes it. This benchmark builds the
vital-en index (the lead sections of 10,033 Vital articles) into a temporary directory,
writes every passage's vector twice, with the int8 graph (the CPU default) and with the
static table, through the same writer (`vector_index.write_embeddings`, one run per core),
and then measures retrieval on our hand-written vital-en question sets, which only measure:

- throughput: passages per wall second of the whole writer (reading the passages back from
  Tantivy included), the median of `--repeats` runs for static; int8 runs once (it takes a
  minute); and per CPU second, which does not depend on the neighbours;
- recall@5 and @20 of the gold article, for BM25 alone, hybrid with int8 vectors and hybrid
  with static vectors, on two paths (`benchmarks/recall.py`): `search` (the bound
  retriever's top k, what simrag's later rounds search) and `loops` (every loop's first
  retrieval).

Target (issue 11): vectors at >= 400 passages/s on 2 cores, reported as the static writer's
median and its ratio to int8 in the same run.

    python benchmarks/bench_static_vectors.py [--repeats 3] [--out FILE]

Writes benchmarks/results/static_vectors.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench_output import fail, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_vectors import build_vital, cores, export_minilm, timed  # noqa: E402
from recall import _measure  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "static_vectors.json"
SETS = ("dev_vital.jsonl", "dev_vital_b.jsonl", "dev_vital_c.jsonl")


def write(index: Path, model_dir: Path, variant: str, where: Path) -> tuple[dict, Path]:
    """Vectors of every passage of a copy of `index`; the run's figures and the copy."""
    from scim_edge.vector_index import write_embeddings

    copy = where / f"vital-{variant}"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(index, copy)
    wall, cpu, meta = timed(lambda: write_embeddings(copy, model_dir, variant=variant))
    n = int(meta["count"])
    return {
        "passages": n,
        "dim": int(meta["dim"]),
        "wall_s": round(wall, 2),
        "per_wall_s": round(n / wall, 1),
        "per_cpu_s": round(n / cpu, 1),
        "loadavg_1m": round(os.getloadavg()[0], 2),
    }, copy


def recall(index: Path, qa: Path, retriever: str, path: str) -> dict[str, float]:
    r = _measure(argparse.Namespace(index=str(index), qa=str(qa), path=path,
                                    retriever=retriever, reranker="none"))  # fmt: skip
    return {"recall_at_5": r["recall_at_5"], "recall_at_20": r["recall_at_20"],
            "answerable": r["answerable"], "mean_search_ms": r["mean_search_ms"]}  # fmt: skip


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int

    ap = OneLineParser(prog="bench_static_vectors", description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=positive_int, default=3,
                    help="timed runs of the static writer")  # fmt: skip
    ap.add_argument("--out", type=nonempty, default=str(OUT))
    args = ap.parse_args()
    out = Path(args.out)
    if out.is_dir():
        return fail(f"--out is a directory: {out}")

    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        model_dir = export_minilm(tmp / "home")
        index = build_vital(tmp)
        int8, int8_index = write(index, model_dir, "int8", tmp)
        print("int8", int8, flush=True)
        static_runs = []
        for _ in range(args.repeats):
            run, static_index = write(index, model_dir, "static", tmp)
            static_runs.append(run)
            print("static", run, flush=True)
        retrieval: dict[str, dict] = {}
        for name in SETS:
            qa = ROOT / "benchmarks" / name
            retrieval[name] = {
                path: {
                    "bm25": recall(index, qa, "bm25", path),
                    "hybrid_int8": recall(int8_index, qa, "hybrid", path),
                    "hybrid_static": recall(static_index, qa, "hybrid", path),
                }
                for path in ("search", "loops")
            }
            print(name, json.dumps(retrieval[name]), flush=True)

    static_wall = statistics.median(r["per_wall_s"] for r in static_runs)
    static_cpu = statistics.median(r["per_cpu_s"] for r in static_runs)
    result = {
        "what": "passage vectors of vital-en with all-MiniLM-L6-v2 int8 and its static "
        "variant, same writer, same run; hybrid recall on our vital-en sets",
        "cores": cores(),
        "int8": int8,
        "static": {
            "runs": static_runs,
            "passages_per_s_wall_median": static_wall,
            "passages_per_cpu_s_median": static_cpu,
        },
        "static_over_int8_wall": round(static_wall / int8["per_wall_s"], 1),
        "target_passages_per_s": 400,
        "retrieval": retrieval,
    }
    if rc := write_json(out, result):
        return rc
    print(f"static {static_wall}/s wall (median), int8 {int8['per_wall_s']}/s; "
          f"{result['static_over_int8_wall']}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
