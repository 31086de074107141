"""Plain-words rendering of engine results, shared by the widgets.

Kept free of widget code so the wording (stop reasons, timings, tiers) is one function
each and the same in every card, panel and export.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from textual.content import Content

from scim_edge.types import DIMENSIONS, INSUFFICIENT_EVIDENCE, Answer

TIER_STYLES = {"high": "bold $success", "medium": "bold $warning", "low": "bold $error"}
TIER_CLASSES = {"high": "-tier-high", "medium": "-tier-medium", "low": "-tier-low"}
TIMING_KEYS = ("retrieval", "generation", "evaluation", "coordination")

# Enough to keep "the", "what", "did" out of the highlights; the quality module owns the
# real stopword list, this is only for display.
_STOP = frozenset(
    """a an the of in on at to for from by with and or not is are was were be been being do
    does did what which who whom whose when where why how that this these those it its as
    into than then there their they he she his her him you your we our i me my many much
    about after before did has have had can could would should will shall may might""".split()
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")


def fmt_ms(ms: float | None) -> str:
    """Milliseconds for humans: `0.6 ms`, `430 ms`, `1.0 s`, `12.3 s`."""
    if ms is None:
        return "–"
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 999.5:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def confidence_words(answer: Answer) -> str:
    """The trust label a user reads: the tier, with the calibrated probability when there
    is one (`high confidence · 87%`); without it the tier comes from Q and says so."""
    tier = answer.tier or "low"
    if answer.confidence is not None:
        return f"{tier} confidence · {round(100 * answer.confidence)}%"
    return f"{tier} confidence (from Q {answer.quality:.2f})"


GENERATOR_WORDS = {"extractive": "the extractive reader"}


def generator_words(name: str) -> str:
    """Which generator produced an answer, in words: the extractive reader or Flan-T5."""
    if not name:
        return "an unknown generator"
    if name in GENERATOR_WORDS:
        return GENERATOR_WORDS[name]
    return f"Flan-T5 ({name})"


def tier_of(quality: float) -> str:
    if quality >= 0.7:
        return "high"
    if quality >= 0.5:
        return "medium"
    return "low"


def stop_reason_words(answer: Answer) -> str:
    """The stop reason as a sentence a user understands (never the answer again: a safe
    stop's answer is already the insufficient-evidence sentence)."""
    if answer.status == "insufficient_evidence" or answer.answer.strip() == INSUFFICIENT_EVIDENCE:
        return {
            "no_evidence": "stopped: no passage supports an answer",
            "no_new_evidence": "stopped: the follow-up searches found nothing new",
            "max_iterations_reached": (
                f"stopped: the critic rejected every answer in {len(answer.iterations)} rounds"
            ),
        }.get(answer.stop_reason, "stopped: the evidence does not support an answer")
    n = len(answer.iterations)
    reason = answer.stop_reason or ""
    accepted = [it.t for it in answer.iterations if it.decision == "accept"]
    t = accepted[-1] if accepted else n
    words = {
        "accepted": f"accepted at iteration {t}",
        "fast_path": "accepted at iteration 1 (fast path)",
        "budget": f"best answer after {n} iterations",
        "quality_declined": "stopped: quality declined",
        "no_new_evidence": f"stopped: no new evidence after {n} iterations",
        "single_pass": "single pass (no quality stop)",
        "fixed_iterations": f"fixed run of {n} iterations",
        "critic_approved": f"critic approved at iteration {t}",
        "critic_approved_after_regeneration": f"critic approved the revision at iteration {t}",
    }.get(reason)
    if words is None:
        if "declin" in reason:
            words = "stopped: quality declined"
        elif answer.status == "accepted":
            words = f"accepted at iteration {t}"
        elif answer.status == "force_accepted":
            words = f"best answer after {n} iteration{'s' if n != 1 else ''}"
        else:
            words = reason.replace("_", " ") or answer.status.replace("_", " ")
    if answer.bindings.get("cache") == "hit":
        words += " (from the answer cache)"
    return words


def score_bar(value: float, width: int = 10) -> str:
    value = min(1.0, max(0.0, value))
    full = round(value * width)
    return "█" * full + "░" * (width - full)


def score_items(scores: dict[str, float], theta: float | None, width: int = 10) -> list[Content]:
    """Five dimension bars with values (equal widths, so packed rows align), then Q vs θ."""
    items: list[Content] = []
    for dim in DIMENSIONS:
        if dim not in scores:
            continue
        v = float(scores[dim])
        style = "$success" if v >= 0.7 else "$warning" if v >= 0.5 else "$error"
        items.append(Content.assemble(f"{dim:<12} ", (score_bar(v, width), style), f" {v:.2f}"))
    if "quality" in scores:
        q = float(scores["quality"])
        if theta is None:
            items.append(Content.assemble(("Q", "bold"), f" {q:.2f}"))
        else:
            ok = q >= theta
            items.append(
                Content.assemble(
                    ("Q", "bold"),
                    f" {q:.2f} {'≥' if ok else '<'} θ {theta:.2f} ",
                    ("✓" if ok else "✗", "bold $success" if ok else "bold $warning"),
                )
            )
    return items


def timing_items(timing_ms: dict[str, float]) -> list[Content]:
    """`retrieval 12 ms`, `generation 3.1 ms`, … (and `total`), one item each."""
    keys = [k for k in TIMING_KEYS if k in timing_ms]
    if "total" in timing_ms:
        keys.append("total")
    return [Content.assemble((f"{k} ", "dim"), (fmt_ms(timing_ms[k]), "bold")) for k in keys]


def question_words(question: str) -> list[str]:
    words = {w.lower().strip("'-") for w in _WORD.findall(question)}
    return sorted((w for w in words if len(w) > 1 and w not in _STOP), key=len, reverse=True)


def highlight(text: str, words: Iterable[str], style: str = "bold reverse $accent") -> Content:
    """`text` with every whole-word occurrence of `words` (any case) highlighted."""
    content = Content(text)
    words = [w for w in words if w]
    if not words:
        return content
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
    return content.highlight_regex(pattern, style=style)


def one_line(text: str, limit: int = 0) -> str:
    text = " ".join(text.split())
    if limit and len(text) > limit:
        return text[: limit - 1] + "…"
    return text
