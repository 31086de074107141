"""What the learned reader knows about each candidate span: a fixed vector of features.

The features are generic evidence that a span answers a question, not facts about any
corpus, so weights fitted on self-practice questions carry over to questions people write:
- does the span's kind fit the question's answer type (question type × span kind);
- how much of the question its sentence states (IDF-weighted), how much of what it asks
  about its topic, apart from the topic's name (the passage's article title), and how close
  the span sits to the question's words in that sentence; another form of the question's
  verb counts as the verb ("the discovery of penicillin" for "Who discovered penicillin?",
  `related_stems`), as do "author" for "wrote", "largest" for "biggest" and "death" for
  "die"; a maker after "by" and a noun, or after "attributed to", is what a "who"
  question's verb asks ("a novella by George Orwell" for "Who wrote Animal Farm?"), a date
  states the "year" a date question asks for, and a measure the word that asks for it
  ("tall") (`is_agent`, `_relation`);
- whether the passage is the lead of an article the question names (DrQA's prior);
- the passage's retrieval rank and score;
- how many retrieved sentences state the same span (agreement);
- the words around the span ("by George Orwell", "in England", "79 moons");
- for a question that asks for a measure ("How tall…"), only numbers whose unit measures
  it, when the passages state one (`measures`);
- whether the span repeats the question (such spans are never candidates at all);
- whether the span's own head word is the kind the question asks for ("which battle":
  "Battle of Segesvár");
- for a name with its own article in the index, what its lead says it is (`lead_types`):
  "Mauritania is a country…" fits "Which country…", "Russia" does not fit "which river";
- where the index has MiniLM vectors, how close the sentence is to the question in meaning
  (`sentence_similarity`), which word overlap misses when the sentence rewords it;
- whether a name starts with a given name of the index's people (`given_names`), which
  capitalisation alone cannot tell ("Neil Armstrong", not "Big Tech").

Some spans are no candidates, whatever their features: the question's own words (and the
full name of an abbreviation it writes, "United States" for "which U.S. state"); an
opening aside's other names and life dates, unless asked for; a common noun phrase that
only restates the kind asked, after a copula ("The yen is the official currency of
Japan"), or that says there is a name when the name is asked ("stage name"); a century or
a decade for "in which year"; the start of a stated range when the question asks when
something ended, and its end when it asks when something began; a span the sentence
denies what the question asks of ("not part of the EU"); a span after "the most recent"
for a question about the first, or after "the inaugural" for one about the last; of two
subjects a sentence pairs with two things, the one said to be the thing not asked about.
When another sentence states the question's "first woman" as asked, sentences that
qualify it ("the first African American woman") give no candidates. When the question asks
when a person it names was born or died, the date their lead's opening aside gives is the
only one. A nationality before a person's name is left out of the name ("Soviet
Valentina Tereshkova").

`candidates(question, passages)` returns every span of the top passages' sentences with its
vector; `FEATURES` names the columns, in order, for the weights file.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from index_builder.wikitext import strip_paren_tail
from scim_edge import measures
from scim_edge import textutil as tu
from scim_edge.comparison import END_WORDS
from scim_edge.generation.coreference import resolve_opening_pronoun
from scim_edge.generation.spans import (
    KINDS,
    NAMING_PARTICIPLES,
    NOT_PERSON_WORDS,
    ROLE_TITLES,
    Span,
    common_nouns,
    is_demonym,
    sentence_spans,
    span_head,
    unit_head,
)
from scim_edge.lead_types import LeadType, LeadTypes
from scim_edge.ranking import is_lead, names_leads_give, quick_stems
from scim_edge.types import Passage

QUESTION_KINDS = ("person", "place", "date", "number", "choice", "what", "open")

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
    "relation_overlap",
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
    "before_noun",
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
    "lead_known",
    "lead_head_match",
    "head_ends_span",
    "lead_head_clash",
    "person_q_lead_person",
    # a person asked for, and the name's lead calls its subject "it" (a work, a place);
    # a lead with no pronouns says neither (`lead_types._pronoun_verdict`)
    "person_q_lead_says_it",
    # MiniLM cosine of the span's sentence to the question, and its gap to the pool's most
    # similar sentence (`sentence_similarity`; zero where the index has no vectors)
    "sent_sim",
    "sent_sim_gap",
    # the name starts with a given name of the index's people (`given_names`): "Neil
    # Armstrong" is a person's name, "Big Tech" and "Western Europe" are not
    "given_name",
    "person_q_given_name",
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
    # what the user said, when this is a rewording of it (the second hop's question asked
    # of the bridge entity, "On the bank of which river is Detroit ?"): spans are left out
    # for being the user's own words, not the rewording's ("Detroit River" stays)
    said: QuestionInfo | None = None
    # a sentence's word stem that says one of the question's words in another form, mapped
    # to the question's stem: "discovery" and "discoverer" for "discovered" (`related_stems`)
    related: dict[str, str] = field(default_factory=dict, compare=False)
    # the stems of the question's own verbs ("write" of "Who wrote Animal Farm?"), less
    # auxiliaries: what an agent after "by" states without a verb (`_relation`)
    verbs: frozenset[str] = frozenset()
    # the measures the question asks for ("length" of "How tall is Mount Everest?"; none
    # when it asks for no measure): a number whose unit measures another is no answer
    measures: frozenset[str] = frozenset()
    # the stems of the words that ask for it ("tall"), which a number of that measure states
    measure_stems: frozenset[str] = frozenset()


_NUMBER_HINTS = frozenset(
    "number population age percentage percent height length width depth area distance speed "
    "temperature weight mass many much".split()
)
_HEAD_SKIP = frozenset("is was are were the a an name names called kind type sort of".split())
_HEAD_QUALIFIERS = frozenset("other only same main most own".split())
# "What name is given to…" asks for a name, where "What is the name of the river…" asks
# for a river: a label word (`_LABEL_STEMS`) right after the wh-word, then a verb, is the head
_LABEL_VERBS = frozenset("is was are were do does did describes means refers".split())
_POSSESSIVE = frozenset({"s", "'s", "’s"})
_ENDS_HEAD_TAGS = frozenset({"VB", "VBD", "VBP", "VBZ", "RB", "MD"})  # finite verbs, adverbs


def question_kind(question: str) -> tuple[str, tuple[str, ...]]:
    """The question's answer type, in the reader's coarser set of kinds."""
    from scim_edge.generation.extractive import answer_type

    at = answer_type(question)
    if at.kind in ("person", "place", "date", "number", "choice"):
        return at.kind, at.options
    q = " ".join(question.lower().split())
    if q.startswith(_OPEN_HEADS):
        return "open", ()
    if _picks_with_which(question):  # "Which age came after…": a thing, not a quantity
        return "what", ()
    head = question_head(question)
    content = tu.content_words(question)
    if head in _NUMBER_HINTS or (
        content and content[-1] in _NUMBER_HINTS - {"many", "much"} and not _by_measure(question)
    ):
        return "number", ()
    return "what", ()


def _by_measure(question: str) -> bool:
    """The question's last word is a measure a rank goes by ("What is the largest country
    by area?"), not the measure it asks for ("What is the area of Russia?")."""
    words = [w.lower() for w in tu.words(question)]
    return len(words) > 1 and words[-2] == "by"


def _picks_with_which(question: str) -> bool:
    """The question's wh-word is "which": it asks to pick one of a kind of things ("which
    age", "which area of the brain", "which country has the largest population"), so a
    measure word in it does not make it a question about a quantity, as it does after
    "what" ("at what age", "what is the population of…")."""
    for w in tu.words(question):
        low = w.lower()
        if low in ("what", "which"):
            return low == "which"
    return False


def _ends_phrase(low: list[str], k: int) -> bool:
    """A stopword ends the phrase after the wh-word, and so does a naming participle at its
    end: "What is the mechanical woman called?" asks for a woman, by her name."""
    if low[k] in tu.STOPWORDS:
        return True
    return low[k] in NAMING_PARTICIPLES and (k + 1 == len(low) or low[k + 1] in tu.STOPWORDS)


