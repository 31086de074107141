"""Retrieval quality of the index, through the bound retriever and reranker.

    python benchmarks/recall.py                 # builds enwiki-sample into a temp dir
    python benchmarks/recall.py --index DIR     # an index already built (name or dir)
    python benchmarks/recall.py --index DIR --retriever hybrid [--reranker embedding]
                                                # vectors: an index with --embeddings
    python benchmarks/recall.py --index DIR --path loops
                                                # every loop's first retrieval

`--path search` (the default) is the plain search, what simrag's later rounds run: the bound
retriever's top k, reordered by the reranker when one is bound. `--path loops` is every
loop's first retrieval (`query_formulation.retrieve`): BM25 candidates re-ranked by the
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
from typing import Any

from bench_output import fail, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("SCIM_EDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
RESULTS = ROOT / "benchmarks" / "results" / "recall.json"


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty

    ap = OneLineParser(prog="recall", description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=nonempty, help="index name or directory (default: "
                    "enwiki-sample built into a temp dir)")  # fmt: skip
    ap.add_argument("--qa", type=nonempty, default=str(DATA / "qa-dev.jsonl"))
    ap.add_argument("--out", type=nonempty, default=str(RESULTS))
    ap.add_argument("--path", choices=("search", "loops"), default="search")
    ap.add_argument("--retriever", default="bm25", help="auto | bm25 | vector | hybrid")
    ap.add_argument("--reranker", default="none", help="none | hybrid | embedding")
    a = ap.parse_args()

    from scim_edge.errors import UserError

    try:
        result = _measure(a)
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    out = Path(a.out)
    if rc := write_json(out, result):
        return rc
    print(json.dumps({k: v for k, v in result.items() if k != "misses_at_5"}, indent=2))
    return 0


def _measure(a: argparse.Namespace) -> dict[str, Any]:
    from index_builder.build import build_index
    from scim_edge.evaluation.qa_io import load_qa
    from scim_edge.retrieval import resolve_index_dir

    questions = load_qa(a.qa)
    if a.index is not None:
        return _measure_on(a, questions, resolve_index_dir(a.index), str(a.index))
    with tempfile.TemporaryDirectory(prefix="recall-") as tmp:
        index = Path(tmp) / "enwiki-sample"
        build_index(DATA / "enwiki-sample.xml.bz2", index)
        return _measure_on(a, questions, index, "enwiki-sample (built from its dump)")


def _measure_on(
    a: argparse.Namespace, questions: list[Any], index: Path, name: str
) -> dict[str, Any]:
    """Recall of `questions` on the index at `index`; `name` is how the result records it
    (never a temporary folder's path)."""
    from scim_edge import query_formulation as qf
    from scim_edge.engine import Engine
    from scim_edge.passage_search import make_passage_search
    from scim_edge.retrieval import BM25Retriever
    from scim_edge.settings import Settings

    bm25 = BM25Retriever.open(index)
    settings = Settings(retriever=a.retriever, reranker=a.reranker, model="extractive")
    engine = Engine(settings, bm25, generator=None, index_name=index.name)  # type: ignore[arg-type]
    search = make_passage_search(settings, engine)
    answerable = [q for q in questions if q.answerable]
    hits: dict[int, int] = {5: 0, 20: 0}
    by_type: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "at5": 0, "at20": 0})
    misses = []
    t0 = time.perf_counter()
    for q in answerable:
        if a.path == "loops":
            found = qf.retrieve(search.retriever, qf.initial(q.question), 20, set(),
                                settings.candidates, q.question)  # fmt: skip
        else:
            found = search.retrieve(q.question, [q.question], 20, set())
        titles = [p.title for p in found]
        gold = set(q.titles)
        at5 = any(t in gold for t in titles[:5])
        at20 = any(t in gold for t in titles)
        hits[5] += at5
        hits[20] += at20
        t = by_type[q.type or "?"]
        t["n"] += 1
        t["at5"] += at5
        t["at20"] += at20
        if not at5:
            misses.append({"id": q.id, "question": q.question, "gold": list(q.titles),
                           "top5": titles[:5]})  # fmt: skip
    ms = (time.perf_counter() - t0) * 1000 / max(1, len(answerable))
    n = max(1, len(answerable))
    return {
        "benchmark": "recall",
        "index": name,
        "qa": Path(a.qa).name,
        "bindings": search.bindings(),
        "path": a.path,
        "questions": len(questions),
        "answerable": len(answerable),
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


if __name__ == "__main__":
    raise SystemExit(main())
