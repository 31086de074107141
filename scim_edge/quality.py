"""SCIM's five-dimension quality score, Q, tiers, and the single-dimension baseline.

The formulas are the published ones (see issue text in the docs):

- completeness = α·|Q∩A|/|Q| + (1−α)·min(1, |A_words|/L_target)
- consistency  = answer words longer than 3 characters found in D / all such answer words
- confidence   = 0.5 + 0.3·[number] + 0.1·[proper noun] + 0.1·[several sentences or a list]
- factuality   = min(1, N_patterns/3), patterns: entity–verb–entity triples, temporal
  statements, numerical facts, causal relations
- coherence    = min(1, |S|/3), S = well-formed sentences (capitalised start, a verb,
  terminal punctuation)
- Q = Σ wᵢ·Cᵢ, tiers high ≥ 0.7 > medium ≥ 0.5 > low

Q and A are the content-word sets (stopwords out, lower-cased) of question and answer; D
is the set of all words of the retrieved passages. Each report carries the words behind
each score so a user can see why it is what it is.

Edge cases (not covered by the formulas): a question with no content word counts as
fully covered; an answer with no word longer than 3 characters is checked on all its
words; an empty answer scores 0 on every dimension.

Speed: D is built once per passage set (`Evidence`, cached by passage ids and texts), so
one evaluation only tokenizes the answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from scim_edge import textutil as tu
from scim_edge.settings import DEFAULT_WEIGHTS, Settings, Weights
from scim_edge.types import DIMENSIONS, Passage, QualityReport

ALPHA = 0.6
L_TARGET = 30
HIGH_TIER = 0.7
MEDIUM_TIER = 0.5

CAUSAL_MARKERS = (
    "because of", "because", "due to", "led to", "leads to", "leading to", "caused by",
    "caused", "causes", "causing", "resulted in", "results in", "resulting in", "as a result",
    "therefore", "consequently", "owing to", "thanks to", "hence", "thus", "so that",
    "gave rise to", "contributed to", "on account of",
)  # fmt: skip


def _either_case(words: list[str]) -> str:
    """An alternation matching each phrase in lower case or with a capital first letter
    (cheaper than IGNORECASE, which slows every alternative at every position)."""
    return "|".join(f"[{w[0].upper()}{w[0]}]{re.escape(w[1:])}" for w in words)


_CAUSAL_RE = re.compile(
    r"\b(?:" + _either_case(sorted(CAUSAL_MARKERS, key=len, reverse=True)) + r")\b"
)
_MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December"
    "|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec"
)
_PREP = r"(?:[Ii]n|[Oo]n|[Bb]y|[Ss]ince|[Uu]ntil|[Ff]rom|[Dd]uring|[Cc]irca|c\.)"
_ORDINAL_WORDS = (
    "first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    "|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|nineteenth"
    "|twentieth|twenty-first"
)
# Longest forms first so "April 14, 1865" counts once, not as a date and a year. Case is
# spelled out rather than IGNORECASE: matching is 3x faster and months are capitalised.
_TEMPORAL_RE = re.compile(
    rf"\b(?:(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{3,4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})\.?,?\s+\d{{3,4}}"
    rf"|(?:{_MONTHS})\.?\s+\d{{3,4}}"
    rf"|(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    r"|\d{4}-\d{2}-\d{2}"
    r"|\d{3,4}s\b"
    r"|\d{1,2}(?:st|nd|rd|th)\s+(?:[Cc]entury|[Mm]illennium)"
    rf"|(?i:{_ORDINAL_WORDS})\s+(?:[Cc]entury|[Mm]illennium)"
    rf"|(?:{_PREP}\s+)?\d{{1,4}}\s*(?:BCE|BC|CE|AD)\b"
    r"|\bAD\s*\d{1,4}"
    rf"|{_PREP}\s+\d{{3,4}}\b"
    r"|\b1\d{3}\b|\b20\d{2}\b)"
)
_NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                 "eleven", "twelve", "twenty", "thirty", "forty", "fifty", "hundred", "thousand",
                 "million", "billion", "dozen"]  # fmt: skip
_NUMBER_RE = re.compile(
    r"(?:[$€£¥]\s?)?\b\d(?:[\d,]*\d)?(?:\.\d+)?\b(?:\s?(?:%|percent|per cent|million|billion|"
    r"trillion|thousand|hundred))?"
    rf"|\b(?:{_either_case(_NUMBER_WORDS)})\b(?:\s(?:million|billion|thousand|hundred))?"
)
_LIST_RE = re.compile(r"(?m)^\s*(?:[-*•]|\d+[.)])\s+\S")
_TERMINAL = ".!?"


@dataclass(frozen=True)
class Evidence:
    """The retrieved passages as the evaluator needs them: D, precomputed once."""

    doc_ids: tuple[str, ...]
    words: frozenset[str]

    @classmethod
    def of(cls, passages: Sequence[Passage] | Evidence) -> Evidence:
        if isinstance(passages, Evidence):
            return passages
        return _evidence(tuple((p.doc_id, p.text) for p in passages))


@lru_cache(maxsize=256)
def _evidence(items: tuple[tuple[str, str], ...]) -> Evidence:
    words: set[str] = set()
    for _, text in items:
        words |= tu.word_set(text)
    return Evidence(tuple(i for i, _ in items), frozenset(words))


def tier(q: float) -> str:
    if q >= HIGH_TIER:
        return "high"
    if q >= MEDIUM_TIER:
        return "medium"
    return "low"


# ---- the five dimensions ----------------------------------------------------------------


def completeness(
    question: str, answer: str, *, alpha: float = ALPHA, l_target: int = L_TARGET
) -> tuple[float, list[str]]:
    """Score and the missing keywords K_missing = Q \\ A (in question order)."""
    q_words = tu.ordered_unique(tu.content_words(question))
    a_set = tu.content_set(answer)
    n_words = len(tu.words(answer))
    if n_words == 0:
        return 0.0, q_words
    missing = [w for w in q_words if w not in a_set]
    coverage = 1.0 if not q_words else (len(q_words) - len(missing)) / len(q_words)
    return alpha * coverage + (1 - alpha) * min(1.0, n_words / l_target), missing


def consistency(answer: str, evidence: Evidence) -> tuple[float, list[str]]:
    """Share of the answer's words (> 3 characters) found in the passages, and the rest."""
    answer_words = [w.lower() for w in tu.words(answer)]
    long_words = [w for w in answer_words if len(w) > 3] or answer_words
    if not long_words:
        return 0.0, []
    unsupported = [w for w in long_words if w not in evidence.words]
    return (len(long_words) - len(unsupported)) / len(long_words), tu.ordered_unique(unsupported)