@tu.tool_cache(maxsize=4096)
def question_head(question: str) -> str:
    """The noun a what/which question asks for: the last noun of the phrase after the
    wh-word, past names and possessors. "What is the capital of…" → "capital", "Which
    religious order…" → "order", "which bird family…" → "family", "What is germanium's
    atomic number?" → "number", "Which U.S. state…" → "state"; "" when a verb follows the
    wh-word ("What does … mean?")."""
    raw = list(tu.words(question))
    low = [w.lower() for w in raw]
    tags: dict[str, str] | None = None
    for i, w in enumerate(low):
        if w not in ("what", "which"):
            continue
        if (i + 2 < len(low) and tu.stem(low[i + 1]) in _LABEL_STEMS
                and low[i + 2] in _LABEL_VERBS):  # fmt: skip
            return low[i + 1]  # "What name is given to…", "Which word means…": a label
        run: list[str] = []
        after_names = False  # the run was ended by a name: a possessive may follow it
        for k in range(i + 1, len(low)):
            r = low[k]
            if r in _POSSESSIVE:  # "Loki's wife", "germanium's atomic number"
                run, after_names = [], False
                continue
            name = raw[k][:1].isupper() or "." in r
            if after_names:
                if name:
                    continue
                break
            if not run:
                # "which U.S. state", "which other gulf": qualifiers before the head
                if r in _HEAD_SKIP or r in _HEAD_QUALIFIERS or name:
                    continue
                if r in tu.STOPWORDS:  # "What does …", "Which is …"
                    return ""
                run.append(r)
                continue
            if name and run:
                after_names = True
                continue
            if _ends_phrase(low, k):
                break
            if tags is None:
                tags = {t.lower(): tag for t, tag in tu.pos_tags(question)}
            if tags.get(r, "") in _ENDS_HEAD_TAGS:  # "What sea borders …"
                break
            run.append(r)
        return run[-1] if run else ""
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
        related=related_stems(question),
        verbs=question_verbs(question),
        measures=measures.asked(question),
        measure_stems=frozenset(tu.stem(w) for w in measures.asking_words(question)),
    )


@tu.tool_cache(maxsize=4096)
def question_verbs(question: str) -> frozenset[str]:
    """What a "who" question asks its answer to have done: the stems of its verbs, by
    their tags ("write" of "Who wrote Animal Farm?"; auxiliaries and copulas are stopwords
    and never count), and of a maker it asks for ("author" of "Who is the author of
    Hamlet?"; not a role such as "emperor" or "leader", nor "founder", whose agent a
    sentence writes with its verb). Empty for other questions: in "Under
    which English leader did the author of Paradise Lost serve?" the poem's "by John
    Milton" names the author, not whom he served."""
    words = [w.lower() for w in tu.words(question)]
    if not words or words[0] not in ("who", "whom"):
        return frozenset()
    out = set()
    for tok, tag in tu.pos_tags(question):
        low = tok.lower()
        if low in tu.STOPWORDS:
            continue
        if (tu.is_verb_tag(tag) and tag != "MD") or low in _MAKERS:
            out.add(tu.stem(low))
    return frozenset(out)


# Who made a work, as a noun: what "a novella by George Orwell" names its agent as
_MAKERS = frozenset(
    "author authors writer painter composer creator inventor designer architect sculptor "
    "director illustrator novelist playwright poet artist".split()
)


# Between "by" and an agent's name: an article, and words that describe the agent
# ("by the Dutch Post-Impressionist painter Vincent van Gogh")
_AGENT_GAP = 5
_DET = frozenset({"the", "a", "an"})
_GAP_STOPWORDS = tu.STOPWORDS - _DET  # "by the painter …", not "by the allies of …"
# the nearest "by": no other stands between it and the name
_AGENT_BEFORE = re.compile(rf"\bby\s+((?:(?!by\b)[\w'’.-]+\s+){{0,{_AGENT_GAP}}})$", re.IGNORECASE)
# "poems attributed to Homer", "the design is credited to Ustad Ahmad Lahori": the maker
# again, said without the making verb
_ATTRIBUTED = re.compile(
    rf"\b(?:attributed|ascribed|credited)\s+to\s+((?:[\w'’.-]+\s+){{0,{_AGENT_GAP}}})$",
    re.IGNORECASE,
)


def _gap_has_stopword(gap: str) -> bool:
    return any(w.lower() in _GAP_STOPWORDS for w in gap.split())


def is_agent(sentence: str, start: int) -> bool:
    """The name at `start` is the maker of something the sentence makes no verb of: it
    follows "attributed to" (or "ascribed to", "credited to"), or it follows "by" and the
    word before "by" is a word and no verb form ("a novella by George Orwell"; "written
    by", "assassinated by" and "led by" write their verb). An article and words that
    describe the maker may stand between ("by the Dutch Post-Impressionist painter Vincent
    van Gogh"), but no other stopword ("a victory by the allies of Wellington")."""
    head = sentence[:start]
    m = _ATTRIBUTED.search(head)
    if m is not None:
        return not _gap_has_stopword(m.group(1))
    m = _AGENT_BEFORE.search(head)
    if m is None or _gap_has_stopword(m.group(1)):
        return False
    before = sentence[: m.start()].split()
    word = before[-1].lower().strip("\"'“”‘’") if before else ""
    if not word.isalpha():
        return False
    return not (word.endswith(("ed", "en")) or tu.base_form(word) != word)


