"""A deterministic, model-free extractive generator.

It stands in for Flan-T5 when no model is installed (or with `--model extractive`), so
every loop runs offline with nothing downloaded. It answers from the passages only:

1. The question's answer type comes from cue words: who/whom/whose or "which <person
   noun>" → a person; when / what year → a date; where / which city… → a place; how
   many / how much → a number; "X or Y" → one of the options; otherwise a clause.
2. Every sentence of the passages is scored by the question keywords it holds (weighted
   by rarity among the retrieved sentences; keywords found only in the passage's title
   count half), plus a bonus when it holds a candidate of the expected type that is not
   already in the question, minus a little for lower-ranked passages.
3. The answer is direct: for a typed question, the span of the expected type in the best
   sentence ("John Wilkes Booth", "1729", "Frankfurt", "36"); for "X or Y", the option; for
   any other question (or when no span of the type is found), the clause of the best
   sentence that carries the answer, cut at clause boundaries when the sentence is long.
4. Guidance (the critic loop's regeneration) is honoured deterministically: asking for a
   shorter or more direct answer gives the span, or the shortest clause that still holds
   the question's keywords; asking for a complete or more detailed answer gives the whole
   supporting sentence.

Same input, same output: no randomness, no clock.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from scim_edge import bridge, comparison, measures
from scim_edge import textutil as tu
from scim_edge.generation import reader_features as rf
from scim_edge.generation.prompting import order_passages
from scim_edge.generation.reader import Reader, Reading
from scim_edge.generation.spans import (
    COURTESY_TITLES,
    NOT_PERSON_WORDS,
    NUMBER_RE,
    Span,
    unit_head,
)
from scim_edge.generation.support import best_support, support_of
from scim_edge.lead_types import LeadTypes
from scim_edge.quality import _TEMPORAL_RE, well_formed
from scim_edge.types import Generation, Passage

NAME = "extractive"

PERSON_NOUNS = frozenset(
    """
    person people man woman men women who whom whose sculptor ruler conductor scientist player
    philosopher mathematician writer author poet composer painter king queen emperor empress
    president prime minister chancellor actor actress director inventor founder leader
    general scholar artist singer musician explorer astronaut psychiatrist physician doctor
    politician member prince princess pope saint architect engineer chemist physicist
    biologist economist novelist playwright character protagonist hero heroine god goddess
    wife husband son daughter father mother brother sister uncle aunt teacher student pupil
    monarch pharaoh sultan shah tsar czar khan chief captain commander admiral officer
    astronomer historian theologian linguist psychologist sociologist lyricist journalist
    dramatist designer athlete champion coach manager owner creator developer discoverer
    tutor successor predecessor nymph
    """.split()
)
PLACE_NOUNS = frozenset(
    """
    city town village country nation state province region capital island continent place
    county district river mountain lake sea ocean area territory kingdom empire port
    municipality microstate location site land
    """.split()
)
NUMBER_HEADS = ("how many", "how much", "how long", "how old", "how far", "how tall",
                "how big", "how large", "how high", "how deep", "how wide", "how heavy",
                "what percentage", "what proportion", "what number")  # fmt: skip
DATE_HEADS = ("when", "what year", "which year", "in what year", "in which year", "what date",
              "what century", "which century", "what decade", "since when")  # fmt: skip
_SHORTER = re.compile(
    r"\b(short(er|en)?|concise|brief(er)?|direct(ly)?|only the answer|just the answer|"
    r"fewer words|one (word|phrase)|to the point|succinct|answer only|format)\b",
    re.IGNORECASE,
)
_LONGER = re.compile(r"\b(more (detail|complete|context)|complete|elaborate|explain)\b", re.I)
_CLAUSE_SPLIT = re.compile(r"\s*(?:;|\s[–—]\s|,\s(?=(?:and|but|while|which|who|whereas|although|"
                           r"though|where|when)\b))\s*")  # fmt: skip
_UNIT_AFTER = re.compile(r"\s([a-z]+)")
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
_PLACE_PREPS = frozenset({"in", "at", "from", "to", "near", "of", "into", "capital"})
_YEAR = re.compile(r"\b(1\d{3}|20\d{2})\b")
_COMPARATIVES = (
    "first",
    "earlier",
    "earliest",
    "before",
    "older",
    "oldest",
    "sooner",
    "later",
    "last",
    "latest",
    "youngest",
    "younger",
    "newer",
    "recent",
    "which",
    "who",
)
# Nationality and language adjectives ("American", "Canadian-born") are not names.
_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:an|ese|ish|ic|i)(?:-born)?$")
_HARD_PENALTY = 100_000
_SOFT_PENALTY = 10_000
MAX_CLAUSE_WORDS = 35
MIN_CLAUSE_WORDS = 6


@dataclass(frozen=True)
class AnswerType:
    kind: str  # person | date | place | number | choice | clause
    options: tuple[str, ...] = ()
    want_first: bool = True  # for choices: earlier/first vs later/last
    temporal: bool = False  # a choice decided by dates (first, earlier, older, ...)


def answer_type(question: str) -> AnswerType:
    q = " ".join(question.lower().split())
    q_words = [w.lower() for w in tu.words(question)]
    choice = re.search(r"[,:]\s*([^,:?]+?)\s+or\s+([^,:?]+?)\s*\??$", question)
    if choice:
        later = bool(re.search(r"\b(later|last|latest|youngest|younger|newer|more recent)\b", q))
        earlier = bool(re.search(r"\b(first|earlier|earliest|before|older|oldest|sooner)\b", q))
        options = (choice.group(1).strip(), choice.group(2).strip())
        return AnswerType("choice", options, not later, later or earlier)
    if measures.asked(question):  # "What is the diameter of Mars?", "How fast…"
        return AnswerType("number")
    if any(q.startswith(h) or f" {h} " in f" {q} " for h in NUMBER_HEADS):
        return AnswerType("number")
    if any(q.startswith(h) or f" {h} " in f" {q} " for h in DATE_HEADS):
        return AnswerType("date")
    if "where" in q_words:
        return AnswerType("place")
    if q_words and q_words[0] in ("who", "whom", "whose") or "who" in q_words[:3]:
        return AnswerType("person")
    m = re.search(r"\b(?:which|what)((?:\s+[a-z-]+){1,3})", q)
    for noun in m.group(1).split() if m else ():
        if noun in PERSON_NOUNS or noun.rstrip("s") in PERSON_NOUNS:
            return AnswerType("person")
        if noun in PLACE_NOUNS or noun.rstrip("s") in PLACE_NOUNS:
            return AnswerType("place")
        if noun in ("year", "date", "century", "decade"):
            return AnswerType("date")
    if re.search(r"\b(capital|birthplace)\b", q) and q_words[:1] in (["what"], ["which"]):
        return AnswerType("place")
    return AnswerType("clause")


@dataclass
class _Candidate:
    passage: Passage
    rank: int
    sentence: str
    score: float
    span: str | None


def _question_words(question: str) -> set[str]:
    return {w.lower() for w in tu.words(question)}


def _spans(kind: str, sentence: str, question: str, q_lower: set[str]) -> list[tuple[int, str]]:
    """Candidate answer spans of the expected type, with their character offsets."""
    if kind == "date":
        return _date_spans(sentence, question)
    if kind == "number":
        return _number_spans(sentence, question, q_lower)
    if kind in ("person", "place"):
        return _name_spans(kind, sentence, q_lower)
    return []


def _date_spans(sentence: str, question: str) -> list[tuple[int, str]]:
    """Dates and other temporal expressions the question does not already give, without
    their leading preposition ("in 1066" gives "1066")."""
    out: list[tuple[int, str]] = []
    for m in _TEMPORAL_RE.finditer(sentence):
        span = re.sub(r"^(?:in|on|by|since|until|from|during|circa|c\.)\s+", "", m.group(0),
                      flags=re.I).strip()  # fmt: skip
        if span.lower() not in question.lower():
            out.append((m.start(), span))
    return out


def _number_spans(sentence: str, question: str, q_lower: set[str]) -> list[tuple[int, str]]:
    """Numbers with the unit that follows them, bare years pushed back (_HARD_PENALTY)."""
    out: list[tuple[int, str]] = []
    for m in NUMBER_RE.finditer(sentence):
        span = m.group(0).strip()
        unit = _UNIT_AFTER.match(sentence, m.end())  # "36 years", not "7 Bernoulli"
        if unit and unit.group(1) not in tu.STOPWORDS and unit.group(1) not in q_lower:
            span = f"{span} {unit.group(1)}"
        if span and span.lower() not in question.lower():
            # a bare year is rarely what "how many/old/long" asks for: rank it last
            year_like = bool(_YEAR.fullmatch(span))
            out.append((m.start() + (_HARD_PENALTY if year_like else 0), span))
    return out


def _name_spans(kind: str, sentence: str, q_lower: set[str]) -> list[tuple[int, str]]:
    """Named entities that can answer a who/where question: not the question's own names,
    months or demonyms, nor quoted titles; leading question words and person nouns dropped.
    Offsets carry the penalties of `_name_offset`."""
    out: list[tuple[int, str]] = []
    low = sentence.lower()
    pos = 0
    for ent in tu.entities(sentence):
        ent_words = {w.lower() for w in ent.split()}
        if ent_words <= q_lower or ent_words & _MONTHS:
            continue
        if all(_DEMONYM.match(w) for w in ent.split()):
            continue
        start = low.find(ent.lower(), pos)
        if start < 0:
            start = low.find(ent.lower())
        if start >= 0:
            pos = start
        # drop question words leading the run ("Sculptor George Stanley" keeps the name)
        if _inside_quotes(sentence, start) or ent.split()[0].lower() in _WH_WORDS:
            continue  # a quoted title ("Why I Write") names a work, not a person or place
        parts = ent.split()
        while len(parts) > 1 and parts[0].lower() in q_lower | PERSON_NOUNS:
            parts = parts[1:]
        if kind == "person" and not _could_be_person(parts):
            continue
        out.append((_name_offset(kind, low, start), " ".join(parts)))
    return out


def _could_be_person(parts: list[str]) -> bool:
    """False for a run with a word no person's name holds, or only a bare title
    ("President"), which is not a name."""
    if {w.lower() for w in parts} & NOT_PERSON_WORDS:
        return False
    return not all(w.lower() in PERSON_NOUNS for w in parts)


def _name_offset(kind: str, low: str, start: int) -> int:
    """A name's ranking offset: a place after a place preposition keeps its offset (others
    take _HARD_PENALTY); the agent of a passive ("developed by Morihei Ueshiba") keeps its
    offset, other persons take _SOFT_PENALTY."""
    before = low[: max(start, 0)].split()[-1:] if start > 0 else []
    if kind == "place":
        prefer = bool(before and before[0] in _PLACE_PREPS)
        return start if prefer else start + _HARD_PENALTY
    agent = bool(before and before[0] == "by")
    return start if agent else start + _SOFT_PENALTY


_WH_WORDS = frozenset({"who", "whom", "whose", "what", "when", "where", "which", "why", "how"})


def _inside_quotes(sentence: str, start: int) -> bool:
    """Whether offset `start` falls inside a quotation in `sentence`."""
    if start <= 0:
        return False
    before = sentence[:start]
    return before.count('"') % 2 == 1 or before.count("“") > before.count("”")


def _keyword_positions(sentence: str, q_stems: set[str]) -> list[int]:
    low = sentence.lower()
    return [m.start() for w in q_stems for m in re.finditer(rf"\b{re.escape(w)}", low)]


def _best_span(spans: list[tuple[int, str]], anchors: list[int], kind: str) -> str | None:
    if not spans:
        return None
    # Unlikely spans (a place without a preposition, a bare year for a count) were pushed
    # back by _HARD_PENALTY; a person who is not the agent of a passive by _SOFT_PENALTY.

    def key(item: tuple[int, str]) -> tuple[float, int]:
        pos, span = item
        extra = 0.0
        if pos >= _HARD_PENALTY:
            pos -= _HARD_PENALTY
            extra = 1000.0
        elif pos >= _SOFT_PENALTY:
            pos -= _SOFT_PENALTY
            extra = 30.0
        dist = min((abs(pos - a) for a in anchors), default=pos)
        multiword = 0 if (kind == "person" and " " in span) else 1
        return (extra + dist + 40 * multiword, pos)

    return min(spans, key=key)[1]


def _option_name(option: str) -> str:
    """The name an option leads with: "Alberta as a Canadian province" → "Alberta",
    "Animal Farm" stays whole (a tagger reads its first word alone as a common noun)."""
    words = option.split()
    while words and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    run: list[str] = []
    for i, w in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        joins = bool(run) and w in _OPTION_JOINERS and nxt[:1].isupper()
        if w[:1].isupper() or w[:1].isdigit() or joins:
            run.append(w)
        else:
            break
    return " ".join(run) or option


_OPTION_JOINERS = frozenset({"of", "de", "von", "van", "da", "del", "and", "&", "the"})


def _option_stems(option: str) -> frozenset[str]:
    return tu.stem_set(_option_name(option))


def _option_said(options: Sequence[str], cands: Sequence[_Candidate]) -> str:
    """With no dates to compare, the option that the best sentence naming only one of them
    is about; "" when no sentence does. The answer to "X or Y?" is X or Y: a clause of a
    sentence that names both, or neither, answers nothing asked."""
    stems = [(o, _option_stems(o)) for o in options]
    for c in cands:
        s_stems = tu.stem_set(c.sentence)
        named = [o for o, o_stems in stems if o_stems and o_stems <= s_stems]
        if len(named) == 1:
            return _option_name(named[0])
    return ""


def _narrow(span: str, question: str) -> str:
    """Narrow a full date to its year when the question asks for a year."""
    if re.search(r"\byears?\b", question, re.IGNORECASE) and not _YEAR.fullmatch(span):
        m = re.search(r"\b\d{3,4}(?:\s*(?:BCE|BC|CE|AD))?\b", span)
        if m:
            return m.group(0)
    return span


def _clauses(sentence: str) -> list[str]:
    return [c.strip(" ,;") for c in _CLAUSE_SPLIT.split(sentence) if c and c.strip(" ,;")]


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip(" ,;:–—-")
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if text[-1] not in ".!?":
        text = text.rstrip(".") + "."
    return text


def _clause_for(sentence: str, span: str | None, q_content: set[str]) -> str:
    """The part of `sentence` that carries the answer: the whole sentence when short,
    else the clause holding the span (joined with a neighbour when too short)."""
    if len(sentence.split()) <= MAX_CLAUSE_WORDS:
        return _tidy(sentence)
    clauses = _clauses(sentence)
    if len(clauses) <= 1:
        return _tidy(_window(sentence, span, q_content))

    def coverage(c: str) -> int:
        return len(tu.content_set(c) & q_content)

    idx = None
    if span:
        idx = next((i for i, c in enumerate(clauses) if span.lower() in c.lower()), None)
    if idx is None:
        idx = max(range(len(clauses)), key=lambda i: (coverage(clauses[i]), -i))
    chosen = clauses[idx]
    lo, hi = idx, idx
    while len(chosen.split()) < MIN_CLAUSE_WORDS and (lo > 0 or hi < len(clauses) - 1):
        if lo > 0 and (
            hi == len(clauses) - 1 or coverage(clauses[lo - 1]) >= coverage(clauses[hi + 1])
        ):
            lo -= 1
        else:
            hi += 1
        chosen = ", ".join(clauses[lo : hi + 1])
    return _tidy(_window(chosen, span, q_content))


def _window(text: str, span: str | None, q_content: set[str]) -> str:
    """At most MAX_CLAUSE_WORDS words of `text`, centred on the span (or the first
    question keyword) rather than cut blindly at the end."""
    words = text.split()
    if len(words) <= MAX_CLAUSE_WORDS:
        return text
    low = [w.lower().strip(".,;:()\"'") for w in words]
    centre = 0
    first = span.split()[0].lower() if span else None
    if first and first in low:
        centre = low.index(first)
    else:
        stems = {tu.stem(w) for w in q_content}
        centre = next((i for i, w in enumerate(low) if tu.stem(w) in stems), 0)
    start = max(0, min(centre - MAX_CLAUSE_WORDS // 2, len(words) - MAX_CLAUSE_WORDS))
    return " ".join(words[start : start + MAX_CLAUSE_WORDS])


def _of_asked_kind(info: rf.QuestionInfo, b: bridge.Bridge, entity: str, types: LeadTypes) -> bool:
    """Whether `entity` is of the kind `info` asks for ("siege") by its own head word
    ("Siege of Yorktown") or by what its article says it is, while the bridge describes
    another kind ("win"): then it is no bridge but a candidate answer."""
    if not info.head or tu.stem(b.head) == info.head:
        return False
    return rf.head_is_asked(info, entity) or rf.lead_is_asked(info, types.of(entity))


def _format_span(span: Span, question: str, kind: str, title: str = "") -> str:
    """The short answer as a person would state it: a count keeps its unit unless the
    question already names it ("how long" → "36 years", "how many moons" → "79"); a full
    name in the lead of the article it names is said as the article's title ("Neil Alden
    Armstrong" → "Neil Armstrong")."""
    text = rf.stated(span, title)
    if span.kind == "number" and span.unit and kind == "number":
        q_stems = tu.stem_set(question)
        asks_count = re.search(r"\bhow many\b", question, re.I)
        if tu.stem(unit_head(span.unit)) not in q_stems and not asks_count:
            text = f"{text} {span.unit}"
    if span.kind in ("date", "year"):
        text = _narrow(text, question)
    if kind == "person":
        # Spans drop titles before a full name; a courtesy title before one word
        # ("Dr. Watson") goes when the question asks for a person.
        words = text.split()
        if len(words) > 1 and words[1][:1].isupper():
            if words[0].lower().rstrip(".") in COURTESY_TITLES:
                text = " ".join(words[1:])
    return text


