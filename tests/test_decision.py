"""Algorithm 1 branch by branch, through the pure policy and through the real SCIM loop."""

from __future__ import annotations

import pytest
from scim_fakes import CountingGenerator, ScriptedEvaluator, make_engine, report

from scim_edge.loops.scim import algorithm1, make_scim_family_loop, next_mode
from scim_edge.settings import Settings, load_settings
from scim_edge.types import (
    INSUFFICIENT_EVIDENCE,
    Bindings,
    Decided,
    Final,
    Generated,
    IterationStarted,
    Retrieved,
    Scored,
    StepStarted,
)

POLICY = {"theta": 0.70, "t_max": 3, "delta": 0.05}
QUESTION = "Who shot Abraham Lincoln?"


def test_accept_when_q_reaches_theta():
    assert algorithm1(1, 0.70, None, **POLICY).decision == "accept"
    assert algorithm1(2, 0.95, 0.3, **POLICY).reason == "accepted"


def test_force_accept_on_budget():
    d = algorithm1(3, 0.60, 0.55, **POLICY)
    assert (d.decision, d.reason, d.revert) == ("force_accept", "budget", False)


def test_force_accept_on_decline_reverts():
    d = algorithm1(2, 0.55, 0.60, **POLICY)  # exactly delta lower
    assert (d.decision, d.reason, d.revert) == ("force_accept", "quality_declined", True)
    assert algorithm1(2, 0.56, 0.60, **POLICY).decision == "continue"


def test_continue_below_theta():
    assert algorithm1(1, 0.40, None, **POLICY).decision == "continue"
    assert algorithm1(2, 0.62, 0.60, **POLICY).decision == "continue"


def test_decline_checked_before_budget():
    # a decline in the last iteration still returns the better, earlier answer
    assert algorithm1(3, 0.40, 0.60, **POLICY).reason == "quality_declined"


def test_decline_at_the_budget_reverts():
    assert algorithm1(3, 0.40, 0.60, **POLICY).revert


def test_budget_without_a_decline():
    assert algorithm1(3, 0.58, 0.60, **POLICY).reason == "budget"


def test_fast_path_only_at_t1():
    assert algorithm1(1, 0.76, None, theta=0.8, t_max=3, delta=0.05, fast_path=0.75).reason == (
        "fast_path"
    )
    assert algorithm1(2, 0.76, 0.5, theta=0.8, t_max=3, delta=0.05, fast_path=0.75).decision == (
        "continue"
    )


def test_next_mode_rules():
    s = Settings()
    assert next_mode(report(0.5, completeness=0.6), s) == "augment"
    assert next_mode(report(0.5, completeness=0.8, consistency=0.5), s) == "refine"
    assert next_mode(report(0.5, completeness=0.8, consistency=0.9, factuality=0.5), s) == "refine"
    assert next_mode(report(0.5, completeness=0.8, consistency=0.9, factuality=0.9), s) == "augment"


def run_loop(
    name: str, qualities: list[float], settings: Settings | None = None, passages=None, **dims
):
    s = settings or Settings(model="extractive")
    engine = make_engine(s, passages=passages, generator=CountingGenerator())
    loop = make_scim_family_loop(name, s, engine)
    loop.evaluator = ScriptedEvaluator([report(q, **dims) for q in qualities])
    events = list(loop.run(QUESTION))
    assert isinstance(events[-1], Final)
    return events, events[-1].answer, engine


def test_loop_accepts_at_t2():
    events, ans, _ = run_loop("scim", [0.5, 0.8])
    assert (ans.status, ans.stop_reason, ans.answer) == ("accepted", "accepted", "answer 2")
    assert [it.decision for it in ans.iterations] == ["continue", "accept"]
    assert ans.disclaimers == []
    kinds = [type(e) for e in events]
    assert kinds[:9] == [Bindings, IterationStarted, StepStarted, Retrieved, StepStarted,
                         Generated, StepStarted, Scored, Decided]  # fmt: skip
    assert events[0].bindings["quality"] in ("paper", "learned")  # what θ is compared with


def test_loop_budget_force_accepts_last_answer_with_disclaimer():
    _, ans, _ = run_loop("scim", [0.5, 0.52, 0.55], passages=_three_rounds())
    assert (ans.status, ans.stop_reason, ans.answer) == ("force_accepted", "budget", "answer 3")
    assert [it.decision for it in ans.iterations] == ["continue", "continue", "force_accept"]
    assert ans.disclaimers and "iteration budget spent" in ans.disclaimers[0]


