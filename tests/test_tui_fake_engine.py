"""The scripted engine the snapshots draw (tests/tui_fake_engine.py) must emit what the
real loops emit: the same event kinds, in the same order within an iteration of each
decision, the same framing (bindings first for the critic loop, Final last and once),
and the same invariants (iterations count from 1, retrieved ids accumulate, a decision's
record is its own iteration's). The real side runs on the real sample index."""

from __future__ import annotations

import pytest
from tui_fake_engine import FakeEngine

from scim_edge.engine import Engine
from scim_edge.settings import Settings
from scim_edge.types import Decided, Event, Final, IterationStarted, Retrieved

NONSENSE = "zxqvw blorptastic frumiousness?"


def step_kind(e: Event) -> str:
    step = getattr(e, "step", None)
    return f"{e.kind}({step})" if e.kind == "step_started" else e.kind


def iterations(events: list[Event]) -> tuple[list[str], list[tuple[str, tuple[str, ...]]]]:
    """(kinds before the first iteration, [(decision, kinds of that iteration)])."""
    head: list[str] = []
    its: list[tuple[str, tuple[str, ...]]] = []
    cur: list[str] | None = None
    for e in events:
        if isinstance(e, IterationStarted):
            cur = []
        if cur is None:
            if not isinstance(e, Final):
                head.append(step_kind(e))
            continue
        cur.append(step_kind(e))
        if isinstance(e, Decided):
            its.append((e.decision, tuple(cur)))
            cur = None
    return head, its


def check_invariants(events: list[Event]) -> None:
    assert isinstance(events[-1], Final)
    assert sum(isinstance(e, Final) for e in events) == 1
    starts = [e.t for e in events if isinstance(e, IterationStarted)]
    assert starts == list(range(1, len(starts) + 1))
    seen: list[str] = []
    for e in events:
        if isinstance(e, Retrieved):
            assert e.doc_ids[: len(seen)] == seen or set(seen) <= set(e.doc_ids)
            assert {p.doc_id for p in e.new_passages} <= set(e.doc_ids)
            seen = list(e.doc_ids)
        if isinstance(e, Decided):
            assert e.record.t == e.t and e.record.decision == e.decision


def real_patterns(index, questions, **settings) -> tuple[set, dict[str, set]]:
    s = Settings(model="extractive", index=str(index), **settings)
    engine = Engine.open(s)
    heads: set[tuple[str, ...]] = set()
    by_decision: dict[str, set[tuple[str, ...]]] = {}
    for q in questions:
        events = list(engine.ask(q, s))
        check_invariants(events)
        head, its = iterations(events)
        heads.add(tuple(head))
        for decision, kinds in its:
            by_decision.setdefault(decision, set()).add(kinds)
    return heads, by_decision


def fake_events(scenario: str, loop: str = "scim") -> list[Event]:
    return list(FakeEngine(scenario=scenario).ask("A question?", Settings(loop=loop)))


@pytest.mark.parametrize("scenario", ["answered", "forced"])
def test_fake_scim_events_match_the_real_scim_loop(sample_index, qa_dev, scenario):
    questions = [qa_dev[0]["question"], qa_dev[2]["question"]]
    heads, real = real_patterns(sample_index, questions)
    _, eager = real_patterns(sample_index, questions[:1], theta=0.0)  # accepts at once
    _, strict = real_patterns(sample_index, questions[:1], theta=0.99, t_max=2)
    for more in (eager, strict):
        for decision, kinds in more.items():
            real.setdefault(decision, set()).update(kinds)
    events = fake_events(scenario)
    check_invariants(events)
    head, its = iterations(events)
    assert tuple(head) in heads
    for decision, kinds in its:
        assert kinds in real.get(decision, set()), (decision, kinds, real.get(decision))


def test_fake_critic_loop_events_match_the_real_simrag_loop(sample_index, qa_dev):
    questions = [item["question"] for item in qa_dev[:5]] + [NONSENSE]
    heads, real = real_patterns(sample_index, questions, loop="simrag")
    events = fake_events("insufficient", loop="simrag")
    check_invariants(events)
    head, its = iterations(events)
    assert tuple(head) in heads
    for decision, kinds in its:
        assert kinds in real.get(decision, set()), (decision, kinds, real.get(decision))
    final = events[-1]
    assert isinstance(final, Final) and final.answer.status == "insufficient_evidence"