class ExtractiveGenerator:
    """Picks the answer from the passages: the learned reader for factoid questions, the
    best clause for why/how questions, date comparison for "X or Y" questions."""

    name = NAME
    model = None  # no runtime to share with a model critic

    def __init__(self, settings=None, index_dir: Path | None = None) -> None:
        self.settings = settings
        self.index_dir = index_dir
        self._reader: Reader | None = None

    def attach_index(self, index_dir: Path | None) -> None:
        """Use the reader weights that `practice` fitted for this index, when it has them."""
        self.index_dir = index_dir
        self._reader = None

    def use_reader(self, reader: Reader) -> None:
        """Read with these weights from now on (practice, before it publishes them)."""
        self._reader = reader

    @property
    def reader(self) -> Reader:
        if self._reader is None:
            self._reader = Reader.for_index(self.index_dir)
        return self._reader

    @property
    def warning(self) -> str | None:
        """What every answer should say about the reader (weights standing in for an
        index's outdated ones)."""
        return self.reader.warning

    # -- scoring --------------------------------------------------------------------
    def candidates(self, question: str, passages: Sequence[Passage]) -> list[_Candidate]:
        atype = answer_type(question)
        q_stems = set(tu.stem_set(question))
        q_lower = _question_words(question)
        sents: list[tuple[int, Passage, str]] = []
        for rank, p in enumerate(passages):
            for s in tu.sentences(p.text):
                if len(s.split()) >= 3:
                    sents.append((rank, p, s))
        if not sents:
            return []
        df: Counter[str] = Counter()
        for _, _, s in sents:
            df.update(tu.stem_set(s) & q_stems)
        n = len(sents)
        idf = {w: math.log(1 + n / (1 + df[w])) for w in q_stems}
        out: list[_Candidate] = []
        for rank, p, s in sents:
            s_words = tu.stem_set(s)
            t_words = tu.stem_set(p.title)
            score = sum(idf[w] for w in q_stems & s_words)
            score += 0.5 * sum(idf[w] for w in (q_stems & t_words) - s_words)
            if not well_formed(s):
                score -= 1.0  # lists, captions and link lines state no fact
            if len(s.split()) > 60:
                score -= 0.5
            span = None
            if atype.kind in ("person", "date", "place", "number"):
                spans = _spans(atype.kind, s, question, q_lower)
                span = _best_span(spans, _keyword_positions(s, q_stems), atype.kind)
                if span:
                    score += 1.5
            elif atype.kind == "choice":
                hits = [o for o in atype.options if tu.stem_set(o) & s_words]
                if hits:
                    score += 0.5 * len(hits)
                    if _TEMPORAL_RE.search(s):
                        score += 0.5
            score -= 0.05 * rank
            out.append(_Candidate(p, rank, s, score, span))
        out.sort(key=lambda c: (-c.score, c.rank))
        return out

    def _choice(
        self, atype: AnswerType, question: str, passages: Sequence[Passage]
    ) -> tuple[str, dict[str, int]] | None:
        """For "X or Y ... first?" questions: the option with the earlier (or later) year,
        each year taken from the sentence about that option that best matches the rest of
        the question ("born", "published"); None when the passages do not tell."""
        if not atype.temporal:
            return None
        opt_stems = {}
        for opt in atype.options:
            ents = tu.entities(opt)
            opt_stems[opt] = tu.stem_set(ents[0] if ents else opt)
        skip = set().union(*opt_stems.values()) | tu.stems_of(list(_COMPARATIVES))
        q_stems = tu.stem_set(question) - skip
        years: dict[str, int] = {}
        for opt, o in opt_stems.items():
            if not o:
                continue
            best: tuple[tuple[int, bool, int], int] | None = None
            for rank, p in enumerate(passages):
                in_title = o <= tu.stem_set(p.title)
                for sent in tu.sentences(p.text):
                    s_stems = tu.stem_set(sent)
                    if not (in_title or o <= s_stems):
                        continue
                    m = _YEAR.search(sent)
                    if not m:
                        continue
                    key = (len(q_stems & s_stems), o <= s_stems, -rank)
                    if best is None or key > best[0]:
                        best = (key, int(m.group(1)))
            if best is not None:
                years[opt] = best[1]
        if len(years) < 2 or len(set(years.values())) < 2:
            return None
        pick = min if atype.want_first else max
        return pick(years, key=lambda o: years[o]), years

    # -- the Generator interface ----------------------------------------------------
    def generate(
        self,
        question: str,
        passages: list[Passage],
        guidance: str | None = None,
        max_new_tokens: int | None = None,
        exclude: Collection[str] = (),
    ) -> Generation:
        t0 = time.perf_counter()
        text, support, features = self.answer_with_support(
            question, order_passages(question, passages), guidance, exclude
        )
        if max_new_tokens:
            text = tu.truncate_words(text, max_new_tokens)
        n_in = sum(len(p.text.split()) for p in passages) + len(question.split())
        return Generation(
            text=text,
            input_tokens=n_in,
            output_tokens=len(text.split()),
            ms=(time.perf_counter() - t0) * 1000.0,
            generator=self.name,
            support=support,
            features=features,
        )

    def answer(
        self, question: str, passages: Sequence[Passage], guidance: str | None = None
    ) -> str:
        return self.answer_with_support(question, passages, guidance)[0]

    def answer_with_support(
        self,
        question: str,
        passages: Sequence[Passage],
        guidance: str | None = None,
        exclude: Collection[str] = (),
    ) -> tuple[str, list[dict[str, str]], dict[str, float]]:
        """The short answer, the sentence(s) backing it, and the reader's signals."""
        if not passages:
            return "", [], {}
        info = rf.analyse(question)
        longer = bool(guidance and _LONGER.search(guidance) and not _SHORTER.search(guidance))
        if info.kind == "choice" or comparison.parse(question) is not None:
            picked = comparison.compare(question, passages)
            if picked is not None:
                option, facts = picked
                fact = facts.get(option)
                support = [f.support() for f in (fact, *facts.values()) if f is not None]
                support = [d for i, d in enumerate(support) if d not in support[:i]]
                if longer:  # the facts compared, stated: "A (1879) and B (1894)"
                    stated = [f"{name} ({f.text})" for name, f in facts.items()]
                    return _tidy(f"{option}: " + " and ".join(stated)), support, {}
                return option, support, {"comparison": 1.0}
        if info.kind not in ("open", "choice"):
            reading = self._read(info, question, passages, exclude)
            feats = reading.features(info.kind)
            c = reading.candidate
            if c is not None:
                support = [support_of(c.sentence, c.passage)]
                if longer:
                    return _tidy(c.sentence), support, feats
                return _format_span(c.span, question, info.kind, c.passage.title), support, feats
        text = self._clause_answer(question, passages, guidance)
        support = best_support(text, passages)
        return text, support, {}

    def _read(
        self,
        info: rf.QuestionInfo,
        question: str,
        passages: Sequence[Passage],
        exclude: Collection[str],
    ) -> Reading:
        """The reader's pick. The entity a multi-hop question describes is the way to the
        answer, not the answer: like a span of the question, it is never the short answer.
        Once the passages hold the entity's own article (the second hop), the question asked
        of it (`bridge.question_through`: "What is the capital of Alberta holds ?") is read over
        that article's passages first: its words and their ranks point at the second hop's
        sentence, where the whole question's point back at the first hop's. The whole
        question's reading stands when there is no such article among the passages, when
        that reading finds nothing, or when it asks for another kind of answer. An entity of
        the kind the question asks for, where the description is of another kind, is the
        answer all the same ("Which siege … gave Washington the decisive win that …": the
        Siege of Yorktown is the siege asked for, not the win described)."""
        b = bridge.find(question)
        found = bridge.candidates(question, b, passages, limit=2) if b is not None else []
        if b is not None and found:  # one of the asked kind is no way to the answer
            types = self.reader.types or LeadTypes.of_passages(passages)
            found = [c for c in found if not _of_asked_kind(info, b, c.entity, types)]
        banned = [*exclude, *(c.entity for c in found)]
        if b is not None and found:
            hop = [p for p in passages if bridge.title_names(p.title, found[0].entity)]
            through = replace(rf.analyse(bridge.question_through(b, found[0])), said=info)
            if hop and through.kind == info.kind:
                reading = self.reader.read(through, hop, banned)
                if reading.candidate is not None:
                    return reading
        return self.reader.read(info, passages, banned)

    def _clause_answer(
        self, question: str, passages: Sequence[Passage], guidance: str | None = None
    ) -> str:
        if not passages:
            return ""
        atype = answer_type(question)
        shorter = bool(guidance and _SHORTER.search(guidance))
        longer = bool(guidance and _LONGER.search(guidance)) and not shorter
        q_content = set(tu.content_words(question))
        if atype.kind == "choice":
            picked = self._choice(atype, question, passages)
            if picked is not None:
                pick, years = picked
                if not longer:
                    return _option_name(pick)
                other = next(o for o in atype.options if o != pick)
                word = "before" if atype.want_first else "after"
                return _tidy(f"{pick} ({years[pick]}) {word} {other} ({years[other]})")
        cands = self.candidates(question, passages)
        if not cands:
            return ""
        best = cands[0]
        if atype.kind == "choice" and not longer:
            return _option_said(atype.options, cands)
        if best.span and not longer:
            return _narrow(best.span, question)
        if longer:
            return _tidy(best.sentence)
        if shorter:
            clauses = _clauses(best.sentence) or [best.sentence]
            return _tidy(max(clauses, key=lambda c: (len(tu.content_set(c) & q_content),
                                                      -len(c.split()))))  # fmt: skip
        return _clause_for(best.sentence, best.span, q_content)
