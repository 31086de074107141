"""Machinery every loop shares: step timing, iteration records, the trace, citations,
bindings, disclaimers and the final Answer.

A loop creates one `Run` per question, wraps each step in `run.step(name)` (which times it
into retrieval / generation / evaluation; the rest of an iteration's wall time is
coordination), yields every event through `yield from run.out(event)` (which records it
in the trace and keeps the consumer's time out of the timings), and ends with
`run.finish(...)`, which builds the `Answer` and its `Final` event. Keeping this here
means the SCIM family and the critic loop report timings, traces and citations the same
way, and every front end reads one format.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from scim_edge import query_formulation as qf
from scim_edge import textutil as tu
from scim_edge.generation.support import support_sentence
from scim_edge.types import (
    INSUFFICIENT_EVIDENCE,
    Answer,
    Event,
    Final,
    IterationRecord,
    Passage,
)
from scim_edge.wording import percent

# Timing buckets of an iteration; "coordination" is whatever the loop itself spends.
STEP_BUCKETS = {
    "retrieve": "retrieval",
    "retrieval": "retrieval",
    "generate": "generation",
    "generation": "generation",
    "regenerate": "generation",
    "evaluate": "evaluation",
    "evaluation": "evaluation",
    "critique": "evaluation",
}

# What happened, not a second trust label: the confidence tier says how far to trust the
# answer ("Uncertain answer" beside "Medium confidence · 66%" said two things at once)
FORCE_ACCEPT_DISCLAIMER = (
    "Accepted because the loop stopped ({reason}) before {measure} reached θ ({theta}). "
    "Check it against the cited passages."
)
_STOP_WORDS = {"budget": "iteration budget spent"}  # the rest read as they are named
NO_EVIDENCE_DISCLAIMER = "No passage in the index supports an answer to this question."
REVIEW_NOTE = "Flagged for human review: the answer was force-accepted under the {profile} profile."
HALLUCINATION_WARNING = (
    "Possible hallucination: only {consistency:.0%} of the answer's words occur in the "
    "passages (threshold {threshold:.0%}){detail}."
)
MAX_CITATIONS = 5


def ms_since(t0: float) -> float:
    return (time.perf_counter() - t0) * 1000.0


@dataclass
class IterationClock:
    """Wall time of one iteration, split into the four reported buckets."""

    start: float = field(default_factory=time.perf_counter)
    spent: dict[str, float] = field(
        default_factory=lambda: {"retrieval": 0.0, "generation": 0.0, "evaluation": 0.0}
    )
    paused: float = 0.0  # ms the loop sat suspended while a front end handled its events

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        bucket = STEP_BUCKETS.get(name, name)
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.spent[bucket] = self.spent.get(bucket, 0.0) + ms_since(t0)

    def timing(self) -> dict[str, float]:
        total = ms_since(self.start) - self.paused
        out = {k: round(v, 3) for k, v in self.spent.items()}
        out["coordination"] = round(max(0.0, total - sum(self.spent.values())), 3)
        out["total"] = round(total, 3)
        return out


@dataclass
class Run:
    """The state of one question through a loop."""

    question: str
    loop: str
    settings: Any
    engine: Any
    bindings: dict[str, str] = field(default_factory=dict)
    passages: list[Passage] = field(default_factory=list)  # accumulated, in retrieval order
    records: list[IterationRecord] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    disclaimers: list[str] = field(default_factory=list)
    start: float = field(default_factory=time.perf_counter)
    clock: IterationClock | None = None
    paused_total: float = 0.0

    def __post_init__(self) -> None:
        # a generator standing in for another (outdated reader weights) says so every time
        warning = getattr(getattr(self.engine, "generator", None), "warning", None)
        if isinstance(warning, str) and warning:
            self.warnings.append(warning)

    # -- passages -----------------------------------------------------------------
    @property
    def seen_ids(self) -> set[str]:
        return {p.doc_id for p in self.passages}

    @property
    def doc_ids(self) -> list[str]:
        return [p.doc_id for p in self.passages]

    def add(self, new: Sequence[Passage]) -> list[Passage]:
        """Add passages not seen before; returns those actually added."""
        seen = self.seen_ids
        added = []
        for p in new:
            if p.doc_id not in seen:
                seen.add(p.doc_id)
                self.passages.append(p)
                added.append(p)
        return added

    # -- iterations and steps -----------------------------------------------------
    def begin_iteration(self) -> IterationClock:
        self.clock = IterationClock()
        return self.clock

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        if self.clock is None:
            self.begin_iteration()
        assert self.clock is not None
        with self.clock.step(name):
            yield

    def emit(self, event: Event) -> Event:
        """Record an event in the trace and hand it back for the loop to yield."""
        self.trace.append(event.to_dict())
        return event

    def out(self, event: Event) -> Iterator[Event]:
        """Record and yield an event (`yield from run.out(e)`), keeping the time the
        consumer spends on it (rendering, printing) out of the loop's own timings."""
        self.trace.append(event.to_dict())
        t0 = time.perf_counter()
        yield event
        waited = ms_since(t0)
        self.paused_total += waited
        if self.clock is not None:
            self.clock.paused += waited

    def record(
        self,
        t: int,
        mode: str,
        queries: Sequence[str],
        new: Sequence[Passage],
        answer: str,
        scores: dict[str, float],
        decision: str,
        verdict: dict[str, Any] | None = None,
        *,
        support: Sequence[dict[str, str]] = (),
        features: dict[str, float] | None = None,
    ) -> IterationRecord:
        timing = self.clock.timing() if self.clock else {}
        rec = IterationRecord(
            t=t,
            mode=mode,
            queries=list(queries),
            new_doc_ids=[p.doc_id for p in new],
            doc_ids=self.doc_ids,
            answer=answer,
            scores={k: round(float(v), 4) for k, v in scores.items()},
            decision=decision,
            timing_ms=timing,
            verdict=verdict,
            new_titles={p.doc_id: p.title for p in new},
            support=list(support),
            features=dict(features or {}),
        )
        self.records.append(rec)
        return rec

    # -- the end ------------------------------------------------------------------
    def finish(
        self,
        *,
        answer: str,
        status: str,
        stop_reason: str,
        quality: float,
        tier: str,
        cited: Sequence[Passage] | None = None,
        needs_review: bool = False,
        support: Sequence[dict[str, str]] = (),
        confidence: float | None = None,
    ) -> Final:
        if status == "insufficient_evidence":
            answer = INSUFFICIENT_EVIDENCE
        citations = (
            []
            if status == "insufficient_evidence"
            else citations_for(answer, cited if cited is not None else self.passages)
        )
        ans = Answer(
            question=self.question,
            answer=answer,
            status=status,  # type: ignore[arg-type]
            stop_reason=stop_reason,
            tier=tier,
            quality=float(quality),
            citations=citations,
            generator=getattr(self.engine.generator, "name", ""),
            index=getattr(self.engine, "index_name", ""),
            iterations=list(self.records),
            timing_ms={
                "total": round(ms_since(self.start) - self.paused_total, 3),
                **self.totals(),
            },  # fmt: skip
            loop=self.loop,
            profile=getattr(self.settings, "profile", "general"),
            disclaimers=list(self.disclaimers),
            warnings=list(self.warnings),
            needs_review=needs_review,
            bindings=dict(self.bindings),
            passages=list(self.passages),
            trace=self.trace,
            support=[] if status == "insufficient_evidence" else list(support),
            confidence=confidence,
        )
        return Final(ans)

    def totals(self) -> dict[str, float]:
        out = {"retrieval": 0.0, "generation": 0.0, "evaluation": 0.0, "coordination": 0.0}
        for r in self.records:
            for k in out:
                out[k] += float(r.timing_ms.get(k, 0.0))
        return {k: round(v, 3) for k, v in out.items()}


