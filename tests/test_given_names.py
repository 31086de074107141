"""Given names read from an index's person articles: which names the question maker asks
"who" of, and the reader's given-name features (`scim_edge.given_names`)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from scim_edge.cli import main
from scim_edge.generation import reader_features as rf
from scim_edge.generation.reader import NAMES_KEY, Reader, default_weights_path, load_weights
from scim_edge.generation.spans import Span, sentence_spans
from scim_edge.given_names import given_names, is_person
from scim_edge.lead_types import LeadTypes
from scim_edge.linear import LinearModel
from scim_edge.practice import store
from scim_edge.practice.questions import pairs_from_passages, wh_phrase
from scim_edge.retrieval import BM25Retriever
from scim_edge.types import Passage


def _lead(title: str, text: str, page: int) -> Passage:
    return Passage(f"{page}-0", title, "", text)


FRANKLIN = _lead(
    "Rosalind Franklin",
    "Rosalind Franklin (25 July 1920 – 16 April 1958) was a British chemist. She worked on "
    "the structure of DNA.",
    1,
)
ARMSTRONG = _lead(
    "Neil Armstrong",
    "Neil Armstrong (1930 – 2012) was an American astronaut. He was the first person to walk "
    "on the Moon.",
    2,
)
EUROPE = _lead(
    "Western Europe",
    "Western Europe is the western region of Europe. It lies on the western coast of the "
    "continent, west of the western steppe.",
    3,
)
# A person whose title opens with a word the leads write in lower case: "Western" above.
WESTERN = _lead(
    "Western Smith", "Western Smith (1900 – 1950) was a painter. He painted landscapes.", 4
)
LEADS = [
    FRANKLIN,
    ARMSTRONG,
    EUROPE,
    WESTERN,
    Passage("1-1", "Rosalind Franklin", "Life", "Later."),
]


def _span(sentence: str, text: str):
    return next(s for s in sentence_spans(sentence) if s.text == text)


def test_a_person_article_gives_its_first_word():
    assert "rosalind" in given_names(LEADS)


def test_a_place_article_gives_no_name():
    assert "western" not in given_names([EUROPE])


def test_a_place_whose_lead_gives_its_size_in_parentheses_gives_no_name():
    river = _lead("Salween River", "The Salween is a river, about 3,289 km (2,044 mi) long.", 5)
    assert "salween" not in given_names([river])


def test_a_word_the_leads_write_in_lower_case_is_not_a_name():
    assert "western" not in given_names(LEADS)


def test_a_word_whose_own_article_says_it_is_not_a_name():
    types = LeadTypes.of_passages([_lead("Neil", "Neil is a river in Scotland. It is long.", 9)])
    assert "neil" not in given_names(LEADS, types)


def test_the_leads_read_are_capped():
    assert given_names(LEADS, max_leads=1) == frozenset({"rosalind"})


def test_a_title_of_rank_is_not_a_given_name():
    saint = _lead("Saint Augustine", "Saint Augustine (354 – 430) was a bishop. He wrote.", 5)
    assert "saint" not in given_names([saint])


def test_a_name_the_leads_write_another_way_is_kept():
    # the lead spells her Maria: "marie" is never written, in either case
    curie = _lead("Marie Curie", "Maria Sklodowska (1867 – 1934) was a physicist. She won.", 6)
    assert "marie" in given_names([curie])


def test_a_known_name_is_kept_though_the_index_has_no_article_of_its_people():
    # the shipped reader's names reach a small index's practice
    assert "ada" in given_names([EUROPE], known=["ada"])


def test_a_known_name_the_index_calls_it_is_left_out():
    types = LeadTypes.of_passages([_lead("Neil", "Neil is a river in Scotland. It is long.", 9)])
    assert "neil" not in given_names([EUROPE], types, known=["neil"])


def test_practice_knows_the_shipped_readers_names(demo_index, tmp_path, monkeypatch):
    """`practice` reads the index's names with the shipped reader's (the enwiki sample alone
    gives a handful): the names it uses hold the shipped ones the index does not deny."""
    from scim_edge.practice import runner

    seen: list[frozenset[str]] = []

    def spy(*args, **kwargs):
        seen.append(given_names(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr(runner, "given_names", spy)
    index = tmp_path / "demo"
    shutil.copytree(demo_index, index)
    main(["practice", "--index", str(index), "--questions", "50", "--no-critic"])
    shipped = set(load_weights(default_weights_path()).meta[NAMES_KEY])
    assert len(shipped - seen[0]) < len(shipped) // 10


def test_a_name_starting_with_a_given_name_is_a_persons():
    sent = "The first man on the Moon was Neil Armstrong in 1969."
    assert is_person(_span(sent, "Neil Armstrong"), None, frozenset({"neil"}))


def test_a_name_opening_with_initials_is_a_persons():
    sent = "The War of the Worlds is a novel by English author H. G. Wells."
    assert is_person(_span(sent, "H. G. Wells"), None, frozenset({"neil"}))


def test_initials_with_no_name_after_them_are_not_a_persons_name():
    for initials in ("H. G.", "E. T"):
        assert not rf.starts_with_given_name(Span(initials, "entity", 0, "", ""), frozenset())


def test_a_capitalised_name_with_no_given_name_is_not_a_persons():
    sent = "The plague reached Southern Russia in 1346."
    assert not is_person(_span(sent, "Southern Russia"), None, frozenset({"neil"}))


def test_a_name_whose_article_says_it_is_not_a_persons():
    sent = "Trade grew across Western Europe after the war."
    types = LeadTypes.of_passages([EUROPE])
    assert not is_person(_span(sent, "Western Europe"), types, frozenset({"western"}))


def test_the_question_maker_asks_who_only_of_a_person():
    sent = "The plague reached Southern Russia in 1346."
    wh, _ = wh_phrase(_span(sent, "Southern Russia"), sent, person=False)
    assert wh == "what"


def test_the_question_maker_asks_who_of_a_known_person():
    sent = "The plague reached Southern Russia in 1346."
    wh, _ = wh_phrase(_span(sent, "Southern Russia"), sent, person=True)
    assert wh == "who"


MOON = [
    Passage(
        "7-0",
        "Moon landing",
        "",
        "Neil Armstrong walked on the Moon in 1969 for Big Tech and NASA.",
        score=3.0,
    )
]


def _column(question: str, name: str, names: frozenset[str]) -> dict[str, float]:
    col = rf.FEATURES.index(name)
    return {c.text: float(c.features[col]) for c in rf.candidates(question, MOON, names=names)}


def test_the_given_name_feature_marks_a_persons_name():
    assert (
        _column("Who walked on the Moon?", "given_name", frozenset({"neil"}))["Neil Armstrong"]
        == 1.0
    )


def test_the_given_name_feature_leaves_other_names():
    assert _column("Who walked on the Moon?", "given_name", frozenset({"neil"}))["Big Tech"] == 0.0


ORWELL = [
    Passage("8-0", "Animal Farm", "", "Animal Farm is a novella by George Orwell.", score=3.0),
    Passage("8-1", "Animal Farm", "Writing", "Orwell wrote it in 1943 with Big Tech.", score=2.0),
]


def test_a_surname_said_alone_is_the_given_named_persons():
    col = rf.FEATURES.index("given_name")
    cands = rf.candidates("Who wrote Animal Farm?", ORWELL, names=frozenset({"george"}))
    assert {c.text for c in cands if c.features[col]} == {"George Orwell", "Orwell"}


def test_the_given_name_feature_needs_the_names():
    assert _column("Who walked on the Moon?", "given_name", frozenset())["Neil Armstrong"] == 0.0


def test_the_person_question_feature_needs_a_person_question():
    col = _column("Where did the astronaut walk?", "person_q_given_name", frozenset({"neil"}))
    assert sum(col.values()) == 0.0


def test_the_reader_reads_its_names_from_the_weights():
    model = load_weights(default_weights_path())
    assert Reader(model).names == frozenset(model.meta[NAMES_KEY])


def test_the_shipped_reader_knows_given_names():
    assert len(Reader(load_weights(default_weights_path())).names) > 100


def test_the_reader_reads_with_its_names():
    """Weights that read only the given-name feature: the reader's names must reach the
    features for the person's name to win."""
    n = len(rf.FEATURES)
    weights = [0.0] * n
    weights[rf.FEATURES.index("person_q_given_name")] = 5.0
    model = LinearModel(list(rf.FEATURES), np.array(weights), np.zeros(n), np.ones(n),
                        meta={NAMES_KEY: ["neil"]})  # fmt: skip
    reading = Reader(model).read("Who walked on the Moon?", MOON)
    assert {c.text: m for m, c in reading.ranked}["Neil Armstrong"] > 0.5


