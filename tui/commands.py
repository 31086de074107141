"""The command palette's commands (Ctrl+P), as a provider for Textual's own palette.

Every action a key does is here too, plus the choices that otherwise need the settings
form: the loop, the profile, the index and the model. Each command is one `PaletteCommand`
(its words, its help line and what it runs); the provider matches them fuzzily.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from scim_edge.settings import LOOPS, PROFILES

if TYPE_CHECKING:
    from tui.app import ScimEdgeApp


@dataclass(frozen=True)
class PaletteCommand:
    name: str
    help: str
    run: Callable[[], Any]


def palette_commands(app: ScimEdgeApp) -> Iterator[PaletteCommand]:
    """Every command the palette offers, in the order it lists them."""
    from tui.app import installed_indexes, installed_models

    s = app.settings
    yield PaletteCommand("Ask a question", "focus the question line", app.action_focus_question)
    yield PaletteCommand(
        "Index manager", "list, build, switch and remove indexes", app.action_index_manager
    )
    yield PaletteCommand(
        "Settings", "loop, profile, θ, iteration budget, δ, index, model", app.action_settings
    )
    yield PaletteCommand(
        "Copy the answer", "the answer, its support and sources", app.action_copy_answer
    )
    yield PaletteCommand(
        "Export the session", "Markdown and JSON traces of every question", app.action_export
    )
    yield PaletteCommand("Help", "what the screen shows and every key", app.action_help)
    for loop in LOOPS:
        now = " (now)" if loop == s.loop else ""
        yield PaletteCommand(
            f"Loop: {loop}", f"run the next question with the {loop} loop{now}",
            partial(app.choose, loop=loop),
        )  # fmt: skip
    for profile in PROFILES:
        now = " (now)" if profile == s.profile else ""
        yield PaletteCommand(
            f"Profile: {profile}", f"the {profile} settings profile{now}",
            partial(app.choose, profile=profile),
        )  # fmt: skip
    for name in installed_indexes():
        now = " (now)" if name == app.active_index_name() else ""
        yield PaletteCommand(
            f"Index: {name}", f"answer from the index {name}{now}",
            partial(app.choose, index=name),
        )  # fmt: skip
    yield PaletteCommand(
        "Model: extractive", "the built-in extractive reader (no model)",
        partial(app.choose, model="extractive"),
    )  # fmt: skip
    for name in installed_models():
        yield PaletteCommand(
            f"Model: {name}", f"generate with the Flan-T5 model {name}",
            partial(app.choose, model=name),
        )  # fmt: skip


class ScimEdgeCommands(Provider):
    """scim-edge's commands for Textual's command palette."""

    def _commands(self) -> list[PaletteCommand]:
        return list(palette_commands(self.app))  # type: ignore[arg-type]

    async def discover(self) -> Hits:
        for cmd in self._commands():
            yield DiscoveryHit(cmd.name, cmd.run, help=cmd.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for cmd in self._commands():
            score = matcher.match(cmd.name)
            if score > 0:
                yield Hit(score, matcher.highlight(cmd.name), cmd.run, help=cmd.help)
