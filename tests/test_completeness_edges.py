"""Completeness edge cases the SCIM formulas leave open, pinned."""

from __future__ import annotations

import pytest

from scim_edge import textutil as tu
from scim_edge.quality import ALPHA, L_TARGET, completeness


def test_a_question_with_no_content_word_counts_as_fully_covered():
    question = "Who is it?"  # every word is a stopword
    assert tu.content_words(question) == []
    answer = "Leonardo painted it in Florence."
    score, missing = completeness(question, answer)
    assert missing == []
    n = len(tu.words(answer))
    assert score == pytest.approx(ALPHA * 1.0 + (1 - ALPHA) * min(1.0, n / L_TARGET))


def test_an_empty_answer_covers_nothing_even_then():
    score, _ = completeness("Who is it?", "")
    assert score == 0.0
