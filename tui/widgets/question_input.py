"""The question line: clean pasted text, count characters near the limit, never cut.

Textual's `Input(max_length=...)` drops whatever is typed or pasted past the limit without
a word, so a long pasted question lost its end (the real question) and an unrelated
passage was answered. Here nothing is cut: the count shows in the border from 80% of the
limit and the screen refuses an over-long question with the limit named, as the CLI does.

Pasted text is cleaned first: escape sequences and control characters are dropped, and
tabs and newlines become spaces, so a paste cannot scramble the line or move focus.
"""

from __future__ import annotations

import re

from textual import events
from textual.binding import Binding
from textual.widgets import Input

from scim_edge.engine import MAX_QUESTION_CHARS

# CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), other two-byte escapes, and C1 CSI.
_ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
)
_SPACES = re.compile(r"[\t\n\r\v\f\u2028\u2029]+")
COUNT_FROM = 0.8  # show the count from this fraction of the limit


def clean_text(text: str) -> str:
    """`text` without escape sequences or control characters; tabs and newlines → spaces."""
    text = _ESCAPES.sub("", text)
    text = _SPACES.sub(" ", text)
    return "".join(ch for ch in text if ch.isprintable())


def count_words(n: int, limit: int = MAX_QUESTION_CHARS) -> str:
    """The border note for a question of `n` characters ('' while far from the limit)."""
    if n > limit:
        return f"{n:,} / {limit:,} characters: too long"
    if n >= COUNT_FROM * limit:
        return f"{n:,} / {limit:,} characters"
    return ""


class QuestionInput(Input):
    """The question line; its Enter binding is shown in the footer as "Ask"."""

    BINDINGS = [Binding("enter", "submit", "Ask", show=True)]

    def __init__(self, *, limit: int = MAX_QUESTION_CHARS, **kwargs) -> None:
        # Focus must not select the text: a key typed elsewhere is sent here, and the next
        # one would replace it.
        kwargs.setdefault("select_on_focus", False)
        super().__init__(**kwargs)
        self.limit = limit

    def _on_paste(self, event: events.Paste) -> None:
        text = clean_text(event.text or "")
        if text:
            selection = self.selection
            if selection.is_empty:
                self.insert_text_at_cursor(text)
            else:
                self.replace(text, *selection)
        event.stop()
        event.prevent_default()

    def insert_text_at_cursor(self, text: str) -> None:
        super().insert_text_at_cursor(clean_text(text))

    def watch_value(self, value: str) -> None:
        """Show the length in the border near the limit, in the error colour past it."""
        n = len(" ".join(value.split()))
        self.border_subtitle = count_words(n, self.limit)
        self.set_class(n > self.limit, "-too-long")
