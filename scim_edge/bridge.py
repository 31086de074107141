"""Bridge entities of multi-hop questions.

A multi-hop question reaches its answer through an entity that it describes but does not
name: "On which river stands *the city where the Rothschild family originated*?" The
first retrieval finds the passage about the described entity's clue (the Rothschild
family, "originally from Frankfurt"); the answer sits in another article (Frankfurt's).
A follow-up query that repeats the question finds the first article again; one that names
the bridge entity ("Frankfurt river stands city") finds the second.

Three steps, all lexical and general (no rule names a particular question):

1. `find(question)`: the bridge phrase, a determiner + head noun followed by
   - a relative clause: "the city *where* …", "the man *who* …", "the country *that* …",
     "the town *in which* …";
   - a zero relative: "the novel *Ayn Rand published* in 1957", "the engineer *the Eiffel
     Tower is named after*" (a name, then a verb within a few words);
   - an *of*-phrase on a head that names an entity, ending the phrase with a name: "the
     author *of Madame Bovary*", "the capital *of Germany*" (`ENTITY_HEADS`); "moved the
     capital of Afghanistan from Kandahar …" is no bridge.
   The outermost phrase whose rest of the question keeps content words of its own wins:
   "What is the capital of the country where …" skips "the capital of …" (its rest, "What
   is", asks nothing beyond the phrase) and takes "the country where …"; "What is the
   capital of France?" has no bridge at all.
2. `candidates(question, bridge, passages, answer)`: entities (textutil.entities' proper-noun
   runs) in the passage sentences that match the clause, not named by the question, scored
   by how well their sentence matches the clause, their distance to the matched words, an
   appositive cue ("the engineer Gustave Eiffel", "namesake river Main"), a place
   preposition when the head is a place ("originally *from* Frankfurt"), and a penalty for
   a name used as a modifier ("French writer"); a longer name of an entity the question
   names ("Nintendo Co" for "Nintendo") and a lone abbreviation ("Ltd.") are no
   candidates. The previous round's answer (the intermediate answer) counts when it is
   such an entity too.
3. `remaining_keywords(question, bridge, sentence)`: the question's content words minus the
   clause words the bridge's sentence already used; the follow-up query is the bridge
   entity plus these.
4. `question_through(bridge, candidate)`: the question asked of the entity itself ("On
   which river stands Frankfurt ?"), which the reader reads over the entity's own article
   once the follow-up has brought it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scim_edge import textutil as tu
from scim_edge.types import Passage

RELATIVE_WORDS = frozenset({"where", "whose", "whom", "who", "which", "that", "when"})
RELATIVE_PREPOSITIONS = frozenset({"in", "on", "at", "from", "by", "for", "to", "with", "of"})
DETERMINERS = frozenset({"the", "a", "an", "this", "its", "his", "her", "their"})
WH_WORDS = frozenset({"what", "which", "who", "whom", "whose", "where", "when", "how", "why"})
# Head nouns whose "of"-phrase names a single entity ("the author of X" is a person): only
# these start an of-bridge, so "the population of Kyoto" stays a plain question.
ENTITY_HEADS = frozenset(
    """
    author writer poet novelist playwright composer painter artist sculptor architect
    director founder cofounder co-founder creator inventor discoverer designer builder
    leader ruler king queen emperor empress president chairman owner wife husband son
    daughter father mother brother sister spouse successor predecessor teacher student
    pupil capital birthplace hometown headquarters seat home
    """.split()
)
# Head nouns of places: their bridge entity is often introduced by a preposition
# ("originally from Frankfurt", "headquartered in Lyon").
PLACE_HEADS = frozenset(
    """
    city town village country nation state province region county capital island river
    lake sea mountain continent kingdom empire republic place birthplace hometown port
    """.split()
)
PLACE_PREPOSITIONS = frozenset({"in", "from", "at", "near", "of", "to"})
# Not stopwords, yet never a head noun.
PREPOSITIONS = frozenset(
    """
    behind beyond across along among amongst around near inside outside within without
    toward towards upon via per despite like unlike versus onto throughout
    """.split()
)
# A zero relative ("the novel Ayn Rand published") needs a verb of the outer question before
# it. An auxiliary just before the phrase makes it the subject of an inverted question ("did
# the mathematician Alain Connes win …"): a name after its noun is then an appositive.
AUXILIARIES = frozenset("do does did is are was were has have had".split())
# Words by which the rest of a question only equates the answer with the described entity
# ("What is the name of the city where …", "Who is considered the founder of …"): the
# phrase then describes the answer itself, not a bridge to it.
NAMING_WORDS = frozenset(
    """
    name names named called call known considered regarded seen thought believed described
    deemed viewed
    """.split()
)
MAX_MODIFIERS = 3
ZERO_RELATIVE_REACH = 5
CANDIDATE_LIMIT = 3
_CLAUSE_END = re.compile(r"[,;:?!]")


@dataclass(frozen=True)
class Bridge:
    """A described entity in a question: "the city where the Rothschild family originated"."""

    phrase: str  # the whole description
    head: str  # its head noun: "city"
    clause: str  # what identifies it: "where the Rothschild family originated"
    before: str  # the question's words before the phrase: "On which river stands"
    after: str  # and after it: "?"

    @property
    def outer(self) -> str:
        """The question without the phrase: "On which river stands ?"."""
        return " ".join(x for x in (self.before, self.after) if x)


@dataclass(frozen=True)
class Candidate:
    """A bridge entity found in the passages, with the sentence that names it."""

    entity: str
    score: float
    sentence: str
    title: str


def _is_name(tok: str) -> bool:
    return bool(tok) and tok[0].isupper() and tu.is_word(tok)


def _interrogative(toks: list[str], tags: list[tuple[str, str]], j: int) -> bool:
    """A wh-word that asks ("which river", "how many"), not one that relates ("the city
    where …", "the man who founded …")."""
    w = toks[j].lower()
    if w in ("how", "why"):
        return True
    if w not in ("what", "which", "whose"):
        return False
    return j + 1 >= len(toks) or not (tu.is_verb_tag(tags[j + 1][1]) or not tu.is_word(toks[j + 1]))


def _clause_end(toks: list[str], tags: list[tuple[str, str]], start: int) -> int:
    """Where a clause starting at `start` ends: at a comma-like mark, at a wh-word that asks
    (the outer question resuming: "… originated stands on which river"), or at the end."""
    for j in range(start + 1, len(toks)):
        if _CLAUSE_END.fullmatch(toks[j]) or _interrogative(toks, tags, j):
            return j
    return len(toks)


def _name_end(toks: list[str], start: int) -> int:
    """End of the name starting at `start` ("the Eiffel Tower", "Madame Bovary"); `start`
    itself when none starts there."""
    j = start + 1 if start < len(toks) and toks[start].lower() == "the" else start
    if j >= len(toks) or not _is_name(toks[j]):
        return start
    while j < len(toks) and (
        _is_name(toks[j]) or toks[j].isdigit()
        or (toks[j] in ("of", "and", "de") and j + 1 < len(toks) and _is_name(toks[j + 1]))
    ):  # fmt: skip
        j += 1
    return j


def _match_at(toks: list[str], tags: list[tuple[str, str]], i: int) -> tuple[int, int, int] | None:
    """(head index, clause start, clause end) for a bridge phrase starting at determiner i."""
    for h in range(i + 1, min(i + 1 + MAX_MODIFIERS + 1, len(toks) - 1)):
        tok = toks[h]
        low = tok.lower()
        if not tu.is_word(tok) or low in tu.STOPWORDS or low in PREPOSITIONS:
            return None
        nxt = toks[h + 1]
        nlow = nxt.lower()
        head_ok = tok.islower()
        if head_ok and nlow in RELATIVE_WORDS:
            return h, h + 1, _clause_end(toks, tags, h + 1)
        if (
            head_ok
            and nlow in RELATIVE_PREPOSITIONS
            and h + 2 < len(toks)
            and toks[h + 2].lower() in ("which", "whom")
            and not _interrogative(toks, tags, h + 2)
        ):
            end = _clause_end(toks, tags, h + 2)
            if any(tu.is_verb_tag(tags[j][1]) for j in range(h + 3, end)):
                return h, h + 1, end  # "the town in which she was born", not "of which X?"
            return None
        if head_ok and nlow == "of" and low in ENTITY_HEADS:
            end = _name_end(toks, h + 2)
            if end > h + 2 and (end == len(toks) or _CLAUSE_END.fullmatch(toks[end])):
                return h, h + 1, end  # "the author of Madame Bovary", and nothing after
        inverted = i > 0 and toks[i - 1].lower() in AUXILIARIES
        outer_verb = any(tu.is_verb_tag(tag) for _, tag in tags[:i])
        named_next = nlow in ("the", "a", "an") or _is_name(nxt)
        if head_ok and outer_verb and not inverted and named_next:
            # zero relative: a name, then a verb within a few words
            k = h + 2 if nlow in ("the", "a", "an") else h + 1
            if k < len(toks) and _is_name(toks[k]):
                for j in range(k + 1, min(k + ZERO_RELATIVE_REACH, len(tags))):
                    if tu.is_verb_tag(tags[j][1]) and not _is_name(toks[j]):
                        return h, h + 1, _clause_end(toks, tags, h + 1)
    return None


def find(question: str) -> Bridge | None:
    """The outermost bridge phrase of `question` whose rest still asks something, or None
    when it describes no entity that the rest of the question depends on."""
    tags = list(tu.sentence_tags(question))
    toks = [t for t, _ in tags]
    for i, tok in enumerate(toks):
        if tok.lower() not in DETERMINERS:
            continue
        m = _match_at(toks, tags, i)
        if m is None:
            continue
        h, c0, c1 = m
        b = Bridge(" ".join(toks[i:c1]), toks[h].lower(), " ".join(toks[c0:c1]),
                   " ".join(toks[:i]), " ".join(toks[c1:]))  # fmt: skip
        if not [w for w in tu.content_words(b.outer) if w not in NAMING_WORDS]:
            continue  # "What is the capital of France?": the phrase is the whole question
        if not tu.content_words(b.clause):
            continue
        return b
    return None


# ---- bridge entities in passages ------------------------------------------------------


def _entity_spans(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, text) of each proper-noun run in `sentence` (textutil.entities' runs,
    with token positions)."""
    tagged = tu.sentence_tags(sentence)
    names = set(tu.entities(sentence))
    out: list[tuple[int, int, str]] = []
    i = 0
    n = len(tagged)
    while i < n:
        if tu.is_proper_tag(tagged[i][1]) and tu.is_word(tagged[i][0]):
            j = i + 1
            while j < n and (
                (tu.is_proper_tag(tagged[j][1]) and tu.is_word(tagged[j][0]))
                or (
                    tagged[j][0].lower() in ("of", "de", "von", "van", "da", "del", "am")
                    and j + 1 < n
                    and tu.is_proper_tag(tagged[j + 1][1])
                )
            ):
                j += 1
            text = " ".join(t.strip("\"'`‘’“”.,;:") for t, _ in tagged[i:j]).strip()
            if text in names or any(text.startswith(e) for e in names):
                out.append((i, j, text))
            i = j
        else:
            i += 1
    return out


def _is_modifier(tagged: Sequence[tuple[str, str]], end: int) -> bool:
    """A name used as an adjective: "French writer", "Soviet space program"."""
    if end >= len(tagged):
        return False
    tok = tagged[end][0]
    return tok.islower() and tu.is_word(tok) and tok not in tu.STOPWORDS


def _is_appositive(tagged: Sequence[tuple[str, str]], start: int) -> bool:
    """A name that follows its common noun: "the engineer Gustave Eiffel", "river Main"."""
    if start == 0:
        return False
    tok = tagged[start - 1][0]
    return tok.islower() and tu.is_word(tok) and tok not in tu.STOPWORDS


def _common_word(start: int, end: int, text: str, passage_text: str) -> bool:
    """A sentence's capitalised first word that the passage also writes in lower case
    ("Vehicles …" beside "vehicles"): a common noun, not a name."""
    if start != 0 or end - start != 1 or " " in text:
        return False
    return re.search(rf"\b{re.escape(text.lower())}\b", passage_text) is not None


def _extends(entity: str, q_names: list[frozenset[str]]) -> bool:
    """A longer name of an entity the question names ("Nintendo Co" for "Nintendo")."""
    stems = tu.stem_set(entity)
    return any(n and n <= stems for n in q_names)


def _in_question(entity: str, q_stems: frozenset[str]) -> bool:
    stems = tu.stem_set(entity)
    return not stems or stems <= q_stems


def candidates(
    question: str,
    bridge: Bridge,
    passages: Sequence[Passage],
    answer: str = "",
    limit: int = CANDIDATE_LIMIT,
) -> list[Candidate]:
    """Entities the passages name for the bridge's clause, best first (see the module doc)."""
    q_stems = tu.stem_set(question)
    clause = tu.stem_set(bridge.clause)
    if not clause:
        return []
    place = bridge.head in PLACE_HEADS
    q_names = [tu.stem_set(e) for e in tu.entities(question)]
    best: dict[str, Candidate] = {}
    for rank, p in enumerate(passages):
        title = tu.stem_set(p.title)
        for sent in tu.sentences(p.text):
            s_stems = tu.stem_set(sent)
            matched = clause & (s_stems | title)
            if not matched or not (clause & s_stems):
                continue
            s_score = len(matched) / len(clause) - 0.05 * rank
            tagged = tu.sentence_tags(sent)
            hits = [i for i, (t, _) in enumerate(tagged) if tu.stem(t.lower()) in matched]
            for start, end, text in _entity_spans(sent):
                if (
                    _in_question(text, q_stems)
                    or _extends(text, q_names)
                    or _common_word(start, end, text, p.text)
                    or (end - start == 1 and tagged[start][0].endswith("."))  # "Ltd."
                ):
                    continue
                score = _span_score(s_score, tagged, start, end, hits, place)
                key = text.lower()
                if key not in best or score > best[key].score:
                    best[key] = Candidate(text, score, sent, p.title)
    _add_answer_entities(best, answer, q_stems, q_names, passages)
    ranked = sorted(best.values(), key=lambda c: -c.score)
    return ranked[:limit]


def _span_score(
    s_score: float,
    tagged: Sequence[tuple[str, str]],
    start: int,
    end: int,
    hits: list[int],
    place: bool,
) -> float:
    """An entity span's score: its sentence's score `s_score`, raised by nearness to the
    clause words the sentence matched, by an appositive ("X, the ..."), by a place preposition
    before it when the bridge asks for a place; lowered when it only modifies the next noun."""
    score = s_score
    if hits:
        dist = min(min(abs(h - start), abs(h - (end - 1))) for h in hits)
        score += 0.2 / (1 + dist)
    if _is_appositive(tagged, start):
        score += 0.3
    if place and start > 0 and tagged[start - 1][0].lower() in PLACE_PREPOSITIONS:
        score += 0.3
    if _is_modifier(tagged, end):
        score -= 0.5
    return score


def _add_answer_entities(
    best: dict[str, Candidate],
    answer: str,
    q_stems: frozenset[str],
    q_names: list[frozenset[str]],
    passages: Sequence[Passage],
) -> None:
    """Fold the first hop's short answer into `best`: the intermediate answer is trusted more
    when the passages also name it, and joins at 0.5 when they do not (unless a passage
    writes it as a common word)."""
    for ent in tu.entities(answer) if answer and len(answer.split()) <= 6 else []:
        if _in_question(ent, q_stems) or _extends(ent, q_names):
            continue
        key = ent.lower()
        if key in best:
            c = best[key]
            best[key] = Candidate(c.entity, c.score + 0.5, c.sentence, c.title)
        elif not any(_common_word(0, 1, ent, p.text) for p in passages):
            best[key] = Candidate(ent, 0.5, "", "")


def _used(bridge: Bridge, candidate: Candidate) -> frozenset[str]:
    """Stems the first hop spent: the clause words the bridge's sentence (or its article's
    title) matched, and the entity's own words."""
    clause = tu.stem_set(bridge.clause)
    context = tu.stem_set(candidate.sentence) | tu.stem_set(candidate.title)
    return (clause & context if candidate.sentence else clause) | tu.stem_set(candidate.entity)


def remaining_keywords(question: str, bridge: Bridge, candidate: Candidate) -> list[str]:
    """The question's content words that the first hop did not use: minus the clause words
    the bridge's sentence (or its article's title) matched, minus the entity's own words."""
    used = _used(bridge, candidate)
    return tu.ordered_unique([w for w in tu.content_words(question) if tu.stem(w) not in used])


def question_through(bridge: Bridge, candidate: Candidate) -> str:
    """The question asked of the bridge entity itself, for the second hop's reading: the
    phrase replaced by the entity, with the clause's content words the first hop did not
    spend. "What is the capital of the Canadian province that holds most of the world's
    reserves of natural bitumen?", Alberta found by "The Canadian province of Alberta has
    most of the world's reserves of natural bitumen", becomes "What is the capital of
    Alberta holds ?" (the sentence says "has"): its words point at "Alberta's capital
    Edmonton", where the whole question's (bitumen, reserves) point back at the sentence
    that named Alberta. "In what year did the prince whom Aristotle began tutoring in 343 BC
    arrive in Afghanistan?" keeps "arrive Afghanistan", which the clause holds and the
    first hop did not use."""
    used = _used(bridge, candidate)
    rest = [
        w for w in tu.words(bridge.clause)
        if w.lower() not in tu.STOPWORDS and tu.stem(w.lower()) not in used
    ]  # fmt: skip
    return " ".join(x for x in (bridge.before, candidate.entity, *rest, bridge.after) if x)


def title_names(title: str, entity: str) -> bool:
    """True when an article's title names the entity ("Paraná River" for "Paraná"): a
    bridge entity, or one option of a comparison."""
    t, e = tu.stem_set(title), tu.stem_set(entity)
    return bool(e) and e <= t and len(t - e) <= 1
