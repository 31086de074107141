"""What the learned reader knows about each candidate span: a fixed vector of features.

The features are generic evidence that a span answers a question, not facts about any
corpus, so weights fitted on self-practice questions carry over to questions people write:
- does the span's kind fit the question's answer type (question type × span kind);
- how much of the question its sentence states (IDF-weighted), and how close the span sits
  to the question's words in that sentence;
- whether the passage is the lead of an article the question names (DrQA's prior);
- the passage's retrieval rank and score;
- how many retrieved sentences state the same span (agreement);
- the words around the span ("by George Orwell", "in England", "79 moons");
- whether the span repeats the question (such spans are never candidates at all).

`candidates(question, passages)` returns every span of the top passages' sentences with its
vector; `FEATURES` names the columns, in order, for the weights file.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from scim_edge import textutil as tu
from scim_edge.generation.spans import KINDS, Span, is_demonym, sentence_spans
from scim_edge.ranking import quick_stems
from scim_edge.types import Passage

QUESTION_KINDS = ("person", "place", "date", "number", "choice", "what", "open")

NOT_PERSON_WORDS = frozenset(
    """
    university college school institute academy museum library house church cathedral
    temple palace castle hall theatre theater hospital company corporation party army navy
    states kingdom republic empire union federation province county city river mountain
    mount peak lake ocean sea island islands bay valley street road bridge station airport
    war battle treaty award prize medal trophy cup championship league festival council
    committee parliament congress court ministry department agency society association
    foundation club team latin greek english french german spanish italian
    """.split()
)
_COPULA = frozenset({"is", "was", "are", "were", "be", "been", "became", "becomes", "called",
                     "named", "known", "as"})  # fmt: skip
_PLACE_PREPS = frozenset({"in", "at", "from", "to", "near", "into", "on"})
_OPEN_HEADS = ("why", "how do", "how does", "how did", "how is", "how are", "how was",
               "how were", "how can", "explain", "describe")  # fmt: skip
_WORD = re.compile(r"\w+(?:[-'’]\w+)*")
WINDOW = 6
MAX_PASSAGES = 8
MAX_SENTENCE_WORDS = 80

_LOCAL = (
    "sent_idf_overlap",
    "sent_overlap",
    "window_overlap",
    "prox_recip",
    "prox_le2",
    "no_anchor",
    "title_overlap",
    "title_in_question",
    "rank_recip",
    "rank0",
    "bm25_norm",
    "agree_sentences",
    "agree_passages",
    "span_q_share",
    "span_words",
    "span_in_title",
    "before_by",
    "before_place_prep",
    "before_of",
    "before_punct",
    "before_copula",
    "before_det",
    "after_punct",
    "after_paren",
    "unit_in_question",
    "demonym",
    "not_person_word",
    "multiword",
    "head_near",
    "in_quotes",
    "sentence_long",
    "person_like",
    "place_like",
    "non_latin",
    "person_q_person_like",
    "place_q_place_like",
    "person_q_not_person",
    "anchors_right",
    "span_first",
    "in_parens",
)
FEATURES: tuple[str, ...] = tuple(f"type:{q}:{k}" for q in QUESTION_KINDS for k in KINDS) + _LOCAL
_COLUMN = {name: FEATURES.index(name) for name in _LOCAL}


@dataclass(frozen=True)
class QuestionInfo:
    """What the features need from a question, computed once."""

    text: str
    kind: str  # one of QUESTION_KINDS
    stems: frozenset[str]
    lower_words: frozenset[str]
    head: str  # the noun after what/which ("planet"), or ""
    options: tuple[str, ...] = ()


_NUMBER_HINTS = frozenset(
    "number population age percentage percent height length width depth area distance speed "
    "temperature weight mass many much".split()
)
_HEAD_SKIP = frozenset("is was are were the a an name names called kind type sort of".split())


def question_kind(question: str) -> tuple[str, tuple[str, ...]]:
    """The question's answer type, in the reader's coarser set of kinds."""
    from scim_edge.generation.extractive import answer_type

    at = answer_type(question)
    if at.kind in ("person", "place", "date", "number", "choice"):
        return at.kind, at.options
    q = " ".join(question.lower().split())
    if q.startswith(_OPEN_HEADS):
        return "open", ()
    head = question_head(question)
    content = tu.content_words(question)
    if head in _NUMBER_HINTS or (content and content[-1] in _NUMBER_HINTS - {"many", "much"}):
        return "number", ()
    return "what", ()


def question_head(question: str) -> str:
    """The noun a what/which question asks for: "What is the capital of…" → "capital",
    "What is germanium's atomic number?" → "number"."""
    low = [w.lower() for w in tu.words(question)]
    for i, w in enumerate(low):
        if w in ("what", "which"):
            rest = low[i + 1 :]
            for j, r in enumerate(rest):
                if r in _HEAD_SKIP or r in ("'s",):
                    continue
                # "what is X's atomic number": the head is the noun before the end/"of"
                if j + 1 < len(rest) and rest[j + 1] in ("'s", "’s"):
                    tail = [x for x in rest[j + 2 :] if x not in tu.STOPWORDS]
                    return tail[-1] if tail else r
                return r
    return ""


def analyse(question: str) -> QuestionInfo:
    kind, options = question_kind(question)
    head = question_head(question)
    return QuestionInfo(
        text=question,
        kind=kind,
        stems=tu.stem_set(question),
        lower_words=frozenset(w.lower() for w in tu.words(question)),
        head=tu.stem(head) if head and head not in tu.STOPWORDS else "",
        options=options,
    )


@dataclass
class Candidate:
    span: Span
    sentence: str
    passage: Passage
    rank: int
    features: np.ndarray  # float32, len(FEATURES)

    @property
    def text(self) -> str:
        return self.span.text


def normalise(text: str) -> str:
    """Lower-case words only: how agreement and practice labels compare spans."""
    return " ".join(w.lower() for w in _WORD.findall(text) if w.lower() not in {"the", "a", "an"})


def _word_spans(sentence: str) -> list[tuple[int, int, str]]:
    """(start, end, stem) of each word outside parentheses: an aside such as "(1514–1564)
    (Latinized from Andries van Wezel)" does not separate a subject from its predicate."""
    out = []
    depth = 0
    last = 0
    for m in _WORD.finditer(sentence):
        between = sentence[last : m.start()]
        depth = max(0, depth + between.count("(") - between.count(")"))
        last = m.end()
        if depth == 0:
            out.append((m.start(), m.end(), tu.stem(m.group(0).lower())))
    return out


