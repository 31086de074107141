"""Progress display for every long CLI job: `build-index`, `models export`, `bundle`,
`unbundle`.

On a terminal: a `rich.progress` bar on one self-redrawing line (for a build: bytes read of
the total, pages/s, MB/s of XML, ETA). Off a terminal (logs, CI): a plain line now and then,
so a log shows the job is alive without filling up. A build ends with a one-screen summary.

Two reporters share the display:
- `ProgressReporter`, a callable taking the builder's `ProgressInfo` (the builder knows
  nothing of output);
- `TaskProgress`, a callable taking (done, total) in bytes or steps, for bundle, unbundle
  and export.

The bar is redrawn at most ten times a second, from the caller's own thread (no refresh
thread), and `abort()` ends it so an error message starts on a fresh line.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Literal, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn
from rich.table import Column

from index_builder.build import ProgressInfo

BAR_WIDTH = 28
REDRAW_S = 0.1


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def _fmt_time(s: float) -> str:
    s = max(0, int(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}:{m:02d}:{sec:02d}" if h else f"{m:d}:{sec:02d}"


def _is_tty(stream: TextIO, tty: bool | None) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) if tty is None else tty


class _Bar:
    """One rich progress bar drawn on `stream`: a label, the bar, and a text column."""

    def __init__(self, stream: TextIO, label: str) -> None:
        self.stream = stream
        self.label = label
        self._progress: Progress | None = None
        self._task: Any = None
        self._drawn = 0.0

    @property
    def active(self) -> bool:
        return self._progress is not None

    def _start(self, completed: float, total: float | None, text: str) -> Progress:
        console = Console(file=self.stream, force_terminal=True, highlight=False)
        progress = Progress(
            TextColumn(
                "{task.description}", table_column=Column(no_wrap=True, min_width=len(self.label))
            ),
            BarColumn(bar_width=BAR_WIDTH, table_column=Column(width=BAR_WIDTH)),
            # The text takes what is left of the line and is cut, never wrapped.
            TextColumn(
                "{task.fields[text]}",
                table_column=Column(no_wrap=True, overflow="ellipsis", ratio=1),
            ),
            console=console,
            auto_refresh=False,
            # Leave sys.stdout alone: a command's own output must not end up on stderr.
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._task = progress.add_task(self.label, total=total, completed=completed, text=text)
        progress.start()
        self._progress = progress
        self._drawn = time.monotonic()
        return progress

    def draw(self, completed: float, total: float | None, text: str, *, final: bool) -> None:
        progress = self._progress or self._start(completed, total or None, text)
        progress.update(self._task, completed=completed, total=total or None, text=text)
        now = time.monotonic()
        if final or now - self._drawn >= REDRAW_S:
            self._drawn = now
            progress.refresh()
        if final:
            self.stop()

    def note(self, text: str) -> None:
        """A line above the bar (the bar stays at the bottom)."""
        if self._progress is not None:
            self._progress.console.print(text, markup=False)
        else:
            self.stream.write(text + "\n")
            self.stream.flush()

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


Bar = _Bar  # for other long jobs that draw their own text (the eval harness)


class ProgressReporter:
    """Callable progress sink for `build-index`: a live bar on a TTY, periodic lines otherwise."""

    def __init__(
        self, stream: TextIO | None = None, *, tty: bool | None = None, every: float = 5.0
    ) -> None:
        self.stream = stream or sys.stderr
        self.tty = _is_tty(self.stream, tty)
        self.every = every
        # Off a terminal the first line comes after `every` seconds: a quick build (or one
        # that fails at once) prints only its summary or its error.
        self._last = 0.0 if self.tty else time.monotonic()
        self._bar = _Bar(self.stream, "build-index")
        self.last: ProgressInfo | None = None

    def __call__(self, info: ProgressInfo) -> None:
        self.last = info
        if self.tty:
            total = info.total_bytes or None
            self._bar.draw(info.bytes_read, total, self.stats(info), final=info.phase == "done")
            return
        now = time.monotonic()
        if info.phase == "done" or now - self._last < self.every:
            return
        self._last = now
        self.stream.write(self.plain_line(info) + "\n")
        self.stream.flush()

    @staticmethod
    def rates(info: ProgressInfo) -> tuple[float, float]:
        t = max(info.elapsed, 1e-6)
        return info.pages / t, info.xml_bytes / 1e6 / t

    def stats(self, info: ProgressInfo) -> str:
        """What the bar line shows beside the bar: share read, pages, rates, time, ETA."""
        pps, mbps = self.rates(info)
        if info.total_bytes:
            frac = min(1.0, info.bytes_read / info.total_bytes)
            eta = (info.elapsed / frac - info.elapsed) if frac > 0.01 else None
            where = (
                f"{frac * 100:5.1f}% {_fmt_bytes(info.bytes_read)}/{_fmt_bytes(info.total_bytes)}"
            )
            eta_text = _fmt_time(eta) if eta is not None else "--:--"
            tail = f" ETA {eta_text}" if info.phase == "reading" else f" {info.phase}"
        else:
            where = f"{_fmt_bytes(info.bytes_read)} read"
            tail = "" if info.phase == "reading" else f" {info.phase}"
        return (
            f"{where}  {info.pages:,} pages  {pps:,.0f} pages/s  {mbps:.1f} MB/s"
            f"  {_fmt_time(info.elapsed)}{tail}"
        )

    def bar_line(self, info: ProgressInfo) -> str:
        """The bar line as plain text (the bar drawn with block characters)."""
        if info.total_bytes:
            filled = int(min(1.0, info.bytes_read / info.total_bytes) * BAR_WIDTH)
            return "█" * filled + "░" * (BAR_WIDTH - filled) + " " + self.stats(info)
        return self.stats(info)

    def plain_line(self, info: ProgressInfo) -> str:
        pps, mbps = self.rates(info)
        pct = (
            f"{info.bytes_read / info.total_bytes * 100:.1f}% of {_fmt_bytes(info.total_bytes)}"
            if info.total_bytes
            else f"{_fmt_bytes(info.bytes_read)}"
        )
        return (
            f"build-index: {info.phase}: {pct} read, {info.pages:,} pages, "
            f"{info.articles:,} articles, {info.passages:,} passages, {pps:,.0f} pages/s, "
            f"{mbps:.1f} MB/s XML, {_fmt_time(info.elapsed)} elapsed"
        )

    def abort(self) -> None:
        """End a half-drawn bar so an error message starts on a fresh line."""
        self._bar.stop()


class TaskProgress:
    """Callable (done, total) progress for bundle, unbundle, export and practice's stages.

    On a terminal a bar; off one, a line at each tenth of the way (and at the end), so a
    log stays readable, once the task has run `quiet_s` seconds: a quick one writes no
    line (its summary says it was done, and a refusal is the one line said). `unit` is
    "bytes" (shown in MB, with a rate) or "steps".
    """

    def __init__(
        self,
        label: str,
        stream: TextIO | None = None,
        *,
        tty: bool | None = None,
        unit: Literal["bytes", "steps"] = "bytes",
        quiet_s: float = 2.0,
    ) -> None:
        self.label = label
        self.quiet_s = quiet_s
        self.stream = stream or sys.stderr
        self.tty = _is_tty(self.stream, tty)
        self.unit = unit
        self.start = time.monotonic()
        self._last_step = 0
        self._bar = _Bar(self.stream, label)

    def text(self, done: int, total: int) -> str:
        frac = done / total if total else 1.0
        if self.unit == "steps":
            return f"{done} of {total} steps ({frac:.0%})"
        elapsed = max(time.monotonic() - self.start, 1e-6)
        return (
            f"{done / 1e6:,.1f} / {total / 1e6:,.1f} MB ({frac:.0%}), "
            f"{done / 1e6 / elapsed:,.1f} MB/s"
        )

    def __call__(self, done: int, total: int) -> None:
        final = done >= total
        if self.tty:
            self._bar.draw(done, max(total, 1), self.text(done, total), final=final)
            return
        if time.monotonic() - self.start < self.quiet_s:
            return
        frac = done / total if total else 1.0
        step = int(frac * 10)
        if step != self._last_step and (step > 0 or final):
            self._last_step = step
            self.stream.write(f"{self.label}: {self.text(done, total)}\n")
            self.stream.flush()

    def note(self, text: str) -> None:
        """A message line that keeps the bar intact (export's steps, say)."""
        self._bar.note(text)

    def abort(self) -> None:
        self._bar.stop()


def summary(manifest: dict[str, Any], out_dir: str) -> str:
    """A one-screen summary of a finished build."""
    c = manifest["counts"]
    src = manifest["source"]
    lines = [
        f"Built index {out_dir}",
        f"  source       {src['name']} ({_fmt_bytes(src['size_bytes'])}, "
        f"{_fmt_bytes(src['xml_bytes'])} of XML"
        f"{', multistream' if src.get('multistream') else ''}"
        f"{', lang ' + src['lang'] if src.get('lang') else ''})",
        f"  pages seen   {c['pages_seen']:,}",
        f"  articles     {c['articles']:,} ({c['disambiguation']:,} disambiguation)",
        f"  passages     {c['passages']:,} of ~{manifest['passage_words']} words",
        f"  redirects    {c['redirects']:,} ({c['aliases']:,} attached as aliases to "
        f"{c['aliased_articles']:,} articles; {c['dangling_redirects']:,} point outside the dump)",
        f"  other ns     {c['other_namespaces']:,} "
        f"page{'' if c['other_namespaces'] == 1 else 's'} not in namespace 0",
        f"  skipped      {c['skipped']:,}"
        + (
            " (" + ", ".join(f"{k}: {v}" for k, v in c["skipped_reasons"].items()) + ")"
            if c["skipped"]
            else ""
        ),
        f"  time         {manifest['build_seconds']:.1f} s, {manifest['xml_mb_per_s']:.1f} MB/s "
        f"of XML, {manifest['workers']} worker processes",
        f"  index size   {_fmt_bytes(manifest['index_bytes'])} "
        f"({manifest['index_bytes'] / max(1, src['xml_bytes']):.2f}x the XML)",
        f"  analyzer     {manifest['analyzer']}",
    ]
    return "\n".join(lines)