def confidence(answer: str) -> tuple[float, list[str]]:
    """0.5 base plus cues for a number, a proper noun and structure; returns the cues."""
    if not answer.strip():
        return 0.0, []
    tagged = tu.pos_tags(answer)
    cues = []
    score = 0.5
    if any(tag == "CD" or tu.is_number_token(tok) for tok, tag in tagged):
        score += 0.3
        cues.append("number")
    if any(tu.is_proper_tag(tag) for _, tag in tagged):
        score += 0.1
        cues.append("proper noun")
    if len(tu.sentences(answer)) >= 2 or len(_LIST_RE.findall(answer)) >= 2:
        score += 0.1
        cues.append("structured")
    return min(1.0, score), cues


def _triples(answer: str) -> list[str]:
    """Entity–verb–entity triples: an entity, then a verb group, then an entity, per
    sentence. Entities are proper-noun runs and numbers."""
    found = []
    for sent in tu.sentences(answer):
        tagged = tu.sentence_tags(sent)
        # Collapse into a sequence of E (entity run), V (verb group) and other tokens.
        units: list[tuple[str, str]] = []
        for tok, tag in tagged:
            kind = (
                "E"
                if (tu.is_proper_tag(tag) or tag == "CD")
                else ("V" if tu.is_verb_tag(tag) else "O")
            )
            if kind == "O" and tok in ",;:":
                kind = "B"  # a clause boundary does not break a triple, but is kept
            if units and units[-1][0] == kind and kind in ("E", "V"):
                units[-1] = (kind, units[-1][1] + " " + tok)
            else:
                units.append((kind, tok))
        last_entity: str | None = None
        for i, (kind, text) in enumerate(units):
            if kind == "E":
                last_entity = text
            elif kind == "V" and last_entity is not None:
                obj = next((t for k, t in units[i + 1 :] if k == "E"), None)
                # the object must come before the next verb group
                nxt_v = next((j for j, (k, _) in enumerate(units[i + 1 :]) if k == "V"), None)
                obj_pos = next((j for j, (k, _) in enumerate(units[i + 1 :]) if k == "E"), None)
                if obj is not None and (nxt_v is None or (obj_pos is not None and obj_pos < nxt_v)):
                    found.append(f"triple: {last_entity} / {text} / {obj}")
                    last_entity = None
    return found


