"""Comparison questions: the options and what is compared are parsed, each option's stated
fact (a year, or a quantity with its unit) is read from its own passage, and the winner
follows the question's direction. No stated fact for an option: no verdict."""

from __future__ import annotations

import pytest

from scim_edge import comparison
from scim_edge.types import Passage

# Real lead sentences (vital-en, CC BY-SA Wikipedia contributors).
NILE = Passage(
    "n-1",
    "Nile",
    "",
    "The Nile is a major north-flowing river in northeast Africa which empties into the "
    "Mediterranean Sea. At 7,088 kilometers (4,404\u00a0mi) long, it is the longest river in "
    "the world.",
)
PARANA = Passage(
    "p-1",
    "Paraná River",
    "",
    "The Paraná River is a river in south-central South America, running through Brazil, "
    "Paraguay, and Argentina for some 4,880 kilometres (3,030 mi). Among South American "
    "rivers, it is second in length only to the Amazon River.",
)
PRIDE = Passage(
    "pp-1",
    "Pride and Prejudice",
    "",
    "Pride and Prejudice is a novel by English author Jane Austen. Written when she was aged "
    "20–21, it was her third novel scribed and became the second to see print when it was "
    "published in 1813.",
)
BOVARY = Passage(
    "b-1",
    "Madame Bovary",
    "",
    "Madame Bovary: Provincial Manners, commonly known as simply Madame Bovary, is the début "
    "novel of French writer Gustave Flaubert, originally published in 1856 and 1857.",
)
VIENNA = Passage(
    "v-1",
    "Vienna",
    "",
    "Vienna is the capital, most populous city, and one of the nine states of Austria. It is "
    "Austria's primate city, with just over two million inhabitants.",
)
DETROIT = Passage(
    "d-1",
    "Detroit",
    "",
    "Detroit is the most populous city in the U.S. state of Michigan. It is the 26th-most "
    "populous city in the United States, with a population of 639,111 at the 2020 census.",
)
EIFFEL = Passage(
    "e-1",
    "Eiffel Tower",
    "",
    "The Eiffel Tower is a lattice tower on the Champ de Mars in Paris, France. It is named "
    "after the engineer Gustave Eiffel, whose company designed and built the tower from "
    "1887 to 1889.",
)
LIBERTY = Passage(
    "s-1",
    "Statue of Liberty",
    "",
    "The Statue of Liberty is a colossal neoclassical sculpture on Liberty Island. The statue "
    "was dedicated on October 28, 1886.",
)
K2 = Passage(
    "k-1",
    "K2",
    "",
    "K2, at 8,611 metres (28,251 ft) above sea level, is the second-highest mountain on "
    "Earth, after Mount Everest at 8,849 metres (29,032 ft).",
)


def test_parse_time_question():
    c = comparison.parse("Which was published first, Pride and Prejudice or Madame Bovary?")
    assert c is not None
    assert c.names == ("Pride and Prejudice", "Madame Bovary")
    assert (c.kind, c.want_max) == ("time", False)
    assert c.attribute == ("published",)


def test_parse_quantity_question_and_dimension():
    c = comparison.parse("Which river is longer, the Nile or the Paraná?")
    assert c is not None
    assert c.names == ("Nile", "Paraná")
    assert (c.kind, c.want_max, c.dimension) == ("quantity", True, "length")


def test_parse_options_without_a_comma():
    c = comparison.parse("Does Vienna or Detroit have the bigger population?")
    assert c is not None
    assert c.names == ("Vienna", "Detroit")
    assert c.dimension == "count"


def test_option_name_of_a_described_option():
    c = comparison.parse(
        "Which came first, Lindbergh's nonstop flight to Paris or the launch of Sputnik 1?"
    )
    assert c is not None
    assert c.names[0] == "Lindbergh"


@pytest.mark.parametrize(
    "question",
    ["Who assassinated Abraham Lincoln?", "Is it tea or coffee?", "What is the capital of Aruba?"],
)
def test_not_a_comparison(question):
    assert comparison.parse(question) is None


def test_option_queries_one_per_option():
    qs = comparison.option_queries(
        "Which was published first, Pride and Prejudice or Madame Bovary?"
    )
    assert qs == ["Pride and Prejudice published", "Madame Bovary published"]


def test_quantities_normalise_units_and_scales():
    assert comparison.quantities("some 4,880 kilometres (3,030 mi).", "length")[0][1] == 4880.0
    miles = comparison.quantities("a distance of 3,600 miles", "length")[0][1]
    assert miles == pytest.approx(5793.6, rel=1e-3)
    count = comparison.quantities("with just over two million inhabitants.", "count")
    assert count[0][1] == 2_000_000
    assert comparison.quantities("the 26th-most populous city", "count") == []


def test_years_skip_measures_and_read_bc():
    assert [y for _, y, _ in comparison.years("On May 20–21, 1927, he flew 3,600 miles.")] == [1927]
    assert [y for _, y, _ in comparison.years("founded in 305 BC by Ptolemy")] == [-305]
    assert comparison.years("at 1200 metres above the sea") == []


