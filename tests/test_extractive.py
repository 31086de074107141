"""The extractive generator: answer-type cues, direct answers, guidance, determinism."""

from __future__ import annotations

import pytest
from scim_fakes import PASSAGES

from scim_edge.generation import NO_MODEL_NOTE, make_generator
from scim_edge.generation.extractive import ExtractiveGenerator, answer_type
from scim_edge.generation.prompting import build_prompt
from scim_edge.settings import Settings
from scim_edge.types import Passage

SHORTER = "Give a shorter, more direct answer."

BIO = [
    Passage("10-0", "Ada Lovelace", "", "Augusta Ada King, Countess of Lovelace, was an English "
            "mathematician and writer. She was born in London on 10 December 1815. She is "
            "chiefly known for her work on the Analytical Engine designed by Charles Babbage. "
            "Her notes describe an algorithm for computing 7 Bernoulli numbers."),
    Passage("10-1", "Ada Lovelace", "Later life", "Lovelace died of uterine cancer in 1852 at the "
            "age of 36, because doctors bled her repeatedly. She was buried in Hucknall."),
]  # fmt: skip


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Who assassinated Abraham Lincoln?", "person"),
        ("Which sculptor made the Oscar statuette?", "person"),
        ("When did the war end?", "date"),
        ("In what year was the essay published?", "date"),
        ("Where was Ada Lovelace born?", "place"),
        ("In which city did he settle?", "place"),
        ("What is the capital of Aruba?", "place"),
        ("How many moons does Mars have?", "number"),
        ("How much did the film gross?", "number"),
        ("Who was born first, Albert Einstein or Aldous Huxley?", "choice"),
        ("What does the name aardvark mean?", "clause"),
    ],
)
def test_answer_type_cues(question, kind):
    assert answer_type(question).kind == kind


def test_typed_question_gets_the_span_not_the_passage():
    g = ExtractiveGenerator()
    gen = g.generate("Who shot Abraham Lincoln?", PASSAGES[:3])
    assert gen.text == "John Wilkes Booth"
    assert gen.generator == "extractive"
    assert gen.output_tokens == 3


@pytest.mark.parametrize(
    ("question", "span"),
    [
        ("Who shot Abraham Lincoln?", "John Wilkes Booth"),
        ("When was Ada Lovelace born?", "10 December 1815"),
        ("In what year was Ada Lovelace born?", "1815"),
        ("Where was Ada Lovelace born?", "London"),
        ("How many Bernoulli numbers did her algorithm compute?", "7"),
        ("How old was Ada Lovelace when she died?", "36"),
        ("Who designed the Analytical Engine?", "Charles Babbage"),
    ],
)
def test_answer_type_cues_pick_the_span(question, span):
    g = ExtractiveGenerator()
    ps = PASSAGES[:3] + BIO
    assert g.generate(question, ps).text == span
    assert g.generate(question, ps, guidance=SHORTER).text == span


def test_guidance_is_deterministic_and_changes_the_answer():
    g = ExtractiveGenerator()
    q = "When did Ada Lovelace die?"
    short = g.generate(q, BIO).text
    long = g.generate(q, BIO, guidance="Give a more complete answer.").text
    assert short == "1852"
    assert long.startswith("Lovelace died of uterine cancer in 1852") and long.endswith(".")
    assert all(g.generate(q, BIO).text == short for _ in range(3))
    assert g.generate(q, list(reversed(BIO))).text == short  # order of arrival does not matter
    why = "Why did Ada Lovelace die so young?"
    clause = g.generate(why, BIO).text
    shorter = g.generate(why, BIO, guidance=SHORTER).text
    assert len(shorter.split()) <= len(clause.split())


def test_clause_question_answers_with_best_supporting_clause():
    g = ExtractiveGenerator()
    text = g.generate("Why did Ada Lovelace die so young?", BIO).text
    assert "uterine cancer" in text
    assert text[0].isupper() and text.endswith(".")
    assert len(text) < len(BIO[1].text)  # a direct answer, not the passage


