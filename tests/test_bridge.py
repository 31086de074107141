"""Bridge phrases are found in multi-hop questions and only there; the bridge entity comes
from the passage sentence that matches the phrase's clause (or the intermediate answer)."""

from __future__ import annotations

import pytest

from scim_edge import bridge
from scim_edge.types import Passage

# Real lead sentences (vital-en, CC BY-SA Wikipedia contributors).
ROTHSCHILD = Passage(
    "r-1",
    "Rothschild family",
    "",
    "The Rothschild family is a wealthy Ashkenazi Jewish noble banking family originally "
    "from Frankfurt, Germany. The family's documented history starts in 16th-century "
    "Frankfurt; its name is derived from the family house, Rothschild, built by Isaak "
    "Elchanan Bacharach in Frankfurt in 1567.",
)
BOVARY = Passage(
    "b-1",
    "Madame Bovary",
    "",
    "Madame Bovary: Provincial Manners, commonly known as simply Madame Bovary, is the début "
    "novel of French writer Gustave Flaubert, originally published in 1856 and 1857. The "
    "eponymous character, Emma Bovary, lives beyond her means in order to escape the ennui "
    "of provincial life.",
)
EIFFEL = Passage(
    "e-1",
    "Eiffel Tower",
    "",
    "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris, France. It is named "
    "after the engineer Gustave Eiffel, whose company designed and built the tower from "
    "1887 to 1889.",
)
RIVER = Passage(
    "x-1",
    "River",
    "",
    "A river is a natural freshwater stream that flows on land or inside caves towards "
    "another body of water at a lower elevation, such as an ocean, lake, or another river.",
)


@pytest.mark.parametrize(
    ("question", "head", "clause"),
    [
        (
            "On which river stands the city where the Rothschild family originated?",
            "city",
            "where the Rothschild family originated",
        ),
        (
            "What nationality was the man who founded the International Olympic Committee?",
            "man",
            "who founded the International Olympic Committee",
        ),
        (
            "Which writer was a protégé of the author of Madame Bovary?",
            "author",
            "of Madame Bovary",
        ),
        (
            "Which statue has a framework built by the engineer the Eiffel Tower is named after?",
            "engineer",
            "the Eiffel Tower is named after",
        ),
        ("Which river flows through the capital of Germany?", "capital", "of Germany"),
        (
            "Who is the protagonist of the novel Ayn Rand published in 1957?",
            "novel",
            "Ayn Rand published in 1957",
        ),
    ],
)
def test_find_bridge_phrases(question, head, clause):
    b = bridge.find(question)
    assert b is not None
    assert (b.head, b.clause) == (head, clause)


def test_nested_phrase_takes_the_one_whose_rest_still_asks():
    b = bridge.find("What is the capital of the country where Angel Falls is located?")
    assert b is not None
    assert b.head == "country"  # not "the capital of …", which is the whole question
    assert "capital" in b.outer


def test_clause_stops_where_the_outer_question_resumes():
    b = bridge.find("About how many people lived in the city where Nintendo is based, as of 2020?")
    assert b is not None
    assert b.clause == "where Nintendo is based"


@pytest.mark.parametrize(
    "question",
    [
        "What is the capital of France?",  # the phrase is the whole question
        "Who was the man who founded the International Olympic Committee?",
        "Who assassinated Abraham Lincoln?",
        # an appositive name, not a zero relative
        "In what year did the French mathematician Alain Connes win the Fields Medal?",
        "In which city was the film director Allan Dwan born?",
        "The word 'algorithm' comes from the name of which Persian mathematician?",  # asks
        "Who is considered the founder of modern human anatomy?",
        "Who is considered the founder of the Roman Empire?",  # the phrase is the answer
        "Which ruler moved the capital of Afghanistan from Kandahar to Kabul in 1776?",
        "What is the name of the city where the Rothschild family originated?",  # asks for it
        "Which was published first, Pride and Prejudice or Madame Bovary?",
    ],
)
def test_no_bridge_in_single_hop_questions(question):
    assert bridge.find(question) is None


def test_candidate_is_the_entity_the_matching_sentence_names():
    q = "On which river stands the city where the Rothschild family originated?"
    b = bridge.find(q)
    cands = bridge.candidates(q, b, [ROTHSCHILD, RIVER])
    assert cands[0].entity == "Frankfurt"
    names = [c.entity for c in cands]
    assert "Rothschild" not in names  # named by the question itself


def test_appositive_name_beats_a_modifier_and_the_question_entity():
    q = "Which writer was a protégé of the author of Madame Bovary?"
    cands = bridge.candidates(q, bridge.find(q), [BOVARY])
    assert cands[0].entity == "Gustave Flaubert"
    assert "French" not in [c.entity for c in cands]  # "French writer": a modifier


def test_zero_relative_candidate_uses_the_title_as_context():
    q = "Which statue has a framework built by the engineer the Eiffel Tower is named after?"
    cands = bridge.candidates(q, bridge.find(q), [EIFFEL])
    assert cands[0].entity == "Gustave Eiffel"


