"""A sentence that opens with "He", "His" or "It", or whose main clause does after an
opening phrase ("In 1928, he…"), is read as being about its article's subject, so the
reader can answer from it ("Who discovered penicillin?" from "His discovery
in 1928 of … penicillin")."""

from __future__ import annotations

import pytest

from scim_edge.generation import reader_features as rf
from scim_edge.generation.coreference import resolve_opening_pronoun
from scim_edge.lead_types import LeadTypes
from scim_edge.types import Passage

_LEADS = {
    "alexander fleming": "Sir Alexander Fleming (6 August 1881 – 11 March 1955) was a "
    "Scottish physician and microbiologist. He shared the 1945 Nobel Prize.",
    "mars (planet)": "Mars is the fourth planet from the Sun. It is a desert-like planet.",
}
_FLEMING = Passage(
    "7-0",
    "Alexander Fleming",
    "",
    "Sir Alexander Fleming was a Scottish physician and microbiologist. His discovery in "
    "1928 of what was later named benzylpenicillin from the mould Penicillium rubens "
    "marked the start of modern antibiotics.",
)


def _types() -> LeadTypes:
    def find(name: str) -> Passage | None:
        text = _LEADS.get(name.lower())
        return Passage("1-0", name, "", text) if text else None

    return LeadTypes(find)


def test_an_opening_possessive_names_the_person_the_article_is_about():
    s = resolve_opening_pronoun("His discovery in 1928 changed medicine.", "Alexander Fleming",
                                _types())  # fmt: skip
    assert s == "[Alexander Fleming]'s discovery in 1928 changed medicine."


def test_an_opening_it_names_the_thing_without_its_disambiguation():
    s = resolve_opening_pronoun("It is known as the Red Planet.", "Mars (planet)", _types())
    assert s == "[Mars] is known as the Red Planet."


def test_he_is_not_read_as_an_article_about_a_thing():
    s = resolve_opening_pronoun("He named it the Red Planet.", "Mars (planet)", _types())
    assert s == "He named it the Red Planet."


def test_it_is_not_read_as_an_article_about_a_person():
    s = resolve_opening_pronoun("It was his first prize.", "Alexander Fleming", _types())
    assert s == "It was his first prize."


def test_without_the_article_type_the_sentence_is_left_as_written():
    s = resolve_opening_pronoun("His discovery changed medicine.", "Alexander Fleming", None)
    assert s == "His discovery changed medicine."


def test_a_pronoun_inside_a_word_is_not_resolved():
    s = resolve_opening_pronoun("Itself a planet, Mars is red.", "Mars (planet)", _types())
    assert s == "Itself a planet, Mars is red."


def test_the_pronoun_after_an_opening_phrase_names_the_person():
    s = resolve_opening_pronoun("In 1928, he discovered penicillin.", "Alexander Fleming",
                                _types())  # fmt: skip
    assert s == "In 1928, [Alexander Fleming] discovered penicillin."


def test_a_numbers_thousands_and_its_conversion_do_not_end_the_opening_phrase():
    # made up, after the Sahara's lead: "With an area of 9,200,000 square kilometres
    # (3,600,000 sq mi), it is the largest hot desert in the world."
    s = resolve_opening_pronoun("With an area of 144,798,500 square kilometres (55,907,000 "
                                "sq mi), it is a small planet.", "Mars (planet)",
                                _types())  # fmt: skip
    assert s.endswith("(55,907,000 sq mi), [Mars] is a small planet.")


def test_a_possessive_after_an_opening_phrase_names_the_thing():
    s = resolve_opening_pronoun("Seen from Earth, its colour is red.", "Mars (planet)", _types())
    assert s == "Seen from Earth, [Mars]'s colour is red."


def test_the_reader_finds_the_name_in_a_sentence_that_only_says_his():
    cands = rf.candidates("Who discovered penicillin?", [_FLEMING], _types())
    sentences = {c.sentence for c in cands if c.text == "Alexander Fleming"}
    assert any(s.startswith("[Alexander Fleming]'s discovery") for s in sentences)


def _london_without_an_index(doc_id: str, first: str) -> str:
    """The sentence the reader, given no index, reads "London" in, from one passage of
    Ada Lovelace's article (`doc_id`) whose second sentence says "She was born …"."""
    text = f"{first} She was born in London on 10 December 1815."
    passage = Passage(doc_id, "Ada Lovelace", "", text)
    cands = rf.candidates("Where was Ada Lovelace born?", [passage], None)
    return next(c for c in cands if c.text == "London").sentence


def test_without_an_index_a_lead_among_the_passages_says_what_its_article_is_about():
    sentence = _london_without_an_index("10-0", "Ada Lovelace was an English mathematician.")
    assert sentence.startswith("[Ada Lovelace] was born")


def test_without_an_index_a_passage_that_is_no_lead_types_nothing():
    sentence = _london_without_an_index("10-3", "Ada Lovelace wrote notes.")
    assert sentence.startswith("She was born")


@pytest.mark.parametrize(
    ("sentence", "title"),
    [
        ("In 1928, in London, he discovered it.", "Alexander Fleming"),
        ("Fleming (a Scot), he said, was kind.", "Alexander Fleming"),
        ("When Ernst Chain joined the lab, he purified the drug.", "Alexander Fleming"),
        ("Years later, he said, the mould had been an accident.", "Alexander Fleming"),
        ("In 2004, it was announced that a rover had landed.", "Mars (planet)"),
    ],
    ids=[
        "after-a-second-clause",
        "after-an-aside",
        "clause-with-its-own-subject",
        "speakers-aside",
        "it-for-what-follows",
    ],  # fmt: skip
)
def test_a_pronoun_that_may_mean_another_is_left_as_written(sentence, title):
    assert resolve_opening_pronoun(sentence, title, _types()) == sentence