# Suffixes that make a noun of a verb: "discover" → "discovery", "discoverer"; "invent" →
# "inventor"; "found" → "founder"; "write" → "writer"; "create" → "creation".
_NOUN_SUFFIXES = ("er", "r", "or", "y", "ery", "ion", "ation", "ment")
_VERB_ENDS = (("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))
# Words that say the same thing without sharing a stem, each stem to the other word.
_SAME_MEANING = {
    tu.stem(a): b
    for pair in (
        ("biggest", "largest"),
        ("tallest", "highest"),
        ("write", "author"),
        ("die", "death"),
        ("born", "birth"),
    )
    for a, b in (pair, pair[::-1])
}


def _verb_roots(low: str) -> set[str]:
    """The verb a question word is a form of ("discovered" → "discover", "wrote" → "write"),
    or nothing when it is no verb form."""
    roots = {r for r in (tu.base_form(low),) if r != low}
    for end, add in _VERB_ENDS:
        if low.endswith(end) and len(low) - len(end) >= 3:
            roots.add(low[: -len(end)] + add)
    return roots


@tu.tool_cache(maxsize=4096)
def related_stems(question: str) -> dict[str, str]:
    """Stems of other forms of the question's content words, each mapped to the question's
    own stem: a sentence that says "for the discovery of penicillin" states what "Who
    discovered penicillin?" asks, as one that says "discovered" does; "founder" what
    "founded" asks; "author" what "wrote" asks, "largest" what "biggest" asks. Word
    overlap and proximity read such a word as the question's. Forms are made with a few
    English suffixes; a made form that is no word matches nothing."""
    own = tu.stem_set(question)
    out: dict[str, str] = {}
    for word in tu.content_words(question):
        low = word.lower()
        stem = tu.stem(low)
        forms: set[str] = set()
        for root in _verb_roots(low):
            forms |= {root + x for x in _NOUN_SUFFIXES}
            if root.endswith("e"):
                forms |= {root[:-1] + x for x in _NOUN_SUFFIXES}
        if stem in _SAME_MEANING:
            forms.add(_SAME_MEANING[stem])
        for f in forms:
            other = tu.stem(f)
            if other not in own and other not in tu.STOPWORDS:
                out.setdefault(other, stem)
    return out


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


# What a lead's opening aside holds ("Achilles (Ἀχιλλεύς, Akhilleus) was …", "Alain Connes
# (born 1 April 1947) is …"): the subject's other names and its life dates, which answer
# only a question that asks for them.
_ASIDE_REACH = 12  # words before the "(" that may name the subject ("In Greek mythology, …")
_LIFE_STEMS = frozenset(tu.stem(w) for w in "born birth die died death dead lived".split())
_NAME_STEMS = frozenset(
    tu.stem(w) for w in "name named names called known spelled pronounced nickname".split()
)
_DATE_KINDS = frozenset({"date", "year", "number"})
# kinds of answer a word like "Portuguese" or "Swiss" names: the demonym is the answer
_DEMONYM_KINDS = frozenset(
    tu.stem(w) for w in "language tongue dialect nationality citizenship ethnicity".split()
)


def opening_aside(passage: Passage, sentence: str) -> tuple[int, int] | None:
    """The character range of the parentheses that follow the subject's name in a lead's
    first sentence, or None (not a lead's first sentence, or no such aside)."""
    if not is_lead(passage) or not passage.text.lstrip().startswith(sentence[:24]):
        return None
    open_at = sentence.find("(")
    if open_at < 0 or len(sentence[:open_at].split()) > _ASIDE_REACH:
        return None
    close_at = sentence.find(")", open_at)
    return (open_at, close_at) if close_at > open_at else None


def _aside_not_asked(
    span: Span, sentence: str, aside: tuple[int, int] | None, q: QuestionInfo
) -> bool:
    """The span is in the lead's opening aside and the question does not ask what the aside
    says: "Akhilleus" is Achilles himself, not his mother; "1947" is when Alain Connes was
    born, not when he won the Fields Medal, nor when he died."""
    if aside is None or not aside[0] < span.start < aside[1]:
        return False
    if span.kind in _DATE_KINDS:
        said, asked = _life_date(span, sentence, aside), _life_asked(q)
        return not q.stems & _LIFE_STEMS or bool(said and asked and said != asked)
    return not q.stems & _NAME_STEMS


_BIRTH_STEMS = frozenset(tu.stem(w) for w in "born birth".split())
_DEATH_STEMS = frozenset(tu.stem(w) for w in "die died death dead".split())
_START_STEMS = frozenset(
    tu.stem(w) for w in "begin began begun start started founded established opened".split()
)
_RANGE_GAP = re.compile(r"^\s*(?:to|until|till|through|–|—|-)\s*$")


@tu.tool_cache(maxsize=4096)
def _ranges(sentence: str) -> tuple[tuple[int, int], ...]:
    """Where the two dates of each range the sentence states start: "from 1968 to 2001",
    "(14 March 1879 – 18 April 1955)", "between 1914 and 1918"; cached, since every date
    span of the sentence asks."""
    dates = [sp for sp in sentence_spans(sentence) if sp.kind in ("date", "year")]
    out = []
    for a, b in zip(dates, dates[1:], strict=False):
        gap = sentence[a.start + len(a.text) : b.start]
        between = gap.strip() == "and" and sentence[: a.start].rstrip().endswith("between")
        if _RANGE_GAP.match(gap) or between:
            out.append((a.start, b.start))
    return tuple(out)


def _life_date(span: Span, sentence: str, aside: tuple[int, int] | None) -> str | None:
    """ "birth" or "death" when the span is that date of the lead's opening aside: the
    first of "(14 March 1879 – 18 April 1955)" is the birth, the last the death; a date
    alone is the birth after "born", the death after "died". None otherwise."""
    if aside is None or span.kind not in ("date", "year") or not aside[0] < span.start < aside[1]:
        return None
    for first, last in _ranges(sentence):
        if aside[0] < first < aside[1] and span.start in (first, last):
            return "birth" if span.start == first else "death"
    before = sentence[aside[0] : span.start].lower()
    if re.search(r"\b(?:born|b\.)\s*$", before):
        return "birth"
    if re.search(r"\b(?:died|d\.)\s*$", before):
        return "death"
    return None


def _life_asked(q: QuestionInfo) -> str | None:
    """ "birth" or "death" when the question asks when (or in what year) one of them was."""
    if q.kind != "date":
        return None
    birth, death = bool(q.stems & _BIRTH_STEMS), bool(q.stems & _DEATH_STEMS)
    return "birth" if birth and not death else "death" if death and not birth else None


def _other_end_of_range(span: Span, sentence: str, q: QuestionInfo) -> bool:
    """The span opens a stated range ("ran from 1968 to 2001", "(1879–1955)") and the
    question asks when something ended, or it closes one and the question asks when
    something began: "When did Mister Rogers' Neighborhood end its run?" is 2001."""
    if q.kind != "date" or span.kind not in ("date", "year"):
        return False
    end, start = bool(q.stems & END_WORDS), bool(q.stems & _START_STEMS)
    if end == start:
        return False
    return any(span.start == (first if end else last) for first, last in _ranges(sentence))


_FIRST_WORDS = frozenset("first earliest inaugural original".split())
_LAST_WORDS = frozenset("last latest recent final".split())
# other ordinals end the reach of a "first" or "last" before them ("The first state to
# ratify was Virginia; the thirteenth state to ratify was Maryland")
_ORDINAL = re.compile(
    r"^(?:\d+(?:st|nd|rd|th)|second|third|(?:four|fif|six|seven|eigh|nin|ten|eleven|twelf|"
    r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twentie|thirtie)th)$"
)
# any first or last word before a span, found in one pass before its words are listed
_ANY_FIRST_OR_LAST = re.compile(r"\b(?:" + "|".join(_FIRST_WORDS | _LAST_WORDS) + r")\b", re.I)
# words that turn the span into the one before or after the mark: "the first non-Italian
# pope since Adrian VI" says Adrian VI was the last before him
_TURNS = frozenset("since after before than".split())


def _other_ordinal(span: Span, sentence: str, q: QuestionInfo) -> bool:
    """The question asks for the first of something and the nearest such word before the
    span says the last, or the other way round: "The inaugural Games took place in 1896
    in Athens, and the most recent was held in 2024 in Paris" gives Athens, not Paris,
    for "In which city were the first Summer Olympics held?"."""
    first, last = bool(q.lower_words & _FIRST_WORDS), bool(q.lower_words & _LAST_WORDS)
    if first == last or not _ANY_FIRST_OR_LAST.search(sentence, 0, span.start):
        return False
    words = [w.group(0).lower() for w in _WORD.finditer(sentence, 0, span.start)]
    for i in range(len(words) - 1, -1, -1):
        w = words[i]
        if w in _FIRST_WORDS or w in _LAST_WORDS or _ORDINAL.match(w):
            turned = any(t in _TURNS for t in words[i + 1 :])
            return not turned and w in (_LAST_WORDS if first else _FIRST_WORDS)
    return False


# "X is the cathode": a span said to be a thing, and which (the article keeps out "is
# often", "is useful")
_SAID_TO_BE = re.compile(r"\s+(?:is|was|are|were)\s+(?:the|an?)\s+(\w+)", re.IGNORECASE)


def _paired_with_another(span: Span, sentence: str, q: QuestionInfo) -> bool:
    """The sentence pairs two subjects with two things ("its positive terminal is the
    cathode and its negative terminal is the anode") and says this span is the one the
    question does not ask about: for "Which terminal … acts as the anode", the span said
    to be "the cathode" is not the answer when another is said to be "the anode"."""
    own = _SAID_TO_BE.match(sentence, span.end)
    if own is None or tu.stem(own.group(1).lower()) in q.stems:
        return False
    return any(
        m.start() != own.start() and tu.stem(m.group(1).lower()) in q.stems
        for m in _SAID_TO_BE.finditer(sentence)
    )


_NEGATIONS = frozenset({"not", "never", "no", "nor", "neither", "cannot"})
_NEGATION_REACH = 4  # words from the negation to the span: "not part of the EU"
_CLAUSE_BREAK = re.compile(r"[,;:.()\[\]–—]")
# any negation word before a span, found in one pass before its words are listed
_ANY_NEGATION = re.compile(r"\b(?:not|never|no|nor|neither|cannot)\b|n['’]t\b", re.IGNORECASE)


def _negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith(("n't", "n’t"))


