"""What term proximity costs a BM25 search, on an index large enough for it to show.

A question's neighbouring content words are searched as sloppy phrase queries besides its
words (`scim_edge.proximity`); a phrase query reads positions, so its cost grows with how
often both words occur. This times top-50 searches with and without the pairs, interleaved
query by query in one run so that the machine's load falls on both alike, over the queries
`bench_scale.py` times (qa-dev's questions and lead titles).

    python benchmarks/bench_proximity.py --mb 500          # a dump from make_big_dump, built here
    python benchmarks/bench_proximity.py --index NAME|DIR  # an index already built

Writes benchmarks/results/proximity.json: p50/p95 per search with and without the pairs,
and their ratio (medians).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_output import fail, write_json
from bench_scale import MAKE_BIG_DUMP, SOURCE, queries

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "proximity.json"
K = 50
ROUNDS = 3


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return round(xs[int(p * (len(xs) - 1))], 2)


def measure(index: Path) -> dict:
    from scim_edge.retrieval import BM25Retriever

    r = BM25Retriever.open(index)
    qs = queries(index, 240)
    r_without = BM25Retriever.open(index)
    r_without._terms_and_pairs = lambda query: (r.query_terms(query), [])  # type: ignore[method-assign]
    for q in qs:  # warm-up: the OS cache and Tantivy's
        r.search(q, K)
        r_without.search(q, K)
    times: dict[str, list[float]] = {"with": [], "without": []}
    for _ in range(ROUNDS):
        for q in qs:
            for name, ret in (("with", r), ("without", r_without)):
                t0 = time.perf_counter()
                ret.search(q, K)
                times[name].append((time.perf_counter() - t0) * 1e3)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "passages": r.passage_count,
        "queries": len(qs),
        "rounds": ROUNDS,
        "k": K,
        "with_pairs": {"p50_ms": round(med["with"], 2), "p95_ms": _pct(times["with"], 0.95)},
        "without_pairs": {
            "p50_ms": round(med["without"], 2),
            "p95_ms": _pct(times["without"], 0.95),
        },
        "ratio_p50": round(med["with"] / med["without"], 2),
        "pairs_per_query_mean": round(statistics.mean(len(r.query_pairs(q)) for q in qs), 2),
    }


def main(argv: list[str] | None = None) -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_float
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_proximity", description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", type=nonempty, help="an index already built (name or dir)")
    where.add_argument("--mb", type=positive_float,
                       help="make a dump of about this many MB, build it")  # fmt: skip
    ap.add_argument("--out", type=nonempty, default=str(OUT))
    a = ap.parse_args(argv)
    try:
        result = _measure(a)
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    print(json.dumps(result, indent=1))
    return write_json(a.out, result)


def _measure(a: argparse.Namespace) -> dict:
    from scim_edge.retrieval import resolve_index_dir

    if a.index is not None:
        index = resolve_index_dir(a.index)
        return {"index": str(a.index), **measure(index)}
    from index_builder.build import build_index

    with tempfile.TemporaryDirectory(prefix="scim-edge-bench-proximity-") as tmp:
        dump = Path(tmp) / "big.xml.bz2"
        subprocess.run(
            [sys.executable, str(MAKE_BIG_DUMP), "--source", str(SOURCE), "--mb", str(a.mb),
             "-o", str(dump)],
            check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        build_index(dump, Path(tmp) / "index")
        return {"dump_mb": a.mb, **measure(Path(tmp) / "index")}


if __name__ == "__main__":
    sys.exit(main())