def _span_words(sentence: str, span: Span) -> list[int]:
    return [m.start() for m in _WORD.finditer(sentence, span.start, span.end)]


def _from_question(span: Span, q: QuestionInfo) -> bool:
    words = [w.lower() for w in _WORD.findall(span.text)]
    content = [w for w in words if w not in tu.STOPWORDS]
    if not content:
        return True
    return all(w in q.lower_words or tu.stem(w) in q.stems for w in content)


_LATIN = re.compile(r"[A-Za-z0-9]")
PLACE_WORDS = frozenset(
    """
    city town village country state province region island islands river mountain mount
    lake sea ocean bay valley county district kingdom republic empire capital peninsula
    desert coast strait gulf
    """.split()
)
# Which span kinds can answer which question kinds; other kinds are dropped when a
# fitting one exists (classic answer-type filtering).
FITS = {
    "person": ("entity",),
    "place": ("entity",),
    "date": ("date", "year"),
    "number": ("number",),
}


def person_like(span: Span) -> bool:
    """A name that may be a person's: capitalised words, none of them an institution's,
    a place's or a nationality; or the agent of a passive ("by Orwell")."""
    if span.kind != "entity" or not _LATIN.search(span.text) or is_demonym(span.text):
        return False
    words = span.text.split()
    if {w.lower() for w in words} & (NOT_PERSON_WORDS | PLACE_WORDS):
        return False
    return span.before == "by" or 2 <= len(words) <= 4


def place_like(span: Span) -> bool:
    if span.kind != "entity" or not _LATIN.search(span.text) or is_demonym(span.text):
        return False
    words = {w.lower() for w in span.text.split()}
    return bool(words & PLACE_WORDS) or span.before in _PLACE_PREPS


