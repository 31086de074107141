"""Retrieval quality of the index, through the bound retriever and reranker.

    python benchmarks/recall.py                 # builds enwiki-sample into a temp dir
    python benchmarks/recall.py --index DIR     # an index already built from it
    python benchmarks/recall.py --index DIR --retriever hybrid [--reranker embedding]
                                                # vectors: an index with --embeddings
    python benchmarks/recall.py --index DIR --path loops
                                                # the SCIM family's first retrieval

`--path search` (the default) is the search simrag runs: the bound retriever's top k, reordered
by the reranker when one is bound. `--path loops` is the first retrieval of standard, scim,
fixed-N and iter-retgen (`query_formulation.retrieve`): BM25 candidates re-ranked by the
hybrid lexical score, with the leads of the articles the question names joined.

For every answerable question of ../shared/data/qa-dev.jsonl (non-empty `answers`), it
searches the question text as a user would type it and counts a hit at k when a passage of a
gold article (`titles`) is among the top k. Reports recall@5 and recall@20, per question type
too, and the misses, to benchmarks/results/recall.json.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("SCIM_EDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results" / "recall.json"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, help="index dir built from enwiki-sample.xml.bz2")
    ap.add_argument("--qa", type=Path, default=DATA / "qa-dev.jsonl")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--path", choices=("search", "loops"), default="search")
    ap.add_argument("--retriever", default="bm25", help="auto | bm25 | vector | hybrid")
    ap.add_argument("--reranker", default="none", help="none | hybrid | embedding")
    a = ap.parse_args()

    from index_builder.build import build_index
    from scim_edge.retrieval import BM25Retriever

    index = a.index
    if index is None:
        index = Path(tempfile.mkdtemp(prefix="recall-")) / "enwiki-sample"
        build_index(DATA / "enwiki-sample.xml.bz2", index)
    from scim_edge import query_formulation as qf
    from scim_edge.engine import Engine
    from scim_edge.passage_search import make_passage_search
    from scim_edge.settings import Settings

    bm25 = BM25Retriever.open(index)
    settings = Settings(retriever=a.retriever, reranker=a.reranker, model="extractive")
    engine = Engine(settings, bm25, generator=None, index_name=index.name)  # type: ignore[arg-type]
    search = make_passage_search(settings, engine)
    questions = [json.loads(x) for x in a.qa.read_text(encoding="utf-8").splitlines() if x]
    answerable = [q for q in questions if q["answers"]]
    hits: dict[int, int] = {5: 0, 20: 0}
    by_type: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "at5": 0, "at20": 0})
    misses = []
    t0 = time.perf_counter()
    for q in answerable:
        if a.path == "loops":
            found = qf.retrieve(search.retriever, qf.initial(q["question"]), 20, set(),
                                settings.candidates, q["question"])  # fmt: skip
        else:
            found = search.retrieve(q["question"], [q["question"]], 20, set())
        titles = [p.title for p in found]
        gold = set(q["titles"])
        at5 = any(t in gold for t in titles[:5])
        at20 = any(t in gold for t in titles)
        hits[5] += at5
        hits[20] += at20
        t = by_type[q.get("type", "?")]
        t["n"] += 1
        t["at5"] += at5
        t["at20"] += at20
        if not at5:
            misses.append({"id": q["id"], "question": q["question"], "gold": q["titles"],
                           "top5": titles[:5]})  # fmt: skip
    ms = (time.perf_counter() - t0) * 1000 / max(1, len(answerable))
    n = len(answerable)
    result = {
        "benchmark": "recall",
        "index": str(index),
        "bindings": search.bindings(),
        "path": a.path,
        "questions": len(questions),
        "answerable": n,
        "recall_at_5": round(hits[5] / n, 4),
        "recall_at_20": round(hits[20] / n, 4),
        "by_type": {
            k: {
                "n": v["n"],
                "recall_at_5": round(v["at5"] / v["n"], 4),
                "recall_at_20": round(v["at20"] / v["n"], 4),
            }
            for k, v in sorted(by_type.items())
        },  # fmt: skip
        "mean_search_ms": round(ms, 2),
        "field_boosts": bm25.boosts,
        "analyzer": bm25.analyzer_name,
        "misses_at_5": misses,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "misses_at_5"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
