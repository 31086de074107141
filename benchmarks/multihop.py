"""Multi-hop and comparison questions over vital-en, before and after the bridge and
comparison handling of issue 11 §5.

    python benchmarks/multihop.py                 # builds vital-en into a temp dir (~2 s)
    python benchmarks/multihop.py --index NAME|DIR  # an index already built from it

Questions: benchmarks/dev_multihop.jsonl (written by hand over vital-en, for measuring
only; nothing is fitted to them). For a multi-hop question `titles[-1]` is the bridge
article, the one that holds the answer; for a comparison, `titles` are the two options'
articles.

"before" is the same code with the new parts switched off: `query_formulation.bridge_hop`
returns None (follow-up queries are the spec's K_missing query and ITER-RETGEN's
question + answer) and `comparison.parse` returns None (the initial query is the question
alone; no fact comparison).

Reported, as JSON in benchmarks/results/multihop.json:
- `round2` (multi-hop): round 1 retrieves k1 passages for the question, the installed
  generator answers, then SCIM's augment query and ITER-RETGEN's query retrieve k2 new
  passages; the share of questions whose bridge article is among those new passages
  (`bridge_in_round2`) and among all passages after round 2 (`bridge_by_round2`).
- `loops` (all questions): `standard`, `iter-retgen` and `scim` end to end: EM, F1, and
  for multi-hop questions the share whose bridge article was retrieved by iteration 2.
- `comparison`: both options' articles in the first k1 passages; accuracy of the reader's
  answer (before), of `comparison.compare` on the new retrieval with the reader's answer
  as fallback (after), and of the reader alone on the new retrieval (`reader_after`).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING
from unittest import mock

from bench_output import fail, temp_folder, write_json

if TYPE_CHECKING:
    from scim_edge.evaluation.qa_io import QAItem

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DATA = Path(os.environ.get("SCIM_EDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
QUESTIONS = ROOT / "benchmarks" / "dev_multihop.jsonl"
OUT = ROOT / "benchmarks" / "results" / "multihop.json"
LOOPS = ("standard", "iter-retgen", "scim")


@contextlib.contextmanager
def variant(name: str):
    """`after`: the code as it is; `before`: bridge and comparison handling switched off."""
    from scim_edge import comparison
    from scim_edge import query_formulation as qf

    if name == "after":
        yield
        return
    with (
        mock.patch.object(qf, "bridge_hop", lambda *a, **k: None),
        mock.patch.object(comparison, "parse", lambda *a, **k: None),
    ):
        yield


def share(xs: list[bool]) -> float:
    return round(sum(xs) / len(xs), 4) if xs else 0.0


def round2(questions: list[QAItem], retriever, generator, settings) -> dict:
    from scim_edge import query_formulation as qf

    out: dict = {}
    for v in ("before", "after"):
        with variant(v):
            rows = {"augment": [], "iter-retgen": []}
            for q in questions:
                question, bridge_title = q.question, q.titles[-1]
                first = qf.retrieve(retriever, qf.initial(question), settings.k1, set(),
                                    settings.candidates, question)  # fmt: skip
                answer = generator.generate(question, first).text
                seen = {p.doc_id for p in first}
                for mode, f in (
                    ("augment", qf.augment(question, answer, first)),
                    ("iter-retgen", qf.with_answer(question, answer, first)),
                ):
                    new = qf.retrieve(retriever, f, settings.k2, seen, settings.candidates,
                                      question)  # fmt: skip
                    titles = [p.title for p in new]
                    rows[mode].append({
                        "id": q.id, "queries": f.queries, "round1": [p.title for p in first],
                        "round2": titles, "in_round2": bridge_title in titles,
                        "by_round2": bridge_title in titles + [p.title for p in first],
                    })  # fmt: skip
            out[v] = {
                mode: {
                    "bridge_in_round2": share([r["in_round2"] for r in rs]),
                    "bridge_by_round2": share([r["by_round2"] for r in rs]),
                    "questions": rs,
                }
                for mode, rs in rows.items()
            }
    return out


def loops(questions: list[QAItem], engine, settings) -> dict:
    from scim_edge.evaluation.metrics import exact_match, f1_score

    out: dict = {}
    for v in ("before", "after"):
        with variant(v):
            out[v] = {}
            for loop in LOOPS:
                s = settings.replace(loop=loop)
                em, f1, bridge, rows = [], [], [], []
                for q in questions:
                    a = engine.answer(q.question, s)
                    em.append(exact_match(a.answer, q.answers))
                    f1.append(f1_score(a.answer, q.answers))
                    titles = [t for it in a.iterations[:2] for t in it.new_titles.values()]
                    if q.type == "multihop":
                        bridge.append(q.titles[-1] in titles)
                    rows.append({"id": q.id, "answer": a.answer, "em": em[-1]})
                out[v][loop] = {
                    "em": round(sum(em) / len(em), 4),
                    "f1": round(sum(f1) / len(f1), 4),
                    "multihop_bridge_by_iteration2": share(bridge),
                    "answers": rows,
                }
    return out


def comparisons(questions: list[QAItem], retriever, generator, settings) -> dict:
    from scim_edge import comparison
    from scim_edge import query_formulation as qf
    from scim_edge.evaluation.metrics import exact_match

    out: dict = {}
    rows: dict[str, list[dict]] = {"before": [], "after": []}
    for v in ("before", "after"):
        with variant(v):
            for q in questions:
                question = q.question
                ps = qf.retrieve(retriever, qf.initial(question), settings.k1, set(),
                                 settings.candidates, question)  # fmt: skip
                titles = [p.title for p in ps]
                reader = generator.generate(question, ps).text
                picked = comparison.compare(question, ps)
                answer = picked[0] if picked else reader
                rows[v].append({
                    "id": q.id, "titles": titles,
                    "both_options": all(t in titles for t in q.titles),
                    "reader": reader, "reader_em": exact_match(reader, q.answers),
                    "compare": picked[0] if picked else None,
                    "facts": {k: f.text for k, f in picked[1].items()} if picked else None,
                    "answer": answer, "em": exact_match(answer, q.answers),
                })  # fmt: skip
    for v in ("before", "after"):
        out[v] = {
            "both_options_in_top_k1": share([r["both_options"] for r in rows[v]]),
            "accuracy": share([r["em"] == 1.0 for r in rows[v]]),
            "questions": rows[v],
        }
    out["after"]["reader_after"] = share([r["reader_em"] == 1.0 for r in rows["after"]])
    return out


def _questions(path: Path) -> list[QAItem]:
    """The questions of `path` (`load_qa`'s checks), each multi-hop one naming its bridge
    article last in `titles`; UserError naming the lines that do not."""
    from scim_edge.errors import UserError
    from scim_edge.evaluation.qa_io import load_qa

    questions = load_qa(path)
    bad = [q.line for q in questions if q.type == "multihop" and not q.titles]
    if bad:
        raise UserError(f"{path}: a multihop question needs its titles, the bridge article last "
                        f"(line {', '.join(map(str, bad))})")  # fmt: skip
    return questions


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="multihop", description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=nonempty,
                    help="index name or dir built from vital-en.xml.bz2")  # fmt: skip
    ap.add_argument("--questions", type=nonempty, default=str(QUESTIONS))
    ap.add_argument("--out", type=nonempty, default=str(OUT))
    a = ap.parse_args()

    from index_builder.build import build_index
    from scim_edge.engine import Engine
    from scim_edge.generation import make_generator
    from scim_edge.retrieval import BM25Retriever, resolve_index_dir
    from scim_edge.settings import Settings

    qpath = Path(a.questions)
    try:
        questions = _questions(qpath)
        if a.index is None:
            index = temp_folder("multihop-") / "vital"
            build_index(DATA / "vital-en.xml.bz2", index)
        else:
            index = resolve_index_dir(a.index)
        retriever = BM25Retriever.open(index)
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    settings = Settings(index=str(index))
    generator, _ = make_generator(settings)
    engine = Engine(settings, retriever, generator, index_name="vital")
    multihop = [q for q in questions if q.type == "multihop"]
    compare_qs = [q for q in questions if q.type == "comparison"]

    t0 = time.perf_counter()
    result = {
        "benchmark": "multihop",
        "index": str(index if a.index is None else a.index),
        "questions": str(qpath.relative_to(ROOT) if qpath.is_relative_to(ROOT) else qpath),
        "n_multihop": len(multihop),
        "n_comparison": len(compare_qs),
        "generator": generator.name,
        "k1": settings.k1,
        "k2": settings.k2,
        "round2": round2(multihop, retriever, generator, settings),
        "comparison": comparisons(compare_qs, retriever, generator, settings),
        "loops": loops(questions, engine, settings),
    }
    result["seconds"] = round(time.perf_counter() - t0, 2)
    if rc := write_json(a.out, result):
        return rc
    summary = {
        "round2": {
            v: {m: {k: r[k] for k in ("bridge_in_round2", "bridge_by_round2")}
                for m, r in result["round2"][v].items()}
            for v in ("before", "after")
        },
        "comparison": {
            v: {k: x for k, x in result["comparison"][v].items() if k != "questions"}
            for v in ("before", "after")
        },
        "loops": {
            v: {loop: {k: r[k] for k in ("em", "f1", "multihop_bridge_by_iteration2")}
                for loop, r in result["loops"][v].items()}
            for v in ("before", "after")
        },
    }  # fmt: skip
    print(json.dumps(summary, indent=2))
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
