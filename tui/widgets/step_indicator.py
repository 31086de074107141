"""A one-line spinner naming the step that is running now."""

from __future__ import annotations

from textual.widgets import Static

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
STEP_WORDS = {
    "retrieve": "retrieving passages",
    "generate": "generating the answer",
    "evaluate": "scoring the answer",
    "critique": "critiquing the answer",
    "regenerate": "revising the answer",
    "open": "opening the index and model",
}


class StepIndicator(Static):
    """Animated while a question runs; `animate=False` keeps it still (snapshots)."""

    DEFAULT_CLASSES = "step-indicator"

    def __init__(self, animate: bool = True, **kwargs) -> None:
        super().__init__("", **kwargs)
        self._animate = animate
        self._frame = 0
        self._label = "starting"
        self._timer = None

    def on_mount(self) -> None:
        if self._animate:
            self._timer = self.set_interval(0.1, self._tick)
        self._paint()

    def set_step(self, t: int | None, step: str) -> None:
        words = STEP_WORDS.get(step, step)
        self._label = f"iteration {t} · {words}" if t else words
        self._paint()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.display = False

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(FRAMES)
        self._paint()

    def _paint(self) -> None:
        self.update(f"{FRAMES[self._frame]} {self._label}…")
