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