def test_a_forced_accept_names_what_the_loop_compared_with_theta():
    _, ans, _ = run_loop("scim", [0.5, 0.52, 0.55], passages=_three_rounds())
    compared = "its confidence" if ans.bindings.get("quality") == "learned" else "its Q"
    assert f"before {compared} reached θ" in ans.disclaimers[0]


def test_a_forced_accept_gives_no_trust_label_of_its_own():
    # the confidence tier is the trust a user reads; the note says what happened
    _, ans, _ = run_loop("scim", [0.5, 0.52, 0.55], passages=_three_rounds())
    assert "Uncertain" not in ans.disclaimers[0]


def test_the_forced_accept_note_gives_theta_as_a_probability_when_confidence_decides():
    from scim_edge.loops.base import force_accept_disclaimer

    note = force_accept_disclaimer("no_new_evidence", 0.7, learned=True)
    assert "(no new evidence) before its confidence reached θ (70%)" in note


def test_the_forced_accept_note_gives_theta_as_a_score_when_q_decides():
    from scim_edge.loops.base import force_accept_disclaimer

    assert "before its Q reached θ (0.70)" in force_accept_disclaimer("budget", 0.7, False)


def _three_rounds():
    """Enough passages about Abraham Lincoln for three rounds."""
    from scim_fakes import PASSAGES

    from scim_edge.types import Passage

    more = Passage("7-0", "Ford's Theatre", "", "Abraham Lincoln was shot in its box in 1865.")
    return [*PASSAGES, more]


def test_loop_decline_returns_previous_answer():
    _, ans, _ = run_loop("scim", [0.6, 0.5])
    assert (ans.status, ans.stop_reason) == ("force_accepted", "quality_declined")
    assert ans.answer == "answer 1"
    assert ans.quality == pytest.approx(0.6)
    assert ans.iterations[-1].answer == "answer 2"  # the trace keeps what was rejected
    assert ans.iterations[-1].decision == "force_accept"


def test_loop_fast_path():
    s = Settings(model="extractive", fast_path=True, theta=0.9)
    _, ans, _ = run_loop("scim", [0.8], s)
    assert (ans.status, ans.stop_reason, len(ans.iterations)) == ("accepted", "fast_path", 1)


def test_max_iterations_setting_is_the_budget():
    s = Settings(model="extractive", t_max=2)
    _, ans, _ = run_loop("scim", [0.3, 0.31, 0.32], s)
    assert (len(ans.iterations), ans.stop_reason) == (2, "budget")


def test_iterations_add_k1_then_k2_new_passages_never_repeated():
    _, ans, engine = run_loop("scim", [0.3, 0.31, 0.32], completeness=0.2)
    its = ans.iterations
    assert len(its[0].new_doc_ids) == 3
    assert [it.mode for it in its] == ["initial", "augment", "augment"]
    all_new = [d for it in its for d in it.new_doc_ids]
    assert len(all_new) == len(set(all_new))
    assert its[-1].doc_ids == all_new
    for it in its[1:]:
        assert len(it.new_doc_ids) <= 2
    # every search after the first excluded every id seen so far
    searched_excludes = [ex for _, _, ex in engine.retriever.queries]
    assert searched_excludes[0] == frozenset()
    assert set(its[0].new_doc_ids) <= searched_excludes[1]


def test_refine_mode_when_unsupported():
    _, ans, _ = run_loop("scim", [0.3, 0.31, 0.32], completeness=0.9, consistency=0.2)
    assert [it.mode for it in ans.iterations] == ["initial", "refine", "refine"]


def test_no_new_evidence_stops_with_the_same_answer():
    s = Settings(model="extractive")
    from scim_fakes import PASSAGES

    engine = make_engine(s, passages=PASSAGES[:3], generator=CountingGenerator())
    loop = make_scim_family_loop("scim", s, engine)
    loop.evaluator = ScriptedEvaluator([report(0.4)])
    ans = list(loop.run(QUESTION))[-1].answer
    assert ans.stop_reason == "no_new_evidence"
    assert ans.status == "force_accepted"
    assert ans.answer == "answer 1"


def test_question_matching_nothing_is_insufficient_evidence():
    s = Settings(model="extractive")
    engine = make_engine(s)
    ans = engine.answer("zxqv blorptastic frumious?")
    assert ans.status == "insufficient_evidence"
    assert ans.answer == INSUFFICIENT_EVIDENCE
    assert ans.stop_reason == "no_evidence"
    assert ans.citations == []


