"""One card per loop iteration, filled in live as that iteration's events arrive."""

from __future__ import annotations

from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from scim_edge.critic import NO_EVIDENCE, UNSUPPORTED
from scim_edge.types import (
    Critiqued,
    Decided,
    Generated,
    Passage,
    Regenerated,
    Retrieved,
    Scored,
    Verdict,
)
from scim_edge.wording import percent
from tui.formatting import one_line, timing_items
from tui.sources import source_label
from tui.widgets.item_row import ItemRow
from tui.widgets.score_bars import ScoreBars

DECISION_WORDS = {
    "accept": ("✔ accept", "$success"),
    "continue": ("↻ continue", "$warning"),
    "force_accept": ("⚑ force-accept", "$warning"),
    "reject": ("✘ reject", "$error"),
    "stop": ("■ stop", "$error"),
}

REASON_WORDS = {
    "accepted": "Q ≥ θ",
    "fast_path": "first answer above the fast-path threshold",
    "budget": "T_max reached below θ: best answer so far",
    "quality_declined": "Q fell by δ or more: the previous answer is kept",
    "no_new_evidence": "no new passages: another try cannot change the answer",
    "no_evidence": "no passage matches the question",
    "no_content_words": "the question has no content words to check an answer against",
    "continue": "Q < θ: retrieve again",
    "single_pass": "one pass, no quality stop",
    "fixed_iterations": "fixed iteration count reached",
}


# the same reasons when θ is compared with the round's calibrated confidence
CONFIDENCE_REASONS = {
    "accepted": "confidence {p}% ≥ θ {theta}%",
    "continue": "confidence {p}% < θ {theta}%: retrieve again",
    "quality_declined": "confidence {p}% fell by δ or more: the previous answer is kept",
}


CRITIC_LABELS = tuple(label.strip().lower() for label in (NO_EVIDENCE, UNSUPPORTED))


def display_query(query: str) -> str:
    """A search string as sent: a critic label ("no evidence for: x") is not part of it."""
    text = query.strip()
    for label in CRITIC_LABELS:
        if text.lower().startswith(label):
            return text[len(label) :].strip() or text
    return text


def critic_decision_words(decision: str, reason: str, verdict: dict | None) -> str:
    """The simrag decision without the critic's text again (the critic line shows it)."""
    if decision == "accept":
        return "the critic approves" + (" the revision" if "revised" in reason else "")
    if decision == "reject":
        follow = (verdict or {}).get("followup") or {}
        queries = [display_query(q) for q in follow.get("queries", []) if q]
        if queries:
            return "search again for: " + " | ".join(one_line(q, 80) for q in queries)
        return "search again"
    head = reason.split(";", 1)[0].strip()
    if head.lower().startswith("the critic rejects"):
        head = "the critic rejects the answer"
    return one_line(head, 160) if head else "stop"


def verdict_line(v: Verdict, head: str) -> Content:
    """`critic rejects: <the critic's issues>`, its other reasons dim on the next line."""
    parts: list = [(head, "dim")]
    parts.append(("approves", "bold $success") if v.accept else ("rejects", "bold $error"))
    if v.form_only:
        parts.append((" (form only)", "dim"))
    if v.issues:
        parts.append(": " + "; ".join(one_line(i, 200) for i in v.issues))
        if v.reason and v.reason not in v.issues:
            parts.append(("\n  " + one_line(v.reason, 240), "dim"))
    elif v.reason:
        parts.append(": " + one_line(v.reason, 240))
    return Content.assemble(*parts)


def passage_link(p: Passage) -> tuple[str, str]:
    """A title that opens the passage in the evidence panel when clicked."""
    label = source_label(p.title or p.doc_id, p.section)
    return (label, f"underline @click=app.show_passage('{p.doc_id}')")