def _denied(span: Span, sentence: str, q: QuestionInfo) -> bool:
    """The sentence denies what the question asks of the span: "Greenland is not part of
    the EU" does not answer "Which country is Greenland part of?". The negation must come
    at most a few words before the span in the same clause, with a word of the question
    between them ("part"), and the question must not deny it too; "not until 1806" says
    when, and stays."""
    if not _ANY_NEGATION.search(sentence, 0, span.start):  # most spans: no tokens listed
        return False
    if any(_negation(w) for w in q.lower_words):
        return False
    words = list(_WORD.finditer(sentence, 0, span.start))[-_NEGATION_REACH - 1 :]
    neg = [i for i, m in enumerate(words) if _negation(m.group(0).lower())]
    if not neg or _CLAUSE_BREAK.search(sentence, words[neg[-1]].end(), span.start):
        return False
    between = [m.group(0).lower() for m in words[neg[-1] + 1 :]]
    return any(tu.stem(w) in q.stems for w in between if w not in tu.STOPWORDS)


def _from_question(span: Span, q: QuestionInfo) -> bool:
    """The span says nothing the question did not: its content words are all the question's,
    or its words run inside the question's ("U.S" in "which U.S. state", "Divan-i Shams" in
    "the Divan-i Shams-i Tabrizi")."""
    if q.said is not None:
        q = q.said
    words = [w.lower() for w in _WORD.findall(span.text)]
    content = [w for w in words if w not in tu.STOPWORDS]
    if not content:
        return True
    if all(w in q.lower_words or tu.stem(w) in q.stems for w in content):
        return True
    if f" {_plain(span.text)} " in f" {_plain(q.text)} ":
        return True
    abbreviations = _abbreviations(q.text)
    return bool(abbreviations) and _initials(span.text) in abbreviations


# "U.S.", "UK", "NATO": an abbreviation the question writes
_ABBREVIATION = re.compile(r"(?:[A-Z]\.){2,}|[A-Z]{2,6}")
_LINK_WORDS = frozenset({"of", "the", "and", "for", "&"})


@tu.tool_cache(maxsize=4096)
def _abbreviations(question: str) -> frozenset[str]:
    """The letters of each abbreviation the question uses to describe a noun ("U.S." of
    "which U.S. state" → "US"): the name it abbreviates is the question's own words, not an
    answer. An abbreviation that stands alone ("What was the DGCA?", "What does NASA stand
    for?") may be what is asked, and its full name the answer."""
    tags = tu.pos_tags(question)
    return frozenset(
        word.replace(".", "")
        for (word, _), (_, tag) in zip(tags, tags[1:], strict=False)
        if _ABBREVIATION.fullmatch(word) and tag in ("NN", "NNS")
    )


def _initials(text: str) -> str:
    """The initials of a name of two or more capitalised words, its linking words left out
    ("United States of America" → "USA"); "" for anything else."""
    words = [w for w in _WORD.findall(text) if w.lower() not in _LINK_WORDS]
    if len(words) < 2 or not all(w[0].isupper() for w in words):
        return ""
    return "".join(w[0] for w in words)


# kinds that ask for a label itself: the answer is the name or the term, never a common
# noun phrase that says there is one ("stage name", "legal term")
_LABEL_STEMS = frozenset(tu.stem(w) for w in "name nickname term word title phrase".split())


def _names_the_kind(span: Span, sentence: str, q: QuestionInfo) -> bool:
    """The span is a common noun phrase whose head is the kind the question asks for, said
    after a copula: "The yen is the official currency of Japan" states the answer to "What
    is the currency of Japan?" as its subject, and "official currency" is only the kind
    restated. When the question names that subject itself ("Which headland is the Cape of
    Good Hope?" and "The Cape of Good Hope is a rocky headland"), the phrase is what it
    asks. A name ("Battle of Segesvár" for "which battle") or a phrase said elsewhere
    ("rest on their left side" for "which side") is not left out, except when the kind is
    a label ("name", "term"), which only a name or the term itself gives."""
    if span.kind != "np" or not head_is_asked(q, span.text):
        return False
    if q.head in _LABEL_STEMS:  # "What was Little Richard's real name?": not "stage name"
        return True
    before = list(_WORD.finditer(sentence, 0, span.start))[-2:]
    if before and before[-1].group(0).lower() in _DET:
        before = before[:-1]
    if not before or before[-1].group(0).lower() not in _COPULA:
        return False
    subject = sentence[: before[-1].start()].rsplit(",", 1)[-1]  # "In Japan, the yen is …"
    return not quick_stems(subject) & q.stems


_ORDINAL_WORDS = frozenset("first second third last only".split())
_MAX_QUALIFIER = 3  # words between "first" and its noun: "first African American woman"


@tu.tool_cache(maxsize=4096)
def ranked_kinds(question: str) -> tuple[tuple[str, str], ...]:
    """The question's ordinal or superlative and the noun right after it, as stems:
    ("first", "woman") for "Who was the first woman to travel into space?"."""
    tags = tu.sentence_tags(question)
    out = []
    for i, (word, tag) in enumerate(tags):
        low = word.lower()
        j = i + 1
        ranked = i > 0 and _ranks(tags[i - 1])  # "the largest", "Earth's largest"
        if low == "most" and ranked and j < len(tags) and tags[j][1].startswith("JJ"):
            low, j = tags[j][0].lower(), j + 1  # "the most populous country"
        elif not (low in _ORDINAL_WORDS or (ranked and _is_superlative(low, tag))):
            continue
        noun = j
        while noun < min(len(tags), j + _MAX_QUALIFIER) and tags[noun][1] == "JJ":
            noun += 1  # "the largest hot desert"
        if noun < len(tags) and tags[noun][1] in ("NN", "NNS"):
            out.append((tu.stem(low), tu.stem(tags[noun][0].lower())))
        elif (j >= len(tags) or tags[j][1] in ("IN", ".")) and question_head(question):
            # "Which hot desert is the largest on Earth?": the noun went before
            out.append((tu.stem(low), tu.stem(question_head(question))))
    return tuple(out)


# Words that end as a superlative does without being one (the tagger reads a noun before a
# noun as JJ: "the harvest festival").
_NOT_SUPERLATIVE = frozenset(
    """honest dishonest modest immodest earnest manifest west northwest southwest midwest
    forest rainforest protest conquest harvest interest contest request arrest unrest
    digest test quest chest nest guest pest crest""".split()
)
# What stands before a superlative that ranks: an article or a possessive. A noun the
# tagger reads as JJ before another noun ("forest cover", "protest movement") has none.
_RANKING_DETERMINERS = frozenset("the its their his her our my your".split())


def _ranks(previous: tuple[str, str]) -> bool:
    word, tag = previous
    return word.lower() in _RANKING_DETERMINERS or tag == "POS" or word.endswith(("'s", "’s"))


def _is_superlative(word: str, tag: str) -> bool:
    """A superlative by its form: the tagger (UD's tags mapped to Penn's) gives "largest"
    and "tallest" the plain JJ, never JJS."""
    if tag in ("JJS", "RBS") or word in ("best", "worst"):
        return True
    return (
        tag in ("JJ", "RB")
        and len(word) > 4
        and word.endswith("est")
        and word not in _NOT_SUPERLATIVE
    )


def _qualified_rank(q: QuestionInfo, sentences: Sequence[str]) -> frozenset[str]:
    """The sentences that state the question's "first woman" only with words between that
    the question lacks ("the first African American woman to travel in space"), when
    another sentence states it as asked ("The first woman in space was …"). Those answer a
    narrower question: their spans are no candidates then."""
    ranked = ranked_kinds(q.text)
    if not ranked:
        return frozenset()
    plain: set[str] = set()
    narrower: set[str] = set()
    for s in sentences:
        words = _WORD.findall(s)
        stems = [_as_named(w, q) for w in words]
        for rank_word, noun in ranked:
            for i, w in enumerate(stems):
                if w != rank_word:
                    continue
                after = stems[i + 1 : i + 2 + _MAX_QUALIFIER]
                if noun not in after:
                    continue
                between = after[: after.index(noun)]
                if not between:
                    plain.add(s)
                elif not set(between) & q.stems:
                    narrower.add(s)
    return frozenset(narrower - plain) if plain else frozenset()


