"""JSON Lines: the one rule for splitting them into lines."""

from __future__ import annotations

from collections.abc import Iterator


def jsonl_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) for each non-blank line of `text`.

    Splits on "\\n" only: str.splitlines() would also split inside JSON strings that hold
    U+2028, U+0085 or other Unicode line separators, which are legal there."""
    for line_no, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if line.strip():
            yield line_no, line
