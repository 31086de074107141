"""One question in the history: the question, its live timeline and its final answer."""

from __future__ import annotations

from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Static

from scim_edge.settings import THETA_LOOPS
from scim_edge.types import Event, Final
from tui.session import Exchange
from tui.widgets.answer_panel import AnswerPanel
from tui.widgets.timeline import Timeline


class ExchangeView(Vertical):
    DEFAULT_CLASSES = "exchange"

    def __init__(self, exchange: Exchange, animate: bool = True) -> None:
        super().__init__(id=f"exchange-{exchange.id}")
        self.exchange = exchange
        critic = exchange.loop == "simrag"
        # only SCIM and single-dim stop on θ; the others run a fixed count or ask a Critic
        theta = exchange.theta if exchange.loop in THETA_LOOPS else None
        self.timeline = Timeline(theta, animate, critic=critic)

    def compose(self):
        ex = self.exchange
        yield Static(
            Content.assemble(
                ("❯ ", "bold $accent"),
                (ex.question, "bold"),
                (f"   {ex.loop} · {ex.profile}", "dim"),
            ),
            classes="exchange-question",
        )
        yield self.timeline

    async def apply(self, event: Event) -> None:
        if isinstance(event, Final):
            self.timeline.finish()
            theta = self.exchange.theta if self.exchange.loop in THETA_LOOPS else None
            await self.mount(AnswerPanel(event.answer, self.exchange.passages, theta))
        else:
            await self.timeline.apply(event)

    async def show_error(self, message: str) -> None:
        self.timeline.finish()
        await self.mount(
            Static(Content.assemble(("Error: ", "bold $error"), message), classes="exchange-error")
        )

    async def show_cancelled(self) -> None:
        self.timeline.finish()
        await self.mount(
            Static(Content.styled("Cancelled.", "italic $warning"), classes="exchange-cancelled")
        )
