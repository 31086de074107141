"""Comparison pairs in self-practice: "Which was founded first, A or B?" made from two
articles' dated sentences, traced with both facts in reach, never read by the reader, and
flagged to the Critic."""

from __future__ import annotations

from dataclasses import replace

from scim_edge import comparison
from scim_edge.critic_features import round_features
from scim_edge.practice.questions import PracticePair, comparison_pairs
from scim_edge.practice.runner import hides_source, reader_examples
from scim_edge.settings import Settings
from scim_edge.types import Passage

HARVARD = Passage(
    "1-0",
    "Harvard University",
    "",
    "Harvard University is a private university. It was founded in 1636.",
)
YALE = Passage(
    "2-0",
    "Yale University",
    "",
    "Yale University is a private university. It was founded in 1701 as a school.",
)
TEMPEST = Passage("3-0", "The Tempest (play)", "",
                  "The Tempest is a play, probably written in 1610.")  # fmt: skip


def _pairs(*passages: Passage, seed: int = 1) -> list[PracticePair]:
    return comparison_pairs(iter(passages), 10, seed, heldout=0.0)


def test_two_articles_with_the_same_verb_make_one_comparison():
    assert len(_pairs(HARVARD, YALE)) == 1


def test_a_comparison_asks_about_the_verb_both_sentences_use():
    assert comparison.parse(_pairs(HARVARD, YALE)[0].question).attribute == ("founded",)


def test_the_answer_is_the_article_whose_year_fits_the_question():
    for seed in range(6):
        pair = _pairs(HARVARD, YALE, seed=seed)[0]
        wanted = "Harvard University" if " first, " in pair.question else "Yale University"
        assert pair.answer == wanted, pair.question


def test_articles_with_different_verbs_are_not_compared():
    assert _pairs(HARVARD, TEMPEST) == []


def test_an_option_drops_the_titles_disambiguation():
    other = Passage("4-0", "Hamlet", "", "Hamlet is a tragedy, written in 1600.")
    assert "(play)" not in _pairs(TEMPEST, other)[0].question


def test_a_comparison_never_hides_its_source():
    plain = [PracticePair(f"p{i:05d}", "q?", "a", "entity", "1-0", "t", "s", "train")
             for i in range(40)]  # fmt: skip
    hidden = next(p for p in plain if hides_source(p))
    assert not hides_source(replace(hidden, kind="choice"))


def test_the_reader_does_not_train_on_comparisons(sample_index):
    from scim_edge.retrieval import BM25Retriever

    data = reader_examples(BM25Retriever.open(sample_index), _pairs(HARVARD, YALE), Settings())
    assert len(data["sizes"]) == 0


def test_the_critic_sees_an_answer_decided_by_comparison():
    f = round_features("Harvard University", {}, {"comparison": 1.0}, 1, ["1-0"], ["1-0"], [], {})
    assert f["r:comparison"] == 1.0
