"""The hybrid lexical score that orders BM25 candidates before the top k are taken.

    hybrid(d, q) = 0.7·|content(d) ∩ content(q)| / |content(q)| + 0.3·sim(title(d), q)
                   + 0.3·near(d, q)

content(d) is the passage's words and its article's title: a passage is read in its
article, as BM25 reads the title field with the text. Within the article "Abraham Lincoln",
"Lincoln was assassinated by John Wilkes Booth" covers all of "Who assassinated Abraham
Lincoln?", and a reading list that repeats "Abraham Lincoln" in book titles does not.
sim(title, q) is the share of the title's content words that occur in q, and 1 when the
whole title appears in q as a phrase: a question naming "Abraham Lincoln" ranks the
article of that title above pages that merely mention him. Content words are compared by
their Porter stems, so "assassinated" in a question meets "assassination" in a passage
(the index's BM25 analyzer stems the same way). near(d, q) is the share of the question's
neighbouring content words ("first president", "capital … France") that the passage keeps
close together (`proximity`): among the many passages that hold every word of "Who was the
first president of the United States?", George Washington's lead is the one that says it.
Ties keep the retriever's (BM25) order.
Passage ids already seen are never returned again.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from scim_edge import lead_names, proximity
from scim_edge import textutil as tu
from scim_edge.types import Passage

CONTENT_WEIGHT = 0.7
TITLE_WEIGHT = 0.3
PROXIMITY_WEIGHT = 0.3  # as the title's: a question's phrasing read in the passage
LEAD_BONUS = 0.3  # the lead of an article the question names (see named_leads)
MAX_NAMED_LEADS = 3


_WORD = re.compile(r"\w+")


def quick_stems(text: str) -> frozenset[str]:
    """Porter stems of the content words of `text`, split on word characters only: the
    same stems as `textutil.stem_set` for running text, without the Treebank tokenizer,
    which is too slow for the fifty candidate passages of every search."""
    return frozenset(tu.stem(w) for w in _WORD.findall(text.lower()) if w not in tu.STOPWORDS)


@lru_cache(maxsize=65536)
def passage_content(doc_id: str, text: str) -> frozenset[str]:
    """Content-word stems of a passage, cached by id (texts are immutable per id)."""
    return quick_stems(text)


@lru_cache(maxsize=65536)
def passage_stem_sequence(doc_id: str, text: str) -> tuple[str, ...]:
    """A passage's words as stems, in order, cached by id (a tuple: a tenth of the memory
    of a position table, for the 65,536 passages kept)."""
    return tuple(sys.intern(tu.stem(w)) for w in _WORD.findall(text.lower()))


@lru_cache(maxsize=4096)
def question_pairs(question: str) -> tuple[tuple[str, str], ...]:
    """The question's neighbouring content words, as Porter stem pairs (`proximity`)."""
    words = _WORD.findall(question.lower())
    stems = [tu.stem(w) for w in words]
    return tuple(proximity.adjacent_pairs(words, stems, tu.STOPWORDS.__contains__))


def nearness(passage: Passage, question: str) -> float:
    """The share of the question's word pairs the passage keeps close together."""
    pairs = question_pairs(question)
    if not pairs:
        return 0.0
    wanted = {w for pair in pairs for w in pair}
    positions: dict[str, list[int]] = {}
    for i, w in enumerate(passage_stem_sequence(passage.doc_id, passage.text)):
        if w in wanted:
            positions.setdefault(w, []).append(i)
    return proximity.kept_share(pairs, positions)


def names_title(title: str, query: str) -> bool:
    """The whole title occurs in the query as a phrase ("Abraham Lincoln")."""
    q_low = " " + " ".join(w.lower() for w in tu.words(query)) + " "
    t_low = " " + " ".join(w.lower() for w in tu.words(title)) + " "
    return bool(t_low.strip()) and t_low in q_low


def title_similarity(title: str, query: str) -> float:
    t_words = tu.stem_set(title)
    if not t_words:
        return 0.0
    if names_title(title, query):
        return 1.0
    return len(t_words & tu.stem_set(query)) / len(t_words)


def overlap(words: frozenset[str], query_words: frozenset[str]) -> float:
    if not query_words:
        return 0.0
    return len(words & query_words) / len(query_words)


def is_lead(passage: Passage) -> bool:
    """The first passage of its article (ids are "<page_id>-<n>")."""
    return passage.doc_id.endswith("-0")


@lru_cache(maxsize=65536)
def title_content(title: str) -> frozenset[str]:
    return quick_stems(title)


def passage_words(passage: Passage) -> frozenset[str]:
    """The content-word stems of a passage read in its article: its text's and its
    title's (see the module doc)."""
    return passage_content(passage.doc_id, passage.text) | title_content(passage.title)


def hybrid_score(passage: Passage, query: str) -> float:
    d = passage_words(passage)
    title = title_similarity(passage.title, query)
    lead = LEAD_BONUS if is_lead(passage) and names_title(passage.title, query) else 0.0
    near = PROXIMITY_WEIGHT * nearness(passage, query)
    return CONTENT_WEIGHT * overlap(d, tu.stem_set(query)) + TITLE_WEIGHT * title + near + lead


# a capitalised name, its words joined by the small words titles keep ("The War of the
# Worlds", "Bank of England"); a name in double quotes
_NAME_RUN = re.compile(
    r"[A-Z0-9][\w’'.&-]*(?:\s+(?:(?:of|the|and|de|la|le|von|van|da|del|du|for|in|on|a|an|to)\s+)*"
    r"[A-Z0-9][\w’'.&-]*)*"
)
_QUOTED = re.compile(r"[\"“]([^\"“”]{2,80})[\"”]")
MAX_NAMES = 4