def retrieve_formulated(
    search: Any,
    formulation: qf.Formulation,
    question: str,
    k: int,
    seen: set[str],
    candidates: int,
) -> list[Passage]:
    """Up to k new passages for `formulation` through the shared pipeline: the bound
    retriever's candidates for each of its queries, the leads of the articles the question
    names joined, ordered by the formulation's scorer (`query_formulation.retrieve`); a
    bound reranker then orders them by fit to the question (`PassageSearch.retrieve_ranked`)."""
    ranked = functools.partial(qf.retrieve, formulation=formulation, exclude_ids=seen,
                               candidates=candidates, question=question)  # fmt: skip
    return search.retrieve_ranked(question, k, seen, ranked)


def as_read(answer: str, support: Sequence[dict[str, str]]) -> str:
    """The answer as a user reads it, short answer then the sentence that supports it:
    what SCIM's five dimensions score (a bare span has no sentence to be coherent in)."""
    if not support or not answer.strip():
        return answer
    sentence = support_sentence(support)
    if not sentence or sentence.strip() == answer.strip():
        return answer
    return f"{answer.rstrip('.')}. {sentence}"


def citations_for(answer: str, passages: Sequence[Passage]) -> list[dict[str, str]]:
    """The passages that support the answer: those sharing its content words, most first;
    when none does, the first passages the answer was generated from."""
    a_words = tu.content_set(answer) or tu.word_set(answer)
    scored = []
    for i, p in enumerate(passages):
        support = len(a_words & tu.word_set(p.text))
        if support:
            scored.append((-support, i, p))
    chosen = [p for _, _, p in sorted(scored, key=lambda x: (x[0], x[1]))][:MAX_CITATIONS]
    if not chosen:
        chosen = list(passages[:3])
    return [{"doc_id": p.doc_id, "title": p.title} for p in chosen]


def make_bindings(engine: Any, settings: Any, **slots: str) -> dict[str, str]:
    """Which retriever, generator, evaluator/critic, rewriter and reranker a loop bound."""
    retriever = engine.retriever
    out = {
        "retriever": str(getattr(retriever, "name", type(retriever).__name__)),
        "generator": str(getattr(engine.generator, "name", type(engine.generator).__name__)),
        "index": str(getattr(engine, "index_name", "")),
    }
    out.update(tu.text_tools())  # the sentence splitter and tagger the scores rest on
    out.update({k: str(v) for k, v in slots.items()})
    return out


def force_accept_disclaimer(reason: str, theta: float, learned: bool) -> str:
    """The note on an answer SCIM accepted without passing θ: why the loop stopped, and
    what it had compared with θ (the calibrated confidence, a probability, or the paper's
    Q)."""
    if learned:
        measure, bar = "its confidence", f"{percent(theta)}%"
    else:
        measure, bar = "its Q", f"{theta:.2f}"
    words = _STOP_WORDS.get(reason, reason.replace("_", " "))
    return FORCE_ACCEPT_DISCLAIMER.format(reason=words, measure=measure, theta=bar)


def hallucination_warning(consistency: float, threshold: float, unsupported: Sequence[str]) -> str:
    detail = f"; unsupported: {', '.join(unsupported[:8])}" if unsupported else ""
    return HALLUCINATION_WARNING.format(consistency=consistency, threshold=threshold, detail=detail)
