"""Question–answer pairs made from an index's own passages (SIM-RAG §3.2 self-practice).

A pair is a sentence of a passage with one span taken out as the answer (a name, a date, a
number or a short noun phrase) and the rest turned into a question:
1. the span is replaced by the wh-phrase that fits it ("by George Orwell" → "who", "in 1945"
   → "in what year", "79 moons" → "how many moons", "8,848.86 m" of a height → "how high",
   answered with its unit), and the wh-phrase leads the question;
2. only a window of the sentence around the span is kept, and some of its words are dropped,
   so the question does not copy the sentence (people paraphrase; Lewis et al. 2019 found
   noisy clozes train better readers than exact ones);
3. a leading pronoun becomes the article's title, and the title is named when the kept words
   do not name it, because people name the thing they ask about;
4. a span is often asked for by its kind, as people ask "Which country…" rather than
   "What…": by its own head word when it has one ("Arafura Sea" → "which sea", "Battle of
   Segesvár" → "in which battle", "left side" → "which side"), or, for a name with its own
   article, by what that article says it is ("Amsterdam" → "in which city", "Rumi" →
   "which poet"; `lead_types`). A verb follows the asked kind ("Which sea is …"), so the
   question's head reads as that kind and not as the next kept word.
The answer never occurs in the question. Same index and seed, same pairs.

Comparison pairs (`comparison_pairs`) join two articles whose passages say the same thing
happened "in" a year ("founded in 1636", "founded in 1701") into "Which was founded first,
Harvard University or Yale University?", answered by the article with the earlier year: the
loops answer such questions by comparing two stated facts, and the Critic must learn how far
that can be trusted.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from index_builder.wikitext import strip_paren_tail
from scim_edge import measures
from scim_edge import textutil as tu
from scim_edge.evaluation.metrics import normalize_answer
from scim_edge.generation.reader_features import normalise, person_like, place_like
from scim_edge.generation.spans import Span, is_demonym, sentence_spans, span_head
from scim_edge.given_names import is_person
from scim_edge.lead_types import LeadTypes
from scim_edge.quality import well_formed
from scim_edge.query_formulation import is_boilerplate
from scim_edge.types import Passage

KIND_WEIGHTS = {"entity": 0.4, "year": 0.2, "date": 0.1, "number": 0.2, "np": 0.1}
MIN_WORDS, MAX_WORDS = 7, 45
_PRONOUNS = {"he": "", "she": "", "it": "", "they": "", "his": "'s", "her": "'s", "its": "'s",
             "their": "'s", "this": "", "the": None}  # fmt: skip
_TIME_PREPS = {"in", "on", "since", "by", "from", "until", "during", "around", "circa", "c."}
_PLACE_PREPS = {"in", "at", "from", "near", "into", "to"}
DROP_CONTENT = 0.45
TERSE_SHARE = 0.25  # questions that keep only the relation words and the subject
TERSE_WORDS = 3
NP_ONLY_SKIP = 0.7  # most sentences with nothing but noun phrases are passed over
DROP_STOPWORD = 0.35
TYPED_SHARE = 0.5  # names with an article asked for by its type ("which city")
OWN_HEAD_SHARE = 0.5  # spans with a kind word of their own asked for by it ("which sea")
MIN_COMMON = 3  # a capitalised head is a kind word when the index writes it so in lower case
COMPARISON_SHARE = 0.05  # comparison pairs added, at most, per question asked for


@dataclass(frozen=True)
class PracticePair:
    id: str
    question: str
    answer: str
    kind: str  # the answer span's kind (spans.KINDS)
    doc_id: str
    title: str
    sentence: str
    split: str  # train | heldout

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def wh_phrase(
    span: Span, sentence: str, type_word: str = "", person: bool | None = None
) -> tuple[str, bool]:
    """(wh-phrase, drop the preposition before the span); `type_word` ("city") asks for
    an entity by its type: "in which city", "which poet". `person` says whether the name
    is a person's, as the index knows it (`given_names.is_person`); by default the
    capitalisation rule (`person_like`) guesses."""
    if span.kind in ("entity", "np") and type_word:
        if span.before in _PLACE_PREPS:
            return f"{span.before} which {type_word}", True
        return f"which {type_word}", False
    if span.kind == "year":
        return ("since what year" if span.before == "since" else "in what year",
                span.before in _TIME_PREPS)  # fmt: skip
    if span.kind == "date":
        return "when", span.before in _TIME_PREPS
    if span.kind == "number":
        how = measures.asking_phrase(span.text, span.unit, sentence, span.start)
        if how:  # "how high", as people ask for a measure; not "how many m"
            return how, False
        if span.unit:
            return f"how many {span.unit}", False
        return "how much", False
    if span.kind == "entity":
        if person_like(span) if person is None else person:
            return "who", span.before == "by"
        if place_like(span) and span.before in _PLACE_PREPS:
            return "where", True
        return ("what", False) if not place_like(span) else ("which place", False)
    return "what", False


def answer_text(span: Span, sentence: str) -> str:
    """The pair's answer as the reader states it: a measure asked for by "how" keeps its
    unit ("8,848.86 m" for "how high"), as people's questions are answered; a count asked
    "how many moons" is the number alone."""
    if span.kind == "number" and measures.asking_phrase(span.text, span.unit, sentence, span.start):
        return f"{span.text} {span.unit}"
    return span.text


def _window(words: list[str], lo: int, hi: int, rng: random.Random) -> tuple[int, int]:
    width = rng.randint(4, 10)
    return max(0, lo - width), min(len(words), hi + width)


def make_question(
    sentence: str,
    span: Span,
    title: str,
    rng: random.Random,
    type_word: str = "",
    person: bool | None = None,
) -> str | None:
    """One noisy, reordered cloze question for `span` of `sentence`, or None."""
    wh, drop_prep = wh_phrase(span, sentence, type_word, person)
    head = sentence[: span.start].rstrip()
    tail = sentence[span.end :].lstrip()
    if drop_prep and head.split():
        head = head[: head.rstrip().rfind(" ") + 1] if " " in head else ""
    if span.kind == "number" and span.unit:
        unit = re.escape(span.unit).replace(r"\ ", r"\s+")  # "sq mi" after a no-break space
        tail = re.sub(rf"^{unit}(?!\w)", "", tail, flags=re.I).lstrip()
    before = head.split()
    after = tail.split()
    lo, hi = _window(before + ["<A>"] + after, len(before), len(before), rng)
    kept_before = before[lo:]
    kept_after = after[: max(0, hi - len(before) - 1)]
    body = [*kept_before, *kept_after]
    lead = body[0].lower().strip(",;:") if body else ""
    if _PRONOUNS.get(lead) is not None:
        body = [f"{title}{_PRONOUNS[lead]}", *body[1:]]
    kept: list[str] = []
    title_words = {w.lower() for w in tu.words(title)}
    if rng.random() < TERSE_SHARE:
        body = _terse(kept_before, kept_after, title_words)
    for w in body:
        clean = w.strip(".,;:()\"'“”‘’").lower()
        if not clean:
            continue
        if clean in title_words:
            kept.append(w)
        elif clean in tu.STOPWORDS:
            if rng.random() >= DROP_STOPWORD:
                kept.append(w)
        elif rng.random() >= DROP_CONTENT:
            kept.append(w)
    text = " ".join(w.strip('.,;:"“”') for w in kept)
    text = re.sub(r"\s*\(\s*\)\s*", " ", text)
    if not tu.stem_set(title) & tu.stem_set(text):
        text = f"{text} {title}"
    text = " ".join(text.split())
    if len(tu.content_words(text)) < 2:
        return None
    if type_word and text.split()[0].lower() not in tu.STOPWORDS:
        # "Which city is …": a verb ends the phrase the question asks for, as people write
        # it; "Which city capital …" would read as asking for a capital
        text = f"is {text}"
    question = f"{wh[0].upper()}{wh[1:]} {text}?"
    if f" {normalize_answer(span.text)} " in f" {normalize_answer(question)} ":
        return None
    return question


def _terse(before: list[str], after: list[str], title_words: set[str]) -> list[str]:
    """A terse question's words: the relation words nearest the answer (at most
    TERSE_WORDS content words, with the function words between them) and the title's
    words — "Who designed Delhi's Red Fort?" rather than the whole sentence."""

    def content(w: str) -> bool:
        c = w.strip(".,;:()\"'“”‘’").lower()
        return bool(c) and c not in tu.STOPWORDS

    near_after = [i for i, w in enumerate(after) if content(w)][:TERSE_WORDS]
    near_before = [i for i, w in enumerate(before) if content(w)][-1:]
    words = before[near_before[0] :] if near_before else []
    if near_after:
        words += after[: near_after[-1] + 1]
    titled = [w for w in before + after if w.strip(".,;:()\"'“”‘’").lower() in title_words]
    return [*titled[:4], *[w for w in words if w not in titled]]


def _pick_span(spans: list[Span], title: str, rng: random.Random) -> Span | None:
    title_key = normalise(title)
    usable = [
        s
        for s in spans
        if len(s.text.split()) <= 5
        and normalise(s.text)
        and normalise(s.text) != title_key
        and not (s.kind == "entity" and is_demonym(s.text))
    ]
    if not usable:
        return None
    # the kind first, by KIND_WEIGHTS, so the many noun phrases of a sentence do not
    # crowd out its one name or date (people mostly ask for names, dates and numbers)
    kinds = sorted({s.kind for s in usable})
    if kinds == ["np"] and rng.random() < NP_ONLY_SKIP:
        return None
    kind = rng.choices(kinds, weights=[KIND_WEIGHTS.get(k, 0.1) for k in kinds], k=1)[0]
    return rng.choice([s for s in usable if s.kind == kind])


def _own_head(span: Span, common: Counter[str]) -> str:
    """The span's own kind word ("sea" of "Arafura Sea", "battle" of "Battle of
    Segesvár", "side" of "left side"), lower-cased, when the index writes it in lower case
    as a common noun; "" otherwise."""
    if span.kind not in ("entity", "np") or len(span.text.split()) < 2:
        return ""
    head = span_head(span.text)
    low = head.lower()
    if len(low) < 3 or not low.isalpha() or low in tu.STOPWORDS:
        return ""
    return low if head.islower() or common[low] >= MIN_COMMON else ""


def _type_word(
    span: Span, types: LeadTypes | None, rng: random.Random, common: Counter[str]
) -> str:
    """The word to ask for `span` by: for OWN_HEAD_SHARE of the spans with a kind word
    of their own, that word ("which sea" for "Arafura Sea"); else, for TYPED_SHARE of the
    names whose article defines them, what the article says they are ("which city" for
    "Amsterdam"); "" to ask plainly."""
    own = _own_head(span, common)
    if own and rng.random() < OWN_HEAD_SHARE:
        return own
    if types is None or span.kind != "entity" or rng.random() >= TYPED_SHARE:
        return ""
    lead = types.of(span.text)
    if lead is None or not lead.heads:
        return ""
    return rng.choice(lead.heads)


def pairs_from_passages(
    passages: Iterator[Passage],
    n: int,
    seed: int,
    heldout: float = 0.2,
    types: LeadTypes | None = None,
    names: frozenset[str] = frozenset(),
) -> list[PracticePair]:
    """Up to `n` pairs, at most two per passage, from passages in the order given; with
    `types`, some names are asked for by the type their article gives them; with `names`
    (the index's given names), "who" asks only for names the index knows are people's."""
    rng = random.Random(seed)
    out: list[PracticePair] = []
    common: Counter[str] = Counter()  # words the index writes in lower case, so far
    for p in passages:
        if len(out) >= n:
            break
        if is_boilerplate(p):
            continue
        common.update(w for w in tu.words(p.text) if w.islower())
        sents = [s for s in tu.sentences(p.text)
                 if MIN_WORDS <= len(s.split()) <= MAX_WORDS and well_formed(s)]  # fmt: skip
        rng.shuffle(sents)
        for sent in sents[:2]:
            span = _pick_span(list(sentence_spans(sent)), p.title, rng)
            if span is None:
                continue
            type_word = _type_word(span, types, rng, common)
            person = is_person(span, types, names) if names else None
            question = make_question(sent, span, p.title, rng, type_word, person)
            if question is None:
                continue
            split = "heldout" if rng.random() < heldout else "train"
            out.append(PracticePair(f"p{len(out):05d}", question, answer_text(span, sent),
                                    span.kind, p.doc_id, p.title, sent, split))  # fmt: skip
            if len(out) >= n:
                break
    return out


_HAPPENED = re.compile(
    r"\b(born|died|built|written|begun|[a-z]{3,}ed) in (1[0-9]{3}|20[0-2][0-9])\b"
)


@dataclass(frozen=True)
class _Dated:
    title: str  # without a disambiguation aside
    verb: str
    year: int
    sentence: str
    doc_id: str
    split: str


def _dated(p: Passage, heldout: float, rng: random.Random) -> _Dated | None:
    """The first sentence of `p` that says what happened in which year ("It was founded
    in 1885"): in an article's own passage, most often what happened to its subject."""
    name = strip_paren_tail(p.title)
    for sent in tu.sentences(p.text):
        m = _HAPPENED.search(sent)
        if m and m.group(1) not in tu.STOPWORDS:
            split = "heldout" if rng.random() < heldout else "train"
            return _Dated(name, m.group(1), int(m.group(2)), sent, p.doc_id, split)
    return None


def comparison_pairs(
    passages: Iterator[Passage], n: int, seed: int, heldout: float = 0.2
) -> list[PracticePair]:
    """Up to `n` "Which was <verb> first/last, A or B?" pairs: two articles whose own
    sentences say the same thing happened to each in a different year ("founded in 1636",
    "founded in 1701"), both of one split; the answer is the one whose year comes first
    (or last)."""
    rng = random.Random(seed)
    waiting: dict[tuple[str, str], _Dated] = {}
    out: list[PracticePair] = []
    for p in passages:
        if len(out) >= n:
            break
        d = _dated(p, heldout, rng)
        if d is None:
            continue
        key = (d.split, d.verb)
        other = waiting.pop(key, None)
        if other is None or other.year == d.year or normalise(other.title) == normalise(d.title):
            waiting[key] = d
            continue
        a, b = (other, d) if rng.random() < 0.5 else (d, other)
        first = rng.random() < 0.5
        pick = min if first else max
        answer = pick((a, b), key=lambda x: x.year).title
        question = f"Which was {d.verb} {'first' if first else 'last'}, {a.title} or {b.title}?"
        out.append(PracticePair(f"c{len(out):05d}", question, answer, "choice", a.doc_id,
                                a.title, f"{a.sentence} {b.sentence}", d.split))  # fmt: skip
    return out
