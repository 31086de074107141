"""Reading QA sets: JSON Lines with `question`, `answers` and optional `id`, `type`, `titles`.

The whole file is checked before any system runs: a bad line found after an hour of
evaluation would waste the hour, so every bad line is collected with its line number and
reported at once in one UserError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scim_edge import jsonl
from scim_edge.engine import check_question
from scim_edge.errors import UserError
from scim_edge.jsonl import jsonl_lines

MAX_LISTED = 8  # bad lines named in the message; the rest are counted


@dataclass(frozen=True)
class QAItem:
    id: str
    question: str
    answers: tuple[str, ...]  # empty = unanswerable
    type: str | None = None
    titles: tuple[str, ...] = ()
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def answerable(self) -> bool:
        return bool(self.answers)


def _str_list(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"'{key}' must be a list of strings")
    return tuple(v for v in value)


def _load_object(text: str) -> dict[str, Any]:
    try:
        obj = jsonl.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not valid JSON ({e.msg} at column {e.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    return obj


def _question(obj: dict[str, Any]) -> str:
    if "question" not in obj:
        raise ValueError("missing 'question'")
    if not isinstance(obj["question"], str):
        raise ValueError("'question' must be a string")
    try:
        return check_question(obj["question"])
    except UserError as e:
        raise ValueError(str(e)) from None


def _answers(obj: dict[str, Any]) -> tuple[str, ...]:
    if "answers" not in obj:
        raise ValueError("missing 'answers' (use [] for an unanswerable question)")
    answers = _str_list(obj["answers"], "answers")
    if any(not a.strip() for a in answers):
        raise ValueError("'answers' has an empty string")
    return answers


def _id(obj: dict[str, Any], line_no: int) -> str:
    raw_id = obj.get("id")
    if raw_id is None:
        return f"line-{line_no}"
    if isinstance(raw_id, str) and raw_id.strip():
        return raw_id.strip()
    if isinstance(raw_id, int) and not isinstance(raw_id, bool):
        return str(raw_id)
    raise ValueError("'id' must be a non-empty string or an integer")


def parse_line(text: str, line_no: int) -> QAItem:
    """One JSONL line to a QAItem, or ValueError saying what is wrong with it."""
    obj = _load_object(text)
    question = _question(obj)
    answers = _answers(obj)
    qid = _id(obj, line_no)
    qtype = obj.get("type")
    if qtype is not None and (not isinstance(qtype, str) or not qtype.strip()):
        raise ValueError("'type' must be a non-empty string")
    titles = _str_list(obj["titles"], "titles") if obj.get("titles") is not None else ()
    known = {"id", "question", "answers", "type", "titles"}
    extra = {k: v for k, v in obj.items() if k not in known}
    return QAItem(
        id=qid,
        question=question,
        answers=answers,
        type=qtype.strip() if qtype else None,
        titles=titles,
        line=line_no,
        extra=extra,
    )


def parse_qa_text(text: str, source: str = "QA file") -> list[QAItem]:
    """Parse a whole JSONL text; raise one UserError listing every bad line."""
    items: list[QAItem] = []
    bad: list[tuple[int, str]] = []
    seen: dict[str, int] = {}
    for line_no, line in jsonl_lines(text):
        try:
            item = parse_line(line, line_no)
        except ValueError as e:
            bad.append((line_no, str(e)))
            continue
        if item.id in seen:
            bad.append((line_no, f"duplicate id '{item.id}' (first on line {seen[item.id]})"))
            continue
        seen[item.id] = line_no
        items.append(item)
    if bad:
        listed = "; ".join(f"line {n}: {why}" for n, why in bad[:MAX_LISTED])
        more = f"; and {len(bad) - MAX_LISTED} more" if len(bad) > MAX_LISTED else ""
        noun = "line" if len(bad) == 1 else "lines"
        raise UserError(f"{source}: {len(bad)} bad {noun}, nothing was run: {listed}{more}")
    if not items:
        raise UserError(f"{source}: no questions found")
    return items


def load_qa(path: str | Path) -> list[QAItem]:
    """Read and check a QA JSONL file (UTF-8, optional BOM)."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"QA file not found: {path}")
    if path.is_dir():
        raise UserError(f"QA file is a directory: {path}")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise UserError(f"cannot read QA file {path}: {e.strerror or e}") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line_no = raw[: e.start].count(b"\n") + 1
        raise UserError(
            f"{path}: 1 bad line, nothing was run: line {line_no}: not valid UTF-8"
        ) from None
    return parse_qa_text(text, source=str(path))