def candidates(question: str | QuestionInfo, passages: Sequence[Passage]) -> list[Candidate]:
    """Every candidate span in the top passages' sentences, each with its feature vector.

    Spans whose content words all occur in the question are left out: the reader never
    answers with what the user already said."""
    q = question if isinstance(question, QuestionInfo) else analyse(question)
    top = list(passages[:MAX_PASSAGES])
    sents: list[tuple[int, int, Passage, str]] = []
    for rank, p in enumerate(top):
        for i, s in enumerate(tu.sentences(p.text)):
            if 3 <= len(s.split()) <= MAX_SENTENCE_WORDS:
                sents.append((rank, i, p, s))
    if not sents:
        return []
    df: Counter[str] = Counter()
    sent_stems = []
    for _, _, _, s in sents:
        st = quick_stems(s)
        sent_stems.append(st)
        df.update(st & q.stems)
    n = len(sents)
    idf = {w: math.log(1 + n / (1 + df[w])) for w in q.stems}
    idf_total = sum(idf.values()) or 1.0
    max_score = max((p.score for p in top), default=0.0) or 1.0

    raw: list[tuple[Span, str, Passage, int, int, frozenset[str]]] = []
    span_sents: Counter[str] = Counter()
    span_passages: dict[str, set[str]] = {}
    for (rank, i, p, s), st in zip(sents, sent_stems, strict=True):
        for sp in sentence_spans(s):
            if _from_question(sp, q):
                continue
            key = normalise(sp.text)
            if not key:
                continue
            raw.append((sp, s, p, rank, i, st))
            span_sents[key] += 1
            span_passages.setdefault(key, set()).add(p.doc_id)

    fits = FITS.get(q.kind)
    if fits and any(r[0].kind in fits for r in raw):
        raw = [r for r in raw if r[0].kind in fits]
    if q.kind in ("person", "place") and any(_LATIN.search(r[0].text) for r in raw):
        raw = [r for r in raw if _LATIN.search(r[0].text)]
    out: list[Candidate] = []
    title_stems_cache: dict[str, frozenset[str]] = {}
    title_in_q: dict[str, float] = {}
    words_of: dict[str, list[tuple[int, int, str]]] = {}
    q_low = " ".join(w.lower() for w in tu.words(q.text))
    for sp, s, p, rank, _i, st in raw:
        f = np.zeros(len(FEATURES), dtype=np.float32)
        f[QUESTION_KINDS.index(q.kind) * len(KINDS) + KINDS.index(sp.kind)] = 1.0
        local: dict[str, float] = {}
        matched = q.stems & st
        local["sent_idf_overlap"] = sum(idf[w] for w in matched) / idf_total
        local["sent_overlap"] = len(matched) / max(1, len(q.stems))
        if s not in words_of:
            words_of[s] = _word_spans(s)
        words = words_of[s]
        anchors = [k for k, (_, _, w) in enumerate(words) if w in q.stems]
        inside = [k for k, (a, b, _) in enumerate(words) if a >= sp.start and b <= sp.end]
        if inside:
            lo, hi = inside[0], inside[-1]
        else:  # a span inside parentheses: place it where the aside stands
            lo = hi = sum(1 for a, _, _ in words if a < sp.start)
        outside = [k for k in anchors if k < lo or k > hi]
        if outside:
            local["anchors_right"] = sum(k > hi for k in outside) / len(outside)
        local["span_first"] = float(lo == 0 and bool(inside))
        local["in_parens"] = float(not inside)
        if outside:
            dist = min(lo - k if k < lo else k - hi for k in outside) - 1
            local["prox_recip"] = 1.0 / (1.0 + dist)
            local["prox_le2"] = float(dist <= 2)
        else:
            local["no_anchor"] = 1.0
        window = {words[k][2] for k in range(max(0, lo - WINDOW), min(len(words), hi + WINDOW + 1))}
        local["window_overlap"] = sum(idf[w] for w in q.stems & window) / idf_total
        if p.title not in title_stems_cache:
            title_stems_cache[p.title] = tu.stem_set(p.title)
            t_low = " ".join(w.lower() for w in tu.words(p.title))
            title_in_q[p.title] = float(bool(t_low) and f" {t_low} " in f" {q_low} ")
        t_stems = title_stems_cache[p.title]
        local["title_overlap"] = len(t_stems & q.stems) / max(1, len(t_stems))
        local["title_in_question"] = title_in_q[p.title]
        local["rank_recip"] = 1.0 / (1 + rank)
        local["rank0"] = float(rank == 0)
        local["bm25_norm"] = max(0.0, p.score) / max_score
        key = normalise(sp.text)
        local["agree_sentences"] = math.log(span_sents[key])
        local["agree_passages"] = math.log(len(span_passages[key]))
        sp_words = [w.lower() for w in _WORD.findall(sp.text)]
        local["span_q_share"] = sum(w in q.lower_words for w in sp_words) / max(1, len(sp_words))
        local["span_words"] = min(len(sp_words), 6) / 6.0
        local["multiword"] = float(len(sp_words) > 1)
        local["span_in_title"] = float(bool(sp_words) and set(tu.stem_set(sp.text)) <= t_stems)
        local["before_by"] = float(sp.before == "by")
        local["before_place_prep"] = float(sp.before in _PLACE_PREPS)
        local["before_of"] = float(sp.before == "of")
        local["before_punct"] = float(sp.before in (",", "(", ":", ";", "–", "—"))
        local["before_copula"] = float(sp.before in _COPULA)
        local["before_det"] = float(sp.before in ("the", "a", "an"))
        local["after_punct"] = float(sp.after in (",", ".", ";", ":"))
        local["after_paren"] = float(sp.after == "(")
        local["unit_in_question"] = float(bool(sp.unit) and tu.stem(sp.unit) in q.stems)
        local["demonym"] = float(sp.kind == "entity" and is_demonym(sp.text))
        local["not_person_word"] = float(bool(set(sp_words) & NOT_PERSON_WORDS))
        if q.head:
            near = {words[k][2] for k in range(max(0, lo - 3), min(len(words), hi + 4))}
            local["head_near"] = float(q.head in near)
        before = s[: sp.start]
        local["in_quotes"] = float(
            before.count('"') % 2 == 1 or before.count("“") > before.count("”")
        )
        local["sentence_long"] = float(len(words) > 40)
        person = person_like(sp)
        place = place_like(sp)
        local["person_like"] = float(person)
        local["place_like"] = float(place)
        local["non_latin"] = float(not _LATIN.search(sp.text))
        local["person_q_person_like"] = float(q.kind == "person" and person)
        local["place_q_place_like"] = float(q.kind == "place" and place)
        local["person_q_not_person"] = float(q.kind == "person" and not person)
        for name, value in local.items():
            f[_COLUMN[name]] = value
        out.append(Candidate(sp, s, p, rank, f))
    return out
