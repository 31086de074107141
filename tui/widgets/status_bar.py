"""One line of facts: index and passage count, generator, loop, last time, NLTK.

It stays one line at any width: items are in order of importance and those that do not
fit are left out (a wrapped status bar pushed the history down at 80×24)."""

from __future__ import annotations

from typing import Any

from textual.content import Content
from textual.geometry import Size

from tui.formatting import fmt_ms
from tui.widgets.item_row import ItemRow


def nltk_words() -> str:
    """Which NLTK resources are in use, tolerating a text module without the probe."""
    try:
        from scim_edge.textutil import nltk_status
    except Exception:  # noqa: BLE001 - the probe is optional
        return "unknown"
    try:
        status = nltk_status()
    except Exception:  # noqa: BLE001
        return "unknown"
    if isinstance(status, str):
        return status
    if isinstance(status, dict):
        names = {"sentences": "punkt", "pos_tags": "tagger", "stopwords": "stopwords"}
        used = [names[k] for k in names if not str(status.get(k, "")).startswith("fallback")]
        if not used:
            return "fallbacks"
        missing = [names[k] for k in ("sentences", "pos_tags") if names[k] not in used]
        return "+".join(used) + (f", {'/'.join(missing)} fallback" if missing else "")
    return str(status)


def generator_words(generator: Any, notes: list[str] | None = None) -> str:
    name = getattr(generator, "name", "?")
    if name == "extractive":
        no_model = any("no Flan-T5" in str(n) for n in notes or [])
        return "extractive reader" + (" (no Flan-T5 installed)" if no_model else "")
    provider = getattr(generator, "provider", None)
    return f"Flan-T5 {name} ({provider})" if provider else f"Flan-T5 {name}"


class StatusBar(ItemRow):
    DEFAULT_CLASSES = "status-bar"

    def __init__(self, **kwargs) -> None:
        super().__init__(sep=" │ ", **kwargs)
        self.index = "no index"
        self.passages: int | None = None
        self.model = "–"
        self.nltk = "–"
        self.last_ms: float | None = None
        self.loop = ""
        self.note = "opening…"
        self._paint()

    def set_engine(self, engine: Any) -> None:
        self.index = engine.index_name or getattr(engine.retriever, "name", "?")
        self.passages = getattr(engine.retriever, "passage_count", None)
        self.model = generator_words(engine.generator, getattr(engine, "notes", None))
        self.nltk = nltk_words()
        self.note = ""
        self._paint()

    def set_failed(self) -> None:
        """No engine opened: no index is being read (the old one's name would say it is),
        and the error, too long for one line, is the toast's to show."""
        self.index, self.passages, self.model = "no index", None, "–"
        self.note = "cannot open the index or model"
        self._paint()

    def set_note(self, note: str) -> None:
        self.note = note
        self._paint()

    def set_last(self, ms: float | None) -> None:
        self.last_ms = ms
        self._paint()

    def set_loop(self, loop: str, profile: str) -> None:
        self.loop = f"{loop} · {profile}"
        self._paint()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 1

    def render(self) -> Content:
        """The items that fit one line, most important first."""
        width = max(1, self.content_size.width)
        line: Content | None = None
        for item in self.items:
            if line is None:
                line = item if item.cell_length <= width else item.truncate(width, ellipsis=True)
            elif line.cell_length + self.sep.cell_length + item.cell_length <= width:
                line = line + self.sep + item
        return line or Content("")

    def _paint(self) -> None:
        items = [
            Content.assemble(
                (self.index, "bold"),
                f" ({self.passages:,} passages)" if self.passages is not None else "",
            ),
            Content(self.model),
            Content.assemble(("last ", "dim"), fmt_ms(self.last_ms) if self.last_ms else "–"),
        ]
        if self.note:
            items.insert(1, Content.styled(self.note, "italic"))
        if self.loop:
            items.append(Content(self.loop))
        items.append(Content.assemble(("NLTK ", "dim"), self.nltk))
        self.set_items(items)
