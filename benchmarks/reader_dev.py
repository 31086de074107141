"""Reader and trust on development questions: EM/F1, answer in passages, EM given present,
abstention, and how well confidence (and Q) separate right answers from wrong ones.

    python benchmarks/reader_dev.py --qa benchmarks/dev_vital.jsonl --index vital \
        --loops standard,scim,simrag --out benchmarks/results/reader_dev_vital.json

Development questions measure; nothing is fitted or tuned on them. Writes JSON (one summary
per loop, plus per-question rows) and prints a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from scim_edge.engine import Engine
from scim_edge.evaluation.metrics import exact_match, f1_score, is_abstention, normalize_answer
from scim_edge.evaluation.qa_io import load_qa
from scim_edge.linear import auroc
from scim_edge.settings import load_settings


def in_passages(passages, golds) -> bool:
    texts = [normalize_answer(p.text) for p in passages]
    return any(g and any(g in t for t in texts) for g in (normalize_answer(x) for x in golds))


def run_loop(engine: Engine, items, loop: str) -> dict:
    s = engine.settings.replace(loop=loop)
    rows = []
    for item in items:
        t0 = time.perf_counter()
        a = engine.answer(item.question, s)
        ms = (time.perf_counter() - t0) * 1000
        abst = is_abstention(a.answer, a.status)
        rows.append({
            "id": item.id,
            "question": item.question,
            "gold": list(item.answers),
            "answer": a.answer,
            "answerable": bool(item.answers),
            "abstained": abst,
            "em": exact_match(a.answer, item.answers, abstained=abst) if item.answers else None,
            "f1": f1_score(a.answer, item.answers, abstained=abst) if item.answers else None,
            "in_passages": in_passages(a.passages, item.answers) if item.answers else None,
            "confidence": a.confidence,
            "quality": a.quality,
            "tier": a.tier,
            "iterations": len(a.iterations),
            "passages": len(a.passages),
            "ms": round(ms, 1),
        })  # fmt: skip
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    present = [r for r in ans if r["in_passages"]]
    given = [r for r in ans if not r["abstained"]]
    y = np.array([r["em"] for r in ans if not r["abstained"]], dtype=float)
    conf = [r["confidence"] for r in ans if not r["abstained"]]
    summary = {
        "loop": loop,
        "answerable": len(ans),
        "em": round(statistics.mean(r["em"] for r in ans), 4) if ans else None,
        "f1": round(statistics.mean(r["f1"] for r in ans), 4) if ans else None,
        "answer_in_passages": round(len(present) / len(ans), 4) if ans else None,
        "em_given_present": round(statistics.mean(r["em"] for r in present), 4)
        if present
        else None,
        "over_abstention": round(sum(r["abstained"] for r in ans) / len(ans), 4) if ans else None,
        "unanswerable": len(una),
        "abstains_on_unanswerable": round(sum(r["abstained"] for r in una) / len(una), 4)
        if una
        else None,
        "precision_of_given": round(float(np.mean(y)), 4) if len(y) else None,
        "auroc_confidence": round(auroc(np.array(conf, dtype=float), y), 4)
        if conf and None not in conf
        else None,
        "auroc_q": round(auroc(np.array([r["quality"] for r in given]), y), 4) if given else None,
        "avg_iterations": round(statistics.mean(r["iterations"] for r in rows), 3),
        "avg_passages": round(statistics.mean(r["passages"] for r in rows), 3),
        "median_ms": round(statistics.median(r["ms"] for r in rows), 1),
    }
    return {"summary": summary, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--qa", required=True)
    ap.add_argument("--index", required=True)
    ap.add_argument("--loops", default="standard")
    ap.add_argument("--model", default="extractive")
    ap.add_argument("--out")
    ap.add_argument("--misses", action="store_true", help="print wrong answers")
    args = ap.parse_args(argv)
    items = load_qa(Path(args.qa))
    engine = Engine.open(load_settings(overrides={"index": args.index, "model": args.model}))
    out = {"qa": args.qa, "index": args.index, "loops": {}}
    for loop in args.loops.split(","):
        res = run_loop(engine, items, loop)
        out["loops"][loop] = res
        print(json.dumps(res["summary"]))
        if args.misses:
            for r in res["rows"]:
                if r["answerable"] and not r["em"]:
                    flag = "P" if r["in_passages"] else "-"
                    print(f"  {flag} {r['id']} {r['question']} | {r['answer']} | {r['gold']}",
                          file=sys.stderr)  # fmt: skip
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
