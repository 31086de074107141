"""The session: every question asked in this run of the TUI, with its trace.

The UI renders from these records and the exports (Markdown and JSON traces) are built
from them, so what is exported is exactly what was shown.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scim_edge import paths
from scim_edge.atomic import write_text
from scim_edge.types import Answer, Event, Final, Passage, Retrieved
from tui.formatting import answer_words, confidence_words, fmt_ms, stop_reason_words
from tui.sources import citation_line, source_label


@dataclass
class Exchange:
    id: int
    question: str
    loop: str
    profile: str
    theta: float
    events: list[Event] = field(default_factory=list)
    answer: Answer | None = None
    error: str | None = None
    cancelled: bool = False
    passages: dict[str, Passage] = field(default_factory=dict)

    @property
    def running(self) -> bool:
        return self.answer is None and self.error is None and not self.cancelled

    def add(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, Retrieved):
            for p in event.new_passages:
                self.passages.setdefault(p.doc_id, p)
        elif isinstance(event, Final):
            self.answer = event.answer
            for p in event.answer.passages:
                self.passages.setdefault(p.doc_id, p)

    def cited_ids(self) -> list[str]:
        if self.answer is None:
            return []
        return [c.get("doc_id", "") for c in self.answer.citations if c.get("doc_id")]

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "loop": self.loop,
            "profile": self.profile,
            "status": "cancelled"
            if self.cancelled
            else "error"
            if self.error
            else (self.answer.status if self.answer else "running"),
            "error": self.error,
            "answer": self.answer.to_dict() if self.answer else None,
            "events": [e.to_dict() for e in self.events if not isinstance(e, Final)],
        }


def to_markdown(exchanges: list[Exchange]) -> str:
    lines = ["# scim-edge session", ""]
    for n, ex in enumerate(exchanges, 1):
        lines += [f"## {n}. {ex.question}", ""]
        if ex.cancelled:
            lines += ["*Cancelled.*", ""]
            continue
        if ex.error:
            lines += [f"*Error:* {ex.error}", ""]
            continue
        a = ex.answer
        if a is None:
            lines += ["*Still running.*", ""]
            continue
        lines += [f"**Answer:** {answer_words(a)}", ""]
        lines += [
            f"> {s['sentence']} — {source_label(s.get('title', ''), s.get('section', ''))}"
            for s in a.support
            if s.get("sentence")
        ]
        lines += [
            "",
            f"- confidence: {confidence_words(a)}",
            f"- stop: {stop_reason_words(a)}",
            f"- loop: {a.loop}, profile: {a.profile}, generator: {a.generator}, index: {a.index}",
            f"- total time: {fmt_ms(a.timing_ms.get('total'))}",
        ]
        lines += [f"- note: {d}" for d in (*a.disclaimers, *a.warnings)]
        if a.citations:
            lines += ["", "Sources:"]
            for c in a.citations:
                p = ex.passages.get(c.get("doc_id", ""))
                entry = {**c, "section": c.get("section") or (p.section if p else "")}
                lines.append(f"- {citation_line(entry)}")
        lines += [
            "",
            "| t | mode | new passages | Q | decision | retrieval | generation | evaluation "
            "| coordination |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for it in a.iterations:
            tm = it.timing_ms
            q = it.scores.get("quality")
            lines.append(
                f"| {it.t} | {it.mode} | {', '.join(it.new_doc_ids)} | "
                f"{'' if q is None else f'{q:.2f}'} | {it.decision} | "
                + " | ".join(
                    fmt_ms(tm.get(k))
                    for k in ("retrieval", "generation", "evaluation", "coordination")
                )
                + " |"
            )
        lines.append("")
    return "\n".join(lines)


def to_json(exchanges: list[Exchange]) -> str:
    doc = {"session": [ex.to_dict() for ex in exchanges]}
    return json.dumps(doc, ensure_ascii=False, indent=2, default=str) + "\n"


def default_export_dir() -> Path:
    return paths.home() / "exports"


def export_session(exchanges: list[Exchange], directory: Path | None = None) -> tuple[Path, Path]:
    """Write `session-<time>.md` and `.json` atomically; return both paths."""
    directory = Path(directory or default_export_dir())
    stamp = time.strftime("%Y%m%d-%H%M%S")
    md = directory / f"session-{stamp}.md"
    js = directory / f"session-{stamp}.json"
    n = 1
    while md.exists() or js.exists():
        n += 1
        md = directory / f"session-{stamp}-{n}.md"
        js = directory / f"session-{stamp}-{n}.json"
    write_text(md, to_markdown(exchanges))
    write_text(js, to_json(exchanges))
    return md, js
