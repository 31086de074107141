"""Questions that ask for a measure, and numbers read with their units: "How tall is Mount
Everest?" is answered with a length, stated with its unit, and a number that measures
something else (a count, a time, another kind of measure) is no answer when the passages
state one of the asked kind."""

from __future__ import annotations

from scim_edge import measures
from scim_edge.generation import reader_features as rf
from scim_edge.generation.extractive import _format_span, answer_type
from scim_edge.generation.reader import Reader
from scim_edge.generation.spans import sentence_spans
from scim_edge.types import Passage


def _texts(question: str, passages: list[Passage]) -> set[str]:
    """The reader's candidate spans for the question, as text."""
    return {c.text for c in rf.candidates(question, passages)}


def _read(sentence: str) -> list[tuple[str, str, str]]:
    return [(m.number, m.unit, measures.dimension(m.unit)) for m in measures.measures(sentence)]


def test_how_tall_asks_for_a_length():
    assert measures.asked("How tall is Mount Everest?") == {measures.LENGTH}


def test_how_long_asks_for_a_length_of_a_thing():
    assert measures.asked("How long is the Nile?") == {measures.LENGTH}


def test_how_long_asks_for_a_duration_of_what_lasted():
    assert measures.asked("How long did the Hundred Years' War last?") == {measures.DURATION}


def test_how_long_is_a_span_of_time_asks_for_a_duration():
    assert measures.asked("How long is a day on Mars?") == {measures.DURATION}


def test_a_noun_after_what_asks_for_its_measure():
    assert measures.asked("Below what body temperature does hypothermia begin?") == {
        measures.TEMPERATURE
    }


def test_a_melting_point_is_a_temperature():
    assert measures.asked("What is the melting point of iron?") == {measures.TEMPERATURE}


def test_a_measure_word_the_question_does_not_ask_for_asks_nothing():
    assert measures.asked("What is the largest country by area?") == frozenset()


def test_an_era_asks_for_no_measure():
    assert measures.asked("Which age came right after the Chalcolithic?") == frozenset()


def test_a_measure_word_after_a_preposition_is_not_the_one_asked():
    assert measures.asked("What in size is twice Angola?") == frozenset()


def test_a_count_asks_for_no_measure():
    assert measures.asked("How many moons does Jupiter have?") == frozenset()


def test_a_measure_question_asks_for_a_number():
    assert answer_type("What is the diameter of Mars?").kind == "number"


def test_a_unit_symbol_after_a_no_break_space_is_read():
    assert _read("It was measured in 2020 as 8,848.86\u00a0m.") == [("8,848.86", "m", "length")]


def test_a_unit_of_two_words_is_read_across_a_no_break_space():
    assert _read("an area of 371,000 km2 (143,244\u00a0sq\u00a0mi)")[1] == (
        "143,244",
        "sq\u00a0mi",
        "area",
    )


def test_a_range_is_one_measure():
    assert _read("capable of running at 93–104 km/h (58–65 mph)") == [
        ("93–104", "km/h", "speed"),
        ("58–65", "mph", "speed"),
    ]


def test_a_minus_sign_is_kept():
    assert _read("equivalent to −273.15 °C on the Celsius scale") == [
        ("−273.15", "°C", "temperature")
    ]


def test_a_word_after_a_number_need_not_be_a_unit():
    assert _read("Jupiter has 79 moons.") == []


def test_the_error_of_a_measure_is_no_number_of_its_own():
    spans = sentence_spans("The maximum known depth is 10,935 ± 6 meters at the end.")
    assert [(s.text, s.unit) for s in spans if s.kind == "number"] == [("10,935", "meters")]


def test_a_conversion_in_parentheses_is_no_number_of_its_own():
    spans = sentence_spans("At 7,088 kilometers (4,404 mi) long, it is the longest river.")
    assert [(s.text, s.unit) for s in spans if s.kind == "number"] == [("7,088", "kilometers")]


def test_a_measure_of_another_kind_in_parentheses_is_read():
    spans = sentence_spans("The sledge ran 50 km (20 kg of load) that day.")
    assert [(s.text, s.unit) for s in spans if s.kind == "number"] == [("50", "km"), ("20", "kg")]


def test_a_measure_is_stated_with_its_unit():
    (span,) = [s for s in sentence_spans("Its height is 8,848.86 m.") if s.kind == "number"]
    assert _format_span(span, "How tall is Mount Everest?", "number") == "8,848.86 m"


