"""EM / F1 of `standard`, `iter-retgen` and `scim` with the extractive generator on qa-dev.

Runs `scim-edge ask QUESTION --loop L --model extractive --index IDX --json` (through the
CLI entry point, in-process) for every question of ../shared/data/qa-dev.jsonl and writes
benchmarks/results/qa_dev_loops.json: per loop, SQuAD EM and token F1 (best over the gold
aliases) on the answerable questions, the share of answers that contain a gold alias,
average iterations and passages per question, statuses and stop reasons, and what the
loop did on the unanswerable ones. Beside EM: the share of answerable questions whose
passages (read back from the index by the doc ids the loop reports) hold a gold answer,
the EM on those (the reader's EM given the answer is there), and how well the answer's
`confidence` and Q track correctness (AUROC / ECE, as `scim-edge eval` reports them).

    python benchmarks/qa_dev_loops.py [--index DIR] [--loops standard,iter-retgen,scim]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench_output import write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SCIM_EDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
OUT = ROOT / "benchmarks" / "results" / "qa_dev_loops.json"


def ask_json(question: str, loop: str, index: str) -> dict:
    from scim_edge.cli import main

    buf, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(err):
        rc = main(["ask", question, "--loop", loop, "--model", "extractive", "--index", index,
                   "--json"])  # fmt: skip
    if rc != 0:
        raise RuntimeError(f"ask failed ({rc}): {err.getvalue().strip()}")
    return json.loads(buf.getvalue())


def contains(prediction: str, golds: list[str]) -> float:
    from scim_edge.evaluation.metrics import normalize_answer

    p = f" {normalize_answer(prediction)} "
    return float(any(f" {normalize_answer(g)} " in p for g in golds if normalize_answer(g)))


def evaluate(items: list[dict], loop: str, index: str) -> dict:
    from scim_edge.evaluation.metrics import (
        answer_in_passages,
        exact_match,
        f1_score,
        is_abstention,
    )
    from scim_edge.evaluation.trust import calibration, q_f1_correlation
    from scim_edge.retrieval import BM25Retriever

    store = BM25Retriever.open(index)
    rows = []
    for item in items:
        t0 = time.perf_counter()
        d = ask_json(item["question"], loop, index)
        wall = (time.perf_counter() - t0) * 1000
        passages = {i for it in d["iterations"] for i in it["doc_ids"]}
        abstained = is_abstention(d["answer"], d["status"])
        golds = item["answers"]
        texts = [p.text for p in store.get_many(sorted(passages))]
        rows.append({
            "id": item["id"],
            "type": item["type"],
            "answerable": bool(golds),
            "answer": d["answer"],
            "status": d["status"],
            "stop_reason": d["stop_reason"],
            "quality": d["quality"],
            "confidence": d.get("confidence"),
            "answer_in_passages": answer_in_passages(golds, texts),
            "correct": exact_match(d["answer"], golds, abstained=abstained),
            "iterations": len(d["iterations"]),
            "passages": len(passages),
            "em": exact_match(d["answer"], golds, abstained=abstained) if golds else None,
            "f1": f1_score(d["answer"], golds, abstained=abstained) if golds else None,
            "contains_gold": contains(d["answer"], golds) if golds and not abstained else 0.0,
            "abstained": abstained,
            "ms": wall,
        })  # fmt: skip
    ans = [r for r in rows if r["answerable"]]
    unans = [r for r in rows if not r["answerable"]]
    held = [r for r in ans if r["answer_in_passages"]]
    scored = [{**r, "em": r["correct"], "f1": r["f1"] or 0.0} for r in rows]
    return {
        "questions": len(rows),
        "answerable": len(ans),
        "em": statistics.fmean(r["em"] for r in ans) if ans else None,
        "f1": statistics.fmean(r["f1"] for r in ans) if ans else None,
        "contains_gold": statistics.fmean(r["contains_gold"] for r in ans) if ans else None,
        "answer_in_passages": len(held) / len(ans) if ans else None,
        "em_given_in_passages": statistics.fmean(r["em"] for r in held) if held else None,
        "calibration": calibration(scored),
        "q_f1": q_f1_correlation(scored),
        "avg_iterations": statistics.fmean(r["iterations"] for r in rows),
        "avg_passages": statistics.fmean(r["passages"] for r in rows),
        "mean_quality": statistics.fmean(r["quality"] for r in rows),
        "median_ms": statistics.median(r["ms"] for r in rows),
        "status": dict(Counter(r["status"] for r in rows)),
        "stop_reasons": dict(Counter(r["stop_reason"] for r in rows)),
        "unanswerable_abstained": sum(r["abstained"] for r in unans),
        "unanswerable": len(unans),
        "by_type_f1": {
            t: statistics.fmean(r["f1"] for r in ans if r["type"] == t)
            for t in sorted({r["type"] for r in ans})
        },
        "rows": rows,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", help="index directory (default: build one from enwiki-sample)")
    ap.add_argument("--loops", default="standard,iter-retgen,scim")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    qa = DATA / "qa-dev.jsonl"
    items = [json.loads(line) for line in qa.read_text(encoding="utf-8").splitlines() if line]
    tmp = None
    if not os.environ.get("SCIM_EDGE_HOME"):
        tmp = tempfile.TemporaryDirectory(prefix="scim-bench-")
        os.environ["SCIM_EDGE_HOME"] = tmp.name
    index = args.index
    if index is None:
        from index_builder.build import build_index

        out = Path(os.environ["SCIM_EDGE_HOME"]) / "indexes" / "enwiki-sample"
        if not out.exists():
            build_index(DATA / "enwiki-sample.xml.bz2", out)
        index = str(out)
    results = {"dataset": str(qa), "index": index, "generator": "extractive", "loops": {}}
    for loop in args.loops.split(","):
        res = evaluate(items, loop, index)
        results["loops"][loop] = res
        line = (
            f"{loop:12s} EM {res['em']:.3f}  F1 {res['f1']:.3f}"
            f"  contains {res['contains_gold']:.3f}  in passages {res['answer_in_passages']:.3f}"
            f"  EM|in {res['em_given_in_passages'] or 0:.3f}  iters {res['avg_iterations']:.2f}"
            f"  passages {res['avg_passages']:.2f}  Q {res['mean_quality']:.3f}"
            f"  {res['stop_reasons']}"
        )
        print(line, file=sys.stderr)
    if rc := write_json(args.out, results):
        return rc
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
