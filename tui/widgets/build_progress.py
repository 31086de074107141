"""Index-build progress: a bar and a line of figures (read, pages, passages, rate)."""

from __future__ import annotations

from textual.containers import Vertical
from textual.widgets import ProgressBar, Static


class BuildProgressView(Vertical):
    DEFAULT_CLASSES = "build-progress"

    def compose(self):
        yield ProgressBar(total=100, show_eta=False, id="build-bar")
        yield Static("", id="build-text")

    def set_progress(self, fraction: float | None, text: str) -> None:
        bar = self.query_one("#build-bar", ProgressBar)
        if fraction is None:
            bar.update(total=None)
        else:
            bar.update(total=100, progress=round(100 * min(1.0, max(0.0, fraction)), 1))
        self.query_one("#build-text", Static).update(text)