def test_compare_years_picks_the_earlier():
    q = "Which was published first, Pride and Prejudice or Madame Bovary?"
    option, facts = comparison.compare(q, [BOVARY, PRIDE])
    assert option == "Pride and Prejudice"
    assert (facts["Pride and Prejudice"].value, facts["Madame Bovary"].value) == (1813, 1856)
    assert facts["Pride and Prejudice"].support() == {
        "sentence": PRIDE.text.split(". ")[1],
        "doc_id": "pp-1",
        "title": "Pride and Prejudice",
        "section": "",
    }


def test_compare_later_direction():
    q = "Which was published later, Pride and Prejudice or Madame Bovary?"
    assert comparison.compare(q, [BOVARY, PRIDE])[0] == "Madame Bovary"


def test_finished_takes_the_end_of_a_stated_range():
    q = "Which was finished first, the Statue of Liberty or the Eiffel Tower?"
    option, facts = comparison.compare(q, [EIFFEL, LIBERTY])
    assert option == "Statue of Liberty"
    assert facts["Eiffel Tower"].value == 1889


def test_compare_lengths():
    option, facts = comparison.compare(
        "Which river is longer, the Nile or the Paraná?", [PARANA, NILE]
    )
    assert option == "Nile"
    assert facts["Paraná"].text == "4,880 kilometres"


def test_compare_population_with_number_words():
    q = "Does Vienna or Detroit have the bigger population?"
    option, facts = comparison.compare(q, [DETROIT, VIENNA])
    assert option == "Vienna"
    assert facts["Detroit"].value == 639_111


def test_other_articles_figure_is_read_next_to_the_name():
    # Everest has no article here: its height comes from K2's sentence, after its name
    option, facts = comparison.compare("Which mountain is higher, K2 or Mount Everest?", [K2])
    assert option == "Mount Everest"
    assert (facts["K2"].value, facts["Mount Everest"].value) == (8611.0, 8849.0)


def test_no_verdict_without_both_facts():
    q = "Which river is longer, the Nile or the Paraná?"
    assert comparison.compare(q, [NILE]) is None


def test_no_verdict_for_other_questions():
    assert comparison.compare("Who assassinated Abraham Lincoln?", [NILE, PARANA]) is None


EVEREST = Passage(
    "m-1",
    "Mount Everest",
    "",
    "Mount Everest is the highest mountain on Earth above sea level. Its height was most "
    "recently measured in 2020 through a joint survey by Nepalese and Chinese authorities "
    "as 8,848.86 m.",
)


def test_own_article_wins_over_a_mention_elsewhere():
    _, facts = comparison.compare("Which mountain is higher, K2 or Mount Everest?", [K2, EVEREST])
    assert facts["Mount Everest"].value == 8848.86
    assert facts["Mount Everest"].doc_id == "m-1"


def test_year_comes_from_the_sentence_about_the_attribute():
    # made up: a year of writing before the year of publication
    drafted = Passage(
        "b-2",
        "Madame Bovary",
        "",
        "Flaubert began writing Madame Bovary in 1851. It was published in 1856.",
    )
    q = "Which was published first, Pride and Prejudice or Madame Bovary?"
    assert comparison.compare(q, [drafted, PRIDE])[1]["Madame Bovary"].value == 1856


def test_years_skip_counts_outside_the_range_of_years():
    got = comparison.years("It had 2500 members and 300 ships in 1805.")
    assert [y for _, y, _ in got] == [1805]


def test_no_verdict_on_a_tie_or_the_same_option_twice():
    same_year = Passage("x-1", "Emma", "", "Emma is a novel by Jane Austen, published in 1813.")
    q = "Which was published first, Pride and Prejudice or Emma?"
    assert comparison.compare(q, [PRIDE, same_year]) is None
    assert comparison.parse("Which is longer, the Nile or the Nile?") is None


# Aldous Huxley's bibliography (enwiki sample, CC BY-SA Wikipedia contributors)
HUXLEY_NOVELS = Passage(
    "628-32",
    "Aldous Huxley",
    "Novels",
    "1921 Crome Yellow; 1923 Antic Hay; 1925 Those Barren Leaves; 1928 Point Counter Point; "
    "1932 Brave New World; 1936 Eyeless in Gaza; 1939 After Many a Summer",
)


@pytest.mark.parametrize(
    ("text", "year"),
    [
        (HUXLEY_NOVELS.text, 1932),  # a list: the year of the option's own item
        ("In 1930 he moved to Sanary, where he wrote Brave New World (1932).", 1932),
    ],
)
def test_another_articles_year_is_the_one_stated_for_the_option(text, year):
    huxley = Passage("628-9", "Aldous Huxley", "Works", text)
    q = "Which book was published first, Brave New World or Pride and Prejudice?"
    assert comparison.compare(q, [huxley, PRIDE])[1]["Brave New World"].value == year
