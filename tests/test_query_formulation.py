"""Augment and refine build the queries the spec describes, rank by its formulas, and
never return a passage id twice."""

from __future__ import annotations

import pytest
from scim_fakes import PASSAGES, MemoryRetriever

from scim_edge import query_formulation as qf
from scim_edge import ranking
from scim_edge.types import Passage

QUESTION = "Who shot Abraham Lincoln at Ford's Theatre?"


def test_hybrid_score_by_hand():
    p = Passage("x", "Abraham Lincoln", "", "Lincoln was shot by Booth at the theatre.")
    q = "Who shot Abraham Lincoln?"
    # content(q) = {shot, abraham, lincoln}; d holds shot, lincoln and, from its article's
    # title, abraham -> 3/3; title in q -> 1
    assert ranking.hybrid_score(p, q) == pytest.approx(0.7 * 3 / 3 + 0.3 * 1.0)
    other = Passage("y", "Theatre", "", "Lincoln was shot by Booth at the theatre.")
    assert ranking.hybrid_score(other, q) == pytest.approx(0.7 * 2 / 3)
    # inflections meet through stems, in words and in the question's one pair, which
    # the passage keeps ("assassination of Lincoln")
    p2 = Passage("z", "Booth", "", "The assassination of Lincoln.")
    assert ranking.hybrid_score(p2, "Who assassinated Lincoln?") == pytest.approx(0.7 + 0.3)


def test_a_passage_is_read_with_its_articles_title():
    # sample index, "Abraham Lincoln": the evidence names only "Lincoln"; a reading list
    # repeats "Abraham Lincoln" and says nothing of the assassination
    q = "Who assassinated Abraham Lincoln?"
    evidence = Passage(
        "307-6",
        "Abraham Lincoln",
        "",
        "On April 14, 1865, Lincoln was assassinated by John Wilkes Booth.",
    )
    reading = Passage("307-151", "Abraham Lincoln", "Historiography",
                      "Exploring Lincoln: Great Historians Reappraise Our Greatest President "
                      "(2015); Journal of the Abraham Lincoln Association, 34 (2013).")  # fmt: skip
    assert [p.doc_id for p in ranking.rank_hybrid([reading, evidence], q)] == ["307-6", "307-151"]


def test_rank_excludes_seen_and_duplicates():
    ps = PASSAGES[:3] + [PASSAGES[0]]
    out = ranking.rank_hybrid(ps, QUESTION, k=5, exclude_ids={"1-1"})
    ids = [p.doc_id for p in out]
    assert "1-1" not in ids
    assert len(ids) == len(set(ids))


def test_augment_query_emphasises_missing_keywords():
    answer = "Lincoln was shot."
    f = qf.augment(QUESTION, answer)
    # Q = {shot, abraham, lincoln, ford, theatre}; A = {lincoln, shot}
    assert f.keywords == ["abraham", "ford", "theatre"]
    assert f.mode == "augment"
    query = f.queries[0]
    assert query.split()[:3] == ["abraham", "ford", "theatre"]
    assert query != QUESTION
    assert "shot" not in query.split()  # covered words are not repeated


def test_augment_score_formula():
    f = qf.augment(QUESTION, "Lincoln was shot.")
    d = Passage("t", "Theatre", "", "Ford's Theatre in Washington.")
    # d ∩ K_missing = {ford, theatre} of 3; d ∩ Q = {ford, theatre} of 5
    expected = 0.7 * 2 / 3 + 0.3 * 2 / 5
    assert f.scorer(d) == pytest.approx(expected, abs=2e-3)  # + a tiny hybrid tie-breaker


def test_refine_query_uses_unsupported_answer_words_and_topic():
    seen = PASSAGES[:2]
    answer = "Lincoln was shot by Oswald in Dallas."
    f = qf.refine(QUESTION, answer, seen)
    assert f.mode == "refine"
    assert f.keywords == ["oswald", "dallas"]  # absent from every retrieved passage
    words = f.queries[0].split()
    assert words[:2] == ["oswald", "dallas"]
    assert {"abraham", "lincoln"} <= set(words)  # the question's topic


def test_refine_prefers_entity_articles():
    f = qf.refine("Who killed John Wilkes Booth?", "A soldier.", [])
    general = Passage("g", "American Civil War", "", "Booth was killed by a soldier, John Wilkes.")
    specific = Passage("s", "John Wilkes Booth", "", "Booth was killed by a soldier.")
    assert f.scorer(specific) > f.scorer(general)
    assert qf.entity_title_match("John Wilkes Booth", "Who killed John Wilkes Booth?")
    assert not qf.entity_title_match("American Civil War", "Who killed John Wilkes Booth?")


