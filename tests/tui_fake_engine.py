"""A scripted engine for the TUI tests that need fixed data (snapshots).

It yields the same trace-event types, in the same order, as the real SCIM loop, with
fixed passages, scores and timings, so a screenshot of the app is identical on every
run. Tests of behaviour use the real engine; this one only pins what is drawn.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from scim_edge.engine import check_question
from scim_edge.settings import Settings
from scim_edge.types import (
    Answer,
    Decided,
    Event,
    Final,
    Generated,
    IterationRecord,
    IterationStarted,
    Passage,
    QualityReport,
    Retrieved,
    Scored,
    StepStarted,
)

PASSAGES = [
    Passage(
        "1001-0",
        "A Modest Proposal",
        "",
        "A Modest Proposal For preventing the Children of Poor People From being a Burthen "
        "to Their Parents or Country, and For making them Beneficial to the Publick is a "
        "Juvenalian satirical essay written and published anonymously by Jonathan Swift in "
        "1729.",
        14.2,
        1001,
    ),
    Passage(
        "1002-3",
        "Jonathan Swift",
        "Works",
        "Swift wrote A Modest Proposal in 1729, suggesting that impoverished Irish might ease "
        "their economic troubles by selling their children as food to rich gentlemen.",
        11.8,
        1002,
    ),
    Passage(
        "1003-1",
        "Satire",
        "Notable satirists",
        "Jonathan Swift was one of the greatest of Anglo-Irish satirists, and one of the "
        "first to practise modern journalistic satire.",
        7.5,
        1003,
    ),
    Passage(
        "1001-2",
        "A Modest Proposal",
        "Publication",
        "The essay was published in Dublin by S. Harding in 1729 and reprinted in London.",
        9.1,
        1001,
    ),
    Passage(
        "1002-7",
        "Jonathan Swift",
        "Later life",
        "Swift was Dean of St Patrick's Cathedral, Dublin, from 1713 until his death in 1745.",
        6.4,
        1002,
    ),
]

ITERATIONS = [
    # (mode, queries, new passage indexes, answer, scores, decision, reason, timing)
    (
        "initial",
        None,
        [0, 1, 2],
        "Jonathan Swift published it anonymously.",
        (0.52, 1.0, 0.6, 0.33, 0.33, 0.6),
        "continue",
        "continue",
        {"retrieval": 12.4, "generation": 3.1, "evaluation": 0.6, "coordination": 0.3},
    ),
    (
        "augment",
        ["year publish satirical essay Modest Proposal"],
        [3, 4],
        "Jonathan Swift published A Modest Proposal in 1729, in Dublin.",
        (0.86, 1.0, 0.9, 0.67, 0.33, 0.81),
        "accept",
        "accepted",
        {"retrieval": 9.8, "generation": 2.7, "evaluation": 0.5, "coordination": 0.2},
    ),
]


def report(values: tuple[float, ...]) -> QualityReport:
    c, s, f, a, h, q = values
    tier = "high" if q >= 0.7 else "medium" if q >= 0.5 else "low"
    return QualityReport(c, s, f, a, h, q, tier)


class FakeRetriever:
    name = "enwiki-sample"
    passage_count = 1482

    def search(self, query, k, exclude_ids=()):  # pragma: no cover - not used by the UI
        return [p for p in PASSAGES if p.doc_id not in exclude_ids][:k]

    def get(self, doc_id):
        return next((p for p in PASSAGES if p.doc_id == doc_id), None)


class FakeGenerator:
    name = "extractive"


class FakeEngine:
    """Scripted events; `gate`, when given, blocks after the first iteration starts."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.settings = Settings()
        self.retriever = FakeRetriever()
        self.generator = FakeGenerator()
        self.index_name = "enwiki-sample"
        self.notes: list[str] = []
        self.gate = gate

    def ask(self, question: str, settings: Settings | None = None) -> Iterator[Event]:
        question = check_question(question)
        s = settings or self.settings
        seen: list[str] = []
        records: list[IterationRecord] = []
        for t, (mode, queries, idx, answer, scores, decision, reason, timing) in enumerate(
            ITERATIONS, 1
        ):
            queries = queries or [question]
            yield IterationStarted(t, mode, queries)
            if self.gate is not None:
                self.gate.wait(10)
            yield StepStarted(t, "retrieve")
            new = [PASSAGES[i] for i in idx]
            seen += [p.doc_id for p in new]
            yield Retrieved(t, mode, queries, new, list(seen), timing["retrieval"])
            yield StepStarted(t, "generate")
            yield Generated(t, answer, timing["generation"])
            yield StepStarted(t, "evaluate")
            rep = report(scores)
            yield Scored(t, rep, timing["evaluation"])
            total = round(sum(timing.values()), 1)
            rec = IterationRecord(
                t,
                mode,
                queries,
                [p.doc_id for p in new],
                list(seen),
                answer,
                rep.scores(),
                decision,
                {**timing, "total": total},
                new_titles={p.doc_id: p.title for p in new},
            )
            records.append(rec)
            yield Decided(t, decision, reason, rec)
        last = records[-1]
        yield Final(
            Answer(
                question=question,
                answer=last.answer,
                status="accepted",
                stop_reason="accepted",
                tier="high",
                quality=last.scores["quality"],
                citations=[
                    {"doc_id": "1001-2", "title": "A Modest Proposal"},
                    {"doc_id": "1002-3", "title": "Jonathan Swift"},
                ],
                generator="extractive",
                index="enwiki-sample",
                iterations=records,
                timing_ms={"total": round(sum(r.timing_ms["total"] for r in records), 1)},
                loop=s.loop,
                profile=s.profile,
                passages=list(PASSAGES),
            )
        )
