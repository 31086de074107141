"""Trust figures from per-question records: calibration of confidence and Q, Q–F1
correlation, and the Critic's accept-correct / reject-incorrect rates per judged round."""

from __future__ import annotations

import pytest

from scim_edge.evaluation.harness import judged_rounds
from scim_edge.evaluation.qa_io import QAItem
from scim_edge.evaluation.report import tier_lines
from scim_edge.evaluation.trust import calibration, critic_rates, q_f1_correlation, tiers
from scim_edge.types import Answer, IterationRecord


def _rec(em: float, quality: float, confidence: float | None, rounds=(), f1=None) -> dict:
    return {
        "status": "accepted",
        "answerable": True,
        "em": em,
        "f1": em if f1 is None else f1,
        "quality": quality,
        "confidence": confidence,
        "rounds": list(rounds),
    }


def test_confidence_that_separates_and_q_that_inverts() -> None:
    records = [
        _rec(1.0, 0.2, 0.9),
        _rec(1.0, 0.3, 0.8),
        _rec(0.0, 0.9, 0.1),
        _rec(0.0, 0.8, 0.3),
    ]
    cal = calibration(records)
    assert (cal["confidence"]["em"]["auroc"], cal["quality"]["em"]["auroc"]) == (1.0, 0.0)


def test_each_tier_counts_its_answers_and_how_many_were_right() -> None:
    records = [_rec(1.0, 0.5, 0.9), _rec(0.0, 0.5, 0.75), _rec(1.0, 0.5, 0.5),
               _rec(0.0, 0.5, 0.1), {**_rec(0.0, 0.0, 0.9), "abstained": True}]  # fmt: skip
    t = tiers(records)
    assert [(t[k]["n"], t[k]["right"]) for k in ("high", "medium", "low")] == [
        (2, 0.5), (1, 1.0), (1, 0.0)]  # fmt: skip


def test_the_report_shows_the_tiers_users_see() -> None:
    lines = tier_lines({"scim": {"tiers": tiers([_rec(1.0, 0.5, 0.9), _rec(0.0, 0.5, 0.2)])}})
    assert any("| 1 | 100.0% | 0 | – | 1 | 0.0% |" in line for line in lines)


def test_records_without_confidence_are_left_out_of_its_figures() -> None:
    records = [_rec(1.0, 0.6, None), _rec(0.0, 0.4, 0.2), _rec(1.0, 0.7, 0.7)]
    assert (calibration(records)["confidence"]["n"], calibration(records)["quality"]["n"]) == (2, 3)


def test_abstentions_are_left_out_of_calibration() -> None:
    # the abstention's Q of 0 would otherwise count as a low score on a wrong answer
    records = [
        _rec(1.0, 0.4, 0.6),
        _rec(0.0, 0.6, 0.4),
        {**_rec(0.0, 0.0, None), "abstained": True},
    ]
    assert calibration(records)["quality"]["em"]["auroc"] == 0.0


def test_f1_variant_counts_f1_of_one_half_as_correct() -> None:
    records = [_rec(0.0, 0.9, 0.9, f1=0.5), _rec(0.0, 0.1, 0.1, f1=0.2)]
    cal = calibration(records)["confidence"]
    assert (cal["em"]["auroc"], cal["f1"]["auroc"]) == (None, 1.0)


def test_q_f1_correlation_over_answerable_questions_only() -> None:
    records = [_rec(1.0, 0.9, None), _rec(0.0, 0.1, None), _rec(0.5, 0.5, None, f1=0.5)]
    records.append({**_rec(1.0, 0.0, None), "answerable": False})
    corr = q_f1_correlation(records)
    assert (corr["n"], corr["pearson"]) == (3, pytest.approx(1.0))


def test_critic_rates_per_round() -> None:
    rounds_a = [
        {"t": 1, "accept": False, "correct": False},
        {"t": 2, "accept": True, "correct": True},
    ]
    rounds_b = [
        {"t": 1, "accept": False, "correct": True},  # a right answer rejected
        {"t": 2, "accept": True, "correct": False},  # a wrong answer accepted
        {"t": 3, "accept": True, "correct": True},
    ]
    rates = critic_rates([_rec(1, 0.5, None, rounds_a), _rec(1, 0.5, None, rounds_b)])
    assert (rates["accept_correct"], rates["reject_incorrect"]) == (pytest.approx(2 / 3), 0.5)
    assert rates["by_round"]["1"]["reject_incorrect"] == 0.5


def test_no_rounds_means_no_critic_figures() -> None:
    assert critic_rates([_rec(1.0, 0.5, 0.5)]) is None


def _it(t: int, answer: str, accept: bool | None, decision: str) -> IterationRecord:
    return IterationRecord(
        t=t,
        mode=f"critic-{t}",
        queries=[],
        new_doc_ids=[],
        doc_ids=[],
        answer=answer,
        scores={"quality": 0.5},
        decision=decision,
        timing_ms={},
        verdict=None if accept is None else {"accept": accept},
    )


def test_judged_rounds_skip_a_round_that_only_repeats_the_last_verdict() -> None:
    answer = Answer(
        question="Who?",
        answer="Insufficient evidence to answer reliably.",
        status="insufficient_evidence",
        stop_reason="no_new_evidence",
        tier="low",
        quality=0.0,
        citations=[],
        generator="g",
        index="i",
        iterations=[
            _it(1, "Peleus", False, "reject"),
            _it(2, "Thetis", False, "reject"),
            _it(3, "Thetis", False, "stop"),  # nothing new retrieved: no new judgement
        ],
        timing_ms={},
        trace=[{"kind": "critiqued", "t": 1}, {"kind": "critiqued", "t": 2}],
    )
    rounds = judged_rounds(QAItem("q", "Who?", ("Thetis",)), answer)
    assert rounds == [
        {"t": 1, "accept": False, "correct": False},
        {"t": 2, "accept": False, "correct": True},
    ]


def test_record_carries_the_answers_confidence() -> None:
    from scim_edge.evaluation.harness import Run, make_record
    from scim_edge.settings import Settings

    run = Run("scim", "scim", Settings(loop="scim"))
    rec = make_record(run, QAItem("q", "Who?", ("Thetis",)), _shown("high", 0.4), 1.0)
    assert rec["confidence"] == 0.83
    assert rec["quality"] == 0.4
    assert rec["em"] == 1.0


def _shown(tier: str, quality: float) -> Answer:
    return Answer(
        question="Who?",
        answer="Thetis",
        status="accepted",
        stop_reason="accepted",
        tier=tier,
        quality=quality,
        citations=[],
        generator="g",
        index="i",
        iterations=[_it(1, "Thetis", None, "accept")],
        timing_ms={},
        confidence=0.83,
    )


def test_record_keeps_the_tier_the_user_was_shown() -> None:
    from scim_edge.evaluation.harness import Run, make_record
    from scim_edge.settings import Settings

    run = Run("scim", "scim", Settings(loop="scim"))
    rec = make_record(run, QAItem("q", "Who?", ("Thetis",)), _shown("high", 0.4), 1.0)
    assert rec["tier"] == "high"


def test_record_keeps_the_tier_of_q_apart() -> None:
    from scim_edge.evaluation.harness import Run, make_record
    from scim_edge.settings import Settings

    run = Run("scim", "scim", Settings(loop="scim"))
    rec = make_record(run, QAItem("q", "Who?", ("Thetis",)), _shown("high", 0.4), 1.0)
    assert rec["quality_tier"] == "low"
