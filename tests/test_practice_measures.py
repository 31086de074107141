"""Practice asks for a measure as people do ("How high…", "How heavy…"), and answers it with
its unit, as the reader states it: a question "how many m" is asked by nobody, and no
reading rule for measure questions fired on practice's own questions."""

from __future__ import annotations

import random

import pytest

from scim_edge import measures
from scim_edge.generation import reader_features as rf
from scim_edge.generation.spans import Span, sentence_spans
from scim_edge.practice.questions import answer_text, make_question
from scim_edge.practice.runner import _label
from scim_edge.types import Passage

HEIGHT = "Its elevation of 8,848.86 m was most recently established in 2020 by the authorities."
CANYON = "The canyon is 277 miles long, up to 18 miles wide and attains a depth of over a mile."


def _measure(sentence: str, number: str) -> Span:
    return next(s for s in sentence_spans(sentence) if s.text == number)


def test_a_height_is_asked_how_high():
    assert measures.asking_phrase("8,848.86", "m", HEIGHT, HEIGHT.index("8,848")) == "how high"


def test_a_length_is_asked_by_the_measure_word_nearest_it():
    assert measures.asking_phrase("18", "miles", CANYON, CANYON.index("18")) == "how wide"


def test_a_length_with_no_measure_word_is_asked_how_long():
    assert measures.asking_phrase("40", "km", "The road runs 40 km to the coast.", 13) == "how long"


def test_a_temperature_below_zero_is_asked_how_cold():
    assert measures.asking_phrase("−89.2", "°C", "a low of −89.2 °C", 9) == "how cold"


def test_a_count_is_asked_by_no_how_phrase():
    assert measures.asking_phrase("79", "moons", "Jupiter has 79 moons.", 12) == ""


@pytest.mark.parametrize(
    ("number", "unit"),
    [("5", "km"), ("5", "km2"), ("5", "litres"), ("5", "kg"), ("5", "°C"), ("-5", "°C"),
     ("5", "km/h")],
)  # fmt: skip
def test_every_asking_phrase_is_read_as_the_units_measure(number, unit):
    how = measures.asking_phrase(number, unit, f"It is {number} {unit}.", 6)
    assert measures.dimension(unit) in measures.asked(f"{how} is the thing?")


def test_a_practice_question_asks_for_a_measure_as_people_do():
    span = _measure(HEIGHT, "8,848.86")
    question = make_question(HEIGHT, span, "Mount Everest", random.Random(3))
    assert question is not None and question.startswith("How high ")


def test_a_practice_question_for_a_measure_leaves_out_its_unit():
    span = _measure(HEIGHT, "8,848.86")
    question = make_question(HEIGHT, span, "Mount Everest", random.Random(3)) or ""
    assert " m " not in f" {question.rstrip('?')} "


def test_a_measures_practice_answer_keeps_its_unit():
    assert answer_text(_measure(HEIGHT, "8,848.86"), HEIGHT) == "8,848.86 m"


def test_a_counts_practice_answer_is_the_number_alone():
    sentence = "Jupiter has 79 known moons and a faint ring system."
    span = next(s for s in sentence_spans(sentence) if s.kind == "number")
    assert answer_text(span, sentence) == span.text


def test_the_candidate_of_a_measure_is_labelled_right_with_its_unit():
    passage = Passage("1-0", "Mount Everest", "", HEIGHT, 1.0, 1)
    q = rf.analyse("How high is Mount Everest?")
    cands = rf.candidates(q, [passage])
    labels = _label(cands, "8,848.86 m")
    assert [c.text for c, y in zip(cands, labels, strict=True) if y] == ["8,848.86"]