def test_intermediate_answer_raises_its_candidate():
    q = "On which river stands the city where the Rothschild family originated?"
    b = bridge.find(q)
    plain = {c.entity: c.score for c in bridge.candidates(q, b, [ROTHSCHILD])}
    helped = {c.entity: c.score for c in bridge.candidates(q, b, [ROTHSCHILD], "Germany")}
    assert helped["Germany"] > plain["Germany"]


def test_answer_that_is_a_common_word_is_no_candidate():
    q = "On which river stands the city where the Rothschild family originated?"
    b = bridge.find(q)
    rivers = Passage("x-2", "River", "", "Rivers carry water. Water flows to the sea.")
    cands = bridge.candidates(q, b, [rivers], "Water")
    assert "Water" not in [c.entity for c in cands]


def test_no_candidates_when_no_sentence_matches_the_clause():
    q = "On which river stands the city where the Rothschild family originated?"
    assert bridge.candidates(q, bridge.find(q), [RIVER]) == []


def test_remaining_keywords_drop_what_the_first_hop_used():
    q = "On which river stands the city where the Rothschild family originated?"
    b = bridge.find(q)
    top = bridge.candidates(q, b, [ROTHSCHILD])[0]
    assert bridge.remaining_keywords(q, b, top) == ["river", "stands", "city"]


def test_title_names():
    assert bridge.title_names("Paraná River", "Paraná")
    assert bridge.title_names("Frankfurt", "Frankfurt")
    assert not bridge.title_names("Battle of Frankfurt an der Oder", "Frankfurt")
    assert not bridge.title_names("Germany", "Frankfurt")


def test_outer_question_resuming_after_the_clause():
    b = bridge.find("The city where the Rothschild family originated stands on which river?")
    assert b is not None
    assert "river" in b.outer


def test_sentence_initial_common_word_is_no_candidate():
    q = "Which rocket engineer led the space program of the country that launched Sputnik?"
    p = Passage(
        "v-1",
        "Launch vehicle",
        "",
        "Vehicles that launched Sputnik were rockets. Such vehicles carry satellites.",
    )
    assert "Vehicles" not in [c.entity for c in bridge.candidates(q, bridge.find(q), [p])]


def test_remaining_keywords_keep_clause_words_the_sentence_did_not_use():
    # the clause runs on into the outer question ("… arrive in Afghanistan"): the words the
    # bridge's sentence did not match stay in the follow-up query
    q = "In what year did the prince whom Aristotle began tutoring in 343 BC arrive in Afghanistan?"
    b = bridge.find(q)
    p = Passage("a-1", "Aristotle", "", "Aristotle began tutoring Alexander in 343 BC.")
    top = bridge.candidates(q, b, [p])[0]
    assert top.entity == "Alexander"
    kept = bridge.remaining_keywords(q, b, top)
    assert "afghanistan" in kept
    assert "aristotle" not in kept


def test_name_used_as_a_modifier_ranks_below_a_name():
    q = "Which writer was a protégé of the author of Madame Bovary?"
    p = Passage("b-2", "Madame Bovary", "", "Madame Bovary is a French novel by Gustave Flaubert.")
    assert bridge.candidates(q, bridge.find(q), [p])[0].entity == "Gustave Flaubert"


def test_longer_name_of_the_question_entity_and_lone_abbreviations_are_no_candidates():
    q = "About how many people lived in the city where Nintendo is based, as of 2020?"
    p = Passage(
        "n-1",
        "Nintendo",
        "",
        "Nintendo Co., Ltd. is a Japanese multinational video game company headquartered in Kyoto.",
    )
    names = [c.entity for c in bridge.candidates(q, bridge.find(q), [p], limit=10)]
    assert names[0] == "Kyoto"
    assert "Nintendo Co" not in names
    assert "Ltd" not in names


ALBERTA_OIL = Passage(
    "o-1",
    "Oil sands",
    "",
    "The Canadian province of Alberta has most of the world's reserves of natural bitumen.",
)


def test_the_question_asked_of_the_bridge_entity_drops_the_spent_clause():
    q = (
        "What is the capital of the Canadian province that holds most of the world's "
        "reserves of natural bitumen?"
    )
    b = bridge.find(q)
    top = bridge.candidates(q, b, [ALBERTA_OIL])[0]
    # "holds" is the one clause word the sentence did not use ("has")
    assert bridge.question_through(b, top) == "What is the capital of Alberta holds ?"


def test_the_question_asked_of_the_bridge_entity_keeps_what_the_clause_still_asks():
    q = "In what year did the prince whom Aristotle began tutoring in 343 BC arrive in Afghanistan?"
    b = bridge.find(q)
    p = Passage("a-1", "Aristotle", "", "Aristotle began tutoring Alexander in 343 BC.")
    top = bridge.candidates(q, b, [p])[0]
    assert bridge.question_through(b, top) == "In what year did Alexander arrive Afghanistan ?"