def test_temporal_choice():
    ps = [
        Passage("a-0", "Albert Einstein", "", "Albert Einstein was born in Ulm on 14 March 1879."),
        Passage("b-0", "Aldous Huxley", "", "Aldous Huxley was born in Godalming on 26 July 1894."),
    ]
    g = ExtractiveGenerator()
    q = "Who was born first, Albert Einstein or Aldous Huxley?"
    assert g.generate(q, ps).text == "Albert Einstein"
    assert "1879" in g.generate(q, ps, guidance="a more complete answer").text
    q2 = "Who was born later, Albert Einstein or Aldous Huxley?"
    assert g.generate(q2, ps).text == "Aldous Huxley"


def test_non_temporal_choice_names_the_option_the_evidence_is_about():
    ps = [Passage("c-0", "Algeria", "", "With an area of 2,381,741 km2, Algeria is the largest "
                  "country in Africa.")]  # fmt: skip
    q = "Which country is larger by area, Algeria or Angola?"
    assert ExtractiveGenerator().generate(q, ps).text == "Algeria"


def test_choice_answer_is_an_option_when_the_best_sentence_names_both():
    ps = [
        Passage("f-0", "Fish", "", "Ray-finned fishes and amphibians both have many known "
                "species, and fishes are the larger group of vertebrates."),
        Passage("a-0", "Amphibian", "", "Amphibians are a class of vertebrates with about "
                "8,000 known species."),
    ]  # fmt: skip
    q = "Which group has fewer known species, ray-finned fishes or amphibians?"
    assert ExtractiveGenerator().generate(q, ps).text == "amphibians"


def test_choice_answer_is_empty_when_no_sentence_names_an_option():
    ps = [Passage("x-0", "Vertebrate", "", "Vertebrates have many known species in the sea.")]
    q = "Which group has fewer known species, amphibians or ray-finned fishes?"
    assert ExtractiveGenerator().generate(q, ps).text == ""


def test_no_passages_gives_empty_answer():
    assert ExtractiveGenerator().generate("Who?", []).text == ""


def test_make_generator_choices():
    gen, notes = make_generator(Settings(model="extractive"))
    assert gen.name == "extractive" and notes == []
    gen, notes = make_generator(Settings(model=None))  # nothing installed in this home
    assert gen.name == "extractive" and notes == [NO_MODEL_NOTE]
    from scim_edge.errors import ModelError

    with pytest.raises(ModelError):
        make_generator(Settings(model="no-such-model"))


def test_prompt_format_order_and_caps():
    ps = [
        Passage("x-0", "Other", "", "unrelated words " * 10),
        Passage("y-0", "Abraham Lincoln", "", "Lincoln was shot by Booth. " * 200),
    ]
    p = build_prompt("Who shot Lincoln?", ps, passage_max_tokens=50, input_max_tokens=80)
    assert p.text.startswith("question: Who shot Lincoln? context: Lincoln was shot")
    assert p.text.endswith(" answer:")
    assert [x.doc_id for x in p.passages] == ["y-0", "x-0"]  # hybrid order
    assert " [SEP] " in p.text
    assert p.tokens <= 80
    g = build_prompt("Who shot Lincoln?", ps, guidance="be brief", input_max_tokens=1024)
    assert g.text.endswith(" guidance: be brief answer:")


def test_person_spans_skip_quoted_titles_and_bare_title_nouns():
    from scim_edge.generation.extractive import _spans

    q = "Who wrote the essay?"
    qw = {"who", "wrote", "the", "essay"}
    quoted = _spans("person", 'His essay "Why I Write" was praised by Cyril Connolly.', q, qw)
    assert [s for _, s in quoted] == ["Cyril Connolly"]
    titled = _spans("person", "The President met Mary Todd at the theatre.", q, qw)
    assert "President" not in [s for _, s in titled] and "Mary Todd" in [s for _, s in titled]


# Real leads (vital-en, CC BY-SA Wikipedia contributors), shortened.
ROTHSCHILD = Passage("7811-0", "Rothschild family", "", "The Rothschild family is a wealthy "
    "Ashkenazi Jewish noble banking family originally from Frankfurt, Germany. The family's "
    "documented history starts in 16th-century Frankfurt; its name is derived from the family "
    "house, Rothschild, built by Isaak Elchanan Bacharach in Frankfurt in 1567. The family "
    "rose to prominence with Mayer Amschel Rothschild (1744–1812), a court factor to the "
    "German Landgraves of Hesse-Kassel in the Free City of Frankfurt, Holy Roman Empire, who "
    "established his banking business in the 1760s.")  # fmt: skip
