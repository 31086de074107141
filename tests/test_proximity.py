"""Term proximity: a question's neighbouring words count again where a passage keeps them
together, in BM25's order and in the loops' lexical ranking, without changing the score
a passage carries."""

from __future__ import annotations

from pathlib import Path

import pytest

from scim_edge import proximity, ranking
from scim_edge import textutil as tu
from scim_edge.retrieval import DISAMBIGUATION_WEIGHT, MAX_QUERY_TERMS, BM25Retriever
from scim_edge.types import Passage

QUESTION = "Who was the first president of the United States?"
# the same words, apart (and "president" twice: plain BM25 ranks it first) ...
APART = (
    "The president met the first envoys; a president led the league, the united army and "
    "all the other states, and the first states came."
)
# ... and together, as the answer says it
TOGETHER = (
    "Beta was the first president of the United States, and the envoys met him at the old "
    "harbour gate by the river."
)


def _dump(path: Path) -> Path:
    page = (
        "<page><title>{t}</title><ns>0</ns><id>{n}</id><revision><id>{n}</id>"
        "<text>{x}</text></revision></page>"
    )
    pages = [
        ("Alpha", APART),
        ("Beta", TOGETHER),
        ("Gamma", "Gamma is a letter."),
        ("Delta (disambiguation)", "Delta may be the first president of a club or a state."),
    ]
    body = "".join(page.format(t=t, n=n, x=x) for n, (t, x) in enumerate(pages, start=1))
    path.write_text(f"<mediawiki>{body}</mediawiki>", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def retriever(tmp_path_factory) -> BM25Retriever:
    from index_builder.build import build_index

    tmp = tmp_path_factory.mktemp("near")
    build_index(_dump(tmp / "near.xml"), tmp / "index")
    return BM25Retriever.open(tmp / "index")


def test_a_question_pairs_its_neighbouring_content_words():
    words = tu.words(QUESTION.lower())
    stems = [tu.stem(w) for w in words]
    pairs = proximity.adjacent_pairs(words, stems, tu.STOPWORDS.__contains__)
    assert pairs == [("first", "presid"), ("presid", "unit"), ("unit", "state")]


def test_three_stopwords_between_two_words_part_them():
    words = ["tower", "of", "the", "of", "london"]
    assert proximity.adjacent_pairs(words, words, {"of", "the"}.__contains__) == []


def test_one_word_twice_is_no_pair():
    words = ["new", "new", "york"]
    assert proximity.adjacent_pairs(words, words, set().__contains__) == [("new", "york")]


def test_a_pair_is_kept_only_in_order_within_the_window():
    pairs = [("first", "presid")]
    assert proximity.kept_share(pairs, {"first": [3], "presid": [3 + proximity.WINDOW]}) == 1.0
    assert proximity.kept_share(pairs, {"first": [3], "presid": [4 + proximity.WINDOW]}) == 0.0
    assert proximity.kept_share(pairs, {"first": [5], "presid": [4]}) == 0.0


def test_without_its_pairs_bm25_would_rank_the_words_apart_first(retriever):
    # what makes the next test able to fail: the words alone prefer Alpha
    raw = _raw(retriever)
    assert raw["1-0"] > raw["2-0"]


def test_bm25_ranks_the_passage_that_keeps_the_phrase_first(retriever):
    assert [p.title for p in retriever.search(QUESTION, 2)] == ["Beta", "Alpha"]


def _raw(retriever: BM25Retriever, pairs=()) -> dict[str, float]:
    """Tantivy's own scores for QUESTION's terms (and `pairs`), by passage id."""
    q = retriever._query(retriever.query_terms(QUESTION), (), pairs)
    hits = retriever.searcher.search(q, 10).hits
    return {retriever.searcher.doc(a).get_first("doc_id"): s for s, a in hits}


def test_the_score_a_passage_carries_is_its_words_alone(retriever):
    beta = retriever.search(QUESTION, 2)[0]
    assert beta.score == pytest.approx(_raw(retriever)[beta.doc_id])


def test_the_pairs_add_to_the_order_not_to_the_score(retriever):
    beta = retriever.search(QUESTION, 2)[0]
    assert _raw(retriever, retriever.query_pairs(QUESTION))[beta.doc_id] > beta.score + 1.0


def test_a_disambiguation_page_carries_its_scaled_words_score(retriever):
    delta = next(p for p in retriever.search(QUESTION, 5) if p.title.startswith("Delta"))
    assert delta.score == pytest.approx(DISAMBIGUATION_WEIGHT * _raw(retriever)[delta.doc_id])


def test_score_of_gives_what_search_carries(retriever):
    for p in retriever.search(QUESTION, 5):
        assert retriever.score_of(QUESTION, p.doc_id) == pytest.approx(p.score), p.title


def test_a_pair_past_the_terms_read_finds_nothing(retriever):
    # more distinct content words than a query reads, too far apart to pair; "first
    # president" comes after them
    apart = " of the of ".join(f"zq{i}" for i in range(MAX_QUERY_TERMS + 6))
    query = f"{apart} of the of first president"
    assert retriever.search(query, 5) == []


def test_the_loops_lexical_ranking_prefers_the_kept_phrase():
    apart = Passage("1-0", "Alpha", "", APART)
    together = Passage("2-0", "Beta", "", TOGETHER)
    ranked = ranking.rank_hybrid([apart, together], QUESTION)  # ties keep the given order
    assert [p.title for p in ranked] == ["Beta", "Alpha"]


def test_a_disambiguation_page_gains_nothing_from_its_phrases(retriever):
    # its lines restate other articles' subjects, so a kept pair there is no evidence
    delta = next(p for p in retriever.search(QUESTION, 5) if p.title.startswith("Delta"))
    with_pairs = _raw(retriever, retriever.query_pairs(QUESTION))[delta.doc_id]
    assert with_pairs == pytest.approx(_raw(retriever)[delta.doc_id])


def test_a_query_with_pairs_whose_passages_are_all_excluded_finds_nothing(retriever):
    seen = [p.doc_id for p in retriever.search(QUESTION, 10)]
    assert retriever.search(QUESTION, 5, exclude_ids=seen) == []