def test_damaged_names_in_reader_weights_are_one_line(sample_index, tmp_path, capsys):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    data = json.loads(default_weights_path().read_text(encoding="utf-8"))
    data["meta"][NAMES_KEY] = 7
    folder = store.practice_dir(index)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reader.json").write_text(json.dumps(data), encoding="utf-8")
    rc = main(["ask", "Who wrote Animal Farm?", "--index", str(index), "--model", "extractive"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "given_names are not a list of words" in err


def test_the_sample_index_knows_huxley_is_a_person(sample_index):
    r = BM25Retriever.open(sample_index)
    assert "aldous" in given_names(r.sample(0), LeadTypes.for_index(sample_index))


@pytest.mark.parametrize("title", ["Animal Farm", "American Football Conference", "Apollo 11"])
def test_a_work_or_a_place_gives_no_name(sample_index, title):
    r = BM25Retriever.open(sample_index)
    names = given_names(r.sample(0), LeadTypes.for_index(sample_index))
    assert title.split()[0].lower() not in names


def _who_answers(sample_index, names: frozenset[str]) -> list[str]:
    r = BM25Retriever.open(sample_index)
    types = LeadTypes.for_index(sample_index)
    pairs = pairs_from_passages(r.sample(5), 300, 5, types=types, names=names)
    return [p.answer for p in pairs if p.question.lower().startswith("who ")]


def test_practice_asks_who_only_of_names_the_index_knows_are_people(sample_index):
    types = LeadTypes.for_index(sample_index)
    r = BM25Retriever.open(sample_index)
    names = given_names(r.sample(0), types)
    unknown = [
        a
        for a in _who_answers(sample_index, names)
        if not rf.starts_with_given_name(Span(a, "entity", 0, "", ""), names)
        and not getattr(types.of(a), "person", False)
    ]
    assert unknown == []


def test_with_names_practice_still_asks_who_of_people():
    text = "Neil Armstrong walked on the Moon in July 1969 with Buzz Aldrin. The crew trained."
    ps = [Passage(f"{i}-1", "Moon landing", "", text) for i in range(20)]
    pairs = pairs_from_passages(iter(ps), 40, 5, names=frozenset({"neil"}))
    assert "Neil Armstrong" in {p.answer for p in pairs if p.question.startswith("Who ")}


def test_without_names_practice_asks_who_of_capitalised_names(sample_index):
    assert _who_answers(sample_index, frozenset()) != []
