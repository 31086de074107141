"""Query formulation for SCIM's adaptive retrieval: initial, augment and refine.

- initial: the question itself; candidates ranked by the hybrid score (ranking.py).
- augment (the answer misses question keywords): K_missing = Q \\ A. The query lists the
  missing keywords first, then the question's entities as a topic anchor, instead of
  repeating the question (the K_missing ranking below does the emphasising). Candidates
  are ranked by
      0.7·|d∩K_missing|/|K_missing| + 0.3·|d∩Q|/|Q|
  with the hybrid score against the question as a tie-breaker. Every passage augment adds
  must name the question's topic: all the words of one entity it names, or of a term it
  quotes (`topic_anchors`). The topic's own article is often used up by the first round,
  and the next best matches for the other keywords are then about something else ("coined
  term geography" brings *Event horizon*: "Rindler coined the term"). With nothing on the
  topic left, augment adds nothing, and SCIM stops on "no new evidence" with the answer it
  has.
- refine (the answer is unsupported or thin on facts): the answer's content words absent
  from every retrieved passage, plus the question's topic, look for alternative sources.
  Candidates are ranked by the hybrid score against that query, and an article whose
  title names an entity of the question gets a bonus (specific beats general).

Multi-hop and comparison questions (issue 11 §5):
- bridge: when the question describes an entity instead of naming it ("the city where the
  Rothschild family originated", `bridge.find`), the follow-up queries of augment and of
  ITER-RETGEN carry the bridge entity: the entity the passages retrieved so far name for
  the description, or the intermediate answer (`bridge.candidates`). Each of the best
  `BRIDGE_QUERIES` entities gives one query, the entity plus the question's keywords the
  first hop did not use ("Frankfurt river stands city"); candidates are ranked by
      max_i w_i·(hybrid(d, query_i) + 0.5·[title(d) names entity_i]),  w_i = 1 − 0.1·i
  with the augment score (augment) or the hybrid score against the question (ITER-RETGEN)
  as a tie-breaker. With no bridge, or no entity for it, both work as before.
- comparison: the initial retrieval of "Which came first, X or Y?" runs one query per
  option (`comparison.option_queries`) next to the question, ranks each query's
  candidates by the hybrid score against it plus the title bonus for its option, and
  takes them in turn, so that both options' articles arrive in the first k.

Every retrieval pulls `settings.candidates` BM25 candidates, excludes every id already
seen, drops candidates that share no word with the query or the question and those from
link/source sections ("External links", "References", …), re-ranks and keeps the top k.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from scim_edge import bridge as br
from scim_edge import comparison, ranking
from scim_edge import textutil as tu
from scim_edge.generation import reader_features as rf
from scim_edge.generation.spans import is_demonym
from scim_edge.quality import Evidence
from scim_edge.rewriter import entities as quoted_and_named
from scim_edge.types import Passage

MISSING_WEIGHT = 0.7
QUESTION_WEIGHT = 0.3
ENTITY_TITLE_BONUS = 0.5
TIE_BREAK = 1e-3
# a passage that states the rank the question asks for ("the longest river in Africa")
RANK_BONUS = 0.3
MAX_QUERY_TERMS = 32
BRIDGE_QUERIES = 2
BRIDGE_RANK_DECAY = 0.1


@dataclass
class Formulation:
    """What to search for and how to rank what comes back."""

    mode: str
    queries: list[str]
    scorer: Callable[[Passage], float]
    keywords: list[str] = field(default_factory=list)  # K_missing, or unsupported words
    # one scorer per query: each query's candidates are ranked on their own and taken in
    # turn (comparison questions: one query per option)
    query_scorers: list[Callable[[Passage], float]] | None = None
    bridge: list[str] = field(default_factory=list)  # bridge entities the queries carry
    # what every passage this retrieval adds must name (`topic_anchors`); none: anything
    anchors: list[frozenset[str]] = field(default_factory=list)


def question_topic(question: str) -> list[str]:
    """The question's entities ("Abraham Lincoln"), or its content words when it names none."""
    ents = tu.entities(question)
    return ents if ents else tu.ordered_unique(tu.content_words(question))


def _join(terms: list[str]) -> str:
    return " ".join(terms[:MAX_QUERY_TERMS])


