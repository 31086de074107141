"""One line of facts: index and passage count, model and provider, NLTK, last time."""

from __future__ import annotations

from typing import Any

from textual.content import Content

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


def generator_words(generator: Any) -> str:
    name = getattr(generator, "name", "?")
    provider = getattr(generator, "provider", None)
    if provider is None and name == "extractive":
        provider = "built-in, CPU"
    return f"{name} ({provider})" if provider else str(name)


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
        self.model = generator_words(engine.generator)
        self.nltk = nltk_words()
        self.note = ""
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

    def _paint(self) -> None:
        items = [
            Content.assemble(
                (self.index, "bold"),
                f" ({self.passages:,} passages)" if self.passages is not None else "",
            ),
            Content(self.model),
            Content.assemble(("last ", "dim"), fmt_ms(self.last_ms) if self.last_ms else "–"),
        ]
        if self.loop:
            items.append(Content(self.loop))
        items.append(Content.assemble(("NLTK ", "dim"), self.nltk))
        if self.note:
            items.append(Content.styled(self.note, "italic"))
        self.set_items(items)
