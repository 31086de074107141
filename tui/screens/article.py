"""The offline article view: the whole article rebuilt from its passages, in order.

A cited passage is a 100-word window; reading it inside its article (sections as
headings, the cited passage highlighted and scrolled into view) is how a reader checks
it. The article's Wikipedia URL is shown for use when online.
"""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from scim_edge.types import Passage
from tui.formatting import highlight, question_words
from tui.sources import article_passages, wiki_url


class ArticleScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, cited: Passage, retriever: Any, question: str = "", lang: str = "en"):
        super().__init__(id="article")
        self.cited = cited
        self.question = question
        self.lang = lang
        self.passages = article_passages(retriever, cited.doc_id) or [cited]
        if all(p.doc_id != cited.doc_id for p in self.passages):
            self.passages.append(cited)

    def compose(self):
        with Vertical(id="article-box") as box:
            box.border_title = self.cited.title
            box.border_subtitle = f"{len(self.passages)} passages · Esc closes"
            yield Static(
                Content.assemble(("online: ", "dim"), wiki_url(self.cited.title, "", self.lang)),
                id="article-url",
            )
            with VerticalScroll(id="article-scroll"):
                section = None
                words = question_words(self.question)
                for n, p in enumerate(self.passages):
                    if p.section != section:
                        section = p.section
                        if section:
                            yield Static(
                                Content.styled(section, "bold $accent"), classes="article-section"
                            )
                    cited = p.doc_id == self.cited.doc_id
                    text = highlight(p.text, words) if cited else Content(p.text)
                    yield Static(
                        text,
                        id=f"passage-{n}",  # by position: any doc id format is safe
                        classes="article-passage" + (" -cited" if cited else ""),
                    )
        yield Footer()

    def on_mount(self) -> None:
        target = self.query_one(".article-passage.-cited", Static)
        self.call_after_refresh(
            self.query_one("#article-scroll", VerticalScroll).scroll_to_widget,
            target,
            animate=False,
            top=True,
        )

    def action_close(self) -> None:
        self.dismiss(None)
