"""Building an index from the TUI, shared by the welcome screen and the index manager.

The build runs in a thread worker (the builder cleans pages in worker processes for
large dumps) and reports only through messages, as toolong's scanner does, so the screen
stays responsive. Esc cancels: the progress callback raises, the builder's atomic
directory is removed, and nothing is kept under the index's name.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from textual import work
from textual.worker import Worker, WorkerState, get_current_worker

from scim_edge.errors import UserError
from tui.messages import BuildFailed, BuildFinished, BuildProgress, BuildStopped

DUMP_SUFFIXES = (".xml.bz2", ".xml.gz", ".xml", ".bz2", ".gz", ".zim")
PROGRESS_EVERY_S = 0.1
# Below this size a dump is read in this process: the builder then reports progress every
# batch it reads (the enwiki sample: about every 0.4 s), where its parallel reader reports
# per 1 MB compressed range (the sample: 0% for 1.7 s, then done). Measured on the sample:
# 2.78 s in-process against 2.63 s with two workers. Larger dumps have enough ranges to
# move the bar and gain from the workers.
SMALL_DUMP_BYTES = 8 << 20


def build_workers(source: Path) -> int | None:
    """Worker processes for building `source`: 0 (in-process) for a small dump."""
    try:
        size = source.stat().st_size
    except OSError:
        return None
    return 0 if size < SMALL_DUMP_BYTES else None


class BuildCancelled(Exception):
    """Raised from the progress callback to stop a cancelled build (atomic: nothing kept)."""


def index_name_for(dump: Path) -> str:
    name = dump.name
    for suffix in DUMP_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name or "index"


def progress_text(info: Any) -> tuple[float | None, str]:
    """(fraction of the compressed input read, one line of figures) of a ProgressInfo."""
    frac = None
    if getattr(info, "total_bytes", None):
        frac = min(1.0, info.bytes_read / info.total_bytes)
    mb = info.bytes_read / 1e6
    text = (
        f"{info.phase}: {mb:.1f} MB read"
        + (f" of {info.total_bytes / 1e6:.1f} MB" if info.total_bytes else "")
        + f" · {info.pages:,} pages · {info.articles:,} articles · {info.passages:,} passages"
        + f" · {info.elapsed:.1f} s"
    )
    return frac, text


class IndexBuilding:
    """Mixin for a screen that builds indexes: `build(source, out)` posts BuildProgress,
    then BuildFinished, BuildFailed or (after a cancel, once cleaned up) BuildStopped.

    A cancel takes effect at the builder's next progress report; until then the screen
    says it is cancelling, so "nothing was kept" is only said once it is true. A failure,
    reported or crashed, reaches the screen's `_stopped(text, error=True)`."""

    def _stopped(self, text: str, error: bool = False) -> None:  # the screen's own
        raise NotImplementedError

    def _message(self, text: str, error: bool = False) -> None:  # the screen's own
        raise NotImplementedError

    def _typed_dump(self, input_id: str) -> Path | None:
        """The dump path typed in the input `input_id`, or None after saying what is wrong."""
        from textual.widgets import Input

        text = self.query_one(input_id, Input).value.strip()  # type: ignore[attr-defined]
        if not text:
            self._message("Type the path of a dump first.", error=True)
            return None
        source = Path(text).expanduser()
        if not source.is_file():
            self._message(f"No such file: {source}", error=True)
            return None
        return source

    def on_build_failed(self, message: BuildFailed) -> None:
        self._stopped(f"Build failed: {message.error}", error=True)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "build":
            return
        if event.state == WorkerState.ERROR:
            err = event.worker.error
            self._stopped(f"Build failed: {type(err).__name__}: {err}", error=True)

    @work(thread=True, exclusive=True, group="build", exit_on_error=False)
    def build(self, source: Path, out: Path) -> None:
        from index_builder.build import build_index

        worker = get_current_worker()
        last = 0.0

        def progress(info: Any) -> None:
            nonlocal last
            if worker.is_cancelled:
                raise BuildCancelled
            now = time.monotonic()
            if now - last >= PROGRESS_EVERY_S or info.phase != "reading":
                last = now
                self.post_message(BuildProgress(*progress_text(info)))  # type: ignore[attr-defined]

        try:
            manifest = build_index(source, out, progress=progress, workers=build_workers(source))
        except BuildCancelled:
            # The builder's atomic directory was removed while this unwound.
            self.post_message(BuildStopped(out))  # type: ignore[attr-defined]
            return
        except UserError as e:
            self.post_message(BuildFailed(e.one_line()))  # type: ignore[attr-defined]
            return
        counts = manifest.get("counts", {})
        self.post_message(  # type: ignore[attr-defined]
            BuildFinished(
                out,
                f"{counts.get('articles', 0):,} articles, {counts.get('passages', 0):,} passages",
            )
        )