FRANKFURT = Passage("3261-0", "Frankfurt", "", "Frankfurt am Main, usually shortened to "
    "Frankfurt, is the most populous city in the German state of Hesse. Its 778,589 "
    "inhabitants as of 2025 make it the fifth-most populous city in Germany. Located in the "
    "foreland of the Taunus on its namesake river Main, the city forms a continuous "
    "conurbation with Offenbach am Main; its urban area has a population of more than 2.7 "
    "million.")  # fmt: skip


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        # the whole question's words point at the Rothschild sentence ("Holy Roman Empire")
        ("On which river stands the city where the Rothschild family originated?", "Main"),
        # read over every passage, "16th-century" in the first hop's article answers "16"
        ("How many people live in the city where the Rothschild family originated?", "778,589"),
    ],
)
def test_the_second_hop_is_read_over_the_bridge_article_as_a_question_about_it(question, expected):
    g = ExtractiveGenerator()
    assert g.answer_with_support(question, [ROTHSCHILD, FRANKFURT])[0] == expected


GM = Passage("3444-0", "General Motors", "", "General Motors Company (GM) is an American "
    "multinational automotive manufacturing company headquartered in Detroit, Michigan, "
    "United States.")  # fmt: skip
DETROIT = Passage("2367-0", "Detroit", "", "Detroit is the most populous city in the U.S. "
    "state of Michigan. It is situated on the bank of the Detroit River across from the "
    "Canadian city of Windsor, Ontario.")  # fmt: skip


def test_a_name_with_the_bridge_entity_in_it_can_answer_the_second_hop():
    # "Detroit River" is all words of the question asked of Detroit, none of the user's
    q = "On the bank of which river is the city where General Motors has its head office?"
    assert ExtractiveGenerator().answer_with_support(q, [GM, DETROIT])[0] == "Detroit River"


def test_without_the_bridge_article_the_bridge_entity_is_still_no_answer():
    q = "On which river stands the city where the Rothschild family originated?"
    assert ExtractiveGenerator().answer_with_support(q, [ROTHSCHILD])[0] != "Frankfurt"


REVOLUTION = Passage("900-0", "American Revolutionary War", "", "The war's outcome seemed "
    "uncertain for most of the war, but Washington and the Continental Army's decisive victory "
    "in the Siege of Yorktown in 1781 led King George III and the Kingdom of Great Britain to "
    "negotiate an end to the war.")  # fmt: skip


def test_a_bridge_entity_of_the_asked_kind_is_the_answer():
    # the description ("the decisive win that …") is of another kind than the one asked for
    # ("which siege"): the Siege of Yorktown, named for the clause, is the siege asked for
    q = "Which siege in 1781 gave Washington the decisive win that brought Britain to the table?"
    assert ExtractiveGenerator().answer_with_support(q, [REVOLUTION])[0] == "Siege of Yorktown"


MOZART = Passage("905-0", "Wolfgang Amadeus Mozart", "", "Wolfgang Amadeus Mozart was born in "
    "Salzburg, on the banks of the Salzach, in 1756.")  # fmt: skip
SALZACH = Passage("906-0", "Salzach", "", "The Salzach is a river with a length of 225 "
    "kilometres.")  # fmt: skip


def test_a_bridge_entity_whose_article_says_it_is_of_the_asked_kind_is_the_answer():
    # "Salzach", named beside the city described, does not say "river"; its lead does
    q = "Which river flows through the city where Mozart was born?"
    assert ExtractiveGenerator().answer_with_support(q, [MOZART, SALZACH])[0] == "Salzach"


def test_a_bridge_of_the_asked_kind_itself_still_bans_its_entity():
    # asked "which city" through "the city where …": Frankfurt is the city described, the
    # way to the answer, though its lead says it is a city, as the question asks
    q = "Which city lies near the city where the Rothschild family originated?"
    assert ExtractiveGenerator().answer_with_support(q, [ROTHSCHILD, FRANKFURT])[0] != "Frankfurt"
