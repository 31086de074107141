"""What the reader's sentence similarity costs per round, on an index with MiniLM vectors.

    python benchmarks/bench_sentence_similarity.py --index NAME \
        [--qa benchmarks/dev_vital.jsonl] [--out benchmarks/results/sentence_similarity.json]

NAME is an index with passage vectors (`scim-edge build-index --embeddings all-MiniLM-L6-v2
--name NAME`) whose model is installed. For every question of the QA file it retrieves the
loops' first-round passages (BM25, ranked as the loops rank them), reads them once to warm
every other cache, then times one reading three ways: without the similarity (the floor),
with it and an empty sentence cache (a new question), and with it again (a later round,
whose sentences are cached). Reports medians and the ratios to the floor, and how often
the pick differs.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from bench_output import fail, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _time_readings(questions: list[str], bm25: Any, plain: Any, measured: Any) -> tuple:
    """Per question: ms without the similarity, with it from cold, with it cached; the
    sentences it embedded; and how many picks it changed."""
    from scim_edge import query_formulation as qf
    from scim_edge.generation.prompting import order_passages
    from scim_edge.settings import Settings

    settings = Settings(model="extractive")
    similarity = measured.similarity
    floor, cold, warm, sentences, differ = [], [], [], [], 0
    for q in questions:
        found = qf.retrieve(bm25, qf.initial(q), settings.k1, set(), settings.candidates, q)
        passages = order_passages(q, found)
        plain.read(q, passages)  # every other cache warm: the timings differ by similarity
        t0 = time.perf_counter()
        base = plain.read(q, passages)
        t1 = time.perf_counter()
        similarity.forget()
        first = measured.read(q, passages)
        t2 = time.perf_counter()
        measured.read(q, passages)
        t3 = time.perf_counter()
        floor.append((t1 - t0) * 1000)
        cold.append((t2 - t1) * 1000)
        warm.append((t3 - t2) * 1000)
        sentences.append(similarity.cached() - 1)  # less the question
        pick = lambda r: r.candidate.text if r.candidate else ""  # noqa: E731
        differ += pick(base) != pick(first)
    return floor, cold, warm, sentences, differ


def main(argv: list[str] | None = None) -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty

    ap = OneLineParser(prog="bench_sentence_similarity", description=__doc__.splitlines()[0])
    ap.add_argument("--index", required=True, type=nonempty)
    ap.add_argument("--qa", type=nonempty, default=str(ROOT / "benchmarks" / "dev_vital.jsonl"))
    out = ROOT / "benchmarks" / "results" / "sentence_similarity.json"
    ap.add_argument("--out", type=nonempty, default=str(out))
    a = ap.parse_args(argv)

    from scim_edge.errors import UserError
    from scim_edge.evaluation.qa_io import load_qa
    from scim_edge.generation.reader import Reader
    from scim_edge.retrieval import BM25Retriever, resolve_index_dir
    from scim_edge.sentence_similarity import SentenceSimilarity

    try:
        directory = resolve_index_dir(a.index)
        bm25 = BM25Retriever.open(directory)
        questions = [item.question for item in load_qa(a.qa)]
        plain = Reader.for_index(directory)
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    similarity = SentenceSimilarity.for_index(directory)
    if similarity is None:
        return fail(f"index {directory.name} has no passage vectors whose model is installed")
    plain.similarity = None
    measured = Reader(plain.model, plain.source, plain.types, similarity=similarity)
    floor, cold, warm, sentences, differ = _time_readings(questions, bm25, plain, measured)
    med = statistics.median
    result = {
        "benchmark": "sentence_similarity",
        "index": a.index,
        "model": similarity.name,
        "questions": len(questions),
        "sentences_per_round_median": med(sentences),
        "read_ms_median": {
            "without": round(med(floor), 2),
            "new_question": round(med(cold), 2),
            "later_round": round(med(warm), 2),
        },  # fmt: skip
        "ratio_to_without": {
            "new_question": round(med(cold) / med(floor), 2),
            "later_round": round(med(warm) / med(floor), 2),
        },  # fmt: skip
        "picks_changed": differ,
        "note": "the reader's own weights for the index: with the shipped ones (fitted without "
        "vectors) the similarity has no weight and no pick changes",
    }
    if rc := write_json(a.out, result):
        return rc
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
