"""The efficiency profile's answer cache: a hit for the same question and settings, a miss
as soon as anything that shapes the answer changes (θ first among them)."""

from __future__ import annotations

from scim_fakes import make_engine

from scim_edge.settings import load_settings

QUESTION = "Who shot Abraham Lincoln?"


def _efficiency(**overrides):
    return load_settings(
        {"profile": "efficiency", "model": "extractive", **overrides}, use_config=False
    )


def test_same_question_and_settings_hit_the_cache():
    s = _efficiency()
    engine = make_engine(s)
    engine.answer(QUESTION, s)
    second = engine.answer(QUESTION, s)
    assert second.bindings.get("cache") == "hit"


def test_a_theta_change_misses_the_cache():
    s = _efficiency()
    engine = make_engine(s)
    engine.answer(QUESTION, s)
    searched = len(engine.retriever.queries)
    other = engine.answer(QUESTION, s.replace(theta=s.theta - 0.1))
    assert other.bindings.get("cache") != "hit"
    assert len(engine.retriever.queries) > searched  # retrieved again: the loop really ran


def test_a_delta_change_misses_the_cache():
    s = _efficiency()
    engine = make_engine(s)
    engine.answer(QUESTION, s)
    other = engine.answer(QUESTION, s.replace(delta=s.delta + 0.05))
    assert other.bindings.get("cache") != "hit"


def test_another_question_misses_the_cache():
    s = _efficiency()
    engine = make_engine(s)
    engine.answer(QUESTION, s)
    other = engine.answer("Where was Abraham Lincoln shot?", s)
    assert other.bindings.get("cache") != "hit"
