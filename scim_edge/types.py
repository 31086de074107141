"""The data that flows between retriever, generator, evaluator, critic and loops.

These are the interfaces every front end (CLI, TUI, eval harness) reads. Keep them
plain dataclasses with `to_dict()` so traces serialise to JSON without adapters.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

DIMENSIONS = ("completeness", "consistency", "confidence", "factuality", "coherence")
INSUFFICIENT_EVIDENCE = "Insufficient evidence to answer reliably."

Status = Literal["accepted", "force_accepted", "insufficient_evidence"]
Decision = Literal["accept", "continue", "force_accept", "reject", "stop"]


@dataclass(frozen=True)
class Passage:
    doc_id: str  # "<page_id>-<n>"
    title: str
    section: str
    text: str
    score: float = 0.0
    page_id: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Generation:
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    ms: float = 0.0
    generator: str = ""
    # The sentence(s) that back the short answer: {sentence, doc_id, title, section}.
    support: list[dict[str, str]] = field(default_factory=list)
    # Reader signals the trained Critic reads (span score, margin, type agreement, ...).
    features: dict[str, float] = field(default_factory=dict)


@dataclass
class QualityReport:
    completeness: float
    consistency: float
    confidence: float
    factuality: float
    coherence: float
    quality: float
    tier: str  # high | medium | low
    missing_keywords: list[str] = field(default_factory=list)
    unsupported_words: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    sentences: list[str] = field(default_factory=list)

    def scores(self) -> dict[str, float]:
        return {d: round(getattr(self, d), 4) for d in (*DIMENSIONS, "quality")}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Verdict:
    accept: bool
    issues: list[str] = field(default_factory=list)
    form_only: bool = False
    reason: str = ""
    raw: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class IterationRecord:
    """One iteration of a loop, as reported in `ask --json` and shown by the TUI."""

    t: int
    mode: str  # initial | augment | refine | critic-N | ...
    queries: list[str]
    new_doc_ids: list[str]
    doc_ids: list[str]
    answer: str
    scores: dict[str, float]
    decision: str
    timing_ms: dict[str, float]
    verdict: dict[str, Any] | None = None
    new_titles: dict[str, str] = field(default_factory=dict)
    # The calibrated probability that this iteration's answer is right (None: no Critic).
    confidence: float | None = None
    support: list[dict[str, str]] = field(default_factory=list)
    features: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["verdict"] is None:
            d.pop("verdict")
        return d


@dataclass
class Answer:
    question: str
    answer: str
    status: Status
    stop_reason: str
    tier: str
    quality: float
    citations: list[dict[str, str]]
    generator: str
    index: str
    iterations: list[IterationRecord]
    timing_ms: dict[str, float]
    loop: str = "scim"
    profile: str = "general"
    disclaimers: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    needs_review: bool = False
    bindings: dict[str, str] = field(default_factory=dict)
    passages: list[Passage] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    # Natural Questions' long answer: the sentence(s) backing the short `answer`, each
    # {sentence, doc_id, title, section}.
    support: list[dict[str, str]] = field(default_factory=list)
    # The estimated probability that `answer` is right, from the calibrated Critic; the
    # user-facing `tier` is derived from it when present (Q stays in `quality`).
    confidence: float | None = None

    def returned_round(self) -> IterationRecord | None:
        """The round whose answer the loop returned (SCIM may return an earlier one than
        its last, and rounds may give the same text with other scores: the returned one
        carries the answer's Q); None for a safe stop, whose rounds' answers were not
        given."""
        if self.status == "insufficient_evidence":
            return None
        same = [it for it in self.iterations if it.answer.strip() == self.answer.strip()]
        scored = [it for it in same if abs(it.scores.get("quality", -1.0) - self.quality) < 5e-4]
        return (scored or same or [None])[-1]

    def to_dict(self, *, with_passages: bool = False) -> dict[str, Any]:
        d = {
            "question": self.question,
            "answer": self.answer,
            "support": self.support,
            "confidence": None if self.confidence is None else round(self.confidence, 4),
            "status": self.status,
            "stop_reason": self.stop_reason,
            "tier": self.tier,
            "quality": round(self.quality, 4),
            "citations": self.citations,
            "generator": self.generator,
            "index": self.index,
            "loop": self.loop,
            "profile": self.profile,
            "timing_ms": self.timing_ms,
            "disclaimers": self.disclaimers,
            "warnings": self.warnings,
            "needs_review": self.needs_review,
            "bindings": self.bindings,
            "iterations": [it.to_dict() for it in self.iterations],
            "trace": self.trace,
        }
        if with_passages:
            d["passages"] = [p.to_dict() for p in self.passages]
        return d


# ---- trace events -------------------------------------------------------------------
# A controller yields these as they happen. The last one is always `Final`.


@dataclass
class Event:
    kind: str = field(init=False, default="event")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Bindings(Event):
    """Which retriever, generator, critic, rewriter and reranker the run binds, and for the
    SCIM loops what Q is (`quality`: the paper's score or the Critic's confidence), so a
    front end can say what a round's decision compared with θ before the answer comes."""

    bindings: dict[str, str] = field(default_factory=dict)
    kind: str = field(init=False, default="bindings")


@dataclass
class IterationStarted(Event):
    t: int
    mode: str
    queries: list[str]
    kind: str = field(init=False, default="iteration_started")


@dataclass
class StepStarted(Event):
    """A step (retrieve | generate | evaluate | critique) is about to run."""

    t: int
    step: str
    kind: str = field(init=False, default="step_started")


@dataclass
class Retrieved(Event):
    t: int
    mode: str
    queries: list[str]
    new_passages: list[Passage]
    doc_ids: list[str]
    ms: float
    kind: str = field(init=False, default="retrieved")


@dataclass
class Generated(Event):
    t: int
    answer: str
    ms: float
    input_tokens: int = 0
    output_tokens: int = 0
    kind: str = field(init=False, default="generated")


@dataclass
class Scored(Event):
    t: int
    report: QualityReport
    ms: float
    kind: str = field(init=False, default="scored")


@dataclass
class Critiqued(Event):
    t: int
    verdict: Verdict
    ms: float
    kind: str = field(init=False, default="critiqued")


@dataclass
class Regenerated(Event):
    t: int
    original: str
    guidance: str
    revised: str
    verdict: Verdict
    kind: str = field(init=False, default="regeneration")


@dataclass
class Decided(Event):
    t: int
    decision: str
    reason: str
    record: IterationRecord
    kind: str = field(init=False, default="decided")


@dataclass
class Final(Event):
    answer: Answer
    kind: str = field(init=False, default="final")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "answer": self.answer.to_dict()}
