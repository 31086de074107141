"""The final answer, shown prominently: tier colour, stop reason, disclaimers, citations."""

from __future__ import annotations

from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from scim_edge.types import Answer
from tui.formatting import TIER_CLASSES, TIER_STYLES, fmt_ms, stop_reason_words


class AnswerPanel(Vertical):
    DEFAULT_CLASSES = "answer-panel"

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer
        self.add_class(TIER_CLASSES.get(answer.tier, "-tier-low"))
        self.border_title = "Answer"
        self.border_subtitle = f"{answer.tier} · Q {answer.quality:.2f}"

    def compose(self):
        a = self.answer
        yield Static(Content(a.answer), classes="answer-text")
        yield Static(
            Content.assemble(
                (f"{a.tier.upper()} ", TIER_STYLES.get(a.tier, "bold")),
                (f"Q {a.quality:.2f} · ", "dim"),
                (stop_reason_words(a), "bold"),
                (f" · {a.loop} loop · {a.profile} · {a.generator} · ", "dim"),
                (f"total {fmt_ms(a.timing_ms.get('total'))}", "dim"),
            ),
            classes="answer-meta",
        )
        notes = [*a.disclaimers, *a.warnings]
        if a.needs_review and not any("review" in n.lower() for n in notes):
            notes.append("Flagged for human review.")
        if notes:
            yield Static(
                Content.assemble(
                    *[
                        ("⚠ " + n + ("\n" if i < len(notes) - 1 else ""), "")
                        for i, n in enumerate(notes)
                    ]
                ),
                classes="answer-disclaimers",
            )
        if a.citations:
            parts: list = [("Citations\n", "bold")]
            for n, c in enumerate(a.citations, 1):
                doc_id = c.get("doc_id", "")
                parts += [
                    (f"[{n}] ", "dim"),
                    (c.get("title", doc_id), f"underline @click=app.show_passage('{doc_id}')"),
                    (f"  {doc_id}" + ("\n" if n < len(a.citations) else ""), "dim"),
                ]
            yield Static(Content.assemble(*parts), classes="answer-citations")
        else:
            yield Static(Content.styled("No citations.", "dim"), classes="answer-citations")
