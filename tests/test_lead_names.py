"""A question may name an article by another name its lead gives it ("the University of
Munich" for "LMU Munich"); the loops' first ranking then reads that article as named, as it
reads one whose title the question gives in full."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from scim_edge import lead_names, ranking
from scim_edge import query_formulation as qf
from scim_edge.generation import reader_features as rf
from scim_edge.retrieval import BM25Retriever
from scim_edge.types import Passage

QUESTION = "In which town was the University of Munich first founded?"
LMU = (
    "The Ludwig-Maximilians-Universität München, also referred to as the University of "
    "Munich, is a public research university in Munich. It was founded in Ingolstadt."
)
PAGES = [
    ("LMU Munich", LMU),
    ("Munich", "Munich is the capital of Bavaria, a town on the Isar with a university."),
    ("Town", "A town is a human settlement, larger than a village, that may have a university."),
    ("University", "A university is a school of higher education; the first town to found one."),
    ("Alpha Beta", "Alpha Beta was a physicist. He taught at the University of Munich."),
    ("National Basketball Association", "The National Basketball Association (NBA) is a league."),
    ("Gable", "William Clark Gable was an actor."),
]


def _dump(path: Path, pages: list[tuple[str, str]]) -> Path:
    page = (
        "<page><title>{t}</title><ns>0</ns><id>{n}</id><revision><id>{n}</id>"
        "<text>{x}</text></revision></page>"
    )
    body = "".join(page.format(t=t, n=n, x=x) for n, (t, x) in enumerate(pages, start=1))
    path.write_text(f"<mediawiki>{body}</mediawiki>", encoding="utf-8")
    return path


def _retriever(tmp: Path, pages: list[tuple[str, str]]) -> BM25Retriever:
    from index_builder.build import build_index

    build_index(_dump(tmp / "leads.xml", pages), tmp / "index")
    return BM25Retriever.open(tmp / "index")


@pytest.fixture(scope="module")
def retriever(tmp_path_factory) -> BM25Retriever:
    return _retriever(tmp_path_factory.mktemp("leadnames"), PAGES)


def test_a_lead_gives_its_subject_another_name_before_its_copula():
    assert lead_names.gives_name(LMU, "University of Munich")


def test_a_name_after_the_copula_is_not_given_to_the_subject():
    assert not lead_names.gives_name(LMU, "public research university")


def test_a_name_inside_a_longer_name_is_not_given():
    assert not lead_names.gives_name("William Clark Gable was an actor.", "William Clark")


def test_a_name_after_a_capitalised_word_is_part_of_a_longer_name():
    text = "The Technical University of Munich is a university."
    assert not lead_names.gives_name(text, "University of Munich")


def test_a_name_joined_to_a_word_by_a_dash_is_part_of_a_longer_name():
    text = "The post–World War II economic expansion was a period of worldwide growth."
    assert not lead_names.gives_name(text, "World War II")


def test_a_name_followed_by_its_abbreviation_is_given():
    text = "The Soviet Union, officially the Union of Soviet Socialist Republics (USSR), was …"
    assert lead_names.gives_name(text, "Union of Soviet Socialist Republics")


def test_an_abbreviation_after_a_common_word_is_a_label_not_a_name():
    text = "Air conditioning, often abbreviated A/C (US) or air con (UK), is a process."
    assert not lead_names.gives_name(text, "UK")


def test_one_word_before_the_copula_is_not_a_name_given():
    assert not lead_names.gives_name("Chinese is a group of languages.", "Chinese")


def test_an_abbreviation_in_parentheses_is_a_name_given():
    assert lead_names.gives_name(PAGES[5][1], "NBA")


def test_the_index_finds_the_article_whose_lead_gives_a_name(retriever):
    assert retriever.lead_naming("University of Munich").title == "LMU Munich"


def test_what_the_index_finds_is_the_article_s_lead(retriever):
    assert retriever.lead_naming("University of Munich").doc_id.endswith("-0")


def test_the_index_finds_an_abbreviation_given_in_a_lead(retriever):
    assert retriever.lead_naming("NBA").title == "National Basketball Association"


def test_a_hybrid_retriever_looks_names_up_as_bm25_does(retriever):
    from types import SimpleNamespace

    from scim_edge.vector_index import HybridRetriever

    hybrid = HybridRetriever(retriever, SimpleNamespace(name="vectors", passage_count=0))
    assert hybrid.lead_naming("University of Munich").title == "LMU Munich"


class _TitlesOnly:
    """A retriever that looks up titles and redirects but not the names leads give."""

    def __init__(self, inner: BM25Retriever) -> None:
        self.article_lead = inner.article_lead


def test_a_retriever_that_cannot_read_leads_names_only_titles(retriever):
    assert ranking.named_pages(_TitlesOnly(retriever), QUESTION, []) == {}


def test_a_name_two_leads_give_names_neither(tmp_path):
    twin = ("LMU twin", LMU.replace("Ludwig", "Ludwig II"))
    r = _retriever(tmp_path, [*PAGES, twin])
    assert r.lead_naming("University of Munich") is None


def test_the_question_names_the_article_under_its_other_name(retriever):
    named = ranking.named_pages(retriever, QUESTION, [])
    titles = {retriever.get(f"{pid}-0").title: name for pid, name in named.items()}
    assert titles.get("LMU Munich") == "University of Munich"


def _first(retriever: BM25Retriever, credit: bool, monkeypatch) -> str:
    if not credit:
        monkeypatch.setattr(ranking, "by_given_name", lambda score, names: score)
    found = qf.retrieve(retriever, qf.initial(QUESTION), 3, set(), 50, QUESTION)
    return found[0].title


def test_without_the_credit_titles_made_of_the_question_s_words_rank_first(retriever, monkeypatch):
    # what makes the next test able to fail
    assert _first(retriever, False, monkeypatch) != "LMU Munich"


def test_the_article_named_under_another_name_ranks_first(retriever, monkeypatch):
    assert _first(retriever, True, monkeypatch) == "LMU Munich"


# The reader reads only its passages: a lead among them that gives the question's name names
# its article for the reader too.
NBA = Passage(
    "62-0",
    "National Basketball Association",
    "",
    "The National Basketball Association (NBA) is a professional basketball league in North "
    "America composed of 30 teams.",
)
NBA_QUESTION = "How many teams play in the NBA?"


def _feature(question: str, passages: list[Passage], text: str, name: str) -> float:
    cands = {c.text: c for c in rf.candidates(question, passages)}
    return float(cands[text].features[rf.FEATURES.index(name)])


def test_a_lead_among_the_passages_that_gives_the_question_s_name_is_found():
    assert ranking.names_leads_give(NBA_QUESTION, [NBA]) == {NBA.title: "NBA"}


def test_an_article_the_question_names_by_its_title_keeps_it():
    question = "How many teams play in the National Basketball Association (NBA)?"
    assert ranking.names_leads_give(question, [NBA]) == {}


def test_a_name_two_leads_among_the_passages_give_names_neither():
    twin = Passage("63-0", "Another league", "", NBA.text.replace("National", "Northern"))
    assert ranking.names_leads_give(NBA_QUESTION, [NBA, twin]) == {}


def test_a_later_passage_gives_no_name():
    later = Passage("62-3", NBA.title, "", NBA.text)
    assert ranking.names_leads_give(NBA_QUESTION, [later]) == {}


def test_the_reader_reads_the_article_named_under_another_name_as_named():
    assert _feature(NBA_QUESTION, [NBA], "30", "title_in_question") == 1.0


def test_what_the_question_asks_beyond_that_name_is_its_relation():
    # "teams" and "play" are asked of the NBA, as they are of an article titled "NBA"
    titled = replace(NBA, title="NBA")
    assert _feature(NBA_QUESTION, [NBA], "30", "relation_overlap") == _feature(
        NBA_QUESTION, [titled], "30", "relation_overlap"
    )


def test_a_name_given_in_another_case_is_given():
    assert lead_names.gives_name(LMU, "University Of Munich")


def test_a_retriever_looks_a_name_up_once(retriever, monkeypatch):
    # every round of a loop asks again; the index under an open retriever does not change
    calls: list[str] = []
    look_up = retriever._lead_naming
    monkeypatch.setattr(retriever, "_lead_naming", lambda n: calls.append(n) or look_up(n))
    for _ in range(3):
        retriever.lead_naming("Basketball Association")
    assert calls == ["Basketball Association"]
