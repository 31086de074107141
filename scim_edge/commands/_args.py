"""argparse value types shared by the subcommands: bad values are one-line errors, exit 2."""

from __future__ import annotations

import argparse
import math
from pathlib import Path


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0 (megabytes, seconds): "nan" and "inf" read as floats, and
    would only fail later, in a child process, or never end."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number (got {text!r})")
    return value


def nonempty(text: str) -> str:
    """A name or path that must say something: "" would silently mean the default."""
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def nonempty_path(text: str) -> Path:
    """A file or folder named by a path that says something: "" would read as the current
    folder (`Path("")` is "."), so --out "" wrote into it and --home "" installed there."""
    return Path(nonempty(text))


def missing_command(p: argparse.ArgumentParser) -> int:
    """`scim-edge critic` with no command after it: one line naming the commands it takes,
    exit 2 (the whole help, printed there before, is `--help`'s to give)."""
    names = [n for a in p._actions if isinstance(a, argparse._SubParsersAction) for n in a.choices]
    p.error(f"choose a command: {', '.join(names)}")
    return 2


def bounded_int(high: int):
    """A positive integer no larger than `high` (a value past it only exhausts memory)."""

    def parse(text: str) -> int:
        value = positive_int(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high} (got {text!r})")
        return value

    return parse


def thread_count(text: str) -> int:
    """Threads for ONNX Runtime, or worker processes: at most 4x the cores, a guard against
    typos like 9999 (--workers 100000 forked thousands of processes)."""
    from scim_edge.settings import max_threads

    return bounded_int(max_threads())(text)


worker_count = thread_count


def unit_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a number between 0 and 1 (got {text!r})"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1 (got {text!r})")
    return value
