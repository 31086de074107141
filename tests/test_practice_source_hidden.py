"""Practice without the source passage: the reader also learns from the question's other
passages, and half of the Critic's traces run without the sentence the question copies
(real sample index)."""

from __future__ import annotations

import pytest

from scim_edge.engine import Engine
from scim_edge.practice import runner
from scim_edge.practice.questions import pairs_from_passages
from scim_edge.practice.runner import SourceHidden, hides_source, reader_examples, trace_rows
from scim_edge.retrieval import BM25Retriever
from scim_edge.settings import Settings


@pytest.fixture(scope="module")
def retriever(sample_index) -> BM25Retriever:
    return BM25Retriever.open(sample_index)


@pytest.fixture(scope="module")
def pairs(retriever):
    return pairs_from_passages(retriever.sample(5), 60, 5)


def _found_source(retriever, pair, settings) -> bool:
    from scim_edge import query_formulation as qf

    k_max = settings.k1 + 2 * settings.k2
    found = qf.retrieve(retriever, qf.initial(pair.question), k_max, set(),
                        settings.candidates, pair.question)  # fmt: skip
    return any(p.doc_id == pair.doc_id for p in found)


def test_a_hidden_passage_is_never_searched_up(retriever):
    top = retriever.search("Animal Farm Orwell", 5)
    hidden = SourceHidden(retriever, {top[0].doc_id})
    assert top[0].doc_id not in {p.doc_id for p in hidden.search("Animal Farm Orwell", 5)}


def test_a_hidden_passage_is_not_found_by_id(retriever):
    doc_id = retriever.search("Animal Farm Orwell", 1)[0].doc_id
    assert SourceHidden(retriever, {doc_id}).get(doc_id) is None


def test_other_passages_are_still_found_by_id(retriever):
    first, second = retriever.search("Animal Farm Orwell", 2)
    assert SourceHidden(retriever, {first.doc_id}).get(second.doc_id).text == second.text


def test_a_pair_whose_source_is_found_gets_a_third_group_without_it(retriever, pairs):
    settings = Settings(model="extractive")
    pair = next(p for p in pairs if _found_source(retriever, p, settings))
    data = reader_examples(retriever, [pair], settings)
    assert len(data["sizes"]) == 3


def test_about_half_of_the_pairs_hide_their_source(pairs):
    share = sum(hides_source(p) for p in pairs) / len(pairs)
    assert 0.3 <= share <= 0.7


def test_a_hidden_source_trace_never_holds_its_source(sample_index, pairs, monkeypatch):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive"))
    settings = engine.settings.replace(loop="fixed-3", cache_answers=False)
    pair = next(
        p for p in pairs if hides_source(p) and _found_source(engine.retriever, p, settings)
    )
    engine.answer(pairs[0].question, settings)  # the session's search pipeline is built first
    seen: list[str] = []
    answer = engine.answer

    def spy(question, s=None):
        final = answer(question, s)
        seen.extend(p.doc_id for p in final.passages)
        seen.extend(d for rec in final.iterations for d in rec.doc_ids)
        return final

    monkeypatch.setattr(engine, "answer", spy)
    trace_rows(engine, pair, settings)
    assert pair.doc_id not in seen


def test_a_trace_unbinds_its_hiding_retriever(sample_index, pairs):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive"))
    settings = engine.settings.replace(loop="fixed-3", cache_answers=False)
    trace_rows(engine, next(p for p in pairs if hides_source(p)), settings)
    assert engine.slots.retriever is None


def test_trace_rows_say_whether_the_source_was_hidden(sample_index, pairs):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive"))
    settings = engine.settings.replace(loop="fixed-3", cache_answers=False)
    pair = next(p for p in pairs if hides_source(p))
    assert all(r["source_hidden"] for r in trace_rows(engine, pair, settings))


def test_the_hidden_share_is_part_of_the_practice_parameters(retriever, monkeypatch):
    opts = runner.PracticeOptions(questions=10)
    before = runner._params(opts, retriever, Settings())
    monkeypatch.setattr(runner, "HIDE_SOURCE_SHARE", 0.25)
    assert runner._params(opts, retriever, Settings()) != before


def test_the_critics_features_are_part_of_the_practice_parameters(retriever, monkeypatch):
    opts = runner.PracticeOptions(questions=10)
    before = runner._params(opts, retriever, Settings())
    monkeypatch.setattr(runner, "CRITIC_FEATURES", (*runner.CRITIC_FEATURES, "new"))
    assert runner._params(opts, retriever, Settings()) != before
