"""The evidence panel: pick a cited or retrieved passage and read it in full.

Passages are listed as `Title › Section` (an id like `305-12` means nothing to a reader).
The question's words are highlighted so a reader can check the answer against its
source; the article's Wikipedia URL is shown for use when online, and `a` opens the
whole article, rebuilt offline from the index. Esc goes back to the question line.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from scim_edge.types import Passage
from scim_edge.wording import source_labels
from tui.formatting import highlight, one_line, question_words
from tui.sources import source_label, wiki_url


class EvidencePanel(Vertical):
    DEFAULT_CLASSES = "evidence-panel"
    BINDINGS = [
        Binding("escape", "screen.focus_question", "Back to the question"),
        Binding("a", "open_article", "Whole article"),
    ]

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.border_title = "Evidence"
        self.passages: dict[str, Passage] = {}
        self.question = ""
        self.current: str | None = None
        self.lang = "en"

    def compose(self):
        yield OptionList(id="evidence-list")
        with VerticalScroll(id="evidence-scroll"):
            yield Static(
                Content.styled("Ask a question; its passages appear here.", "dim"),
                id="evidence-text",
            )

    def show_passages(
        self, question: str, passages: dict[str, Passage], cited: list[str], lang: str = "en"
    ) -> None:
        """List `passages`, cited ones first (★), and open the first."""
        self.question = question
        self.passages = dict(passages)
        self.lang = lang
        order = [d for d in cited if d in passages] + [d for d in passages if d not in cited]
        options = []
        labels = source_labels([(passages[d].title, passages[d].section, d) for d in order])
        for doc_id, label in zip(order, labels, strict=True):
            mark = "★ " if doc_id in cited else "· "
            options.append(Option(f"{mark}{one_line(label, 60)}", id=doc_id))
        listing = self.query_one("#evidence-list", OptionList)
        listing.clear_options()
        listing.add_options(options)
        self.border_subtitle = f"{len(cited)} cited · {len(passages)} retrieved"
        if order:
            listing.highlighted = 0
            self.open_passage(order[0])
        else:  # nothing found: the last question's passage must not stay on show
            self.current = None
            self.query_one("#evidence-text", Static).update(
                Content.styled("No passage was retrieved for this question.", "dim")
            )

    def open_passage(self, doc_id: str) -> bool:
        p = self.passages.get(doc_id)
        if p is None:
            return False
        self.current = doc_id
        listing = self.query_one("#evidence-list", OptionList)
        try:
            idx = listing.get_option_index(doc_id)
        except Exception:  # noqa: BLE001 - an option missing from the list is harmless
            idx = None
        if idx is not None and listing.highlighted != idx:
            listing.highlighted = idx
        url = wiki_url(p.title, p.section, self.lang)
        head = Content.assemble(
            (source_label(p.title, p.section), "bold"),
            ("\n", ""),
            (url, "dim"),
            ("\n", ""),
            (
                "read the whole article (a)",
                f"$accent underline @click=screen.show_article('{doc_id}')",
            ),
            ("\n\n", ""),
        )
        self.query_one("#evidence-text", Static).update(
            head + highlight(p.text, question_words(self.question))
        )
        self.query_one("#evidence-scroll", VerticalScroll).scroll_home(animate=False)
        return True

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id and event.option.id != self.current:
            self.open_passage(event.option.id)

    def focus_list(self) -> None:
        self.query_one("#evidence-list", OptionList).focus()

    def action_open_article(self) -> None:
        if self.current is not None:
            self.screen.action_show_article(self.current)  # type: ignore[attr-defined]