@dataclass(frozen=True)
class _RankStated:
    stating: frozenset[str]  # sentences that state the asked rank as asked
    elsewhere: frozenset[str]  # sentences that state it only within a narrower scope
    scopes: dict[str, list[tuple[int, int]]]  # where each stating sentence says the scope


def _states_rank(q: QuestionInfo, sentences: Sequence[str]) -> _RankStated:
    """The sentences that state the question's superlative or ordinal with its noun as the
    question asks it ("the largest city of …" for "Which is the biggest city in …?", "the
    most important symbol in …"), not a lower rank of it ("the second-largest city", "the
    fourth most populous"); and those that state it only within a scope that names what
    the question's does not ("the largest hot desert in North America" for "… the
    largest on Earth?", "in South Africa" for "in Africa"), which answer a narrower
    question; a nationality in it ("of the German state of …") names nothing, and the
    world's rank holds in any scope. A sentence of the first kind says which thing holds
    the rank; another sentence only names things of the kind."""
    ranked = ranked_kinds(q.text)
    if not ranked:
        return _RankStated(frozenset(), frozenset(), {})
    complement = _rank_complement(q.text)
    said: list[tuple[str, frozenset[str], tuple[int, int]]] = []  # each rank stated
    for s in sentences:
        found = list(_WORD.finditer(s))
        stems = [q.related.get(x, x) for x in (_as_named(m.group(0), q) for m in found)]
        if complement and not complement & set(stems):
            continue  # "the first man and woman" for "the first man to walk on the Moon"
        for rank_word, noun in ranked:
            for end in _rank_ends(q, s, found, stems, rank_word, noun):
                scope, length = _scope(s[end:])
                said.append((s, scope, (end, end + length)))
    asked = _scope_names(q.text, ranked)
    if not asked and any(scope == _WORLD for _, scope, _ in said):
        asked = _WORLD  # "the largest country": in the world, as a sentence says it
    out: set[str] = set()
    other: set[str] = set()
    scopes: dict[str, list[tuple[int, int]]] = {}
    for s, scope, at in said:
        narrower = asked and not (scope <= asked or scope == _WORLD)  # the world's holds
        (other if narrower else out).add(s)
        if at[1] > at[0] and not narrower:
            scopes.setdefault(s, []).append(at)
    return _RankStated(frozenset(out), frozenset(other - out), scopes)


@tu.tool_cache(maxsize=4096)
def _question_names(question: str) -> frozenset[str]:
    """Stems of the capitalised words the question names after its first: "rome"."""
    return frozenset(tu.stem(w.lower()) for w in tu.words(question)[1:] if w[:1].isupper())


def _names_demonym(word: str, names: frozenset[str]) -> bool:
    """The word is the nationality of a place the question names: "Roman" of "Rome",
    "Chinese" of "China" (the two share their first three letters)."""
    low = word.lower()
    return is_demonym(word) and any(len(n) > 3 and n[:3] == low[:3] for n in names)


def _as_named(word: str, q: QuestionInfo) -> str:
    """A sentence word's stem, a nationality of a place the question names read as that
    place: "the first Roman emperor" states the question's "first emperor of Rome"."""
    names = _question_names(q.text)
    if names and _names_demonym(word, names):
        return next(n for n in sorted(names) if n[:3] == word.lower()[:3])
    return tu.stem(word.lower())


def _rank_ends(
    q: QuestionInfo,
    sentence: str,
    found: Sequence[re.Match[str]],
    stems: Sequence[str],
    rank_word: str,
    noun: str,
) -> Iterator[int]:
    """Where each statement of the rank with its noun ends in the sentence: after "the
    largest hot desert" (qualifiers the question has between), or after "the largest" when
    the noun went before ("the fifth planet from the Sun and the largest in …")."""
    low = [m.group(0).lower() for m in found]
    for i, w in enumerate(stems):
        if w != rank_word:
            continue
        before = low[i - 1] if i else ""
        if not (low[i] in _ORDINAL_WORDS or _is_superlative(low[i], "JJ")):  # "most …"
            if before != "most":
                continue
            before = low[i - 2] if i > 1 else ""
        if _ORDINAL.match(before):  # "second largest"; "second-largest" is one word
            continue
        after = stems[i + 1 : i + 2 + _MAX_QUALIFIER]
        if noun in after and set(after[: after.index(noun)]) <= q.stems:
            at = i + 1 + after.index(noun)
            if not _modifies_next(sentence, found, at):
                yield found[at].end()
        elif low[i + 1 : i + 2] in (["in"], ["of"], ["on"]) and noun in stems[:i]:
            yield found[i].end()


# "in North America", "by area in Mainland Southeast Asia": to the clause's end
_SCOPE = re.compile(r"\s+(?:by\s+\w+\s+)?(?:in|on|of)\s+((?:[^,;:()?.]|\.(?=\w))*)")
WHOLE_WORLD = frozenset({"world", "earth"})  # "on Earth" and "in the world" are one scope
_WORLD = frozenset({"world"})
_MAX_SCOPE_WORDS = 8
# what ends the scope's phrase: "in the world and the third-largest desert overall",
# "of North Rhine-Westphalia with nearly 1.1 million inhabitants", "in Africa is the Nile"
_SCOPE_END = re.compile(
    r"\s(?:and|or|but|which|who|that|with|by|after|before|since|is|was|are|were)\s"
)


def _modifies_next(sentence: str, found: Sequence[re.Match[str]], at: int) -> bool:
    """The word at `at` modifies a noun right after it ("the largest ocean liner"), so
    the rank is that noun's: a lower-case content word follows with no break between,
    not a participle ("the first woman elected") nor an adverb ("ever", "known")."""
    if at + 1 >= len(found) or sentence[found[at].end() : found[at + 1].start()].strip():
        return False
    nxt = found[at + 1].group(0)
    return (
        nxt.islower()
        and nxt not in tu.STOPWORDS
        and not nxt.endswith(("ed", "ing"))
        and nxt not in _AFTER_RANK
    )


_AFTER_RANK = frozenset("ever yet known recorded overall alive today anywhere".split())


@tu.tool_cache(maxsize=4096)
def _rank_complement(question: str) -> frozenset[str]:
    """The content stems of what the question's rank is "to" do: {walk, moon} of "the
    first man to walk on the Moon". A sentence that says none of them states another
    first."""
    m = re.search(r"\b(?:first|last|only)\s+(?:\w+\s+){0,3}?\w+\s+to\s+([^,;:?]+)", question)
    return tu.stem_set(m.group(1)) if m else frozenset()


def _scope(rest: str) -> tuple[frozenset[str], int]:
    """The names of the place or group a rank is within, from the phrase that opens
    `rest` ("in North America" after "the largest hot desert"): stems of its capitalised
    words, with "world" for the world or Earth; and the phrase's length in `rest`."""
    m = _SCOPE.match(rest)
    if m is None:
        return frozenset(), 0
    phrase = _SCOPE_END.split(m.group(1))[0]
    words = _WORD.findall(phrase)[:_MAX_SCOPE_WORDS]
    names = {tu.stem(w.lower()) for w in words if w[:1].isupper() and not is_demonym(w)}
    world = {tu.stem(w.lower()) for w in words} & WHOLE_WORLD
    names_ = frozenset(names - WHOLE_WORLD) | (_WORLD if world else frozenset())
    return names_, m.start(1) + len(phrase)


@tu.tool_cache(maxsize=4096)  # read for every candidate passage of a rank question
def _scope_names(question: str, ranked: tuple[tuple[str, str], ...]) -> frozenset[str]:
    """The scope the question gives its rank: "the largest planet in the Solar System",
    "the largest on Earth"."""
    found = list(_WORD.finditer(question))
    stems = [tu.stem(m.group(0).lower()) for m in found]
    out: set[str] = set()
    for rank_word, noun in ranked:
        for i, w in enumerate(stems):
            if w != rank_word:
                continue
            at = i + 1 + stems[i + 1 :].index(noun) if noun in stems[i + 1 :] else i
            out |= _scope(question[found[at].end() :])[0]
    return frozenset(out)


