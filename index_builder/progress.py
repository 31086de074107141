"""Progress display for `build-index`.

On a terminal: one self-rewriting bar line (bytes read of the total, pages/s, MB/s of XML,
ETA). Off a terminal (logs, CI): a plain line every few seconds, so a log shows the build is
alive without filling up. Either way the build ends with a one-screen summary.

The reporter is just a callable taking `ProgressInfo`; the builder knows nothing of output.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from index_builder.build import ProgressInfo

BAR_WIDTH = 28


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


class ProgressReporter:
    """Callable progress sink: a live bar on a TTY, periodic lines otherwise."""

    def __init__(
        self, stream: TextIO | None = None, *, tty: bool | None = None, every: float = 5.0
    ) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)()) if tty is None else tty
        self.every = every
        # Off a terminal the first line comes after `every` seconds: a quick build (or one
        # that fails at once) prints only its summary or its error.
        self._last = 0.0 if self.tty else time.monotonic()
        self._bar_shown = False
        self.last: ProgressInfo | None = None

    def __call__(self, info: ProgressInfo) -> None:
        self.last = info
        now = time.monotonic()
        final = info.phase in ("aliases", "committing", "done")
        if self.tty:
            if now - self._last < 0.1 and not final:
                return
            self._last = now
            self.stream.write("\r" + self.bar_line(info) + "\x1b[K")
            self._bar_shown = True
            if info.phase == "done":
                self.stream.write("\n")
                self._bar_shown = False
        else:
            if info.phase == "done" or now - self._last < self.every:
                return
            self._last = now
            self.stream.write(self.plain_line(info) + "\n")
        self.stream.flush()

    @staticmethod
    def rates(info: ProgressInfo) -> tuple[float, float]:
        t = max(info.elapsed, 1e-6)
        return info.pages / t, info.xml_bytes / 1e6 / t

    def bar_line(self, info: ProgressInfo) -> str:
        pps, mbps = self.rates(info)
        if info.total_bytes:
            frac = min(1.0, info.bytes_read / info.total_bytes)
            filled = int(frac * BAR_WIDTH)
            bar = "█" * filled + "░" * (BAR_WIDTH - filled)
            eta = (info.elapsed / frac - info.elapsed) if frac > 0.01 else None
            where = (
                f"{bar} {frac * 100:5.1f}% {_fmt_bytes(info.bytes_read)}/"
                f"{_fmt_bytes(info.total_bytes)}"
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
        """End a half-drawn bar line so an error message starts on a fresh line."""
        if self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
            self._bar_shown = False


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
        f"  other ns     {c['other_namespaces']:,} pages not in namespace 0",
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
