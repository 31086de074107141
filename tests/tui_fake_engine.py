"""A scripted engine for the TUI tests that need fixed data (snapshots).

It yields the same trace-event types, in the same order, as the real loops (SCIM and the
simrag critic loop), with fixed passages, scores, timings, support sentences and
confidences, so a screenshot of the app is identical on every run.
`tests/test_tui_fake_engine.py` checks that order against the real loops on the real
sample index, so the script cannot drift from what the loops do. Tests of behaviour use
the real engine; this one only pins what is drawn.

Scenarios:
- "answered": SCIM, continue then accept; high tier, confidence 0.87, one support sentence;
- "forced": SCIM, continue then force-accept at T_max; low tier, confidence 0.18, the
  forced-accept note and the hallucination warning;
- "insufficient": the simrag loop: the critic rejects for missing evidence, the follow-up
  search finds nothing new, and the loop stops safely;
- "crash": raises before its first event (a broken index file, say).
`confidence=False` leaves `Answer.confidence` None (the tier then comes from Q).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from scim_edge.engine import check_question
from scim_edge.settings import Settings
from scim_edge.types import (
    INSUFFICIENT_EVIDENCE,
    Answer,
    Bindings,
    Critiqued,
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
    Verdict,
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
        "1001-1",
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
SUPPORT = [
    {
        "sentence": "The essay was published in Dublin by S. Harding in 1729 and reprinted in "
        "London.",
        "doc_id": "1001-1",
        "title": "A Modest Proposal",
        "section": "Publication",
    }
]
TIMING = [
    {"retrieval": 12.4, "generation": 3.1, "evaluation": 0.6, "coordination": 0.3},
    {"retrieval": 9.8, "generation": 2.7, "evaluation": 0.5, "coordination": 0.2},
]

# (mode, queries (None: the question), new passage indexes, answer, scores, decision, reason)
SCRIPTS = {
    "answered": [
        ("initial", None, [0, 1, 2], "Jonathan Swift published it anonymously.",
         (0.52, 1.0, 0.6, 0.33, 0.33, 0.6), "continue", "continue"),
        ("augment", ["year publish satirical essay Modest Proposal"], [3, 4], "1729",
         (0.86, 1.0, 0.9, 0.67, 0.33, 0.81), "accept", "accepted"),
    ],
    "forced": [
        ("initial", None, [0, 2], "Anglo-Irish satirists.",
         (0.3, 0.5, 0.4, 0.33, 0.33, 0.38), "continue", "continue"),
        ("refine", ["Modest Proposal publication Dublin"], [4], "Dean of St Patrick's in 1713.",
         (0.4, 0.45, 0.5, 0.33, 0.5, 0.43), "force_accept", "budget"),
    ],
}  # fmt: skip


# The calibrated probability of each iteration's answer (the last is the answer's).
CONFIDENCE = {"answered": (0.41, 0.87), "forced": (0.12, 0.18)}


def report(values: tuple[float, ...]) -> QualityReport:
    c, s, f, a, h, q = values
    tier = "high" if q >= 0.7 else "medium" if q >= 0.5 else "low"
    return QualityReport(c, s, f, a, h, q, tier)


class FakeRetriever:
    name = "enwiki-sample"
    passage_count = 1482
    manifest = {"source": {"name": "enwiki-sample.xml.bz2", "lang": "en"}}

    def search(self, query, k, exclude_ids=()):  # pragma: no cover - not used by the UI
        return [p for p in PASSAGES if p.doc_id not in exclude_ids][:k]

    def get(self, doc_id):
        return next((p for p in PASSAGES if p.doc_id == doc_id), None)


class FakeGenerator:
    name = "extractive"


class FakeEngine:
    """Scripted events; `gate`, when given, blocks once the first generation starts."""

    def __init__(
        self,
        gate: threading.Event | None = None,
        scenario: str = "answered",
        confidence: bool = True,
    ) -> None:
        self.settings = Settings()
        self.retriever = FakeRetriever()
        self.generator = FakeGenerator()
        self.index_name = "enwiki-sample"
        self.notes: list[str] = []
        self.gate = gate
        self.scenario = scenario
        self.confidence = confidence

    def ask(self, question: str, settings: Settings | None = None) -> Iterator[Event]:
        question = check_question(question)
        s = settings or self.settings
        if self.scenario == "crash":
            raise OSError(2, "No such file or directory", "idx/meta.json")
        if self.scenario == "insufficient":
            yield from self._critic_loop(question, s)
            return
        yield from self._scim_loop(question, s)

    def _wait(self) -> None:
        """Hold until `gate` opens, or the worker running this is cancelled (app exit)."""
        if self.gate is None:
            return
        from textual.worker import NoActiveWorker, get_current_worker

        try:
            worker = get_current_worker()
        except NoActiveWorker:
            worker = None
        for _ in range(200):
            if self.gate.wait(0.05) or (worker is not None and worker.is_cancelled):
                return

    def _scim_loop(self, question: str, s: Settings) -> Iterator[Event]:
        seen: list[str] = []
        records: list[IterationRecord] = []
        script = SCRIPTS[self.scenario]
        # Q decides, as the paper has it: the cards show Q against θ
        yield Bindings({"retriever": "bm25", "generator": "extractive", "quality": "paper"})
        for t, (mode, queries, idx, answer, scores, decision, reason) in enumerate(script, 1):
            timing = TIMING[t - 1]
            queries = queries or [question]
            yield IterationStarted(t, mode, queries)
            yield StepStarted(t, "retrieve")
            new = [PASSAGES[i] for i in idx]
            seen += [p.doc_id for p in new]
            yield Retrieved(t, mode, queries, new, list(seen), timing["retrieval"])
            yield StepStarted(t, "generate")
            if t == 1:
                self._wait()
            yield Generated(t, answer, timing["generation"])
            yield StepStarted(t, "evaluate")
            rep = report(scores)
            yield Scored(t, rep, timing["evaluation"])
            total = round(sum(timing.values()), 1)
            rec = IterationRecord(
                t, mode, queries, [p.doc_id for p in new], list(seen), answer, rep.scores(),
                decision, {**timing, "total": total},
                new_titles={p.doc_id: p.title for p in new},
            )  # fmt: skip
            if self.confidence:
                rec.confidence = CONFIDENCE[self.scenario][t - 1]
            records.append(rec)
            yield Decided(t, decision, reason, rec)
        last = records[-1]
        forced = self.scenario == "forced"
        confidence = CONFIDENCE[self.scenario][-1] if self.confidence else None
        yield Final(
            Answer(
                question=question,
                answer=last.answer,
                status="force_accepted" if forced else "accepted",
                stop_reason="budget" if forced else "accepted",
                tier="low" if forced else "high",
                quality=last.scores["quality"],
                citations=[
                    {"doc_id": p.doc_id, "title": p.title}
                    for p in ([PASSAGES[4]] if forced else [PASSAGES[3], PASSAGES[1]])
                ],
                generator="extractive",
                index="enwiki-sample",
                iterations=records,
                timing_ms={"total": round(sum(r.timing_ms["total"] for r in records), 1)},
                loop=s.loop,
                profile=s.profile,
                disclaimers=[
                    "Accepted because the loop stopped (iteration budget spent) before its "
                    "confidence reached θ (70%). Check it against the cited passages."
                ]
                if forced
                else [],
                warnings=[
                    "Possible hallucination: only 45% of the answer's words occur in the "
                    "passages (threshold 60%): unsupported: dean."
                ]
                if forced
                else [],
                passages=list(PASSAGES),
                support=[] if forced else list(SUPPORT),
                confidence=confidence,
            )
        )

    def _critic_loop(self, question: str, s: Settings) -> Iterator[Event]:
        """As the simrag loop runs: reject for missing evidence, a follow-up search that
        finds nothing new, the safe stop."""
        yield Bindings({"retriever": "bm25", "critic": "heuristic", "generator": "extractive"})
        yield IterationStarted(1, "critic-1", [question])
        yield StepStarted(1, "retrieve")
        new = [PASSAGES[0], PASSAGES[2]]
        yield Retrieved(1, "critic-1", [question], new, [p.doc_id for p in new], 11.0)
        self._wait()
        yield StepStarted(1, "generate")
        yield Generated(1, "Jonathan Swift", 2.9)
        yield StepStarted(1, "critique")
        verdict = Verdict(
            accept=False,
            issues=["no evidence for: horses (achilles, immortal)"],
            reason="no sentence stating the answer supports: horses; consistency 0.40 < 0.50",
        )
        yield Critiqued(1, verdict, 0.8)
        rep = report((0.3, 0.4, 0.5, 0.33, 0.33, 0.37))
        yield Scored(1, rep, 0.4)
        follow = ["horses (achilles, immortal)"]
        verdict_d = {**verdict.to_dict(), "followup": {"rule": "issues", "queries": follow}}
        timing = {"retrieval": 11.0, "generation": 2.9, "evaluation": 1.2, "coordination": 0.3}
        rec1 = IterationRecord(
            1, "critic-1", [question], [p.doc_id for p in new], [p.doc_id for p in new],
            "Jonathan Swift", rep.scores(), "reject", {**timing, "total": 15.4}, verdict_d,
            new_titles={p.doc_id: p.title for p in new},
        )  # fmt: skip
        yield Decided(
            1,
            "reject",
            "the critic rejects: no sentence stating the answer supports: horses; "
            "consistency 0.40 < 0.50; no evidence for: horses (achilles, immortal); "
            "next: issues queries",
            rec1,
        )
        yield IterationStarted(2, "critic-2", follow)
        yield StepStarted(2, "retrieve")
        yield Retrieved(2, "critic-2", follow, [], [p.doc_id for p in new], 4.2)
        t2 = {"retrieval": 4.2, "generation": 0.0, "evaluation": 0.0, "coordination": 0.1}
        rec2 = IterationRecord(
            2, "critic-2", follow, [], [p.doc_id for p in new], "Jonathan Swift", {}, "stop",
            {**t2, "total": 4.3}, verdict.to_dict(),
        )  # fmt: skip
        yield Decided(
            2, "stop", "the follow-up retrieval after a rejection added no new passage", rec2
        )
        yield Final(
            Answer(
                question=question,
                answer=INSUFFICIENT_EVIDENCE,
                status="insufficient_evidence",
                stop_reason="no_new_evidence",
                tier="low",
                quality=0.0,
                citations=[{"doc_id": p.doc_id, "title": p.title} for p in new],
                generator="extractive",
                index="enwiki-sample",
                iterations=[rec1, rec2],
                timing_ms={"total": 19.7},
                loop="simrag",
                profile=s.profile,
                passages=new,
                confidence=0.05 if self.confidence else None,
            )
        )