def states_asked_rank(q: QuestionInfo, text: str) -> bool:
    """The text states the rank the question asks for, as `_states_rank` reads a
    sentence: "Jupiter is … the largest in the Solar System" for "What is the largest
    planet in the Solar System?". What a search for such a question should put first."""
    return bool(_states_rank(q, tu.sentences(text)).stating)


def _by_rank(q: QuestionInfo, raw: list[_Raw], sentences: Sequence[str]) -> list[_Raw]:
    """For a question that asks for the first or the largest of a kind: the spans of the
    sentences that state that rank as asked, when some do; never a narrower rank's."""
    if not ranked_kinds(q.text):
        return raw
    narrower = _qualified_rank(q, sentences)
    if narrower and any(r[1] not in narrower for r in raw):
        raw = [r for r in raw if r[1] not in narrower]
    stated = _states_rank(q, sentences)
    elsewhere, stating = stated.elsewhere, stated.stating
    if elsewhere and any(r[1] not in elsewhere for r in raw):
        raw = [r for r in raw if r[1] not in elsewhere]
    if stating and any(r[1] in stating for r in raw):
        raw = [r for r in raw if r[1] in stating]
    if q.head and any(noun == q.head for _, noun in ranked_kinds(q.text)):
        # "the longest river in the world" names where, not which river
        kept = [r for r in raw if not _in_scope(r[0], stated.scopes.get(r[1], ()))]
        raw = kept or raw
    return raw


def _in_scope(span: Span, scopes: Sequence[tuple[int, int]]) -> bool:
    return any(start <= span.start < end for start, end in scopes)


_YEAR_STEM = tu.stem("year")
_YEAR_IN_DATE = re.compile(r"\b\d{3,4}\b|\b\d{1,4}\s*(?:BCE?|AD|CE)\b|\bAD\s*\d{1,4}\b")


def _names_a_year(span: Span) -> bool:
    """A year, or a date with its year ("4 May 1805", "27 BC"): what "in which year" asks
    for, where "the 15th century", "the 1990s" and "4 May" are not."""
    return span.kind == "year" or (span.kind == "date" and bool(_YEAR_IN_DATE.search(span.text)))


def _plain(text: str) -> str:
    """Lower-case words with hyphens and dots as breaks: how a span is found in a question."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


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
    a place's or a nationality, and not a role alone ("the 16th President", "Vice
    President": who held it is the answer); or the agent of a passive ("by Orwell")."""
    if span.kind != "entity" or not _LATIN.search(span.text) or is_demonym(span.text):
        return False
    words = {w.lower().rstrip(".") for w in span.text.split()}
    if words & (NOT_PERSON_WORDS | PLACE_WORDS) or words <= ROLE_TITLES:
        return False
    return span.before == "by" or 2 <= len(span.text.split()) <= 4


# an initial written for a given name: "H." of "H. G. Wells", "J.R.R." of "J.R.R. Tolkien"
_INITIALS = re.compile(r"^(?:[A-Z]\.){1,3}$")


def starts_with_given_name(span: Span, names: frozenset[str]) -> bool:
    """A name of two words or more whose first word is one of `names` (lower-case given
    names of the index's people, `given_names`) or an initial that stands for one ("H. G.
    Wells"), and whose last word is no initial ("E. T", "H. G.")."""
    words = span.text.split()
    if span.kind != "entity" or len(words) < 2 or _INITIALS.match(words[-1].rstrip(".") + "."):
        return False
    return words[0].lower() in names or bool(_INITIALS.match(words[0]))


# nationality adjectives the demonym pattern (-an, -ese, -ish, -ic, -i) does not catch
_OTHER_DEMONYMS = frozenset("soviet french dutch greek swiss thai welsh czech".split())


def without_nationality(span: Span, names: frozenset[str]) -> Span:
    """A person's name without the nationality written before it: "The first woman in
    space was Soviet Valentina Tereshkova" names "Valentina Tereshkova". Only when what
    remains starts with a given name of the index's people, so "American Civil War" and
    "Irish Free State" stay whole."""
    first, _, rest = span.text.partition(" ")
    if span.kind != "entity" or not rest:
        return span
    if not (is_demonym(first) or first.lower() in _OTHER_DEMONYMS):
        return span
    shorter = replace(span, text=rest, start=span.start + len(first) + 1, before=first.lower())
    return shorter if starts_with_given_name(shorter, names) else span


def surname(span: Span) -> str:
    """The last word of a name, lower-cased ("" for other spans): what a later mention of
    the same person keeps."""
    if span.kind != "entity":
        return ""
    parts = span.text.split()
    return parts[-1].lower() if parts else ""


def common_name(name: str, title: str) -> str:
    """`title` (its disambiguation aside dropped) when it is `name` with middle words left
    out: Wikipedia opens an article with the full name and titles it by the common one."""
    short = strip_paren_tail(title).split()
    words = name.split()
    if len(short) < 2 or len(words) <= len(short) or (words[0], words[-1]) != (short[0], short[-1]):
        return name
    rest = iter(words)
    return " ".join(short) if all(w in rest for w in short) else name


def stated(span: Span, title: str) -> str:
    """The span as the answer states it, read in the article titled `title`: a name is
    said as that article's common name when it is the full one (`common_name`)."""
    return common_name(span.text, title) if span.kind == "entity" else span.text


def place_like(span: Span) -> bool:
    if span.kind != "entity" or not _LATIN.search(span.text) or is_demonym(span.text):
        return False
    words = {w.lower() for w in span.text.split()}
    return bool(words & PLACE_WORDS) or span.before in _PLACE_PREPS


@dataclass
class _Pool:
    """What every candidate of one question is measured against."""

    q: QuestionInfo
    idf: dict[str, float]
    idf_total: float
    max_score: float
    span_sentences: Counter[str]
    span_passages: dict[str, set[str]]
    q_low: str
    words_of: dict[str, list[tuple[int, int, str]]]
    titles: dict[str, tuple[frozenset[str], float]]
    # A person's surname said alone ("Orwell") names the same answer as the full name
    # ("George Orwell"): sentences and passages per surname of a person-like name.
    surnames: Counter[str] = field(default_factory=Counter)
    surname_passages: dict[str, set[str]] = field(default_factory=dict)
    types: LeadTypes | None = None
    # title -> the name the question gives its article, where its lead gives that name
    # ("the NBA" for "National Basketball Association"): the article is named all the same
    given: dict[str, str] = field(default_factory=dict)
    # sentence -> (cosine to the question, minus the best sentence's), where vectors exist
    similarity: dict[str, tuple[float, float]] = field(default_factory=dict)
    names: frozenset[str] = frozenset()  # given names of the index's people (lower case)
    # surnames of the candidates that start with one: "Orwell" said alone is George Orwell's
    given_surnames: frozenset[str] = frozenset()

    def agreement(self, sp: Span, key: str) -> tuple[int, int]:
        """(sentences, passages) stating this answer: its own text, or for a name its
        surname said alone in another sentence."""
        n_sent, n_pass = self.span_sentences[key], len(self.span_passages[key])
        last = surname(sp)
        if last and last in self.surnames:
            n_sent = max(n_sent, self.surnames[last])
            n_pass = max(n_pass, len(self.surname_passages[last]))
        return n_sent, n_pass

    def words(self, sentence: str) -> list[tuple[int, int, str]]:
        if sentence not in self.words_of:
            rel = self.q.related
            self.words_of[sentence] = [(a, b, rel.get(w, w)) for a, b, w in _word_spans(sentence)]
        return self.words_of[sentence]

    def title(self, title: str) -> tuple[frozenset[str], float]:
        """(title stems, 1.0 when the question names the whole title). A title that is only
        the kind the question asks for is not its topic: "What is the currency of Japan?"
        names Japan, and asks for a currency, which the article "Currency" does not give."""
        if title not in self.titles:
            as_named = self.given.get(title, title)
            t_low = " ".join(w.lower() for w in tu.words(as_named))
            stems = tu.stem_set(as_named)
            named = bool(t_low) and f" {t_low} " in f" {self.q_low} "
            kind_only = bool(self.q.head) and stems == {self.q.head}
            self.titles[title] = (stems, float(named and not kind_only))
        return self.titles[title]


