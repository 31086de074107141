"""Oracle systems: upper bounds that know the gold answers (SIM-RAG §4.6).

An oracle replaces one decision of a loop with the truth, so the gap between a system and
its oracle is what a perfect judge would add on the same retrieval and reader:

- `simrag-oracle`: the critic loop with an `OracleCritic`, which accepts exactly the
  answers that are correct (exact match against a gold alias, after SQuAD normalisation)
  and rejects every other one, so the loop retrieves again or stops with the abstention
  sentence. On an unanswerable question nothing is correct except the abstention, which
  the loop never approves, so the oracle loop abstains there.
- `scim-oracle`: SCIM with an `OracleEvaluator`, whose Q is 1.0 for a correct answer and
  0.0 otherwise (the five dimensions stay the real ones), so Algorithm 1 accepts exactly
  the correct answers and otherwise runs to its budget.

These read gold answers and are never a product setting: the harness binds them into
`engine.slots` (the critic slot simrag reads, the evaluator slot SCIM reads) for one
question at a time, and the report labels them as using gold answers. The oracle refuses
to judge any other question than the one whose gold answers it holds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from scim_edge.evaluation import metrics
from scim_edge.types import Passage, QualityReport, Verdict

# system name -> (loop it runs, engine.slots field the oracle fills)
ORACLE_SYSTEMS: dict[str, tuple[str, str]] = {
    "simrag-oracle": ("simrag", "critic"),
    "scim-oracle": ("scim", "evaluator"),
}
ORACLE_NOTE = "uses gold answers: an upper bound, not a system a user can run"


def is_correct(answer: str, golds: Sequence[str], status: str | None = None) -> bool:
    """Exact match against a gold alias, as the EM column scores it (an abstention is
    correct only on an unanswerable question)."""
    abstained = metrics.is_abstention(answer, status)
    return metrics.exact_match(answer, golds, abstained=abstained) == 1.0


class _Gold:
    """The one question an oracle may judge, and its gold answers."""

    def __init__(self) -> None:
        self.question: str | None = None
        self.answers: tuple[str, ...] = ()

    def expect(self, question: str, answers: Sequence[str]) -> None:
        self.question = question
        self.answers = tuple(answers)

    def correct(self, question: str, answer: str) -> bool:
        if self.question is None or question != self.question:
            raise ValueError("the oracle holds no gold answers for this question")
        return is_correct(answer, self.answers)


class OracleCritic:
    """A Critic that accepts exactly the correct answers. A rejection names no missing
    evidence (the oracle knows none), so the loop's follow-up query is the question."""

    name = "oracle (gold answers)"

    def __init__(self) -> None:
        self.gold = _Gold()

    def judge(self, question: str, answer: str, passages: Sequence[Passage]) -> Verdict:
        if self.gold.correct(question, answer):
            return Verdict(accept=True, raw="oracle: a gold answer")
        return Verdict(accept=False, raw="oracle: not a gold answer")


class OracleEvaluator:
    """SCIM's evaluator with Q replaced by correctness: 1.0 when the answer is a gold
    answer, else 0.0. The five dimensions, missing keywords and the rest come from the
    real evaluator, so SCIM's augment/refine choice is unchanged."""

    name = "oracle (gold answers)"
    # Correctness is judged on the short answer, not on the answer-plus-support text the
    # real evaluator scores.
    scores_short_answer = True
    # Its Q, not the Critic's confidence, is what SCIM compares with θ.
    decides_acceptance = True

    def __init__(self, real: Any) -> None:
        self.real = real
        self.gold = _Gold()

    def score(self, question: str, answer: str, passages: Any) -> QualityReport:
        report = self.real.score(question, answer, passages)
        q = 1.0 if self.gold.correct(question, answer) else 0.0
        return dataclasses.replace(report, quality=q, tier="high" if q else "low")

    def __getattr__(self, attr: str) -> Any:
        # Anything else the loop asks of its evaluator is the real one's.
        return getattr(self.real, attr)


def make_oracle(slot: str, settings: Any) -> OracleCritic | OracleEvaluator:
    if slot == "critic":
        return OracleCritic()
    if slot == "evaluator":
        from scim_edge.quality import Evaluator

        return OracleEvaluator(Evaluator(settings))
    raise ValueError(f"unknown oracle slot '{slot}'")


@contextmanager
def bound(
    engine: Any, slot: str, oracle: Any, question: str, answers: Sequence[str]
) -> Iterator[None]:
    """`oracle` in `engine.slots.<slot>` for one question, the slot restored after."""
    slots = getattr(engine, "slots", None)
    if slots is None or not hasattr(slots, slot):
        raise ValueError(f"this engine has no '{slot}' slot to bind an oracle into")
    oracle.gold.expect(question, answers)
    previous = getattr(slots, slot)
    setattr(slots, slot, oracle)
    try:
        yield
    finally:
        setattr(slots, slot, previous)
