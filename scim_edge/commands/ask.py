"""`scim-edge ask QUESTION`: answer one question with a loop and show every iteration."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from scim_edge.commands._args import positive_int, thread_count, unit_float
from scim_edge.commands._output import print_json
from scim_edge.types import DIMENSIONS, Answer

SHORT = {
    "completeness": "compl",
    "consistency": "consis",
    "confidence": "conf",
    "factuality": "fact",
    "coherence": "coher",
    "quality": "Q",
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="answer a question with the self-correcting loop")
    p.add_argument("question", metavar="QUESTION", help="the question (at most 2,000 characters)")
    p.add_argument("--loop", metavar="LOOP",
                   help="scim (default) | simrag | standard | iter-retgen | fixed-1 | fixed-2 | "
                        "fixed-3 | single-dim")  # fmt: skip
    p.add_argument("--index", metavar="NAME|DIR", help="index name or directory")
    p.add_argument(
        "--model",
        metavar="NAME|extractive",
        help="installed model name, or 'extractive' for the built-in generator",
    )
    p.add_argument("--profile", metavar="P", help="general | high-stakes | efficiency | education")
    p.add_argument("--theta", type=unit_float, metavar="X", help="acceptance threshold θ")
    p.add_argument(
        "--max-iterations",
        type=positive_int,
        metavar="N",
        help="iteration budget (T_max for SCIM loops, max_iterations for simrag)",
    )
    p.add_argument("--critic", metavar="heuristic|model", help="critic of the simrag loop")
    p.add_argument(
        "--max-tokens",
        type=positive_int,
        metavar="N",
        help="new-token limit of answer generation only",
    )
    p.add_argument(
        "--critic-max-tokens",
        type=positive_int,
        metavar="N",
        help="new-token limit of critique generation",
    )
    p.add_argument(
        "--retriever",
        metavar="auto|bm25|vector|hybrid",
        help="retriever, every loop (auto: hybrid when the index has vectors, else bm25)",
    )
    p.add_argument("--reranker", metavar="none|hybrid|embedding", help="reranker, every loop")
    p.add_argument("--rewriter", metavar="none|keyword|model", help="query rewriter (simrag)")
    p.add_argument(
        "--hyde",
        action="store_true",
        default=None,
        help="HyDE query vector (vector retrieval only)",
    )
    p.add_argument("--threads", type=thread_count, metavar="N", help="ONNX Runtime threads")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def overrides_from(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {
        "loop": args.loop,
        "index": args.index,
        "model": args.model,
        "profile": args.profile,
        "theta": args.theta,
        "critic": args.critic,
        "max_new_tokens": args.max_tokens,
        "critic_max_tokens": args.critic_max_tokens,
        "retriever": args.retriever,
        "reranker": args.reranker,
        "rewriter": args.rewriter,
        "hyde": args.hyde,
        "threads": args.threads,
    }
    if args.max_iterations is not None:
        out["t_max"] = args.max_iterations
        out["max_iterations"] = args.max_iterations
    return {k: v for k, v in out.items() if v is not None}


def run(args: argparse.Namespace) -> int:
    from scim_edge.engine import Engine, check_question
    from scim_edge.settings import load_settings

    question = check_question(args.question)
    overrides = overrides_from(args)
    if "max_new_tokens" in overrides:
        settings = _with_max_tokens(overrides)
    else:
        settings = load_settings(overrides)
    engine = Engine.open(settings)
    for note in engine.notes:
        sys.stderr.write(f"note: {note}\n")
    answer = engine.answer(question)
    if args.json:
        print_json(answer.to_dict())
    else:
        sys.stdout.write(format_answer(answer) + "\n")
    return 0


def _with_max_tokens(overrides: dict[str, Any]):
    """Apply --max-tokens, lowering min_new_tokens when it would exceed the new maximum."""
    from scim_edge.settings import load_settings

    base = load_settings({k: v for k, v in overrides.items() if k != "max_new_tokens"})
    return base.replace(
        max_new_tokens=overrides["max_new_tokens"],
        min_new_tokens=min(base.min_new_tokens, overrides["max_new_tokens"]),
    )


# ---- human output ------------------------------------------------------------------------


def _ms(value: float) -> str:
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def format_answer(a: Answer) -> str:
    lines = [a.answer, ""]
    lines.append(
        f"status {a.status} · stop {a.stop_reason} · tier {a.tier} (Q {a.quality:.2f})"
        + (" · needs human review" if a.needs_review else "")
    )
    for w in a.warnings:
        lines.append(f"warning: {w}")
    for d in a.disclaimers:
        lines.append(f"note: {d}")
    if a.citations:
        lines.append("citations:")
        for i, c in enumerate(a.citations, 1):
            lines.append(f"  [{i}] {c['title']} ({c['doc_id']})")
    lines.append("")
    lines.extend(iteration_table(a))
    lines.append("")
    lines.append(
        f"loop {a.loop} · profile {a.profile} · generator {a.generator} · index {a.index} · "
        f"{_ms(a.timing_ms.get('total', 0.0))} ms"
    )
    return "\n".join(lines)


def iteration_table(a: Answer) -> list[str]:
    keys = [*DIMENSIONS, "quality"]
    head = (
        f"{'t':>2} {'mode':<9} {'decision':<12} "
        + " ".join(f"{SHORT[k]:>6}" for k in keys)
        + f" {'retr':>6} {'gen':>6} {'eval':>6} {'coord':>6} {'total':>6} ms"
    )
    out = [head]
    for it in a.iterations:
        tm = it.timing_ms
        scores = " ".join(f"{it.scores.get(k, 0.0):>6.2f}" for k in keys)
        times = " ".join(
            f"{_ms(tm.get(k, 0.0)):>6}"
            for k in ("retrieval", "generation", "evaluation", "coordination", "total")
        )
        out.append(f"{it.t:>2} {it.mode:<9} {it.decision:<12} {scores} {times}")
        for q in it.queries:
            out.append(f"     query: {q}")
        new = ", ".join(it.new_doc_ids) or "none"
        out.append(f"     new: {new}")
        out.append(f"     all ({len(it.doc_ids)}): {', '.join(it.doc_ids) or 'none'}")
    return out