def test_retrieve_excludes_seen_ids_and_boilerplate():
    r = MemoryRetriever(list(PASSAGES))
    f = qf.initial(QUESTION)
    first = qf.retrieve(r, f, 3, set(), 50, QUESTION)
    assert len(first) == 3
    seen = {p.doc_id for p in first}
    second = qf.retrieve(r, qf.augment(QUESTION, "Lincoln was shot."), 2, seen, 50, QUESTION)
    assert not seen & {p.doc_id for p in second}
    assert r.queries[-1][2] == frozenset(seen)  # the retriever was told to exclude them
    everything = qf.retrieve(r, f, 50, set(), 50, QUESTION)
    assert "1-9" not in {p.doc_id for p in everything}  # an "External links" section


def test_retrieve_ranks_by_hybrid_score():
    r = MemoryRetriever(list(PASSAGES))
    got = qf.retrieve(r, qf.initial(QUESTION), 3, set(), 50, QUESTION)
    scores = [ranking.hybrid_score(p, QUESTION) for p in got]
    assert scores == sorted(scores, reverse=True)


def test_retrieve_nothing_for_unrelated_question():
    r = MemoryRetriever(list(PASSAGES))
    q = "zxqv blorptastic?"
    assert qf.retrieve(r, qf.initial(q), 3, set(), 50, q) == []


# ---- multi-hop and comparison -----------------------------------------------------------

# Real lead sentences (vital-en, CC BY-SA Wikipedia contributors).
HOP_PASSAGES = [
    Passage(
        "r-1",
        "Rothschild family",
        "",
        "The Rothschild family is a wealthy Ashkenazi Jewish noble banking family originally "
        "from Frankfurt, Germany.",
    ),
    Passage(
        "f-1",
        "Frankfurt",
        "",
        "Frankfurt am Main, usually shortened to Frankfurt, is the most populous city in the "
        "German state of Hesse. Located in the foreland of the Taunus on its namesake river "
        "Main, the city forms a continuous conurbation with Offenbach am Main.",
    ),
    Passage(
        "g-1",
        "Germany",
        "",
        "Germany is a country in Central Europe. Its capital and most populous city is Berlin.",
    ),
    Passage(
        "o-1",
        "Orange River",
        "",
        "The Orange River is the longest river in South Africa; the family of rivers that "
        "originated in the Lesotho highlands stands out for its length.",
    ),
]
# made up: a general article whose title is a query word and whose text holds more of the
# follow-up query's words than Frankfurt's own lead
HOP_PASSAGES.append(
    Passage("c-1", "City", "", "A city often stands on a river, as Frankfurt does.")
)
HOP_Q = "On which river stands the city where the Rothschild family originated?"


def test_augment_carries_the_bridge_entity():
    first = HOP_PASSAGES[:1]
    f = qf.augment(HOP_Q, "Frankfurt", first)
    assert f.bridge[0] == "Frankfurt"
    assert f.queries[0].split()[0] == "Frankfurt"
    r = MemoryRetriever(list(HOP_PASSAGES))
    got = qf.retrieve(r, f, 2, {"r-1"}, 50, HOP_Q)
    assert got[0].title == "Frankfurt"


def test_augment_without_passages_is_the_spec_query():
    with_none = qf.augment(HOP_Q, "Frankfurt")
    assert with_none.bridge == []
    assert with_none.queries == [qf.augment(HOP_Q, "Frankfurt", []).queries[0]]
    # a question with no bridge keeps the K_missing query even with passages
    plain = qf.augment(QUESTION, "Lincoln was shot.", PASSAGES[:2])
    assert plain.queries == qf.augment(QUESTION, "Lincoln was shot.").queries


def test_iter_retgen_query_carries_the_bridge_entity():
    # the intermediate answer is no help here; the first passage names the bridge
    f = qf.with_answer(HOP_Q, "a banking family", HOP_PASSAGES[:1])
    assert f.mode == "question+answer"
    assert f.bridge[0] == "Frankfurt"
    assert f.queries[-1] == f"{HOP_Q} a banking family"  # ITER-RETGEN's own query stays
    r = MemoryRetriever(list(HOP_PASSAGES))
    got = qf.retrieve(r, f, 1, {"r-1"}, 50, HOP_Q)
    assert [p.title for p in got] == ["Frankfurt"]


