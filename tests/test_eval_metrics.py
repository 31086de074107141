"""EM / F1 with SQuAD normalisation, abstention and recall@k."""

from __future__ import annotations

import pytest

from scim_edge.evaluation.metrics import (
    answer_in_passages,
    exact_match,
    f1_score,
    f1_single,
    is_abstention,
    normalize_answer,
    recall_at_k,
)
from scim_edge.types import INSUFFICIENT_EVIDENCE


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("  a  Modest   Proposal. ", "modest proposal"),
        ("Denver Broncos!", "denver broncos"),
        ("an apple, the pear, a plum", "apple pear plum"),
        ("theatre anthem", "theatre anthem"),  # articles only as whole words
        ("Saint-Étienne", "saintétienne"),  # punctuation removed without a space (as SQuAD)
        ("1,729", "1729"),
    ],
)
def test_normalize_matches_squad(raw: str, normalized: str) -> None:
    assert normalize_answer(raw) == normalized


def test_exact_match_best_over_aliases() -> None:
    golds = ["John Wilkes Booth", "Booth"]
    assert exact_match("booth.", golds) == 1.0
    assert exact_match("The John Wilkes Booth", golds) == 1.0
    assert exact_match("Wilkes", golds) == 0.0


def test_f1_known_squad_values() -> None:
    # From the SQuAD v1.1 script's definition: precision 1/2, recall 1/1 -> 2/3.
    assert f1_single("Denver Broncos", "Broncos") == pytest.approx(2 / 3)
    # 2 common tokens of 3 predicted and 2 gold: P = 2/3, R = 1 -> 0.8.
    assert f1_single("the Carolina Panthers team", "Carolina Panthers") == pytest.approx(0.8)
    assert f1_single("Santa Clara, California", "Levi's Stadium") == 0.0
    # Repeated tokens are counted with multiplicity.
    assert f1_single("earth earth pig", "earth pig") == pytest.approx(0.8)
    # Best over aliases.
    assert f1_score("ground pig", ["earth pig", "ground pig"]) == 1.0
    assert f1_score("the earth hog", ["earth pig", "ground pig"]) == pytest.approx(0.5)


def test_unanswerable_and_abstention() -> None:
    assert is_abstention(INSUFFICIENT_EVIDENCE)
    assert is_abstention("anything", status="insufficient_evidence")
    assert is_abstention("  ")
    assert is_abstention("I don't know.")
    assert is_abstention("The context does not say")
    assert not is_abstention("Unknown Pleasures is an album")
    # Empty gold = unanswerable: only an abstention is right.
    assert exact_match("Benny Benson", [], abstained=False) == 0.0
    assert f1_score(INSUFFICIENT_EVIDENCE, [], abstained=True) == 1.0
    # Abstaining on an answerable question scores zero, whatever words it used.
    assert f1_score("Insufficient evidence", ["evidence"], abstained=True) == 0.0


def test_recall_at_k() -> None:
    titles = ["Achilles", "Troy", "Achilles", "Thetis", "Peleus", "Homer"]
    assert recall_at_k(titles, ["Thetis", "Homer"], 5) == 0.5
    assert recall_at_k(titles, ["thetis", "homer"], 6) == 1.0
    assert recall_at_k(titles, [], 5) is None
    assert recall_at_k([], ["Alaska"], 5) == 0.0


PASSAGES = [
    "Lincoln was shot by John Wilkes Booth at Ford's Theatre.",
    "The essay was published in 1729 by Jonathan Swift.",
]


@pytest.mark.parametrize(
    ("golds", "expected"),
    [
        (["Booth"], True),
        (["the Ford's theatre"], True),  # normalised as SQuAD: article and apostrophe gone
        (["1,729"], True),
        (["Boot"], False),  # whole words only
        (["172"], False),
        (["Thetis", "John Wilkes Booth"], True),  # any alias
        (["wilkes booth at fords theatre lincoln"], False),  # no run-on across passages
    ],
)
def test_answer_in_passages(golds: list[str], expected: bool) -> None:
    assert answer_in_passages(golds, PASSAGES) is expected


def test_answer_in_passages_is_none_for_an_unanswerable_question() -> None:
    assert answer_in_passages([], PASSAGES) is None
