"""Query formulation for SCIM's adaptive retrieval: initial, augment and refine.

- initial: the question itself; candidates ranked by the hybrid score (ranking.py).
- augment (the answer misses question keywords): K_missing = Q \\ A. The query lists the
  missing keywords first, then the question's entities as a topic anchor, instead of
  repeating the question (the K_missing ranking below does the emphasising). Candidates
  are ranked by
      0.7·|d∩K_missing|/|K_missing| + 0.3·|d∩Q|/|Q|
  with the hybrid score against the question as a tie-breaker.
- refine (the answer is unsupported or thin on facts): the answer's content words absent
  from every retrieved passage, plus the question's topic, look for alternative sources.
  Candidates are ranked by the hybrid score against that query, and an article whose
  title names an entity of the question gets a bonus (specific beats general).

Every retrieval pulls `settings.candidates` BM25 candidates, excludes every id already
seen, drops candidates that share no word with the query or the question and those from
link/source sections ("External links", "References", …), re-ranks and keeps the top k.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from scim_edge import ranking
from scim_edge import textutil as tu
from scim_edge.quality import Evidence
from scim_edge.types import Passage

MISSING_WEIGHT = 0.7
QUESTION_WEIGHT = 0.3
ENTITY_TITLE_BONUS = 0.5
TIE_BREAK = 1e-3
MAX_QUERY_TERMS = 32


@dataclass
class Formulation:
    """What to search for and how to rank what comes back."""

    mode: str
    queries: list[str]
    scorer: Callable[[Passage], float]
    keywords: list[str] = field(default_factory=list)  # K_missing, or unsupported words


def question_topic(question: str) -> list[str]:
    """The question's entities ("Abraham Lincoln"), or its content words when it names none."""
    ents = tu.entities(question)
    return ents if ents else tu.ordered_unique(tu.content_words(question))


def _join(terms: list[str]) -> str:
    return " ".join(terms[:MAX_QUERY_TERMS])


def initial(question: str) -> Formulation:
    return Formulation("initial", [question], lambda p: ranking.hybrid_score(p, question))


def augment_score(passage: Passage, missing: frozenset[str], q_words: frozenset[str]) -> float:
    d = ranking.passage_content(passage.doc_id, passage.text)
    return MISSING_WEIGHT * ranking.overlap(d, missing) + QUESTION_WEIGHT * ranking.overlap(
        d, q_words
    )


def augment(question: str, answer: str) -> Formulation:
    q_words = tu.ordered_unique(tu.content_words(question))
    a_set = tu.content_set(answer)
    missing = [w for w in q_words if w not in a_set] or q_words
    topic = [w for e in tu.entities(question) for w in e.split() if w.lower() not in missing]
    query = _join(missing + tu.ordered_unique(topic)) or question
    m_set, q_set = tu.stems_of(missing), tu.stems_of(q_words)

    def scorer(p: Passage) -> float:
        return augment_score(p, m_set, q_set) + TIE_BREAK * ranking.hybrid_score(p, question)

    return Formulation("augment", [query], scorer, list(missing))


def entity_title_match(title: str, question: str) -> bool:
    """True when the passage's title names one of the question's entities."""
    t = tu.stem_set(title)
    if not t:
        return False
    if ranking.title_similarity(title, question) == 1.0:
        return True
    return any(tu.stem_set(e) == t for e in tu.entities(question))


def refine(question: str, answer: str, evidence: Evidence | list[Passage]) -> Formulation:
    ev = Evidence.of(evidence)
    unsupported = [w for w in tu.ordered_unique(tu.content_words(answer)) if w not in ev.words]
    topic_terms = [w for t in question_topic(question) for w in t.split()]
    terms = unsupported + [w.lower() for w in topic_terms]
    if not unsupported:
        terms += tu.content_words(question)
    query = _join(tu.ordered_unique(terms)) or question

    def scorer(p: Passage) -> float:
        bonus = ENTITY_TITLE_BONUS if entity_title_match(p.title, question) else 0.0
        return (
            ranking.hybrid_score(p, query) + bonus + TIE_BREAK * ranking.hybrid_score(p, question)
        )

    return Formulation("refine", [query], scorer, unsupported)


def with_answer(question: str, answer: str) -> Formulation:
    """ITER-RETGEN's query: the question plus the previous answer."""
    query = f"{question} {answer}".strip()
    return Formulation("question+answer", [query], lambda p: ranking.hybrid_score(p, query))


def retrieve(
    retriever,
    formulation: Formulation,
    k: int,
    exclude_ids: Collection[str],
    candidates: int,
    question: str,
) -> list[Passage]:
    """BM25 candidates for each query, re-ranked by the formulation's scorer; top k new ones.

    Candidates sharing no content word with the query or the question are dropped, so a
    question that matches nothing yields nothing (and the loop says so).
    """
    exclude = set(exclude_ids)
    pool: list[Passage] = []
    for query in formulation.queries:
        pool.extend(retriever.search(query, max(candidates, k), exclude_ids=exclude))
    pool = [p for p in pool if not is_boilerplate(p)]
    relevant = tu.stem_set(question) | frozenset(
        s for q in formulation.queries for s in tu.stem_set(q)
    )
    if relevant:
        pool = [
            p
            for p in pool
            if ranking.passage_content(p.doc_id, p.text) & relevant
            or tu.stem_set(p.title) & relevant
        ]
    return ranking.rank(pool, formulation.scorer, k, exclude)


# Sections that list links and sources rather than state facts: never evidence.
BOILERPLATE_SECTIONS = frozenset({
    "external links", "see also", "references", "further reading", "bibliography", "notes",
    "sources", "citations", "footnotes", "notes and references", "works cited",
    "primary sources", "secondary sources", "related links", "general references",
    "cited sources", "explanatory notes", "general bibliography",
})  # fmt: skip


def is_boilerplate(p: Passage) -> bool:
    return " ".join(p.section.lower().split()) in BOILERPLATE_SECTIONS
