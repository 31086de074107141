"""The scim-edge Textual app and its factory.

`make_app(settings, engine)` builds the app without the CLI, so tests can hand it an
engine (real or scripted) and settings. The app owns the engine and the session; the
screens render them. The engine is opened (and reopened when the index or model setting
changes) in a thread worker, because opening an index and an ONNX model takes time.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual import work
from textual.app import App
from textual.binding import Binding

from scim_edge import paths
from scim_edge.atomic import is_hidden_temp
from scim_edge.errors import IndexError_, UserError
from scim_edge.settings import Settings, load_settings
from tui.commands import ScimEdgeCommands
from tui.messages import EngineFailed, EngineReady
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen
from tui.screens.settings import SettingsScreen
from tui.screens.welcome import WelcomeScreen
from tui.session import Exchange, default_export_dir, export_session

HERE = Path(__file__).resolve().parent
EngineFactory = Callable[[Settings], Any]


def open_engine(settings: Settings) -> Any:
    from scim_edge.engine import Engine

    return Engine.open(settings)


def installed_indexes() -> list[str]:
    root = paths.indexes_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not is_hidden_temp(p.name))


def installed_models() -> list[str]:
    root = paths.models_dir()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not is_hidden_temp(p.name))


class ScimEdgeApp(App[None]):
    TITLE = "scim-edge"
    CSS_PATH = [HERE / "app.tcss", HERE / "cards.tcss", HERE / "dialogs.tcss"]
    COMMANDS = {ScimEdgeCommands}
    COMMAND_PALETTE_BINDING = "ctrl+p"
    COMMAND_PALETTE_DISPLAY = "Commands"
    BINDINGS = [
        Binding("f1", "help", "Help", show=False),  # shown first by each screen instead
        Binding("f2", "index_manager", "Indexes", show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),
    ]

    def __init__(
        self,
        settings: Settings,
        engine: Any = None,
        *,
        engine_factory: EngineFactory | None = None,
        export_dir: Path | None = None,
        cursor_blink: bool = True,
        animate_spinner: bool = True,
        welcome: bool | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.engine = engine
        self.engine_factory: EngineFactory = engine_factory or open_engine
        self._engine_key = (settings.index, settings.model) if engine is not None else None
        self.engine_lock = threading.Lock()
        self.export_dir = export_dir
        self.cursor_blink = cursor_blink
        self.animate_spinner = animate_spinner
        self.welcome = welcome
        self.exchanges: list[Exchange] = []
        self.notes_shown: set[str] = set()  # engine notes are told once, then live in status

    # ---- lifecycle -------------------------------------------------------------------

    def on_mount(self) -> None:
        self.push_screen(MainScreen())
        if self.engine is not None:
            self.main.status.set_engine(self.engine)
        elif self.needs_welcome():
            self.push_screen(WelcomeScreen())
        else:
            self.main.status.set_note("opening the index…")
            self.open_engine_in_background()

    @property
    def main(self) -> MainScreen:
        return self.get_screen_stack_main()

    def get_screen_stack_main(self) -> MainScreen:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        raise RuntimeError("the main screen is not mounted")

    def needs_welcome(self) -> bool:
        if self.welcome is not None:
            return self.welcome
        return self.settings.index is None and not installed_indexes()

    # ---- engine ----------------------------------------------------------------------

    def ensure_engine(self, settings: Settings) -> tuple[Any, bool]:
        """The engine for `settings`, opened now if the index or model changed.

        Called from worker threads with `engine_lock` held."""
        key = (settings.index, settings.model)
        if self.engine is None or self._engine_key != key:
            self.engine = None
            self.engine = self.engine_factory(settings)
            self._engine_key = key
            return self.engine, True
        return self.engine, False

    def check_index_present(self, engine: Any) -> None:
        """Fail clearly when the open index's directory has been removed meanwhile."""
        retriever = engine.retriever
        for attr in ("path", "index_dir", "directory", "root"):
            where = getattr(retriever, attr, None)
            if isinstance(where, str | Path):
                if not Path(where).exists():
                    self.engine = None
                    raise IndexError_(
                        f"the index directory {where} is gone",
                        hint="rebuild it or choose another index in Settings",
                    )
                return

    @work(thread=True, exclusive=True, group="engine", exit_on_error=False)
    def open_engine_in_background(self) -> None:
        with self.engine_lock:
            try:
                engine, _ = self.ensure_engine(self.settings)
            except UserError as e:
                self.post_message(EngineFailed(e.one_line()))
                return
        self.post_message(EngineReady(engine))

    def on_engine_ready(self, message: EngineReady) -> None:
        self.main.status.set_engine(message.engine)
        self.tell_notes(message.engine)

    def tell_notes(self, engine: Any) -> None:
        """Each engine note (e.g. no Flan-T5 installed) once per session; the status bar
        keeps saying it after the toast is gone."""
        for note in getattr(engine, "notes", None) or []:
            if str(note) not in self.notes_shown:
                self.notes_shown.add(str(note))
                self.notify(str(note), timeout=6)

    def on_engine_failed(self, message: EngineFailed) -> None:
        self.main.status.set_failed()
        self.notify(
            message.error, title="Cannot open the index or model", severity="error", timeout=10
        )

    def on_worker_state_changed(self, event) -> None:  # event: Worker.StateChanged
        from textual.worker import WorkerState

        if event.worker.group == "engine" and event.state == WorkerState.ERROR:
            err = event.worker.error
            self.on_engine_failed(EngineFailed(f"{type(err).__name__}: {err}"))

    # ---- session ---------------------------------------------------------------------

    def new_exchange(self, question: str, settings: Settings) -> Exchange:
        ex = Exchange(
            id=len(self.exchanges) + 1,
            question=question,
            loop=settings.loop,
            profile=settings.profile,
            theta=settings.theta,
        )
        self.exchanges.append(ex)
        return ex

    def exchange(self, exchange_id: int | None) -> Exchange | None:
        if exchange_id is None or not 1 <= exchange_id <= len(self.exchanges):
            return None
        return self.exchanges[exchange_id - 1]

    def export(self) -> tuple[Path, Path]:
        return export_session(self.exchanges, self.export_dir or default_export_dir())

    # ---- actions ---------------------------------------------------------------------

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_settings(self) -> None:
        if isinstance(self.screen, SettingsScreen):
            return
        self.push_screen(
            SettingsScreen(
                self.settings,
                installed_indexes(),
                installed_models(),
                active_index=self.active_index_name(),
            ),
            callback=self.apply_settings,
        )

    def action_index_manager(self) -> None:
        from tui.screens.index_manager import IndexManagerScreen

        if isinstance(self.screen, IndexManagerScreen):
            return
        self.push_screen(IndexManagerScreen())

    def action_focus_question(self) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, MainScreen):
            self.pop_screen()
        self.main.action_focus_question()

    def action_copy_answer(self) -> None:
        self.main.action_copy_answer()

    def action_export(self) -> None:
        self.main.action_export()

    def active_index_name(self) -> str | None:
        """The name of the index the next question is answered from (the one the settings
        name, else the open one, else the one the default resolves to)."""
        if self.settings.index:
            return Path(self.settings.index).name
        if self.engine is not None and getattr(self.engine, "index_name", ""):
            return str(self.engine.index_name)
        names = installed_indexes()
        if "default" in names:
            return "default"
        return names[0] if len(names) == 1 else None

    def choose(self, **changes: Any) -> None:
        """Apply one palette choice (loop, profile, index or model) as Settings would."""
        from tui.screens.settings import with_profile

        s = self.settings
        if "profile" in changes:
            s = with_profile(s, changes.pop("profile"))
        self.apply_settings(s.replace(**changes) if changes else s)

    def apply_settings(self, settings: Settings | None) -> None:
        if settings is None:
            return
        reopen = (settings.index, settings.model) != (self.settings.index, self.settings.model)
        old, self.settings = self.settings, settings
        self.main.settings_changed(settings)
        if isinstance(self.screen, SettingsScreen):  # a palette choice under the open form
            changed = [f.name for f in dataclasses.fields(settings)
                       if getattr(old, f.name) != getattr(settings, f.name)]  # fmt: skip
            self.screen.reload(settings, changed)
        self.notify("Settings apply from the next question.", timeout=3)
        if reopen:
            self.main.status.set_note("opening the index…")
            self.open_engine_in_background()

    def action_show_passage(self, doc_id: str) -> None:
        self.main.show_passage(doc_id)

    def index_built(self, index_dir: Path) -> None:
        """The welcome screen built an index: use it and open the engine."""
        if isinstance(self.screen, WelcomeScreen):
            self.pop_screen()
        self.use_index(index_dir)

    def use_index(self, index_dir: Path) -> None:
        """Answer from `index_dir` from the next question on (opened now, in a worker)."""
        name = index_dir.name if index_dir.parent == paths.indexes_dir() else str(index_dir)
        self.settings = self.settings.replace(index=name)
        self.main.settings_changed(self.settings)
        self.main.status.set_note("opening the index…")
        self.open_engine_in_background()


def make_app(
    settings: Settings | None = None,
    engine: Any = None,
    **options: Any,
) -> ScimEdgeApp:
    """Build the app; `settings` default to the config file + environment."""
    return ScimEdgeApp(settings or load_settings(), engine, **options)
