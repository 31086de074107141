"""`scim-edge ask QUESTION`: answer one question.

By default it speaks plain words: the answer, the sentence that supports it, how far to
trust it and the sources. `--details` adds the loop's per-iteration table (modes, scores,
decisions, timings); `--json` prints everything, jargon included, for programs."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from scim_edge.commands._args import nonempty, positive_int, thread_count, unit_float
from scim_edge.commands._output import print_json
from scim_edge.errors import UserError
from scim_edge.settings import LEARNED_QUALITY_LOOPS, THETA_LOOPS
from scim_edge.types import DIMENSIONS, Answer
from scim_edge.wording import (
    answer_words,
    confidence_note,
    confidence_words,
    fmt_ms,
    generator_words,
    one_line,
    percent,
    source_label,
    source_labels,
    stop_reason_words,
)

ANSWER_CHARS = 160  # a round's answer in the details table, cut to one line

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
    p.add_argument("--index", type=nonempty, metavar="NAME|DIR", help="index name or directory")
    p.add_argument(
        "--model",
        type=nonempty,
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
    p.add_argument(
        "--critic",
        metavar="trained|heuristic|model",
        help="critic of the simrag loop (default trained; model = zero-shot Flan-T5)",
    )
    p.add_argument(
        "--critic-model",
        type=nonempty,
        metavar="NAME",
        help="a trained Critic as `scim-edge critic list` names it: a store name, "
        "index:NAME or default (without it: the index's own, else the shipped one); with "
        "--critic model, the Flan-T5 that judges simrag's rounds",
    )
    p.add_argument(
        "--quality",
        metavar="auto|paper|learned",
        help="what SCIM compares with θ: the paper's Q, or the Critic's calibrated confidence "
        "(default auto: learned when a trained Critic fits the generator)",
    )
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
        help="HyDE query vector (vector or hybrid retrieval; needs a Flan-T5 model)",
    )
    p.add_argument("--threads", type=thread_count, metavar="N", help="ONNX Runtime threads")
    p.add_argument(
        "--details",
        action="store_true",
        help="also show each iteration of the loop: queries, passages, scores, decision, times",
    )
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
        "critic_model": args.critic_model,
        "quality": args.quality,
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
    from scim_edge.commands._preflight import check_index
    from scim_edge.engine import Engine, check_question
    from scim_edge.settings import load_settings

    question = check_question(args.question)
    overrides = overrides_from(args)
    if "max_new_tokens" in overrides:
        settings = _with_max_tokens(overrides)
    else:
        settings = load_settings(overrides)
    check_flags_apply(args, settings.loop)
    check_index(settings.index)
    engine = Engine.open(settings)
    # the engine's notes come after the answer is made, so that a mistake found on the
    # way (an unknown --critic-model, no vectors for --retriever vector) is one line alone
    answer = engine.answer(question)
    for note in engine.notes:
        sys.stderr.write(f"note: {note}\n")
    if args.json:
        print_json(answer.to_dict())
    else:
        sys.stdout.write(format_answer(answer, details=args.details) + "\n")
    return 0


# The loops each option steers; any other loop would quietly ignore it.
FLAG_LOOPS = {
    "theta": ("--theta", THETA_LOOPS),
    "quality": ("--quality", LEARNED_QUALITY_LOOPS),
    "max_iterations": ("--max-iterations", (*THETA_LOOPS, "iter-retgen", "simrag")),
    "critic": ("--critic", ("simrag",)),
    "critic_max_tokens": ("--critic-max-tokens", ("simrag",)),
    "rewriter": ("--rewriter", ("simrag",)),
}


def check_flags_apply(args: argparse.Namespace, loop: str) -> None:
    """Refuse an option the chosen loop would ignore (`--theta` with simrag, which accepts
    at the Critic's 0.5; `--max-iterations` with fixed-3, which always runs three rounds)."""
    for attr, (flag, loops) in FLAG_LOOPS.items():
        if getattr(args, attr, None) is not None and loop not in loops:
            raise UserError(
                f"{flag} does not apply to the {loop} loop",
                hint=f"it steers {', '.join(loops)}",
            )


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


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _sections(a: Answer) -> dict[str, str]:
    return {p.doc_id: p.section for p in a.passages}


def format_answer(a: Answer, details: bool = False) -> str:
    """The answer in plain words; with `details`, the loop's iterations after it."""
    lines = [answer_words(a)]
    for s in a.support:
        if s.get("sentence"):
            where = source_label(s.get("title", ""), s.get("section", ""))
            lines += ["", f"  “{' '.join(s['sentence'].split())}”", f"    — {where}"]
    lines.append("")
    lines.append(_first_upper(confidence_words(a)))
    if a.needs_review:
        lines.append("A person should check this answer before relying on it.")
    for w in a.warnings:
        lines.append(f"Warning: {w}")
    for d in a.disclaimers:
        lines.append(f"Note: {d}")
    if a.citations:
        sections = _sections(a)
        lines.append("Sources:")
        entries = [
            (c.get("title", ""), c.get("section") or sections.get(c.get("doc_id", ""), ""),
             c.get("doc_id", ""))
            for c in a.citations
        ]  # fmt: skip
        for i, label in enumerate(source_labels(entries), 1):
            lines.append(f"  [{i}] {label}")
    lines.append("")
    by = (
        ""
        if a.status == "insufficient_evidence"
        else f"; answered by {generator_words(a.generator)}"
    )
    lines.append(
        f"{_first_upper(stop_reason_words(a))}{by}, in {fmt_ms(a.timing_ms.get('total'))} "
        f"(index {a.index})."
    )
    if details:
        lines.append("")
        lines.append(
            f"Loop {a.loop} · profile {a.profile} · status {a.status} · stop {a.stop_reason} · "
            f"Q {a.quality:.2f}"
        )
        if note := confidence_note(a):
            lines.append(note)
        lines.extend(iteration_table(a))
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
        if it.answer:  # what this round answered, and how likely that was right
            sure = "" if it.confidence is None else f" · confidence {percent(it.confidence)}%"
            out.append(f"     answer: {one_line(it.answer, ANSWER_CHARS)}{sure}")
    return out
