"""Messages that carry results from worker threads to the UI.

Workers never touch widgets: they post one of these (`post_message` is thread-safe) and
the app applies it on the event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from textual.message import Message

from scim_edge.types import Event


@dataclass
class EngineEvent(Message):
    """One trace event of question `exchange_id`."""

    exchange_id: int
    event: Event


@dataclass
class QuestionFailed(Message):
    exchange_id: int
    error: str


@dataclass
class EngineReady(Message):
    """The engine (index + generator) is open; the status bar can show its facts."""

    engine: Any


@dataclass
class EngineFailed(Message):
    error: str


@dataclass
class BuildProgress(Message):
    fraction: float | None
    text: str


@dataclass
class BuildFinished(Message):
    index_dir: Path
    summary: str


@dataclass
class BuildFailed(Message):
    error: str


@dataclass
class BuildStopped(Message):
    """A cancelled build has unwound: its temporary directory is gone, nothing was kept."""

    out: Path