def question_names(question: str) -> list[str]:
    """Names the question may give as an article's title, at most 2 × MAX_NAMES: its
    capitalised runs without the question's own opening words ("Who", "In"), a run that
    starts with "The" also without it ("The War of the Worlds", "War of the Worlds"), and
    its double-quoted terms."""
    names: list[str] = []
    for m in _NAME_RUN.finditer(question):
        words = re.sub(r"(?:['’]s?)$", "", m.group(0).rstrip(".")).split()  # "Richard's"
        while words and words[0].lower() in tu.STOPWORDS and words[0] != "The":
            words = words[1:]  # "Who", "In", "What": the question's own words
        if not words or all(w.lower() in tu.STOPWORDS for w in words):
            continue
        names.append(" ".join(words))
        if words[0] == "The" and len(words) > 1:
            names.append(" ".join(words[1:]))
    names += [q.strip() for q in _QUOTED.findall(question)]
    return list(dict.fromkeys(n for n in names if n))[: 2 * MAX_NAMES]


def named_pages(retriever: Any, question: str, pool: Sequence[Passage]) -> dict[int, str]:
    """The articles the question names (page id → the name it gives them, "" when it
    gives the whole title): an article whose whole title occurs in the question (found
    among the searched passages), and one that a name in the question gives as its exact
    title, one of its redirects, or the other name its lead gives its subject (looked up
    in the index: "Who wrote the novel The War of the Worlds?" brings only "World War
    I"-like titles to the search, "the NBA" names "National Basketball Association", "the
    University of Munich" names "LMU Munich", whose lead says it is "also referred to as"
    that)."""
    pages = {pid: "" for pid in ordered_pages(p for p in pool if names_title(p.title, question))}
    lookups = [getattr(retriever, m, None) for m in ("article_lead", "lead_naming")]
    for name in question_names(question):
        for lookup in lookups:
            lead = lookup(name) if lookup is not None else None
            if lead is not None:
                pages.setdefault(lead.page_id, name)
                break
    return pages


def names_leads_give(question: str, passages: Iterable[Passage]) -> dict[str, str]:
    """Title → the name the question gives it, for each lead among `passages` that gives
    its subject a name of the question as another name (`lead_names`), by the rules of
    `named_pages`' look-up: an article the question names by its whole title keeps it,
    and a name two leads give names neither. This is what the reader, which reads only
    its passages, knows of that look-up."""
    names = question_names(question)
    giving: dict[str, set[str]] = {}
    for p in passages:
        if is_lead(p) and not names_title(p.title, question):
            name = next((n for n in names if lead_names.gives_name(p.text, n)), None)
            if name is not None:
                giving.setdefault(name, set()).add(p.title)
    return {titles.pop(): name for name, titles in giving.items() if len(titles) == 1}


def named_leads(
    retriever: Any,
    question: str,
    pool: Sequence[Passage],
    exclude: Collection[str],
    query: str | None = None,
    pages: Iterable[int] | None = None,
) -> list[Passage]:
    """The lead passages of the articles the question names (`named_pages`) that the
    search did not bring: when a question names an article, its lead is usually the best
    evidence (DrQA's prior), even when passages repeating the question's verb outrank it
    ("Who wrote Animal Farm?")."""
    have = {p.doc_id for p in pool} | set(exclude)
    if pages is None:
        pages = named_pages(retriever, question, pool)
    out: list[Passage] = []
    for page_id in pages:
        lead_id = f"{page_id}-0"
        if lead_id not in have and len(out) < MAX_NAMED_LEADS:
            lead = retriever.get(lead_id)
            if lead is not None:
                # scored as the pool's search (`query`) would score it, not 0: the reader
                # weighs BM25 scores
                if hasattr(retriever, "score_of"):
                    lead = replace(lead, score=retriever.score_of(query or question, lead_id))
                out.append(lead)
                have.add(lead_id)
    return out


def by_given_name(
    score: Callable[[Passage], float], names: dict[int, str]
) -> Callable[[Passage], float]:
    """`score`, reading a passage of an article the question names under another name
    (`named_pages`) as if its title were that name: "LMU Munich" is the article the
    question calls "the University of Munich", and its title earns what a title the
    question gives in full earns."""
    given = {pid: name for pid, name in names.items() if name}
    if not given:
        return score

    def scored(p: Passage) -> float:
        name = given.get(p.page_id)
        own = score(p)
        return own if name is None else max(own, score(replace(p, title=name)))

    return scored


def ordered_pages(passages: Iterable[Passage]) -> list[int]:
    seen: dict[int, None] = {}
    for p in passages:
        seen.setdefault(p.page_id, None)
    return list(seen)


def rank(
    candidates: Iterable[Passage],
    score: Callable[[Passage], float],
    k: int | None = None,
    exclude_ids: Collection[str] = (),
) -> list[Passage]:
    """Candidates sorted by `score` (stable, so BM25 order breaks ties), minus excluded and
    duplicate ids, cut to k."""
    seen = set(exclude_ids)
    unique: list[Passage] = []
    for p in candidates:
        if p.doc_id not in seen:
            seen.add(p.doc_id)
            unique.append(p)
    scored = sorted(unique, key=lambda p: -score(p))
    return scored if k is None else scored[:k]


def rank_hybrid(
    candidates: Sequence[Passage], query: str, k: int | None = None, exclude_ids=()
) -> list[Passage]:
    return rank(candidates, lambda p: hybrid_score(p, query), k, exclude_ids)
