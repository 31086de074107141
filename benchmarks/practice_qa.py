"""A QA file of questions an index makes from its own sentences, for measuring a change
without hand-written questions.

    python benchmarks/practice_qa.py --index sample --out /tmp/practice-sample.jsonl
    scim-edge eval /tmp/practice-sample.jsonl --index sample --model extractive \\
        --systems standard,scim

The questions are made exactly as `scim-edge practice` makes them
(`practice.questions.pairs_from_passages`, same kinds, same word dropping, the article's
title named), from passages drawn with `--seed`. Use a seed other than the one the
installed weights were practised with (0 by default, 1 for the shipped weights), so that
the file holds questions they never trained on. They are noisier than a person's
questions and name their topic; they check that a change does not only fit our own dev
questions. Each line is `{id, question, answers, type, answerable, titles}`, `titles`
being the article the question was made from, so `eval` reports recall@5 of it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", required=True, help="index name or directory")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("-n", type=int, default=600, help="questions (default 600)")
    ap.add_argument("--seed", type=int, default=7, help="passage draw (default 7)")
    a = ap.parse_args()

    from scim_edge import atomic
    from scim_edge.errors import UserError
    from scim_edge.lead_types import LeadTypes
    from scim_edge.practice.questions import pairs_from_passages
    from scim_edge.retrieval import BM25Retriever, resolve_index_dir

    if a.n < 1:
        ap.error("-n must be at least 1")
    try:
        index_dir = resolve_index_dir(a.index)
        retriever = BM25Retriever.open(index_dir)
        pairs = pairs_from_passages(
            retriever.sample(a.seed), a.n, a.seed, types=LeadTypes.for_index(index_dir)
        )
    except UserError as e:
        print(f"practice_qa: error: {e.one_line()}", file=sys.stderr)
        return e.exit_code
    if not pairs:
        print(f"practice_qa: error: index '{index_dir.name}' gave no questions", file=sys.stderr)
        return 2
    lines = [
        json.dumps(
            {
                "id": p.id,
                "question": p.question,
                "answers": [p.answer],
                "type": "factoid",
                "answerable": True,
                "titles": [p.title],
            },
            ensure_ascii=False,
        )  # fmt: skip
        for p in pairs
    ]
    atomic.write_text(a.out, "".join(x + "\n" for x in lines))
    print(json.dumps({"index": index_dir.name, "questions": len(lines), "seed": a.seed,
                      "out": str(a.out)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