# Real lead (vital-en, "Mont Blanc"; CC BY-SA Wikipedia contributors), shortened.
MONT_BLANC = [
    Passage("1-0", "Mont Blanc", "", "Mont Blanc is a mountain in the Alps, rising 4,807.3 m "
            "above sea level. It is the second-most prominent mountain in Europe and the "
            "11th most prominent summit in the world."),
]  # fmt: skip


def test_a_count_is_no_answer_when_a_measure_of_the_asked_kind_is_stated():
    assert _texts("How high is Mont Blanc?", MONT_BLANC) == {"4,807.3"}


def test_the_reader_answers_a_height_with_the_height():
    reading = Reader.for_index(None).read("How high is Mont Blanc?", MONT_BLANC)
    assert getattr(reading.candidate, "text", None) == "4,807.3"


def test_numbers_stay_candidates_when_none_measures_what_is_asked():
    # "20 years" measures a time, not a height; with no height stated it stays a candidate
    ps = [Passage("2-0", "Giza", "", "The pyramid was built over 20 years by many men.")]
    assert "20" in _texts("How tall is the Great Pyramid?", ps)


def test_a_unit_that_measures_what_is_asked_counts_as_the_questions_unit():
    (cand,) = rf.candidates("How high is Mont Blanc?", MONT_BLANC)
    assert cand.features[rf.FEATURES.index("unit_in_question")] == 1.0


def test_an_age_may_be_a_number_alone():
    # "at 37" gives no unit; "two years" measures a time: both may answer "how old"
    ps = [Passage("3-0", "Vincent van Gogh", "", "He painted for two years in Arles. He died "
                  "at 37 after years of illness.")]  # fmt: skip
    assert {"37", "two"} <= _texts("How old was Vincent van Gogh when he died?", ps)


def test_a_measure_of_the_asked_kind_states_the_word_that_asks_it():
    # no sentence that gives a height says "tall"
    ps = [Passage("4-0", "Mount Everest", "", "Its height was measured in 2020 as 8,848.86 m.")]
    (cand,) = [c for c in rf.candidates("How tall is Mount Everest?", ps) if c.text == "8,848.86"]
    assert cand.features[rf.FEATURES.index("relation_overlap")] == 1.0


def test_a_population_is_asked_as_a_number_of_people():
    assert measures.asked("What is the population of Tokyo?") == {measures.PEOPLE}


def test_how_many_people_asks_for_a_population():
    assert measures.asked("How many people live in Brazil?") == {measures.PEOPLE}


# Real lead (vital-en, "Tokyo"; CC BY-SA Wikipedia contributors), shortened.
TOKYO = [
    Passage("5-0", "Tokyo", "", "The population of the city proper was over 14 million as of "
            "2023. The Greater Tokyo Area includes Tokyo and parts of six neighboring "
            "prefectures."),
]  # fmt: skip


def test_a_population_is_no_small_count_of_other_things():
    assert _texts("What is the population of Tokyo?", TOKYO) == {"14 million"}


def test_a_measure_noun_that_names_a_kind_of_place_asks_nothing():
    assert measures.asked("Which area of the brain controls speech production?") == frozenset()


def test_a_measure_noun_before_another_noun_asks_nothing():
    assert measures.asked("What mass extinction ended the age of dinosaurs?") == frozenset()


def test_a_capital_letter_after_a_number_is_no_unit():
    assert _read("It was the first 5G phone, made by 3M.") == []


def test_a_unit_symbol_is_matched_as_written():
    # "m" is a metre; "M" (a million) is not
    assert _read("about 1.5 M people live there") == []


def test_a_one_letter_unit_needs_a_space():
    assert _read("She won a 10K race.") == []


def test_a_number_with_a_unit_is_no_year():
    spans = sentence_spans("Its summit is at 1850 m above sea level.")
    assert [(s.text, s.kind, s.unit) for s in spans if s.kind != "np"] == [("1850", "number", "m")]


def test_the_words_that_ask_are_those_of_the_wh_phrase():
    assert measures.asking_words("How tall is Big Ben?") == {"tall"}


def test_a_verb_may_ask_for_the_measure():
    assert measures.asking_words("How much can a beaver weigh?") == {"weigh"}


def test_a_time_is_no_ones_age():
    # "two years" measures a time; it does not say how old anyone was, as "at 37" does
    ps = [Passage("3-0", "Vincent van Gogh", "", "He died two years after leaving Paris.")]
    (two,) = rf.candidates("How old was Vincent van Gogh when he died?", ps)
    assert two.features[rf.FEATURES.index("relation_overlap")] < 1.0
