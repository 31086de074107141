"""A passage fetched by id (the lead of an article the question names) carries the BM25
score the search would give it, because the reader weighs BM25 scores."""

from __future__ import annotations

import pytest

from scim_edge import ranking
from scim_edge.retrieval import BM25Retriever


def test_score_of_equals_the_score_search_gives(sample_index):
    r = BM25Retriever.open(sample_index)
    hit = r.search("allegorical novella", 1)[0]
    assert r.score_of("allegorical novella", hit.doc_id) == pytest.approx(hit.score, rel=1e-5)


def test_score_of_a_passage_the_query_does_not_match_is_zero(sample_index):
    assert BM25Retriever.open(sample_index).score_of("allegorical novella", "620-32") == 0.0


def test_a_named_lead_fetched_by_id_is_scored(sample_index):
    r = BM25Retriever.open(sample_index)
    q = "Who wrote Animal Farm?"
    leads = ranking.named_leads(r, q, r.get_many(["620-32"]), set(), "wrote Animal Farm")
    assert [
        (p.doc_id, p.score == pytest.approx(r.score_of("wrote Animal Farm", "620-0")))
        for p in leads
    ] == [("620-0", True)]


def test_a_question_names_a_title_with_its_small_words():
    names = ranking.question_names("Who wrote the novel The War of the Worlds?")
    assert "The War of the Worlds" in names


def test_a_possessive_is_not_part_of_the_name():
    assert ranking.question_names("What was Little Richard's real name?") == ["Little Richard"]


def test_the_question_words_are_not_names():
    assert ranking.question_names("Did Alaska become a state before Hawaii?") == [
        "Alaska",
        "Hawaii",
    ]


def test_a_quoted_term_is_a_name():
    assert "geography" in ranking.question_names('Who coined the term "geography"?')


def test_an_article_named_in_the_question_is_looked_up_when_the_search_missed_it(sample_index):
    r = BM25Retriever.open(sample_index)
    leads = ranking.named_leads(r, "Who wrote Animal Farm?", [], set())
    assert [p.doc_id for p in leads] == ["620-0"]


class _Hidden:
    """An index that hides one passage, as practice hides a question's source."""

    def __init__(self, inner: BM25Retriever, hidden: str) -> None:
        self.inner, self.hidden = inner, hidden

    def get(self, doc_id: str):
        return None if doc_id == self.hidden else self.inner.get(doc_id)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def test_a_looked_up_lead_that_the_index_hides_stays_hidden(sample_index):
    r = _Hidden(BM25Retriever.open(sample_index), "620-0")
    assert ranking.named_leads(r, "Who wrote Animal Farm?", [], set()) == []
