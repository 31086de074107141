"""Snapshot tests of the TUI: the main screen after an answer, the settings screen and the
welcome screen. Fixed terminal size, no cursor blink, no spinner animation, and a scripted
engine (tests/tui_fake_engine.py) with fixed passages, scores and timings, so every run
draws the same picture. Update with `pytest tests/test_tui_snapshots.py --snapshot-update`
after an intended change, and look at the new SVGs before committing them."""

from __future__ import annotations

import pytest
from tui_fake_engine import FakeEngine

from scim_edge.settings import Settings
from tui.app import make_app

QUESTION = "In what year did Jonathan Swift publish A Modest Proposal?"


@pytest.fixture(autouse=True)
def fixed_status(monkeypatch):
    """The NLTK probe depends on what data this machine has; pin its words."""
    monkeypatch.setattr("tui.widgets.status_bar.nltk_words", lambda: "fallbacks")


def scripted_app(**options):
    return make_app(Settings(), FakeEngine(), cursor_blink=False, animate_spinner=False, **options)


def test_main_screen_after_an_answer(snap_compare):
    async def run_before(pilot) -> None:
        pilot.app.screen.query_one("#question").value = QUESTION
        await pilot.press("enter")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(scripted_app(), terminal_size=(120, 36), run_before=run_before)


def test_settings_screen(snap_compare):
    assert snap_compare(scripted_app(), terminal_size=(120, 36), press=["ctrl+s"])


def test_welcome_screen(snap_compare):
    app = make_app(Settings(), cursor_blink=False, animate_spinner=False, welcome=True)
    assert snap_compare(app, terminal_size=(100, 30))
