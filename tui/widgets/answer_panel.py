"""The final answer, as a reader needs it: the short answer first, the sentence that
supports it under it, the confidence (the calibrated probability when there is one, else
the tier from Q, said so), the warnings, and the sources as `Title › Section`.

The heuristic five dimensions and Q are how the loop decided, not how far to trust the
answer, so they sit in the collapsed details with the stop reason and the loop.
"""

from __future__ import annotations

from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Collapsible, Static

from scim_edge.types import Answer, Passage
from scim_edge.wording import answer_words, confidence_note, counted, source_labels
from tui.formatting import (
    TIER_CLASSES,
    TIER_STYLES,
    confidence_words,
    fmt_ms,
    generator_words,
    score_items,
    stop_reason_words,
)
from tui.sources import source_label
from tui.widgets.item_row import ItemRow


def section_of(c: dict[str, str], passages: dict[str, Passage]) -> str:
    p = passages.get(c.get("doc_id", ""))
    return c.get("section") or (p.section if p is not None else "")


class AnswerPanel(Vertical):
    DEFAULT_CLASSES = "answer-panel"

    def __init__(
        self, answer: Answer, passages: dict[str, Passage] | None = None, theta: float | None = None
    ) -> None:
        super().__init__()
        self.answer = answer
        self.passages = passages or {p.doc_id: p for p in answer.passages}
        self.theta = theta
        self.add_class(TIER_CLASSES.get(answer.tier, "-tier-low"))
        self.border_title = "Answer"
        self.border_subtitle = confidence_words(answer)

    def compose(self):
        a = self.answer
        yield Static(Content(answer_words(a)), classes="answer-text")
        support = [s for s in a.support if s.get("sentence")]
        if support:
            parts: list = []
            for n, s in enumerate(support):
                if n:
                    parts.append("\n")
                parts += [
                    (f"“{s['sentence'].strip()}”", "italic"),
                    (f" — {source_label(s.get('title', ''), s.get('section', ''))}", "dim"),
                ]
            yield Static(Content.assemble(*parts), classes="answer-support")
        yield Static(
            Content.assemble(
                (confidence_words(a).upper(), TIER_STYLES.get(a.tier, "bold")),
                (" · ", "dim"),
                stop_reason_words(a),
                (" · ", "dim"),
                (
                    ""
                    if a.status == "insufficient_evidence"
                    else f"answered by {generator_words(a.generator)} · ",
                    "dim",
                ),
                (fmt_ms(a.timing_ms.get("total")), "dim"),
            ),
            classes="answer-meta",
        )
        notes = [*a.disclaimers, *a.warnings]
        if a.needs_review and not any("review" in n.lower() for n in notes):
            notes.append("Flagged for human review.")
        if notes:
            yield Static(
                Content("\n").join(Content.assemble(("⚠ ", "bold"), n) for n in notes),
                classes="answer-disclaimers",
            )
        if a.citations:
            safe_stop = a.status == "insufficient_evidence"
            parts = [("Passages read\n" if safe_stop else "Sources\n", "bold")]
            labels = source_labels(
                [(c.get("title", c.get("doc_id", "")), section_of(c, self.passages),
                  c.get("doc_id", "")) for c in a.citations]
            )  # fmt: skip
            for n, (c, label) in enumerate(zip(a.citations, labels, strict=True), 1):
                doc_id = c.get("doc_id", "")
                parts += [
                    (f"[{n}] ", "dim"),
                    (label, f"underline @click=app.show_passage('{doc_id}')"),
                    ("  ", ""),
                    ("article", f"dim underline @click=screen.show_article('{doc_id}')"),
                    ("\n" if n < len(a.citations) else "", ""),
                ]
            yield Static(Content.assemble(*parts), classes="answer-citations")
        else:
            yield Static(Content.styled("No sources.", "dim"), classes="answer-citations")
        returned = a.returned_round()
        # θ beside Q only where Q is what the loop compared (not the Critic's confidence)
        theta = None if a.bindings.get("quality") == "learned" else self.theta
        with Collapsible(title="Details: quality scores, loop", classes="answer-details"):
            if returned is not None and returned.scores:
                row = ItemRow(sep="   ", classes="answer-scores")
                row.set_items(score_items(returned.scores, theta))
                yield row
            if note := confidence_note(a):
                yield Static(Content.styled(note, "dim"), classes="answer-confidence-note")
            yield Static(
                Content.assemble(
                    ("Q ", "dim"),
                    f"{a.quality:.2f}",
                    ("  (the loop's own score, not a probability) · ", "dim"),
                    f"{a.loop} loop · {a.profile} profile · "
                    + counted(len(a.iterations), "iteration"),
                ),
                classes="answer-loop",
            )