def initial(question: str) -> Formulation:
    """The question itself; for a comparison, one query per option as well."""

    ranked = rf.analyse(question) if rf.ranked_kinds(question) else None
    names = _topic_names(question) if ranked is not None else []

    def scorer(p: Passage) -> float:
        score = ranking.hybrid_score(p, question)
        if ranked is not None and _states_rank_of(p, ranked, names):
            score += RANK_BONUS
        return score

    c = comparison.parse(question)
    if c is None:
        return Formulation("initial", [question], scorer)
    queries = comparison.option_queries(question)
    scorers = [_option_scorer(q, name) for q, name in zip(queries, c.names, strict=True)]
    return Formulation("initial", [*queries, question], scorer, query_scorers=[*scorers, scorer])


def _topic_names(question: str) -> list[frozenset[str]]:
    """The stems of each name the question gives, but the Earth or the world, which only
    scope what it asks ("the largest hot desert on Earth")."""
    stems = (ranking.quick_stems(n) for n in ranking.question_names(question))
    return [s for s in stems if s and not s <= rf.WHOLE_WORLD]


def _states_rank_of(p: Passage, ranked: rf.QuestionInfo, names: list[frozenset[str]]) -> bool:
    """The passage names what the question names and states the rank it asks for: "the
    largest in the Solar System" in Jupiter's lead, not "his most famous work" in another
    writer's for "What is Geoffrey Chaucer's most famous work?"."""
    words = ranking.passage_words(p)
    return all(n <= words for n in names) and rf.states_asked_rank(ranked, p.text)


def _option_scorer(query: str, name: str) -> Callable[[Passage], float]:
    def score(p: Passage) -> float:
        bonus = ENTITY_TITLE_BONUS if br.title_names(p.title, name) else 0.0
        return ranking.hybrid_score(p, query) + bonus

    return score


@dataclass(frozen=True)
class BridgeHop:
    """The bridge entities for a follow-up retrieval and the query each one gives."""

    entities: list[str]
    queries: list[str]

    def score(self, p: Passage) -> float:
        best = 0.0
        for i, (entity, query) in enumerate(zip(self.entities, self.queries, strict=True)):
            bonus = ENTITY_TITLE_BONUS if br.title_names(p.title, entity) else 0.0
            weight = 1.0 - BRIDGE_RANK_DECAY * i
            best = max(best, weight * (ranking.hybrid_score(p, query) + bonus))
        return best


def bridge_hop(question: str, answer: str, passages: Sequence[Passage]) -> BridgeHop | None:
    """The bridge entities `passages` (and the intermediate `answer`) name for the entity
    the question describes, or None when it describes none or the passages name none."""
    if not passages:
        return None
    b = br.find(question)
    if b is None:
        return None
    cands = br.candidates(question, b, passages, answer)[:BRIDGE_QUERIES]
    if not cands:
        return None
    queries = [_join([c.entity, *br.remaining_keywords(question, b, c)]) for c in cands]
    return BridgeHop([c.entity for c in cands], queries)


def augment_score(passage: Passage, missing: frozenset[str], q_words: frozenset[str]) -> float:
    d = ranking.passage_content(passage.doc_id, passage.text)
    return MISSING_WEIGHT * ranking.overlap(d, missing) + QUESTION_WEIGHT * ranking.overlap(
        d, q_words
    )


# What a capitalised first word is when it is not a name: "Roughly how many…", "Going by…",
# "Besides the synapsids…" (the tagger's reading of it in lower case)
_NOT_A_NAME_TAGS = frozenset("RB RBR RBS IN VBG VBN JJ JJR JJS".split())
_WH_DETERMINERS = frozenset({"which", "what", "whose"})


def topic_anchors(question: str, answer: str) -> list[frozenset[str]]:
    """The stems of each entity the question names ("Loki", "Davao City"), less the
    answer's, and of each term it quotes ("the term 'geography'"): what a follow-up
    passage must be about. A nationality right after the wh-word ("Which Irish
    writer…") describes the answer rather than naming the topic, and a question's
    capitalised first word is a name only when it reads as a noun in lower case."""
    a_stems = ranking.quick_stems(answer)
    words = tu.words(question)
    asks_for = {words[i + 1] for i, w in enumerate(words[:-1]) if w.lower() in _WH_DETERMINERS}
    anchors = []
    for e in quoted_and_named(question):
        if e in asks_for and is_demonym(e):
            continue
        if words and e == words[0] and " " not in e:
            tags = tu.pos_tags(question[0].lower() + question[1:])
            if tags and tags[0][1] in _NOT_A_NAME_TAGS:
                continue
        if ranking.quick_stems(e) <= rf.WHOLE_WORLD:
            continue  # "on Earth" scopes what is asked: a passage may say "in the world"
        anchor = ranking.quick_stems(e) - a_stems  # as `names_anchor` reads passages
        if anchor:
            anchors.append(anchor)
    return anchors


