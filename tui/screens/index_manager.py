"""The index manager: list the installed indexes, build one from a dump, switch the
active index, and remove one after confirming.

After the first index exists the welcome screen never returns, so this is where a user
builds another (from a typed dump path; the build function decides which formats it
reads and says so in one line). Builds share the welcome screen's worker: progress by
messages, Esc cancels, and a cancelled build keeps nothing.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import on
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, DataTable, Footer, Input, Static

from scim_edge import paths
from scim_edge.atomic import OLD_PREFIX
from tui.building import IndexBuilding, index_name_for
from tui.messages import BuildFinished, BuildProgress, BuildStopped
from tui.screens.confirm import ConfirmScreen
from tui.widgets.build_progress import BuildProgressView

if TYPE_CHECKING:
    from tui.app import ScimEdgeApp


@dataclass(frozen=True)
class IndexRow:
    name: str
    path: Path
    passages: int | None
    source: str
    size_bytes: int | None
    vectors: bool
    ok: bool


def human_bytes(n: int | None) -> str:
    if n is None:
        return "?"
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def index_rows() -> list[IndexRow]:
    """The installed indexes with the facts a user chooses by."""
    from scim_edge.retrieval import list_indexes
    from scim_edge.vector_index import has_embeddings

    rows = []
    for info in list_indexes():
        m: dict[str, Any] = info.manifest or {}
        counts = m.get("counts") or {}
        source = m.get("source") or {}
        size = m.get("index_bytes")
        if not isinstance(size, int):
            try:
                size = dir_bytes(info.path)
            except OSError:
                size = None
        rows.append(
            IndexRow(
                name=info.name,
                path=info.path,
                passages=counts.get("passages"),
                source=str(source.get("name") or "?"),
                size_bytes=size,
                vectors=bool(has_embeddings(info.path)),
                ok=info.ok,
            )
        )
    return rows


def remove_index(path: Path) -> None:
    """Remove an index directory: renamed out of the way first (one atomic step, so it is
    never seen half-deleted), then deleted."""
    hidden = path.with_name(f"{OLD_PREFIX}{path.name}-removed")
    if hidden.exists():
        shutil.rmtree(hidden)
    path.rename(hidden)
    shutil.rmtree(hidden, ignore_errors=True)


class IndexTable(DataTable):
    """The list of indexes; Enter uses the row (the table's own Enter, which the footer
    would not name, shadowed the screen's "Use")."""

    BINDINGS = [Binding("enter", "select_cursor", "Use", show=True)]


class IndexManagerScreen(IndexBuilding, ModalScreen[None]):
    app: ScimEdgeApp

    BINDINGS = [
        Binding("escape", "close", "Close / cancel build"),
        Binding("enter", "use", "Use", show=True),
        Binding("delete,d", "remove", "Remove"),
        Binding("b", "focus_dump", "Build…"),
        Binding("f1", "app.help", "Help"),
    ]

    def __init__(self) -> None:
        super().__init__(id="index-manager")
        self.building = False
        self.cancelling = False
        self.rows: list[IndexRow] = []

    def compose(self):
        with Vertical(id="manager-box") as box:
            box.border_title = "Indexes"
            box.border_subtitle = "Enter uses · d removes · Esc closes"
            yield IndexTable(id="index-table", cursor_type="row", zebra_stripes=True)
            yield Static("Build an index from a Wikipedia dump:", classes="manager-label")
            with Horizontal(id="manager-build-row"):
                yield Input(
                    placeholder="path to a dump (.xml, .xml.bz2)",
                    id="manager-dump",
                )
                yield Button("Build", id="manager-build", variant="primary")
            yield BuildProgressView(id="manager-progress")
            yield Static("", id="manager-message")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#manager-dump", Input).cursor_blink = self.app.cursor_blink
        self.query_one("#manager-progress").display = False
        table = self.query_one(DataTable)
        table.add_columns(" ", "name", "passages", "source", "size", "vectors")
        self.refresh_table()
        table.focus()

    # ---- the list --------------------------------------------------------------------

    def refresh_table(self) -> None:
        self.rows = index_rows()
        table = self.query_one(DataTable)
        table.clear()
        active = self.app.active_index_name()
        for r in self.rows:
            table.add_row(
                "●" if r.name == active else " ",
                r.name,
                f"{r.passages:,}" if isinstance(r.passages, int) else "?",
                r.source if r.ok else "unreadable manifest",
                human_bytes(r.size_bytes),
                "yes" if r.vectors else "no",
                key=r.name,
            )
        if not self.rows:
            self._message("No index yet: type the path of a dump below and press Build.")

    def selected(self) -> IndexRow | None:
        table = self.query_one(DataTable)
        if not self.rows or table.cursor_row is None:
            return None
        if not 0 <= table.cursor_row < len(self.rows):
            return None
        return self.rows[table.cursor_row]

    def action_use(self) -> None:
        if isinstance(self.focused, Input):
            self.build_from_dump()
            return
        row = self.selected()
        if row is None or self.building:
            return
        if not row.ok:
            self._message(f"{row.name} cannot be opened (unreadable manifest).", error=True)
            return
        self.app.use_index(row.path)
        self._message(f"Questions now use {row.name}.")
        self.refresh_table()

    @on(DataTable.RowSelected)
    def _row_selected(self) -> None:
        self.action_use()

    def action_remove(self) -> None:
        row = self.selected()
        if row is None or self.building or isinstance(self.focused, Input):
            return
        if row.name == self.app.active_index_name():
            self._message(
                f"{row.name} is the active index: use another one first, then remove it.",
                error=True,
            )
            return

        def done(yes: bool | None) -> None:
            if not yes:
                return
            try:
                remove_index(row.path)
            except OSError as e:
                self._message(f"Cannot remove {row.name}: {e.strerror or e}", error=True)
                return
            self._message(f"Removed {row.name}.")
            self.refresh_table()

        self.app.push_screen(
            ConfirmScreen(
                f"Remove the index {row.name} ({human_bytes(row.size_bytes)})? It cannot be undone."
            ),
            callback=done,
        )

    # ---- building --------------------------------------------------------------------

    def action_focus_dump(self) -> None:
        self.query_one("#manager-dump", Input).focus()

    @on(Button.Pressed, "#manager-build")
    @on(Input.Submitted, "#manager-dump")
    def build_from_dump(self) -> None:
        if self.building or self.cancelling:
            return
        source = self._typed_dump("#manager-dump")
        if source is None:
            return
        out = paths.indexes_dir() / index_name_for(source)
        if out.exists():
            self._message(
                f"An index named {out.name} exists: remove it first, or rename the dump.",
                error=True,
            )
            return
        self.building = True
        self.refresh_bindings()
        self.query_one("#manager-build", Button).disabled = True
        self.query_one("#manager-progress").display = True
        self.query_one(BuildProgressView).set_progress(0.0, "starting…")
        self._message(f"Building {out.name} from {source.name}… (Esc cancels)")
        self.build(source, out)

    def on_build_progress(self, message: BuildProgress) -> None:
        self.query_one(BuildProgressView).set_progress(message.fraction, message.text)

    def on_build_finished(self, message: BuildFinished) -> None:
        self._stopped(f"Built {message.index_dir.name}: {message.summary}. Enter uses it.")
        self.refresh_table()
        names = [r.name for r in self.rows]
        if message.index_dir.name in names:
            self.query_one(DataTable).move_cursor(row=names.index(message.index_dir.name))
        self.query_one(DataTable).focus()

    def on_build_stopped(self, message: BuildStopped) -> None:
        self.cancelling = False
        self._message("Build cancelled; nothing was kept.")
        self.refresh_table()

    def action_close(self) -> None:
        if self.building:
            self.workers.cancel_group(self, "build")
            self._stopped("Cancelling the build… (its partial index is being removed)")
            self.cancelling = True
            return
        if self.cancelling:
            return  # closes once the cancelled build has cleaned up
        self.dismiss(None)

    def _stopped(self, text: str, error: bool = False) -> None:
        self.building = False
        self.refresh_bindings()
        self.query_one("#manager-build", Button).disabled = False
        self.query_one("#manager-progress").display = False
        self._message(text, error=error)

    def _message(self, text: str, error: bool = False) -> None:
        message = self.query_one("#manager-message", Static)
        message.update(text)
        message.set_class(error, "-error")
