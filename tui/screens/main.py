"""The main screen: history of questions and answers, evidence panel, question input.

Questions run in a thread worker (exclusive: a new question cancels the running one).
The worker only posts `EngineEvent` / `QuestionFailed` messages; every widget change
happens here, on the event loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events, on, work
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Input, Static
from textual.worker import Worker, WorkerState, get_current_worker

from scim_edge.engine import MAX_QUESTION_CHARS, check_question
from scim_edge.errors import UserError
from scim_edge.settings import Settings
from scim_edge.types import Final
from tui.formatting import answer_words
from tui.messages import EngineEvent, EngineReady, QuestionFailed
from tui.sources import citation_line, index_lang
from tui.widgets.evidence_panel import EvidencePanel
from tui.widgets.exchange_view import ExchangeView
from tui.widgets.question_input import QuestionInput
from tui.widgets.status_bar import StatusBar

if TYPE_CHECKING:
    from tui.app import ScimEdgeApp

INTRO = (
    "Ask a question about the indexed articles and press Enter. Each iteration of the loop "
    "appears as a card while it runs: its queries, the passages it retrieved, its answer, "
    "how it was judged, the decision and the time each step took. The answer comes with the "
    "sentence that supports it, how far to trust it, and its sources.\n"
    "Click a source or press Ctrl+E to read it. Ctrl+P lists every command, F1 every key."
)


class MainScreen(Screen):
    app: ScimEdgeApp

    BINDINGS = [
        # Priority bindings lead the footer, so a narrow (80-column) footer keeps Help.
        Binding("f1", "app.help", "Help", priority=True),
        Binding("ctrl+e", "focus_evidence", "Evidence", priority=True),
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "app.settings", "Settings"),
        Binding("ctrl+y", "copy_answer", "Copy"),
        Binding("ctrl+o", "export", "Export", show=False),
    ]

    def __init__(self) -> None:
        super().__init__(id="main")
        self.views: dict[int, ExchangeView] = {}
        self.current: int | None = None
        self.worker_exchange: dict[Worker, int] = {}
        self.status = StatusBar(id="status")  # created early: the app may fill it first

    def compose(self):
        yield self.status
        with Horizontal(id="body"):
            with VerticalScroll(id="history"):
                yield Static(INTRO, id="intro")
            yield EvidencePanel(id="evidence")
        yield QuestionInput(
            placeholder="Ask a question and press Enter",
            id="question",
            limit=MAX_QUESTION_CHARS,
        )
        yield Footer()

    def on_mount(self) -> None:
        question = self.query_one("#question", Input)
        question.cursor_blink = self.app.cursor_blink
        question.focus()
        self.status.set_loop(self.app.settings.loop, self.app.settings.profile)

    @property
    def evidence(self) -> EvidencePanel:
        return self.query_one("#evidence", EvidencePanel)

    # ---- asking ----------------------------------------------------------------------

    @on(Input.Submitted, "#question")
    async def _submitted(self, event: Input.Submitted) -> None:
        if not event.value.strip():  # Enter on an empty line (pressed again while an
            return  # answer runs, the line cleared): nothing to ask, nothing to say
        await self.ask(event.value)

    async def ask(self, text: str) -> int | None:
        """Start answering `text`; returns the exchange id (None when rejected)."""
        try:
            question = check_question(text)
        except UserError as e:
            # The text stays in the line, whole, so the user can shorten or fix it.
            self.notify(e.one_line(), title="Question refused", severity="error", timeout=8)
            return None
        await self._cancel_running(show=True)
        settings: Settings = self.app.settings
        ex = self.app.new_exchange(question, settings)
        view = ExchangeView(ex, animate=self.app.animate_spinner)
        self.views[ex.id] = view
        self.current = ex.id
        history = self.query_one("#history", VerticalScroll)
        await history.mount(view)
        self.query_one("#question", Input).value = ""
        history.scroll_end(animate=False)
        worker = self.run_question(ex.id, question, settings)
        self.worker_exchange[worker] = ex.id
        self.refresh_bindings()
        return ex.id

    @work(thread=True, exclusive=True, group="question", exit_on_error=False)
    def run_question(self, exchange_id: int, question: str, settings: Settings) -> None:
        """Runs in a thread: open the engine if needed, then stream the loop's events."""
        worker = get_current_worker()
        app = self.app
        with app.engine_lock:
            if worker.is_cancelled:
                return
            try:
                engine, opened = app.ensure_engine(settings)
                if opened:
                    self.post_message(EngineReady(engine))
                app.check_index_present(engine)
                events = engine.ask(question, settings)
                try:
                    for event in events:
                        if worker.is_cancelled:
                            return
                        self.post_message(EngineEvent(exchange_id, event))
                finally:
                    events.close()
            except UserError as e:
                self.post_message(QuestionFailed(exchange_id, e.one_line()))

    async def on_engine_event(self, message: EngineEvent) -> None:
        ex = self.app.exchange(message.exchange_id)
        view = self.views.get(message.exchange_id)
        if ex is None or view is None or ex.cancelled or ex.error:
            return  # a late event of a question that was cancelled
        ex.add(message.event)
        await view.apply(message.event)
        if isinstance(message.event, Final):
            answer = message.event.answer
            self.status.set_last(answer.timing_ms.get("total"))
            self.evidence.show_passages(
                ex.question, ex.passages, ex.cited_ids(), index_lang(self.app.engine)
            )
            self.refresh_bindings()
        self.query_one("#history", VerticalScroll).scroll_end(animate=False)

    async def on_question_failed(self, message: QuestionFailed) -> None:
        await self._fail(message.exchange_id, message.error)

    def on_engine_ready(self, message: EngineReady) -> None:
        self.status.set_engine(message.engine)
        self.app.tell_notes(message.engine)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A crash in a question worker becomes a message in its card, not an exit."""
        if event.worker.group != "question":
            return
        exchange_id = self.worker_exchange.get(event.worker)
        if exchange_id is None:
            return
        if event.state == WorkerState.ERROR:
            err = event.worker.error
            text = err.one_line() if isinstance(err, UserError) else f"{type(err).__name__}: {err}"
            await self._fail(exchange_id, text)
        elif event.state == WorkerState.SUCCESS:
            ex = self.app.exchange(exchange_id)
            if ex is not None and ex.running:
                await self._fail(exchange_id, "the loop ended without an answer")
        # The state this message reports, not the worker's state now: a worker that fails
        # fast is already in ERROR when its PENDING message arrives.
        if event.state in (WorkerState.SUCCESS, WorkerState.ERROR, WorkerState.CANCELLED):
            self.worker_exchange.pop(event.worker, None)

    async def _fail(self, exchange_id: int, error: str) -> None:
        ex = self.app.exchange(exchange_id)
        view = self.views.get(exchange_id)
        if ex is None or view is None or not ex.running:
            return
        ex.error = error
        self.refresh_bindings()
        await view.show_error(error)
        self.notify(error, title="Question failed", severity="error", timeout=8)
        self.query_one("#history", VerticalScroll).scroll_end(animate=False)

    # ---- cancelling ------------------------------------------------------------------

    async def action_cancel(self) -> None:
        if not await self._cancel_running(show=True):
            self.query_one("#question", Input).focus()

    async def _cancel_running(self, show: bool) -> bool:
        cancelled = False
        for worker in self.workers:
            if worker.group == "question" and not worker.is_finished:
                worker.cancel()
                cancelled = True
        ex = self.app.exchange(self.current) if self.current is not None else None
        if ex is not None and ex.running:
            ex.cancelled = True
            cancelled = True
            self.refresh_bindings()
            if show:
                await self.views[ex.id].show_cancelled()
        return cancelled

    @property
    def running(self) -> bool:
        ex = self.app.exchange(self.current) if self.current is not None else None
        return ex is not None and ex.running

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            return True if self.running else None  # shown dimmed when nothing runs
        return True

    # ---- other keys ------------------------------------------------------------------

    def action_focus_evidence(self) -> None:
        self.evidence.focus_list()

    def action_focus_question(self) -> None:
        self.query_one("#question", Input).focus()

    def on_key(self, event: events.Key) -> None:
        """Typing while the history or evidence has focus goes to the question line."""
        if not event.is_printable or event.character is None:
            return
        if isinstance(self.focused, Input) or event.key in self.active_bindings:
            return  # a key a widget binds (`a` in the evidence panel) keeps its meaning
        field = self.query_one("#question", QuestionInput)
        field.focus()
        field.insert_text_at_cursor(event.character)
        event.stop()
        event.prevent_default()

    def action_show_article(self, doc_id: str) -> None:
        from tui.screens.article import ArticleScreen

        ex = self.exchange_with(doc_id)
        passage = ex.passages.get(doc_id) if ex is not None else None
        if passage is None and self.app.engine is not None:
            passage = self.app.engine.retriever.get(doc_id)
        if passage is None:
            self.notify("That passage is not in the open index.", severity="warning")
            return
        self.app.push_screen(
            ArticleScreen(
                passage,
                self.app.engine.retriever if self.app.engine is not None else None,
                question=ex.question if ex is not None else "",
                lang=index_lang(self.app.engine),
            )
        )

    def exchange_with(self, doc_id: str):
        """The current exchange if it holds `doc_id`, else the latest one that does."""
        ex = self.app.exchange(self.current) if self.current is not None else None
        for candidate in [ex, *reversed(self.app.exchanges)]:
            if candidate is not None and doc_id in candidate.passages:
                return candidate
        return None

    def show_passage(self, doc_id: str) -> None:
        ex = self.app.exchange(self.current) if self.current is not None else None
        for candidate in [ex, *reversed(self.app.exchanges)]:
            if candidate is not None and doc_id in candidate.passages:
                if self.evidence.question != candidate.question or doc_id not in (
                    self.evidence.passages
                ):
                    self.evidence.show_passages(
                        candidate.question,
                        candidate.passages,
                        candidate.cited_ids(),
                        index_lang(self.app.engine),
                    )
                self.evidence.open_passage(doc_id)
                return

    def action_copy_answer(self) -> None:
        answered = [ex for ex in self.app.exchanges if ex.answer is not None]
        if not answered:
            self.notify("No answer to copy yet.", severity="warning")
            return
        a = answered[-1].answer
        assert a is not None
        passages = answered[-1].passages
        self.app.copy_to_clipboard(copy_text(a, index_lang(self.app.engine), passages))
        self.notify("Answer, support and sources copied to the clipboard.")

    def action_export(self) -> None:
        if not self.app.exchanges:
            self.notify("Nothing to export yet: ask a question first.", severity="warning")
            return
        try:
            md, js = self.app.export()
        except (OSError, UserError) as e:
            self.notify(f"Export failed: {e}", severity="error")
            return
        self.notify(
            Content.assemble("Markdown: ", str(md), "\nJSON traces: ", str(js)).plain,
            title="Session exported",
            timeout=10,
        )

    def settings_changed(self, settings: Settings) -> None:
        self.status.set_loop(settings.loop, settings.profile)


def copy_text(answer, lang: str = "en", passages=None) -> str:
    """What Ctrl+Y copies: the answer, its support sentence and `Title › Section (URL)`
    lines (`passages` by doc id fill in the section a citation does not carry)."""
    passages = passages or {}
    lines = [answer_words(answer)]
    lines += [s["sentence"] for s in answer.support if s.get("sentence")]
    sources: list[dict[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for c in [*answer.support, *answer.citations]:
        p = passages.get(c.get("doc_id", ""))
        c = {**c, "section": c.get("section") or (p.section if p is not None else "")}
        key = (c.get("title", ""), c.get("section", ""))
        if key[0] and key not in seen:
            seen.add(key)
            sources.append(c)
    if sources:
        lines += ["", "Sources:"]
        lines += [citation_line(c, lang) for c in sources]
    return "\n".join(lines)