_Raw = tuple[Span, str, Passage, int, frozenset[str]]
# (question, sentences) -> cosine of each sentence to the question
Similarity = Callable[[str, Sequence[str]], np.ndarray]


def _sentences(passages: Sequence[Passage], types: LeadTypes | None):
    """The top passages and their sentences, an opening pronoun read as the article's
    subject (`coreference`)."""
    top = list(passages[:MAX_PASSAGES])
    sents = [
        (rank, p, resolve_opening_pronoun(s, p.title, types))
        for rank, p in enumerate(top)
        for s in tu.sentences(p.text)
        if 3 <= len(s.split()) <= MAX_SENTENCE_WORDS
    ]
    return top, sents


def _similarities(
    q: QuestionInfo, sentences: list[str], similarity: Similarity | None
) -> dict[str, tuple[float, float]]:
    if similarity is None or not sentences:
        return {}
    unique = list(dict.fromkeys(sentences))
    sims = [float(x) for x in similarity(q.text, unique)]
    best = max(sims)
    return {s: (x, x - best) for s, x in zip(unique, sims, strict=True)}


def _as_asked(stems: frozenset[str], q: QuestionInfo) -> frozenset[str]:
    """A sentence's stems with other forms of the question's words read as the question's."""
    if not q.related or not stems & q.related.keys():
        return stems
    return frozenset(q.related.get(w, w) for w in stems)


def _collect(
    q: QuestionInfo,
    passages: Sequence[Passage],
    types: LeadTypes | None = None,
    similarity: Similarity | None = None,
    names: frozenset[str] = frozenset(),
) -> tuple[list[_Raw], _Pool] | None:
    """The candidate spans of the passages (typed filtering applied) and their pool."""
    top, sents = _sentences(passages, types)
    if not sents:
        return None
    df: Counter[str] = Counter()
    stems = [_as_asked(quick_stems(s), q) for _, _, s in sents]
    for st in stems:
        df.update(st & q.stems)
    idf = {w: math.log(1 + len(sents) / (1 + df[w])) for w in q.stems}
    pool = _Pool(q, idf, sum(idf.values()) or 1.0,
                 max((p.score for p in top), default=0.0) or 1.0, Counter(), {},
                 " ".join(w.lower() for w in tu.words(q.text)), {}, {}, types=types,
                 similarity=_similarities(q, [s for _, _, s in sents], similarity),
                 names=names, given=names_leads_give(q.text, top))  # fmt: skip
    raw: list[_Raw] = []
    life_asked = _life_asked(q)
    life: list[_Raw] = []  # the asked life date of an article the question names
    for (rank, p, s), st in zip(sents, stems, strict=True):
        aside = opening_aside(p, s)
        for sp in (without_nationality(sp, names) for sp in sentence_spans(s)):
            key = normalise(sp.text)
            if (
                not key
                or _from_question(sp, q)
                or _aside_not_asked(sp, s, aside, q)
                or _names_the_kind(sp, s, q)
                or _other_end_of_range(sp, s, q)
                or _other_ordinal(sp, s, q)
                or _paired_with_another(sp, s, q)
                or _denied(sp, s, q)
            ):
                continue
            raw.append((sp, s, p, rank, st))
            if life_asked and pool.title(p.title)[1] and _life_date(sp, s, aside) == life_asked:
                life.append(raw[-1])
            pool.span_sentences[key] += 1
            pool.span_passages.setdefault(key, set()).add(p.doc_id)
    full_names = {surname(r[0]) for r in raw if person_like(r[0]) and len(r[0].text.split()) > 1}
    pool.given_surnames = frozenset(
        surname(r[0]) for r in raw if starts_with_given_name(r[0], names)
    )
    for sp, _, p, _, _ in raw:
        last = surname(sp)
        if last in full_names:
            pool.surnames[last] += 1
            pool.surname_passages.setdefault(last, set()).add(p.doc_id)
    if life:  # "When did Albert Einstein die?": his lead says it, in its opening aside
        raw = life
    fits = FITS.get(q.kind)
    if fits and any(r[0].kind in fits for r in raw):
        raw = [r for r in raw if r[0].kind in fits]
    if q.measures and any(_measures_asked(r[0], q) for r in raw):
        raw = [r for r in raw if _measures_asked(r[0], q)]
    if q.kind == "date" and q.head == _YEAR_STEM and any(_names_a_year(r[0]) for r in raw):
        raw = [r for r in raw if _names_a_year(r[0])]
    raw = _by_rank(q, raw, [s for _, _, s in sents])
    if q.kind in ("person", "place") and any(_LATIN.search(r[0].text) for r in raw):
        raw = [r for r in raw if _LATIN.search(r[0].text)]
    return raw, pool


def _measures_asked(sp: Span, q: QuestionInfo) -> bool:
    """The span is a number whose unit measures what the question asks for: "8,848.86 m"
    for "How tall…", not "11.86 years" for "How far…" nor "11" (countries) for "How
    high…". When some number of the passages is one, only such numbers are candidates."""
    return sp.kind == "number" and measures.answers(sp.text, sp.unit, q.measures)


def _position(pool: _Pool, sp: Span, sentence: str, st: frozenset[str]) -> dict[str, float]:
    """How much of the question the sentence states, and how close the span sits to it."""
    q = pool.q
    words = pool.words(sentence)
    matched = q.stems & st
    f = {
        "sent_idf_overlap": sum(pool.idf[w] for w in matched) / pool.idf_total,
        "sent_overlap": len(matched) / max(1, len(q.stems)),
        "sentence_long": float(len(words) > 40),
    }
    if sentence in pool.similarity:
        f["sent_sim"], f["sent_sim_gap"] = pool.similarity[sentence]
    anchors = [k for k, (_, _, w) in enumerate(words) if w in q.stems]
    inside = [k for k, (a, b, _) in enumerate(words) if a >= sp.start and b <= sp.end]
    if inside:
        lo, hi = inside[0], inside[-1]
    else:  # a span inside parentheses: place it where the aside stands
        lo = hi = sum(1 for a, _, _ in words if a < sp.start)
    f["span_first"] = float(lo == 0 and bool(inside))
    f["in_parens"] = float(not inside)
    outside = [k for k in anchors if k < lo or k > hi]
    if outside:
        f["anchors_right"] = sum(k > hi for k in outside) / len(outside)
        dist = min(lo - k if k < lo else k - hi for k in outside) - 1
        f["prox_recip"] = 1.0 / (1.0 + dist)
        f["prox_le2"] = float(dist <= 2)
    else:
        f["no_anchor"] = 1.0
    window = {words[k][2] for k in range(max(0, lo - WINDOW), min(len(words), hi + WINDOW + 1))}
    f["window_overlap"] = sum(pool.idf[w] for w in q.stems & window) / pool.idf_total
    if q.head:
        near = {words[k][2] for k in range(max(0, lo - 3), min(len(words), hi + 4))}
        f["head_near"] = float(q.head in near)
    return f