def test_comparison_initial_retrieves_each_option():
    ps = [
        Passage("n-1", "Nile", "", "The Nile is a river in Africa, 7,088 kilometres long."),
        # distractors that share more words with the question than the options' articles
        Passage("n-2", "White Nile", "", "The White Nile is a river, longer than the Blue Nile."),
        Passage("n-3", "Blue Nile", "", "The Blue Nile river is longer in flood, a Nile source."),
        Passage("p-1", "Paraná River", "", "The Paraná River is a river of 4,880 kilometres."),
    ]
    q = "Which river is longer, the Nile or the Paraná?"
    f = qf.initial(q)
    assert f.mode == "initial"
    assert f.queries[:2] == ["Nile river", "Paraná river"]
    got = qf.retrieve(MemoryRetriever(ps), f, 2, set(), 50, q)
    assert {p.title for p in got} == {"Nile", "Paraná River"}


def test_initial_is_the_question_for_other_questions():
    f = qf.initial(QUESTION)
    assert f.queries == [QUESTION]
    assert f.query_scorers is None


LOKI = "What is the name of Loki's wife?"
WIVES = [
    Passage("20-0", "Loki", "", "Loki is a god in Norse mythology, a son of Fárbauti."),
    Passage("20-1", "Loki", "Family", "Loki's wife is the goddess Sigyn; their son is Nari."),
    Passage("21-0", "Jiang Qing", "", "Jiang Qing, the wife of Mao Zedong, changed her name."),
    Passage("22-0", "Leland Stanford", "", "His wife Jane gave the university its name."),
]


def test_augment_adds_only_passages_about_the_question_topic():
    r = MemoryRetriever(list(WIVES))
    got = qf.retrieve(r, qf.augment(LOKI, "Fárbauti"), 2, {"20-0"}, 50, LOKI)
    assert [p.doc_id for p in got] == ["20-1"]


def test_augment_adds_nothing_when_no_passage_left_is_about_the_topic():
    r = MemoryRetriever(list(WIVES))
    seen = {"20-0", "20-1"}
    assert qf.retrieve(r, qf.augment(LOKI, "Sigyn"), 2, seen, 50, LOKI) == []


def test_a_quoted_term_anchors_the_follow_up():
    question = "Who coined the term 'geography'?"
    drifted = Passage("30-0", "Event horizon", "", "Wolfgang Rindler coined the term.")
    r = MemoryRetriever([drifted])
    assert qf.retrieve(r, qf.augment(question, "Eratosthenes"), 2, set(), 50, question) == []


def test_a_nationality_is_not_the_topic():
    anchors = qf.topic_anchors("Which Irish writer wrote the novel Ulysses?", "")
    assert anchors == [frozenset({"ulyss"})]


def test_a_capitalised_first_word_that_is_not_a_name_is_not_the_topic():
    question = "Roughly how many genera make up the mustard family Brassicaceae?"
    assert qf.topic_anchors(question, "") == [frozenset({"brassicacea"})]


def test_a_question_that_names_nothing_has_no_anchor():
    r = MemoryRetriever(list(WIVES))
    question = "Whose wife changed her name?"
    assert qf.topic_anchors(question, "") == []
    assert qf.retrieve(r, qf.augment(question, "Jane"), 2, set(), 50, question)


def test_earth_as_the_scope_of_a_superlative_is_not_the_topic():
    # "The Sahara … is the largest hot desert in the world" (vital-en) never says "Earth"
    assert qf.topic_anchors("Which hot desert is the largest on Earth?", "North America") == []


def test_possessives_are_not_read_as_a_quotation():
    question = "Which of Vivaldi's concertos did the artist's patron hear first?"
    assert qf.topic_anchors(question, "") == [frozenset({"vivaldi"})]


def test_a_passage_that_states_the_asked_rank_is_searched_first():
    # real sentences (vital-en, "Eris (dwarf planet)" and "Jupiter"; CC BY-SA Wikipedia
    # contributors): Eris names more of the question, in its title too
    eris = Passage("2877-0", "Eris (dwarf planet)", "", "Eris is the most massive and "
                   "second-largest-known dwarf planet in the Solar System.")  # fmt: skip
    jupiter = Passage("4560-0", "Jupiter", "", "Jupiter is the fifth planet from the Sun and "
                      "the largest in the Solar System.")  # fmt: skip
    q = "What is the largest planet in the Solar System?"
    got = qf.retrieve(MemoryRetriever([eris, jupiter]), qf.initial(q), 1, set(), 50, q)
    assert [p.title for p in got] == ["Jupiter"]


def test_a_rank_stated_of_what_the_question_does_not_name_earns_nothing():
    q = "What is Geoffrey Chaucer's most famous work?"
    other = Passage("9-0", "Wang Xizhi", "", "His most famous work is the Lantingji Xu.")  # made up
    assert qf.initial(q).scorer(other) == ranking.hybrid_score(other, q)
