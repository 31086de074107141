"""First run with no index: build the embedded demo index or one from a dump.

The build runs in a thread worker (the builder cleans pages in worker processes for
large dumps), reporting progress through messages, so the screen stays responsive and
the build can be cancelled.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Button, Footer, Input, Static

from scim_edge import paths
from scim_edge.errors import UserError
from tui.building import IndexBuilding, index_name_for
from tui.messages import BuildFinished, BuildProgress, BuildStopped
from tui.widgets.build_progress import BuildProgressView

if TYPE_CHECKING:
    from tui.app import ScimEdgeApp

INTRO = (
    "No index is installed yet. scim-edge answers from a local index of Wikipedia "
    "articles; build one to start asking questions. Nothing is downloaded."
)


class WelcomeScreen(IndexBuilding, Screen):
    app: ScimEdgeApp

    BINDINGS = [Binding("escape", "cancel_build", "Cancel build")]

    def __init__(self) -> None:
        super().__init__(id="welcome")
        self.building = False

    def compose(self):
        with Vertical(id="welcome-box") as box:
            box.border_title = "Welcome to scim-edge"
            yield Static(INTRO, id="welcome-intro")
            yield Button("Build the demo index", id="build-demo", variant="primary")
            yield Static(
                "or build an index from a Wikipedia dump (.xml or .xml.bz2):",
                classes="welcome-label",
            )
            with Horizontal(id="dump-row"):
                yield Input(
                    placeholder="path to a dump, e.g. ~/enwiki-latest-pages.xml.bz2", id="dump-path"
                )
                yield Button("Build", id="build-dump")
            yield BuildProgressView(id="build-progress")
            yield Static("", id="build-message")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#dump-path", Input).cursor_blink = self.app.cursor_blink
        self.query_one("#build-progress").display = False
        self.query_one("#build-demo", Button).focus()

    # ---- starting a build ------------------------------------------------------------

    @on(Button.Pressed, "#build-demo")
    def build_demo(self) -> None:
        try:
            from scim_edge.demo import DEMO_INDEX_NAME, demo_dump_path

            source = Path(demo_dump_path())
        except (ImportError, UserError, OSError) as e:
            self._message(f"The demo dump is not available: {e}", error=True)
            return
        self._start(source, paths.indexes_dir() / DEMO_INDEX_NAME)

    @on(Button.Pressed, "#build-dump")
    @on(Input.Submitted, "#dump-path")
    def build_from_dump(self) -> None:
        source = self._typed_dump("#dump-path")
        if source is None:
            return
        self._start(source, paths.indexes_dir() / index_name_for(source))

    def _start(self, source: Path, out: Path) -> None:
        if self.building:
            return
        if out.exists():
            self.app.index_built(out)  # already built: just use it
            return
        self.building = True
        self.refresh_bindings()
        for button in self.query(Button):
            button.disabled = True
        self.query_one("#build-progress").display = True
        self._message(f"Building {out.name} from {source.name}… (Esc cancels)")
        self.build(source, out)

    # ---- progress and outcome --------------------------------------------------------

    def on_build_progress(self, message: BuildProgress) -> None:
        self.query_one(BuildProgressView).set_progress(message.fraction, message.text)

    def on_build_finished(self, message: BuildFinished) -> None:
        self.building = False
        self.query_one(BuildProgressView).set_progress(1.0, f"done: {message.summary}")
        self.app.notify(
            f"Index built in {message.index_dir} ({message.summary}).",
            title="Index ready",
            timeout=8,
        )
        self.app.index_built(message.index_dir)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_build":
            return True if self.building else None
        return True

    def action_cancel_build(self) -> None:
        if self.building:
            self.workers.cancel_group(self, "build")
            self._stopped("Cancelling the build… (its partial index is being removed)")

    def on_build_stopped(self, message: BuildStopped) -> None:
        self._message("Build cancelled; nothing was kept.")

    def _stopped(self, text: str, error: bool = False) -> None:
        self.building = False
        self.refresh_bindings()
        for button in self.query(Button):
            button.disabled = False
        self.query_one("#build-progress").display = False
        self._message(text, error=error)

    def _message(self, text: str, error: bool = False) -> None:
        message = self.query_one("#build-message", Static)
        message.update(text)
        message.set_class(error, "-error")