class IterationCard(Vertical):
    DEFAULT_CLASSES = "iteration-card"

    def __init__(
        self,
        t: int,
        mode: str,
        queries: list[str],
        theta: float | None,
        critic: bool = False,
        learned: bool = False,
    ) -> None:
        super().__init__()
        self.critic = critic  # a critic loop (simrag): the critic's line carries the reason
        # SCIM compares θ with the round's calibrated confidence (`--quality learned`), not
        # with Q: the scores then show Q alone, and the decision names the confidence
        self.learned = learned
        self.retrieved_any = False
        self.t = t
        self.mode = mode
        self.theta = theta
        self.timing: dict[str, float] = {}
        self.decision: str | None = None
        self.border_title = f"Iteration {t} · {mode}"
        self._queries = Static(classes="card-queries")
        self._passages = Static(classes="card-passages")
        self._answer = Static(classes="card-answer")
        self._scores = ScoreBars()
        self._verdict = Static(classes="card-verdict")
        self._decision = Static(classes="card-decision")
        self._timing = ItemRow(classes="card-timing")
        for w in (self._passages, self._answer, self._verdict, self._decision, self._timing):
            w.display = False
        self.set_queries(queries)

    def compose(self):
        yield self._queries
        yield self._passages
        yield self._answer
        yield self._scores
        yield self._verdict
        yield self._decision
        yield self._timing

    # ---- event handlers (called by the timeline) -------------------------------------

    def set_queries(self, queries: list[str]) -> None:
        parts: list = [("queries ", "dim")]
        for n, q in enumerate(queries or ["(the question)"]):
            if n:
                parts.append((" | ", "dim"))
            parts.append((one_line(display_query(q), 160), "italic"))
        self._queries.update(Content.assemble(*parts))

    def set_retrieved(self, ev: Retrieved, titles: dict[str, str]) -> None:
        if ev.queries:
            self.set_queries(ev.queries)
        parts: list = []
        new_ids = {p.doc_id for p in ev.new_passages}
        self.retrieved_any = bool(ev.doc_ids or ev.new_passages)
        for p in ev.new_passages:
            parts += [
                ("+ new ", "bold $success"),
                passage_link(p),
                ("\n", ""),
            ]
        if not ev.new_passages:
            parts.append(("no new passages found\n", "$warning"))
        kept = [d for d in ev.doc_ids if d not in new_ids]
        if kept:
            counts: dict[str, int] = {}
            for d in kept:
                title = one_line(titles.get(d, d), 40)
                counts[title] = counts.get(title, 0) + 1
            names = ", ".join(f"{t} ×{n}" if n > 1 else t for t, n in counts.items())
            parts.append((f"  kept {len(kept)} earlier: {names}", "dim"))
        self._passages.update(Content.assemble(*parts).rstrip())
        self._passages.display = True
        self._add_time("retrieval", ev.ms)

    def set_generated(self, ev: Generated) -> None:
        self._answer.update(Content.assemble(("answer ", "dim"), one_line(ev.answer)))
        self._answer.display = True
        self._add_time("generation", ev.ms)

    def set_scored(self, ev: Scored) -> None:
        if not self.critic:  # a critic loop's scores are in the critic's own line
            self._scores.show_scores(ev.report.scores(), self._q_theta)
        self._add_time("evaluation", ev.ms)

    def set_critiqued(self, ev: Critiqued) -> None:
        self._verdict.update(verdict_line(ev.verdict, "critic "))
        self._verdict.display = True
        self._add_time("evaluation", ev.ms)

    def set_regenerated(self, ev: Regenerated) -> None:
        self._answer.update(
            Content.assemble(
                ("answer ", "dim"),
                (one_line(ev.original, 120), "strike dim"),
                ("\nrevised ", "dim"),
                one_line(ev.revised),
            )
        )
        self._answer.display = True
        # The revision is judged again: that verdict is the one the decision follows.
        first = self._verdict.content if self._verdict.display else Content("")
        again = verdict_line(ev.verdict, "critic on the revision ")
        self._verdict.update(Content.assemble(first, "\n", again) if first.plain else again)
        self._verdict.display = True

    def set_decided(self, ev: Decided) -> None:
        rec = ev.record
        self.decision = ev.decision
        if rec.answer and not self._answer.display and not self.critic:
            # (a critic loop's stop without a new answer keeps the last one: not this card's)
            self._answer.update(Content.assemble(("answer ", "dim"), one_line(rec.answer)))
            self._answer.display = True
        if rec.scores and not self.critic:
            self._scores.show_scores(rec.scores, self._q_theta)
        words, style = DECISION_WORDS.get(ev.decision, (ev.decision, "bold"))
        parts: list = [("decision ", "dim"), (words, f"bold {style}")]
        if self.critic:
            parts.append(f" — {critic_decision_words(ev.decision, ev.reason, rec.verdict)}")
        elif ev.reason == "no_evidence" and self.retrieved_any:
            parts.append(f" — {REASON_WORDS['no_content_words']}")
        elif ev.reason:
            parts.append(f" — {self._reason_words(ev.reason, rec.confidence)}")
        if rec.confidence is not None and not self._compares_confidence(ev.reason):
            parts.append((f"  · confidence {percent(rec.confidence)}%", "dim"))
        self._decision.update(Content.assemble(*parts))
        self._decision.display = True
        if rec.timing_ms:
            self.timing = dict(rec.timing_ms)
            self._show_timing()
        self.set_class(True, f"-decision-{ev.decision.replace('_', '-')}")

    @property
    def _q_theta(self) -> float | None:
        """θ beside Q in the score bars: only where Q is what the loop compares with it."""
        return None if self.learned else self.theta

    def _compares_confidence(self, reason: str) -> bool:
        return self.learned and self.theta is not None and reason in CONFIDENCE_REASONS

    def _reason_words(self, reason: str, confidence: float | None) -> str:
        """The decision's reason as the loop took it: against θ with what it compared
        (Q, or the calibrated confidence), and no θ for loops that never compare."""
        if self.theta is None and reason == "continue":
            return "next round of a fixed run"
        if self._compares_confidence(reason) and confidence is not None:
            p, theta = percent(confidence), percent(self.theta)
            return CONFIDENCE_REASONS[reason].format(p=p, theta=theta)
        return REASON_WORDS.get(reason, one_line(reason, 200))

    def _add_time(self, key: str, ms: float) -> None:
        self.timing[key] = self.timing.get(key, 0.0) + float(ms)
        self._show_timing()

    def _show_timing(self) -> None:
        self._timing.set_items(timing_items(self.timing))
        self._timing.display = True
