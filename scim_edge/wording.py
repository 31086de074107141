"""Plain words for an answer, shared by the CLI's `ask` and the TUI.

One function each for a time, a stop reason, the confidence and the generator, so every
front end says the same thing; no loop jargon (`force_accepted`, `budget`) reaches a user
outside `--json`.
"""

from __future__ import annotations

import math
from collections import Counter

from scim_edge.types import INSUFFICIENT_EVIDENCE, Answer


def counted(n: int, noun: str) -> str:
    """ "1 iteration", "3 iterations": a count with its noun (regular plurals only)."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def source_label(title: str, section: str = "") -> str:
    """`Title › Section`, or the title alone for an article's lead."""
    title = title or "untitled"
    return f"{title} › {section}" if section else title


def source_labels(entries: list[tuple[str, str, str]]) -> list[str]:
    """`source_label` of each (title, section, doc_id), told apart where two passages of
    one section would read the same: "Animal Farm · passage 2" (the passage's place in its
    article, from its id `<page>-<n>`)."""
    plain = [source_label(title, section) for title, section, _ in entries]
    seen = Counter(plain)
    out = []
    for label, (_, _, doc_id) in zip(plain, entries, strict=True):
        n = doc_id.rpartition("-")[2]
        if seen[label] > 1 and n.isdigit():
            label = f"{label} · passage {int(n) + 1}"
        out.append(label)
    return out


def one_line(text: str, limit: int = 0, *, at_word: bool = False) -> str:
    """`text` on one line, cut to `limit` characters with an ellipsis (0: uncut); with
    `at_word`, the cut falls between words."""
    text = " ".join(text.split())
    if limit and len(text) > limit:
        cut = text[: limit - 1]
        if at_word and " " in cut:
            cut = cut.rsplit(" ", 1)[0] + " "
        return cut + "…"
    return text


def fmt_ms(ms: float | None) -> str:
    """Milliseconds for humans: `0.6 ms`, `430 ms`, `1.0 s`, `12.3 s`."""
    if ms is None:
        return "–"
    if ms < 10:
        return f"{ms:.1f} ms"
    if ms < 999.5:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def percent(p: float) -> int:
    """A probability in whole percents, rounded down, so that a value under a bound (High's
    70%, θ) never reads as reaching it: 0.697 is 69%, where rounding showed "Medium
    confidence · 70%" and "confidence 70% < θ 70%"."""
    return math.floor(100 * p + 1e-9)


def confidence_words(answer: Answer) -> str:
    """The trust label a user reads: the tier, with the calibrated probability when there
    is one (`high confidence · 87%`); without it the tier comes from Q and says so."""
    tier = answer.tier or "low"
    if answer.confidence is not None:
        return f"{tier} confidence · {percent(answer.confidence)}%"
    return f"{tier} confidence (from Q {answer.quality:.2f})"


NO_ANSWER = "No answer: the passages found state none."


def answer_words(answer: Answer) -> str:
    """The answer as a user reads it: its text, or a sentence that says there is none
    where the reader found nothing to state (a blank line reads as a fault)."""
    return answer.answer if answer.answer.strip() else NO_ANSWER


GENERATOR_WORDS = {"extractive": "the extractive reader"}


def confidence_note(answer: Answer) -> str:
    """Why the answer's confidence differs from its round's, when it does: a loop that may
    run several rounds reads the answer it returns once more, with how its rounds agreed
    (`Confidence.across_rounds`), so the accepting round's card may say 93% and the answer
    90%. "" when they agree."""
    r = answer.returned_round()
    if answer.confidence is None or r is None or r.confidence is None:
        return ""
    mine, its = percent(answer.confidence), percent(r.confidence)
    if mine == its:
        return ""
    return (f"The answer's {mine}% is the Critic's second look at the answer the loop "
            f"returned, with how its rounds agreed; round {r.t} alone read {its}%.")  # fmt: skip


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
            "max_iterations_reached": "stopped: the critic rejected every answer in "
            + counted(len(answer.iterations), "round"),
        }.get(answer.stop_reason, "stopped: the evidence does not support an answer")
    n = len(answer.iterations)
    reason = answer.stop_reason or ""
    accepted = [it.t for it in answer.iterations if it.decision == "accept"]
    t = accepted[-1] if accepted else n
    words = {
        "accepted": f"accepted at iteration {t}",
        "fast_path": "accepted at iteration 1 (fast path)",
        "budget": f"best answer after {counted(n, 'iteration')}",
        "quality_declined": "stopped: quality declined",
        "no_new_evidence": f"stopped: no new evidence after {counted(n, 'iteration')}",
        "single_pass": "single pass (no quality stop)",
        "fixed_iterations": f"fixed run of {counted(n, 'iteration')}",
        "critic_approved": f"critic approved at iteration {t}",
        "critic_approved_after_regeneration": f"critic approved the revision at iteration {t}",
    }.get(reason)
    if words is None:
        if "declin" in reason:
            words = "stopped: quality declined"
        elif answer.status == "accepted":
            words = f"accepted at iteration {t}"
        elif answer.status == "force_accepted":
            words = f"best answer after {counted(n, 'iteration')}"
        else:
            words = reason.replace("_", " ") or answer.status.replace("_", " ")
    if answer.bindings.get("cache") == "hit":
        words += " (from the answer cache)"
    return words
