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

import json
import sys
from pathlib import Path

from bench_output import fail, write_text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int

    ap = OneLineParser(prog="practice_qa", description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=nonempty, required=True, help="index name or directory")
    ap.add_argument("--out", type=nonempty, required=True, help="the QA file to write")
    ap.add_argument("-n", type=positive_int, default=600, help="questions (default 600)")
    ap.add_argument("--seed", type=int, default=7, help="passage draw (default 7)")
    a = ap.parse_args()

    from scim_edge.errors import UserError
    from scim_edge.lead_types import LeadTypes
    from scim_edge.practice.questions import pairs_from_passages
    from scim_edge.practice.runner import practice_names
    from scim_edge.retrieval import BM25Retriever, resolve_index_dir

    try:
        index_dir = resolve_index_dir(a.index)
        retriever = BM25Retriever.open(index_dir)
        types = LeadTypes.for_index(index_dir)
        names = practice_names(retriever, types, a.seed)  # as `practice` asks "who"
        pairs = pairs_from_passages(retriever.sample(a.seed), a.n, a.seed, types=types,
                                    names=names)  # fmt: skip
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    if not pairs:
        return fail(f"index '{index_dir.name}' gave no questions")
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
    out = Path(a.out)
    if rc := write_text(out, "".join(x + "\n" for x in lines)):
        return rc
    print(json.dumps({"index": index_dir.name, "questions": len(lines), "seed": a.seed,
                      "out": str(out)}))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
