"""Pilot tests of the TUI against the real index of enwiki-sample with the extractive
generator: asking, live iteration cards, evidence, settings, cancel, failures, exports,
the welcome screen's demo build, and the `tui` command's own errors."""

from __future__ import annotations

import asyncio
import functools
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Select, Static

from scim_edge.engine import Engine
from scim_edge.errors import UserError
from scim_edge.settings import Settings
from scim_edge.types import Answer, IterationRecord
from scim_edge.wording import percent
from tui.app import make_app
from tui.formatting import highlight, question_words, stop_reason_words
from tui.screens.settings import SettingsScreen
from tui.screens.welcome import WelcomeScreen
from tui.sources import source_label
from tui.widgets.answer_panel import AnswerPanel
from tui.widgets.evidence_panel import EvidencePanel
from tui.widgets.iteration_card import IterationCard

SIZE = (120, 36)


def run_async(fn):
    """Run an async test with asyncio (no async pytest plugin needed)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def plain(widget: Static) -> str:
    content = widget.content
    return getattr(content, "plain", str(content))


def app_for(index: Path, tmp_path: Path, **options):
    settings = Settings(model="extractive", index=str(index))
    return make_app(settings, cursor_blink=False, export_dir=tmp_path / "exports", **options)


async def ask(pilot, question: str, *, type_it: bool = False) -> None:
    app = pilot.app
    field = app.screen.query_one("#question", Input)
    field.focus()
    if type_it:
        await pilot.press(*question)
    else:
        field.value = question
    await pilot.press("enter")
    await app.workers.wait_for_complete()
    await pilot.pause()


async def open_settings(pilot) -> None:
    await pilot.press("ctrl+s")
    await pilot.pause()


async def apply_settings(pilot) -> None:
    await pilot.click("#apply")
    await pilot.pause()


def ex_passages(app) -> dict:
    return app.exchanges[-1].passages


def last_answer(app) -> Answer:
    answered = [ex for ex in app.exchanges if ex.answer is not None]
    assert answered, "no question was answered"
    return answered[-1].answer


# ---- asking -----------------------------------------------------------------------------


@run_async
async def test_question_shows_answer_iteration_cards_and_citations(sample_index, qa_dev, tmp_path):
    item = qa_dev[0]
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await ask(pilot, item["question"], type_it=True)
        answer = last_answer(app)
        assert answer.answer.strip()

        view = app.screen.query_one("#exchange-1")
        panel = view.query_one(AnswerPanel)
        assert plain(panel.query_one(".answer-text", Static)) == answer.answer
        meta = plain(panel.query_one(".answer-meta", Static))
        assert answer.tier.upper() in meta and stop_reason_words(answer) in meta
        assert "answered by the extractive reader" in meta
        details = panel.query_one(".answer-scores").plain  # the scores sit in the details
        assert "completeness" in details and "Q " in details
        cites = plain(panel.query_one(".answer-citations", Static))
        assert answer.citations
        for c in answer.citations:
            section = ex_passages(app)[c["doc_id"]].section
            assert source_label(c["title"], section) in cites

        cards = list(view.query(IterationCard))
        assert len(cards) == len(answer.iterations) >= 1
        for card, it in zip(cards, answer.iterations, strict=True):
            assert card.border_title == f"Iteration {it.t} · {it.mode}"
            timing = card.query_one(".card-timing").plain
            for step in ("retrieval", "generation", "evaluation", "coordination"):
                assert step in timing
            assert "ms" in timing
            passages = plain(card.query_one(".card-passages", Static))
            assert "+ new" in passages
            for title in it.new_titles.values():
                assert title in passages
            bars = card.query_one(".score-bars").plain
            for dim in ("completeness", "consistency", "confidence", "factuality", "coherence"):
                assert dim in bars
            # SCIM decides on the calibrated confidence here: θ is set against it in the
            # decision, not against Q in the bars
            assert "θ" not in bars and "Q " in bars
            assert "θ 70%" in plain(card.query_one(".card-decision", Static))
            assert plain(card.query_one(".card-decision", Static)).startswith("decision ")

        status = app.screen.query_one("#status").plain
        assert sample_index.name in status and "passages" in status
        assert "extractive" in status and "last " in status and "NLTK" in status


@run_async
async def test_evidence_panel_and_settings_change_the_loop(sample_index, qa_dev, tmp_path):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        question = qa_dev[6]["question"]  # Who developed … aikido? (three citations)
        await ask(pilot, question)
        ex = app.exchanges[-1]

        # Evidence: focus the list, move to another passage, read it with highlights.
        await pilot.press("ctrl+e")
        evidence = app.screen.query_one(EvidencePanel)
        listing = evidence.query_one(OptionList)
        assert app.focused is listing
        assert listing.option_count == len(ex.passages)
        first = evidence.current
        assert first == ex.cited_ids()[0]
        await pilot.press("down")
        await pilot.pause()
        assert evidence.current != first
        shown = evidence.passages[evidence.current]
        text = evidence.query_one("#evidence-text", Static).content
        assert shown.title in text.plain and shown.text in text.plain
        marked = {
            text.plain[s.start : s.end].lower() for s in text.spans if "reverse" in str(s.style)
        }
        assert marked and marked <= set(question_words(question))

        # Clicking the second citation of the answer opens that passage.
        cites = app.screen.query_one("#exchange-1").query_one(".answer-citations", Static)
        await pilot.click(cites, offset=(6, 3))  # padding, "Citations", [1], [2]
        await pilot.pause()
        assert evidence.current == ex.cited_ids()[1]

        # Settings: switch to the standard loop; the next question runs one pass.
        await open_settings(pilot)
        assert isinstance(app.screen, SettingsScreen)
        app.screen.query_one("#loop", Select).value = "standard"
        await apply_settings(pilot)
        assert not isinstance(app.screen, SettingsScreen)
        assert app.settings.loop == "standard"
        await ask(pilot, question)
        answer = last_answer(app)
        assert answer.loop == "standard" and len(answer.iterations) == 1
        assert len(list(app.screen.query_one("#exchange-2").query(IterationCard))) == 1

        # Save writes the config file, keeping keys it does not show.
        from scim_edge import paths

        paths.config_path().write_text("[settings]\nk1 = 4\n", encoding="utf-8")
        await open_settings(pilot)
        app.screen.query_one("#theta", Input).value = "0.75"
        await pilot.click("#save")
        await pilot.pause()
        saved = paths.config_path().read_text(encoding="utf-8")
        assert 'loop = "standard"' in saved and "theta = 0.75" in saved and "k1 = 4" in saved
        assert app.settings.theta == 0.75


@run_async
async def test_settings_rejects_a_bad_value_without_closing(sample_index, tmp_path):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_settings(pilot)
        app.screen.query_one("#theta", Input).value = "1.5"
        await apply_settings(pilot)
        assert isinstance(app.screen, SettingsScreen)
        assert "theta" in plain(app.screen.query_one("#settings-error", Static))
        await pilot.press("escape")
        await pilot.pause()
        assert app.settings.theta == 0.70


# ---- cancel and failures ----------------------------------------------------------------


class GatedEngine:
    """The real engine, held after the first event of the first question until `gate`
    opens, so a test can cancel a question that is really running."""

    def __init__(self, inner: Engine, gate: threading.Event) -> None:
        self.inner, self.gate = inner, gate
        self.retriever, self.generator = inner.retriever, inner.generator
        self.index_name, self.settings = inner.index_name, inner.settings
        self.calls = 0

    def ask(self, question, settings=None):
        self.calls += 1
        first = self.calls == 1
        for event in self.inner.ask(question, settings):
            yield event
            if first and event.kind == "iteration_started":
                first = False
                self.gate.wait(20)


@run_async
async def test_cancelling_a_running_question_leaves_the_app_usable(sample_index, qa_dev, tmp_path):
    settings = Settings(model="extractive", index=str(sample_index))
    gate = threading.Event()
    engine = GatedEngine(Engine.open(settings), gate)
    app = make_app(settings, engine, cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        field = app.screen.query_one("#question", Input)
        field.value = qa_dev[0]["question"]
        await pilot.press("enter")
        for _ in range(100):
            await pilot.pause(0.02)
            if app.exchanges and app.exchanges[0].events:
                break
        assert app.exchanges[0].running
        indicator = app.screen.query_one("#exchange-1").timeline.indicator
        assert indicator.display and "iteration 1" in plain(indicator)
        await pilot.press("escape")
        await pilot.pause()
        ex = app.exchanges[0]
        assert ex.cancelled and ex.answer is None
        assert app.screen.query_one("#exchange-1").query(".exchange-cancelled")
        gate.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert ex.answer is None  # events after the cancel were dropped

        await ask(pilot, qa_dev[2]["question"])
        assert app.exchanges[1].answer is not None
        assert app.screen.query_one("#exchange-2").query(AnswerPanel)


@run_async
async def test_index_removed_while_running_shows_an_error(sample_index, qa_dev, tmp_path):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    app = app_for(index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()  # the engine is open
        assert app.engine is not None
        shutil.rmtree(index)
        await ask(pilot, qa_dev[0]["question"])
        assert app.is_running
        ex = app.exchanges[0]
        assert ex.error and "is gone" in ex.error
        error = app.screen.query_one("#exchange-1").query_one(".exchange-error", Static)
        assert "Error:" in plain(error) and str(index) in plain(error)

        # Restore the index: the next question reopens it and is answered.
        shutil.copytree(sample_index, index)
        await ask(pilot, qa_dev[2]["question"])
        assert app.exchanges[1].answer is not None


class CrashingEngine(GatedEngine):
    """The real engine whose retriever fails (as a vanished segment file would) after the
    first iteration started: an unexpected exception inside the worker."""

    def ask(self, question, settings=None):
        for n, event in enumerate(self.inner.ask(question, settings)):
            yield event
            if n == 0:
                raise OSError(2, "No such file or directory", "idx/meta.json")


@run_async
async def test_a_crashing_worker_shows_the_error_and_the_app_survives(sample_index, qa_dev):
    settings = Settings(model="extractive", index=str(sample_index))
    app = make_app(
        settings, CrashingEngine(Engine.open(settings), threading.Event()), cursor_blink=False
    )
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, qa_dev[0]["question"])
        assert app.is_running
        assert "FileNotFoundError" in (app.exchanges[0].error or "")
        assert app.screen.query_one("#exchange-1").query(".exchange-error")
        # The input still works: an empty question is refused with a message, not a crash.
        await ask(pilot, "   ")
        assert len(app.exchanges) == 1


@run_async
async def test_a_failed_switch_of_index_leaves_no_old_index_in_the_status_bar(
    sample_index, tmp_path
):
    """After a switch to an index that does not open, the bar named the old index and its
    passages beside the whole error, as if it were still read."""
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        app.choose(index=str(tmp_path / "no-such-index"))
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = app.screen.query_one("#status").plain
        assert status.startswith("no index │ cannot open the index or model"), status


# ---- copy, export, help -----------------------------------------------------------------


@run_async
async def test_copy_and_export_the_session(sample_index, qa_dev, tmp_path):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, qa_dev[0]["question"])
        answer = last_answer(app)
        await pilot.press("ctrl+y")
        assert app.clipboard.startswith(answer.answer)
        assert "Sources:" in app.clipboard and "wikipedia.org/wiki/" in app.clipboard

        await pilot.press("ctrl+o")
        await pilot.pause()
        md = sorted((tmp_path / "exports").glob("session-*.md"))
        js = sorted((tmp_path / "exports").glob("session-*.json"))
        assert len(md) == len(js) == 1
        text = md[0].read_text(encoding="utf-8")
        assert qa_dev[0]["question"] in text and answer.answer in text
        doc = json.loads(js[0].read_text(encoding="utf-8"))
        (entry,) = doc["session"]
        assert entry["answer"]["answer"] == answer.answer
        kinds = [e["kind"] for e in entry["events"]]
        assert kinds[:2] == ["bindings", "iteration_started"]
        assert "retrieved" in kinds and "decided" in kinds
        assert not list((tmp_path / "exports").glob(".tmp-*"))

        await pilot.press("f1")
        await pilot.pause()
        assert type(app.screen).__name__ == "HelpScreen"
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "MainScreen"


# ---- first run --------------------------------------------------------------------------


@run_async
async def test_welcome_screen_builds_the_demo_index(isolated_home):
    from tui.messages import BuildFinished, BuildProgress

    seen: list = []
    app = make_app(Settings(model="extractive"), cursor_blink=False)
    hook = seen.append
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, WelcomeScreen)
        await pilot.click("#build-demo")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await app.workers.wait_for_complete()  # the engine opens after the build
        await pilot.pause()
        assert type(app.screen).__name__ == "MainScreen"
        assert (isolated_home / "indexes" / "demo").is_dir()
        assert app.settings.index == "demo"
        progress = [m for m in seen if isinstance(m, BuildProgress)]
        assert progress and progress[-1].fraction == pytest.approx(1.0)
        assert any(isinstance(m, BuildFinished) for m in seen)
        status = app.screen.query_one("#status").plain
        assert "demo" in status and "passages" in status


@run_async
async def test_welcome_screen_reports_a_missing_dump(isolated_home):
    app = make_app(Settings(model="extractive"), cursor_blink=False)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.screen.query_one("#dump-path", Input).value = str(isolated_home / "nope.xml.bz2")
        await pilot.click("#build-dump")
        await pilot.pause()
        assert isinstance(app.screen, WelcomeScreen)
        assert "No such file" in plain(app.screen.query_one("#build-message", Static))


# ---- plain-words helpers and the command ------------------------------------------------


def _answer(status: str, stop: str, decisions: list[str]) -> Answer:
    its = [
        IterationRecord(t, "initial", [], [], [], "x", {}, d, {})
        for t, d in enumerate(decisions, 1)
    ]
    return Answer("q", "x", status, stop, "low", 0.4, [], "extractive", "i", its, {})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "stop", "decisions", "words"),
    [
        ("accepted", "accepted", ["continue", "accept"], "accepted at iteration 2"),
        (
            "force_accepted",
            "budget",
            ["continue"] * 2 + ["force_accept"],
            "best answer after 3 iterations",
        ),
        (
            "force_accepted",
            "quality_declined",
            ["continue", "force_accept"],
            "stopped: quality declined",
        ),
        (
            "insufficient_evidence",
            "no_evidence",
            ["stop"],
            "stopped: no passage supports an answer",  # the answer itself says the rest
        ),
    ],
)
def test_stop_reason_in_plain_words(status, stop, decisions, words):
    assert stop_reason_words(_answer(status, stop, decisions)) == words


def test_highlight_marks_whole_question_words_only():
    words = question_words("When was the Eiffel Tower built?")
    assert set(words) == {"eiffel", "tower", "built"}
    content = highlight("The Eiffel tower was built; towers differ.", words)
    marked = [content.plain[s.start : s.end] for s in content.spans]
    assert marked == ["Eiffel", "tower", "built"]


def test_tui_command_refuses_a_missing_index_and_a_non_terminal():
    from scim_edge.cli import main

    with pytest.raises(UserError):
        from scim_edge.commands import tui as tui_command

        tui_command.run(
            type("A", (), {"index": "nope", "model": None, "loop": None, "profile": None})()
        )
    assert main(["tui", "--index", "nope"]) == 2
    done = subprocess.run(
        [sys.executable, "-m", "scim_edge"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "interactive terminal" in done.stderr


@run_async
async def test_settings_buttons_are_in_view_on_an_80_by_24_terminal(sample_index, tmp_path):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_settings(pilot)
        box = app.screen.query_one("#settings-box").region
        apply = app.screen.query_one("#apply").region
        assert apply.bottom <= box.bottom - 1  # inside the border, not under it


def decision_lines(app) -> list[str]:
    return [plain(card._decision) for card in app.screen.query(IterationCard)]


@run_async
async def test_a_scim_round_says_it_compared_the_confidence_with_theta(sample_index, tmp_path):
    """With the shipped Critic SCIM decides on the round's calibrated confidence: the card
    says so, with both numbers, and does not set Q against θ."""
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "Who wrote Animal Farm?")
        answer = last_answer(app)
        assert answer.bindings["quality"] == "learned"
        first = answer.iterations[0]
        lines = decision_lines(app)
        assert f"confidence {percent(first.confidence)}% < θ 70%" in lines[0]
        bars = app.screen.query(IterationCard).first()._scores
        assert "θ" not in " ".join(item.plain for item in bars.items)


@run_async
async def test_a_fixed_run_compares_nothing_with_theta(sample_index, tmp_path):
    settings = Settings(model="extractive", index=str(sample_index), loop="fixed-2")
    app = make_app(settings, cursor_blink=False, export_dir=tmp_path / "exports")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "Who wrote Animal Farm?")
        lines = decision_lines(app)
        assert "next round of a fixed run" in lines[0]
        assert not any("θ" in line for line in lines)


@run_async
async def test_the_answer_details_show_the_returned_rounds_scores(sample_index, tmp_path):
    """single-dim keeps the previous answer when Q declines: the details show that
    round's scores, not the last round's."""
    settings = Settings(model="extractive", index=str(sample_index), loop="single-dim")
    app = make_app(settings, cursor_blink=False, export_dir=tmp_path / "exports")
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "Who wrote Animal Farm?")
        answer = last_answer(app)
        assert answer.stop_reason == "quality_declined"
        row = app.screen.query_one(AnswerPanel).query_one(".answer-scores")
        assert f"Q {answer.quality:.2f}" in " ".join(item.plain for item in row.items)


@run_async
async def test_a_question_with_no_passages_clears_the_evidence(sample_index, tmp_path):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "Who wrote Animal Farm?")
        panel = app.screen.query_one(EvidencePanel)
        assert panel.current is not None
        await ask(pilot, "???")
        assert panel.current is None
        assert "Animal Farm" not in plain(panel.query_one("#evidence-text", Static))


@run_async
async def test_the_settings_budget_limits_simrag_too(sample_index, tmp_path):
    """The one iteration budget in Settings is SCIM's T_max and simrag's limit, as
    `ask --max-iterations` sets both."""
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_settings(pilot)
        app.screen.query_one("#loop", Select).value = "simrag"
        await pilot.pause()  # the field now shows simrag's budget
        app.screen.query_one("#t_max", Input).value = "1"
        await apply_settings(pilot)
        assert app.settings.max_iterations == 1
        assert app.settings.t_max == 3  # SCIM's T_max is not what the field showed
        await ask(pilot, "How much did Actrius gross?")
        assert len(last_answer(app).iterations) == 1


@run_async
async def test_a_palette_choice_under_the_open_settings_survives_apply(sample_index, tmp_path):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_settings(pilot)
        app.choose(loop="simrag")  # what the palette's "Loop: simrag" runs
        await pilot.pause()
        assert app.screen.query_one("#loop", Select).value == "simrag"
        await apply_settings(pilot)
        assert app.settings.loop == "simrag"


@run_async
async def test_f1_opens_the_help_over_the_settings(sample_index, tmp_path):
    from tui.screens.help import HelpScreen

    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_settings(pilot)
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


@run_async
async def test_the_answer_details_say_why_its_confidence_differs_from_its_round(
    sample_index, tmp_path
):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await ask(pilot, "Who wrote Animal Farm?")
        answer = last_answer(app)
        note = app.screen.query_one(AnswerPanel).query_one(".answer-confidence-note", Static)
        assert f"The answer's {percent(answer.confidence)}% is the Critic's second look" in plain(
            note
        )


@run_async
async def test_a_palette_choice_keeps_what_was_typed_in_the_settings(sample_index, tmp_path):
    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await open_settings(pilot)
        app.screen.query_one("#theta", Input).value = "0.9"
        app.choose(loop="fixed-2")
        await pilot.pause()
        await apply_settings(pilot)
        assert (app.settings.loop, app.settings.theta) == ("fixed-2", 0.9)


@run_async
async def test_an_answer_with_no_text_says_there_is_none(sample_index, tmp_path):
    """A choice whose options no passage names gets no answer from the reader; the panel
    says so in words, not with a blank line."""
    from scim_edge.wording import NO_ANSWER

    app = app_for(sample_index, tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await ask(pilot, "Which group has more species, the zorblaxes or the quuxians of the sea?")
        assert last_answer(app).answer == ""
        panel = app.screen.query_one("#exchange-1").query_one(AnswerPanel)
        assert plain(panel.query_one(".answer-text", Static)) == NO_ANSWER
