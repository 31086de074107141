"""JSON and JSON Lines: the one rule for splitting them into lines, and the one parse of
a JSON document that a damaged or hostile file cannot turn into a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


def loads(text: str | bytes) -> Any:
    """`json.loads`, with a document nested too deeply for Python's parser raised as the
    JSONDecodeError (a ValueError) of any other damaged file: the parser's RecursionError
    is caught by no `except ValueError`, and `[[[[…` from a broken disk or a prank would
    otherwise end a command with a traceback; a number too long for Python to read says
    so, not how to raise the interpreter's limit."""
    doc = text if isinstance(text, str) else ""
    try:
        return json.loads(text)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to read", doc, 0) from None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise
    except ValueError:  # an integer of over 4,300 digits: Python's limit on reading one
        raise json.JSONDecodeError("a number too long to read", doc, 0) from None


def read_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in the file at `path` (a manifest), or None when the file is
    missing, unreadable, damaged or holds something else."""
    try:
        data = loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for each non-blank line of `text`.

    Splits on "\\n" only: str.splitlines() would also split inside JSON strings that hold
    U+2028, U+0085 or other Unicode line separators, which are legal there."""
    for line_no, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            yield line_no, line
