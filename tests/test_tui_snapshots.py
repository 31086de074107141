"""Snapshot tests of every state of the TUI: welcome, building, a question mid-iteration,
answers of high and low tier (with and without a calibrated confidence), a forced accept
with the hallucination warning, insufficient evidence, an error card, settings, help, the
command palette, the index manager, the article view and the main screen at 80×24.

Fixed terminal sizes, no cursor blink, no spinner animation, and a scripted engine
(tests/tui_fake_engine.py, whose event order tests/test_tui_fake_engine.py checks against
the real loops) with fixed passages, scores and timings, so every run draws the same
picture. Update with `pytest tests/test_tui_snapshots.py --snapshot-update` after an
intended change, and look at the new SVGs before committing them."""

from __future__ import annotations

import json
import threading

import pytest
from textual.command import CommandInput
from tui_fake_engine import FakeEngine

from scim_edge import paths
from scim_edge.settings import Settings
from tui.app import make_app
from tui.messages import BuildProgress

QUESTION = "In what year did Jonathan Swift publish A Modest Proposal?"
SIZE = (120, 36)


@pytest.fixture(autouse=True)
def fixed_status(monkeypatch):
    """The NLTK probe depends on what data this machine has; pin its words."""
    monkeypatch.setattr("tui.widgets.status_bar.nltk_words", lambda: "fallbacks")


def scripted_app(engine: FakeEngine | None = None, settings: Settings | None = None, **options):
    return make_app(
        settings or Settings(),
        engine or FakeEngine(),
        cursor_blink=False,
        animate_spinner=False,
        **options,
    )


async def asked(pilot, question: str = QUESTION) -> None:
    pilot.app.screen.query_one("#question").value = question
    await pilot.press("enter")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


# ---- the main screen -------------------------------------------------------------------


def test_main_screen_after_an_answer(snap_compare):
    """High tier with a calibrated confidence and a support sentence."""
    assert snap_compare(scripted_app(), terminal_size=SIZE, run_before=asked)


def test_answer_without_a_calibrated_confidence(snap_compare):
    """No confidence: the tier label says it comes from Q."""
    app = scripted_app(FakeEngine(confidence=False))
    assert snap_compare(app, terminal_size=SIZE, run_before=asked)


def test_forced_accept_with_the_hallucination_warning(snap_compare):
    """Low tier, force-accepted at T_max, the disclaimer and the warning."""
    app = scripted_app(FakeEngine(scenario="forced"))
    assert snap_compare(app, terminal_size=SIZE, run_before=asked)


def test_insufficient_evidence_from_the_critic_loop(snap_compare):
    """Simrag cards: queries as sent, the critic's issue as its reason, the safe answer once."""
    app = scripted_app(FakeEngine(scenario="insufficient"), Settings(loop="simrag"))

    async def run_before(pilot) -> None:
        await asked(pilot, "Was Achilles made immortal by horses?")

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_an_error_card(snap_compare):
    app = scripted_app(FakeEngine(scenario="crash"))
    assert snap_compare(app, terminal_size=SIZE, run_before=asked)


def test_a_question_mid_iteration(snap_compare):
    gate = threading.Event()
    app = scripted_app(FakeEngine(gate=gate))

    async def run_before(pilot) -> None:
        pilot.app.screen.query_one("#question").value = QUESTION
        await pilot.press("enter")
        for _ in range(100):
            await pilot.pause(0.02)
            ex = pilot.app.exchanges[0] if pilot.app.exchanges else None
            if ex is not None and any(getattr(e, "step", "") == "generate" for e in ex.events):
                break
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
    finally:
        gate.set()


def test_main_screen_at_80x24(snap_compare):
    assert snap_compare(scripted_app(), terminal_size=(80, 24), run_before=asked)


def test_article_view(snap_compare):
    async def run_before(pilot) -> None:
        await asked(pilot)
        pilot.app.screen.action_show_article("1001-1")
        await pilot.pause()

    assert snap_compare(scripted_app(), terminal_size=SIZE, run_before=run_before)


# ---- dialogs ---------------------------------------------------------------------------


def test_settings_screen(snap_compare):
    assert snap_compare(scripted_app(), terminal_size=SIZE, press=["ctrl+s"])


def test_help_screen(snap_compare):
    assert snap_compare(scripted_app(), terminal_size=SIZE, press=["f1"])


def test_command_palette(snap_compare):
    async def run_before(pilot) -> None:
        await pilot.press("ctrl+p")
        await pilot.pause()
        pilot.app.screen.query_one(CommandInput).cursor_blink = False
        await pilot.press(*"loop")
        await pilot.pause(0.3)

    assert snap_compare(scripted_app(), terminal_size=SIZE, run_before=run_before)


def fake_index(name: str, passages: int, source: str, size: int) -> None:
    """An index directory with only its manifest: enough for the manager's list."""
    where = paths.indexes_dir() / name
    where.mkdir(parents=True)
    manifest = {
        "counts": {"passages": passages, "articles": passages // 10},
        "source": {"name": source, "lang": "en"},
        "index_bytes": size,
    }
    (where / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_index_manager(snap_compare):
    fake_index("enwiki-sample", 4905, "enwiki-sample.xml.bz2", 3_600_000)
    fake_index("vital-en", 31_220, "vital-en.xml.bz2", 21_400_000)
    assert snap_compare(scripted_app(), terminal_size=SIZE, press=["f2"])


# ---- first run -------------------------------------------------------------------------


def test_welcome_screen(snap_compare):
    app = make_app(Settings(), cursor_blink=False, animate_spinner=False, welcome=True)
    assert snap_compare(app, terminal_size=(100, 30))


def test_welcome_screen_building(snap_compare):
    """Mid-bar, as the build worker reports it (the report is posted here, fixed)."""
    app = make_app(Settings(), cursor_blink=False, animate_spinner=False, welcome=True)

    async def run_before(pilot) -> None:
        screen = pilot.app.screen
        screen.building = True
        for button in screen.query("Button"):
            button.disabled = True
        screen.query_one("#build-progress").display = True
        screen._message("Building enwiki-sample from enwiki-sample.xml.bz2… (Esc cancels)")
        screen.post_message(
            BuildProgress(
                0.45,
                "reading: 0.8 MB read of 1.7 MB · 93 pages · 46 articles · 2,207 passages · 1.0 s",
            )
        )
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)
