"""The live iteration timeline of one question: a card per iteration and a spinner."""

from __future__ import annotations

from textual.containers import Vertical

from scim_edge.types import (
    Bindings,
    Critiqued,
    Decided,
    Event,
    Generated,
    IterationStarted,
    Regenerated,
    Retrieved,
    Scored,
    StepStarted,
)
from tui.widgets.iteration_card import IterationCard
from tui.widgets.step_indicator import StepIndicator


class Timeline(Vertical):
    DEFAULT_CLASSES = "timeline"

    def __init__(self, theta: float | None, animate: bool = True, critic: bool = False) -> None:
        super().__init__()
        self.theta = theta
        self.critic = critic
        self.learned = False  # θ is compared with the Critic's confidence, not with Q
        self.cards: dict[int, IterationCard] = {}
        self.titles: dict[str, str] = {}
        self.indicator = StepIndicator(animate=animate)

    def compose(self):
        yield self.indicator

    async def apply(self, event: Event) -> None:
        """Route one trace event to its card, creating the card when it starts."""
        t = getattr(event, "t", None)
        if isinstance(event, Bindings):
            self.learned = event.bindings.get("quality") == "learned"
        elif isinstance(event, IterationStarted):
            await self._card(t, event.mode, event.queries)
            self.indicator.set_step(t, f"{event.mode} iteration starting")
        elif isinstance(event, StepStarted):
            self.indicator.set_step(t, event.step)
        elif isinstance(event, Retrieved):
            for p in event.new_passages:
                self.titles[p.doc_id] = p.title
            (await self._card(t, event.mode, event.queries)).set_retrieved(event, self.titles)
        elif isinstance(event, Generated):
            (await self._card(t)).set_generated(event)
        elif isinstance(event, Scored):
            (await self._card(t)).set_scored(event)
        elif isinstance(event, Critiqued):
            (await self._card(t)).set_critiqued(event)
        elif isinstance(event, Regenerated):
            (await self._card(t)).set_regenerated(event)
        elif isinstance(event, Decided):
            rec = event.record
            card = await self._card(t, rec.mode, rec.queries)
            card.set_decided(event)

    def finish(self) -> None:
        self.indicator.stop()

    async def _card(self, t: int | None, mode: str = "", queries=None) -> IterationCard:
        t = int(t or 1)
        card = self.cards.get(t)
        if card is None:
            card = IterationCard(
                t, mode or "iteration", list(queries or []), self.theta, critic=self.critic,
                learned=self.learned,
            )  # fmt: skip
            self.cards[t] = card
            await self.mount(card, before=self.indicator)
        return card