def names_anchor(p: Passage, anchors: Sequence[frozenset[str]]) -> bool:
    """The passage (its text or title) has every stem of one of the anchors; True when
    there are none."""
    if not anchors:
        return True
    words = ranking.passage_words(p)
    return any(a <= words for a in anchors)


def augment(question: str, answer: str, passages: Sequence[Passage] | None = None) -> Formulation:
    """K_missing as the spec says; with the passages so far, a multi-hop question's
    follow-up also carries its bridge entity (see the module doc)."""
    q_words = tu.ordered_unique(tu.content_words(question))
    a_set = tu.content_set(answer)
    missing = [w for w in q_words if w not in a_set] or q_words
    topic = [w for e in tu.entities(question) for w in e.split() if w.lower() not in missing]
    query = _join(missing + tu.ordered_unique(topic)) or question
    m_set, q_set = tu.stems_of(missing), tu.stems_of(q_words)

    def scorer(p: Passage) -> float:
        return augment_score(p, m_set, q_set) + TIE_BREAK * ranking.hybrid_score(p, question)

    hop = bridge_hop(question, answer, passages or [])
    if hop is None:
        anchors = topic_anchors(question, answer)  # a bridge hop goes elsewhere: none
        return Formulation("augment", [query], scorer, list(missing), anchors=anchors)

    def bridge_scorer(p: Passage) -> float:
        return hop.score(p) + TIE_BREAK * augment_score(p, m_set, q_set)

    return Formulation(
        "augment", [*hop.queries, query], bridge_scorer, list(missing), bridge=hop.entities
    )


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


def with_answer(
    question: str, answer: str, passages: Sequence[Passage] | None = None
) -> Formulation:
    """ITER-RETGEN's query: the question plus the previous answer; with the passages so
    far, a multi-hop question's bridge-entity queries come first (see the module doc)."""
    query = f"{question} {answer}".strip()
    hop = bridge_hop(question, answer, passages or [])
    if hop is None:
        return Formulation("question+answer", [query], lambda p: ranking.hybrid_score(p, query))

    def scorer(p: Passage) -> float:
        return hop.score(p) + TIE_BREAK * ranking.hybrid_score(p, query)

    return Formulation("question+answer", [*hop.queries, query], scorer, bridge=hop.entities)


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
    relevant = tu.stem_set(question) | frozenset(
        s for q in formulation.queries for s in tu.stem_set(q)
    )

    def kept(ps: list[Passage]) -> list[Passage]:
        ps = [p for p in ps if not is_boilerplate(p) and names_anchor(p, formulation.anchors)]
        if not relevant:
            return ps
        return [
            p
            for p in ps
            if ranking.passage_content(p.doc_id, p.text) & relevant
            or tu.stem_set(p.title) & relevant
        ]

    pools = [
        kept(retriever.search(query, max(candidates, k), exclude_ids=exclude))
        for query in formulation.queries
    ]
    named: dict[int, str] = {}
    if pools and hasattr(retriever, "get"):
        found = [p for pl in pools for p in pl]
        named = ranking.named_pages(retriever, question, found)
        pools[0] += ranking.named_leads(retriever, question, found, exclude,
                                        formulation.queries[0], named)  # fmt: skip
    if formulation.query_scorers is None:
        scorer = ranking.by_given_name(formulation.scorer, named)
        return ranking.rank([p for pool in pools for p in pool], scorer, k, exclude)
    ranked = [
        ranking.rank(pool, ranking.by_given_name(scorer, named), None, exclude)
        for pool, scorer in zip(pools, formulation.query_scorers, strict=True)
    ]
    return _interleave(ranked, k)


def _interleave(ranked: list[list[Passage]], k: int) -> list[Passage]:
    """The first of each list in turn, then the second of each, …, without repeats."""
    out: list[Passage] = []
    seen: set[str] = set()
    for depth in range(max((len(r) for r in ranked), default=0)):
        for r in ranked:
            if depth < len(r) and r[depth].doc_id not in seen and len(out) < k:
                seen.add(r[depth].doc_id)
                out.append(r[depth])
    return out


# Sections that list links and sources rather than state facts: never evidence.
BOILERPLATE_SECTIONS = frozenset({
    "external links", "see also", "references", "further reading", "bibliography", "notes",
    "sources", "citations", "footnotes", "notes and references", "works cited",
    "primary sources", "secondary sources", "related links", "general references",
    "cited sources", "explanatory notes", "general bibliography",
})  # fmt: skip


def is_boilerplate(p: Passage) -> bool:
    return " ".join(p.section.lower().split()) in BOILERPLATE_SECTIONS