def factual_patterns(answer: str) -> list[str]:
    """Every factual pattern of the answer, labelled: triple, temporal, numerical, causal."""
    patterns = _triples(answer)
    spans: list[tuple[int, int]] = []
    for m in _TEMPORAL_RE.finditer(answer):
        patterns.append(f"temporal: {m.group(0).strip()}")
        spans.append(m.span())
    for m in _NUMBER_RE.finditer(answer):
        if any(s <= m.start() < e or s < m.end() <= e for s, e in spans):
            continue
        patterns.append(f"numerical: {m.group(0).strip()}")
    for m in _CAUSAL_RE.finditer(answer):
        patterns.append(f"causal: {m.group(0).lower()}")
    return patterns


def factuality(answer: str) -> tuple[float, list[str]]:
    patterns = factual_patterns(answer)
    return min(1.0, len(patterns) / 3), patterns


def well_formed(sentence: str) -> bool:
    """Capitalised start, terminal punctuation and at least one verb."""
    s = sentence.strip().rstrip("\"')”’]")
    if not s or s[-1] not in _TERMINAL:
        return False
    first = next((ch for ch in s if ch.isalnum()), "")
    if not first or not (first.isupper() or first.isdigit()):
        return False
    return any(tu.is_verb_tag(tag) for _, tag in tu.sentence_tags(sentence))


def coherence(answer: str) -> tuple[float, list[str]]:
    good = [s for s in tu.sentences(answer) if well_formed(s)]
    return min(1.0, len(good) / 3), good


# ---- the evaluator ----------------------------------------------------------------------


class Evaluator:
    """Scores (question, answer, passages) on the five dimensions with `Settings` weights."""

    name = "scim-5d"

    def __init__(self, settings: Settings | None = None) -> None:
        s = settings or Settings()
        self.weights: Weights = tuple(s.weights)  # type: ignore[assignment]
        self.alpha = s.alpha
        self.l_target = s.l_target

    def evidence(self, passages: Sequence[Passage] | Evidence) -> Evidence:
        return Evidence.of(passages)

    def score(
        self, question: str, answer: str, passages: Sequence[Passage] | Evidence
    ) -> QualityReport:
        ev = Evidence.of(passages)
        comp, missing = completeness(question, answer, alpha=self.alpha, l_target=self.l_target)
        cons, unsupported = consistency(answer, ev)
        conf, _ = confidence(answer)
        fact, patterns = factuality(answer)
        coh, good = coherence(answer)
        dims = (comp, cons, conf, fact, coh)
        q = weighted(dims, self.weights)
        return QualityReport(
            completeness=comp,
            consistency=cons,
            confidence=conf,
            factuality=fact,
            coherence=coh,
            quality=q,
            tier=tier(q),
            missing_keywords=missing,
            unsupported_words=unsupported,
            patterns=patterns,
            sentences=good,
        )


def weighted(dims: Sequence[float], weights: Sequence[float] = DEFAULT_WEIGHTS) -> float:
    return float(sum(w * c for w, c in zip(weights, dims, strict=True)))


class RelevanceEvaluator:
    """The `single-dim` baseline: one question–answer relevance score stands in for all
    five dimensions (cosine of the content-word sets)."""

    name = "single-dim relevance"

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or Settings()

    def evidence(self, passages: Sequence[Passage] | Evidence) -> Evidence:
        return Evidence.of(passages)

    def score(
        self, question: str, answer: str, passages: Sequence[Passage] | Evidence
    ) -> QualityReport:
        rel, missing = relevance(question, answer)
        values = dict.fromkeys(DIMENSIONS, rel)
        return QualityReport(**values, quality=rel, tier=tier(rel), missing_keywords=missing)


def relevance(question: str, answer: str) -> tuple[float, list[str]]:
    """Cosine similarity of question and answer content-word sets, and the missing words."""
    q = tu.content_set(question)
    a = tu.content_set(answer)
    missing = [w for w in tu.ordered_unique(tu.content_words(question)) if w not in a]
    if not q or not a:
        return 0.0, missing
    return len(q & a) / math.sqrt(len(q) * len(a)), missing