@pytest.mark.parametrize(
    ("loop", "iterations", "reason"),
    [("standard", 1, "single_pass"), ("fixed-1", 1, "fixed_iterations"),
     ("fixed-2", 2, "fixed_iterations"), ("fixed-3", 3, "fixed_iterations"),
     ("iter-retgen", 3, "fixed_iterations")],
)  # fmt: skip
def test_baselines_ignore_quality(loop, iterations, reason):
    _, ans, _ = run_loop(loop, [0.99, 0.1, 0.1])
    assert (len(ans.iterations), ans.stop_reason, ans.status) == (iterations, reason, "accepted")
    assert ans.answer == f"answer {iterations}"


def test_iter_retgen_queries_question_plus_previous_answer():
    _, ans, _ = run_loop("iter-retgen", [0.5])
    assert ans.iterations[1].queries == [f"{QUESTION} answer 1"]
    assert ans.iterations[1].mode == "question+answer"
    assert len(ans.iterations[0].new_doc_ids) == 3


def test_single_dim_uses_relevance():
    s = Settings(model="extractive")
    engine = make_engine(s)
    ans = engine.answer(QUESTION, s.replace(loop="single-dim"))
    assert ans.bindings["evaluator"] == "single-dim relevance"
    it = ans.iterations[0]
    assert len({it.scores[k] for k in it.scores}) == 1  # one score stands in for all


def test_high_stakes_warns_and_flags_for_review():
    s = load_settings({"profile": "high-stakes", "model": "extractive"}, use_config=False)
    _, ans, _ = run_loop("scim", [0.5, 0.52, 0.55], s, consistency=0.4)
    assert ans.needs_review is True
    assert any("hallucination" in w.lower() for w in ans.warnings)


def test_efficiency_profile_caches_answers():
    s = load_settings({"profile": "efficiency", "model": "extractive"}, use_config=False)
    engine = make_engine(s)
    first = engine.answer(QUESTION)
    assert len(first.iterations) <= 2
    n_search = len(engine.retriever.queries)
    second = engine.answer(QUESTION)
    assert second.bindings.get("cache") == "hit"
    assert second.answer == first.answer
    assert len(engine.retriever.queries) == n_search  # nothing retrieved again


def test_consumer_time_is_not_counted_as_loop_time():
    import time

    s = Settings(model="extractive")
    engine = make_engine(s, generator=CountingGenerator())
    loop = make_scim_family_loop("standard", s, engine)
    t0 = time.perf_counter()
    events = []
    for e in loop.run(QUESTION):
        events.append(e)
        time.sleep(0.02)  # a slow front end
    wall = (time.perf_counter() - t0) * 1000
    ans = events[-1].answer
    slept = 20 * (len(events) - 1)
    assert wall >= slept
    assert ans.timing_ms["total"] < wall - slept / 2
    it = ans.iterations[0].timing_ms
    assert it["coordination"] < 15
    assert it["total"] == pytest.approx(
        it["retrieval"] + it["generation"] + it["evaluation"] + it["coordination"], abs=0.01
    )


def test_the_budget_returns_the_best_iteration_and_the_later_one_on_a_tie():
    from scim_edge.scim_policy import Decision, returned

    assert returned(Decision("force_accept", "budget"), [0.3, 0.5, 0.5]) == 2
    assert returned(Decision("force_accept", "budget"), [0.6, 0.5, 0.2]) == 0


def test_a_decline_returns_the_previous_iteration_and_an_accept_the_last():
    from scim_edge.scim_policy import Decision, returned

    decline = Decision("force_accept", "quality_declined", revert=True)
    assert returned(decline, [0.3, 0.6, 0.4]) == 1
    assert returned(Decision("accept", "accepted"), [0.3, 0.8]) == 1


def test_scim_stops_when_a_follow_up_finds_nothing_about_the_topic():
    from scim_edge.types import Passage

    question = "What is the name of Loki's wife?"
    passages = [Passage("20-0", "Loki", "", "Loki is a god of Norse mythology.")] + [
        Passage(f"{30 + i}-0", f"Person {i}", "", f"The wife of ruler {i} changed her name.")
        for i in range(6)
    ]
    s = Settings(model="extractive")
    engine = make_engine(s, passages=passages, generator=CountingGenerator())
    loop = make_scim_family_loop("scim", s, engine)
    loop.evaluator = ScriptedEvaluator([report(0.4, completeness=0.2)] * 3)
    ans = list(loop.run(question))[-1].answer
    assert ans.stop_reason == "no_new_evidence"