def _relation(
    pool: _Pool, sp: Span, sentence: str, p: Passage, st: frozenset[str]
) -> dict[str, float]:
    """How much of what the question asks about its topic the sentence states: the
    question's words less its passage's article title ("assassinated" of "Who assassinated
    Abraham Lincoln?" in "Abraham Lincoln"), which every sentence of that article shares,
    said or not.

    Some of the question's words are said without being written. The kind a date question
    asks for ("year" of "In what year did the Titanic sink?") is what the date itself
    states; no sentence that gives a year says "year". So is the measure a question asks
    for ("tall", "temperature") by a number whose unit measures it. And an agent after
    "by" and a noun ("a novella by George Orwell", "a portrait painting by Italian artist
    Leonardo da Vinci") is the maker the question's verb asks for ("Who wrote Animal
    Farm?"), though the sentence says no verb; after a verb ("assassinated by") the verb is
    written, and counts only if it is the question's."""
    q = pool.q
    t_stems, _ = pool.title(p.title)
    rest = q.stems - t_stems
    total = sum(pool.idf[w] for w in rest)
    if not total:
        return {}
    said: set[str] = set()  # what the span itself says of the question's words
    if q.kind == "date" and q.head and sp.kind in ("date", "year"):
        if q.head != _YEAR_STEM or _names_a_year(sp):  # "the 19th century" says no year
            said.add(q.head)
    if sp.kind == "number" and measures.answers(sp.text, sp.unit, q.measures):
        # "8,848.86 m" states the "tall" asked; a time says "old" only with "old" after it
        # ("69 years old"), or with no unit ("died at 37"): "two years" is no one's age
        if measures.AGE not in q.measures or not sp.unit or sp.after == "old":
            said |= q.measure_stems
    if q.verbs and sp.kind == "entity" and is_agent(sentence, sp.start):
        said |= q.verbs
    stated = rest & (st | said)
    return {"relation_overlap": sum(pool.idf[w] for w in stated) / total}


def _context(pool: _Pool, sp: Span, p: Passage, rank: int) -> dict[str, float]:
    """The passage around the span: title, rank, score, and agreement across passages."""
    t_stems, named = pool.title(p.title)
    n_sentences, n_passages = pool.agreement(sp, normalise(sp.text))
    return {
        "title_overlap": len(t_stems & pool.q.stems) / max(1, len(t_stems)),
        "title_in_question": named,
        "span_in_title": float(set(tu.stem_set(sp.text)) <= t_stems),
        "rank_recip": 1.0 / (1 + rank),
        "rank0": float(rank == 0),
        "bm25_norm": max(0.0, p.score) / pool.max_score,
        "agree_sentences": math.log(n_sentences),
        "agree_passages": math.log(n_passages),
    }


def _lead(pool: _Pool, sp: Span) -> LeadType | None:
    """The definition of the name's own article, when the index has one."""
    if pool.types is None or sp.kind != "entity":
        return None
    return pool.types.of(sp.text)


def _span_cues(pool: _Pool, sp: Span, sentence: str, lead: LeadType | None) -> dict[str, float]:
    """The span itself and the words around it: "by George Orwell", "in England"."""
    q = pool.q
    sp_words = [w.lower() for w in _WORD.findall(sp.text)]
    before = sentence[: sp.start]
    lead_person = lead is not None and lead.person  # "Rumi", "Vivaldi": one-word names
    role = set(sp_words) <= ROLE_TITLES  # "President": a role, not the one who held it
    asks_demonym = q.head in _DEMONYM_KINDS  # "Portuguese" answers "what language"
    person = (
        person_like(sp) or (len(sp_words) == 1 and not role and surname(sp) in pool.surnames)
    ) or lead_person
    place = place_like(sp) and not lead_person  # "attributed to Homer"
    given = starts_with_given_name(sp, pool.names) or (
        len(sp_words) == 1 and surname(sp) in pool.given_surnames
    )
    return {
        "span_q_share": sum(w in q.lower_words for w in sp_words) / max(1, len(sp_words)),
        "head_ends_span": float(head_is_asked(q, sp.text)),
        "span_words": min(len(sp_words), 6) / 6.0,
        "multiword": float(len(sp_words) > 1),
        "before_by": float(sp.before == "by"),
        "before_place_prep": float(sp.before in _PLACE_PREPS),
        "before_of": float(sp.before == "of"),
        "before_punct": float(sp.before in (",", "(", ":", ";", "–", "—")),
        "before_copula": float(sp.before in _COPULA),
        "before_det": float(sp.before in ("the", "a", "an")),
        "after_punct": float(sp.after in (",", ".", ";", ":")),
        "after_paren": float(sp.after == "("),
        # a name before a common noun modifies it: "Dutch Post-Impressionist painter"
        "before_noun": float(sp.kind == "entity" and sp.after in common_nouns(sentence)),
        # the unit is the question's ("79 moons") or measures what it asks ("8,848.86 m")
        "unit_in_question": float(
            bool(sp.unit)
            and (
                tu.stem(unit_head(sp.unit)) in q.stems
                # not a time for "how old": "two years" would outrank "died at 37"
                or measures.dimension(sp.unit) in q.measures
            )
        ),
        "demonym": float(
            sp.kind == "entity" and is_demonym(sp.text) and not lead_person and not asks_demonym
        ),
        "not_person_word": float(bool(set(sp_words) & NOT_PERSON_WORDS)),
        "in_quotes": float(before.count('"') % 2 == 1 or before.count("“") > before.count("”")),
        "person_like": float(person),
        "place_like": float(place),
        "non_latin": float(not _LATIN.search(sp.text)),
        "person_q_person_like": float(q.kind == "person" and person),
        "place_q_place_like": float(q.kind == "place" and place),
        "person_q_not_person": float(q.kind == "person" and not person),
        "given_name": float(given),
        "person_q_given_name": float(q.kind == "person" and given),
    }


def head_is_asked(q: QuestionInfo, text: str) -> bool:
    """The question asks for the kind of thing the text's own head word names: "which
    battle" for "Battle of Segesvár", "which side" for "left side"."""
    return bool(q.head) and tu.stem(span_head(text).lower()) == q.head


def lead_is_asked(q: QuestionInfo, lead: LeadType | None) -> bool:
    """The question asks for the kind of thing a name's article says it is: "which city"
    for Amsterdam, "a city …"."""
    return bool(q.head) and lead is not None and q.head in lead.head_stems


def _lead_cues(pool: _Pool, sp: Span, lead: LeadType | None, ends_head: bool) -> dict[str, float]:
    """What the name's own article says it is, against what the question asks for
    (`ends_head`: the span's own head word is the asked kind, so no clash)."""
    if pool.types is None or sp.kind != "entity" or lead is None:
        return {}
    q = pool.q
    match = lead_is_asked(q, lead)
    f = {"lead_known": 1.0, "lead_head_match": float(match)}
    clash = bool(q.head and lead.heads) and not match and not ends_head
    f["lead_head_clash"] = float(clash)
    f["person_q_lead_person"] = float(q.kind == "person" and lead.person)
    f["person_q_lead_says_it"] = float(q.kind == "person" and lead.thing)
    return f


def candidates(
    question: str | QuestionInfo,
    passages: Sequence[Passage],
    types: LeadTypes | None = None,
    similarity: Similarity | None = None,
    names: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Every candidate span in the top passages' sentences, each with its feature vector.

    Spans whose content words all occur in the question are left out: the reader never
    answers with what the user already said. `types` looks names up in the index (their
    article's definition); without it, only the leads among `passages` are known.
    `similarity` (`sentence_similarity`, where the index has vectors) measures each
    sentence against the question in meaning. `names` are the given names of the index's
    people (`given_names`)."""
    q = question if isinstance(question, QuestionInfo) else analyse(question)
    if types is None:
        types = LeadTypes.of_passages(passages)
    collected = _collect(q, passages, types, similarity, names)
    if collected is None:
        return []
    raw, pool = collected
    out: list[Candidate] = []
    for sp, s, p, rank, st in raw:
        f = np.zeros(len(FEATURES), dtype=np.float32)
        f[QUESTION_KINDS.index(q.kind) * len(KINDS) + KINDS.index(sp.kind)] = 1.0
        lead = _lead(pool, sp)  # looked up once, read by two groups of features
        cues = _span_cues(pool, sp, s, lead)
        local = {
            **_position(pool, sp, s, st),
            **_context(pool, sp, p, rank),
            **_relation(pool, sp, s, p, st),
            **cues,
            **_lead_cues(pool, sp, lead, cues["head_ends_span"] > 0),
        }
        for name, value in local.items():
            f[_COLUMN[name]] = value
        out.append(Candidate(sp, s, p, rank, f))
    return out
