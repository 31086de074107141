"""What a sentence states of the relation a question asks, when it does not write the
question's word: an agent after "by" and a noun ("a novella by George Orwell") is the
maker "Who wrote Animal Farm?" asks for, and the year a date states is the "year" asked.
Without these, the right answer to an easy question read as unstated, and its confidence
fell to Low."""

from __future__ import annotations

from scim_edge.generation import reader_features as rf
from scim_edge.types import Passage

# Real leads (CC BY-SA Wikipedia contributors), shortened.
ANIMAL_FARM = [
    Passage("620-0", "Animal Farm", "", "Animal Farm is an allegorical and dystopian novella "
            "by George Orwell, first published in England on 17 August 1945."),
]  # fmt: skip
STARRY_NIGHT = [
    Passage("1-0", "The Starry Night", "", "The Starry Night is an oil-on-canvas painting by "
            "the Dutch Post-Impressionist painter Vincent van Gogh."),
]  # fmt: skip
PARADISE_LOST = [
    Passage("2-0", "Paradise Lost", "", "Paradise Lost is an epic poem in blank verse by the "
            "poet John Milton."),
]  # fmt: skip
LINCOLN = [
    Passage("3-0", "Abraham Lincoln", "", "Lincoln was assassinated by John Wilkes Booth."),
]
ILIAD = [
    Passage("5-0", "Iliad", "", "The Iliad is one of two major surviving ancient Greek epic "
            "poems attributed to Homer."),
    Passage("6-0", "Homer", "", "Homer was an ancient Greek poet. He is credited as the "
            "author of the Iliad and the Odyssey."),
]  # fmt: skip
TITANIC = [
    Passage("4-0", "RMS Titanic", "", "RMS Titanic sank in the North Atlantic Ocean on "
            "15 April 1912."),
]  # fmt: skip


def _relation(question: str, passages: list[Passage], text: str) -> float:
    """The feature of the span in the first passage."""
    (cand,) = [
        c for c in rf.candidates(question, passages)
        if c.text == text and c.passage.doc_id == passages[0].doc_id
    ]  # fmt: skip
    return float(cand.features[rf.FEATURES.index("relation_overlap")])


def test_an_agent_after_a_noun_states_the_verb_asked():
    assert _relation("Who wrote Animal Farm?", ANIMAL_FARM, "George Orwell") == 1.0


def test_words_that_describe_the_agent_may_stand_between():
    f = _relation("Who made The Starry Night?", STARRY_NIGHT, "Vincent van Gogh")
    assert f == 1.0


def test_an_agent_states_the_maker_a_question_names():
    assert _relation("Who is the author of Animal Farm?", ANIMAL_FARM, "George Orwell") == 1.0


def test_an_agent_after_a_written_verb_states_only_that_verb():
    # "assassinated by" writes its verb: Booth is not said to have succeeded Lincoln
    assert _relation("Who succeeded Lincoln?", LINCOLN, "John Wilkes Booth") == 0.0


def test_an_agent_answers_only_a_who_question():
    # the poem's "by John Milton" names the author, not the leader he served
    q = "Under which English leader did the author of Paradise Lost serve?"
    assert _relation(q, PARADISE_LOST, "John Milton") == 0.0


def test_a_date_states_the_year_asked():
    assert _relation("In what year did the Titanic sink?", TITANIC, "15 April 1912") == 1.0


def test_a_date_states_the_year_when_the_title_says_the_rest():
    ps = [Passage("4-1", "Sinking of the Titanic", "", "RMS Titanic sank in the North "
                  "Atlantic Ocean on 15 April 1912.")]  # fmt: skip
    assert _relation("In what year did the Titanic sink?", ps, "15 April 1912") == 1.0


def test_another_stopword_before_the_name_ends_the_agent():
    s = "Waterloo was a victory by the allies of Wellington."
    assert not rf.is_agent(s, s.index("Wellington"))


def test_an_agent_needs_a_word_before_by():
    s = "The painting, by Leonardo, hangs in the Louvre."
    assert not rf.is_agent(s, s.index("Leonardo"))


def test_a_role_is_no_maker():
    assert rf.question_verbs("Who was the first emperor of Rome?") == frozenset()


def test_a_questions_verbs_leave_out_its_auxiliaries():
    assert rf.question_verbs("Who was Animal Farm written by?") == frozenset({"write"})


def test_a_name_a_work_is_attributed_to_is_its_maker():
    assert _relation("Who wrote the Iliad?", ILIAD, "Homer") == 1.0


def test_a_name_after_to_is_no_place_when_its_own_lead_is_a_persons():
    (homer,) = [
        c for c in rf.candidates("Who wrote the Iliad?", ILIAD)
        if c.text == "Homer" and c.passage.doc_id == "5-0"
    ]  # fmt: skip
    assert homer.features[rf.FEATURES.index("place_like")] == 0.0


def test_the_nearest_by_names_the_agent():
    s = "It was followed by a novella by George Orwell."
    assert rf.is_agent(s, s.index("George"))


def test_a_century_does_not_state_the_year_asked():
    ps = [Passage("7-0", "Ridge", "", "The battle on the ridge was fought in the 19th century.")]
    assert _relation("In what year was the battle on the ridge fought?", ps, "19th century") < 1.0
