"""Five dimension scores as small bars with their values, and Q against θ.

Bars are packed several to a line when the card is wide, one per line when narrow.
"""

from __future__ import annotations

from tui.formatting import score_items
from tui.widgets.item_row import ItemRow


class ScoreBars(ItemRow):
    DEFAULT_CLASSES = "score-bars"

    def __init__(self, **kwargs) -> None:
        super().__init__(sep="   ", **kwargs)
        self.display = False

    def show_scores(self, scores: dict[str, float], theta: float | None) -> None:
        self.set_items(score_items(scores, theta))
        self.display = bool(scores)
