"""What kind of thing a name is, read from the first sentence of its own article.

A Wikipedia lead defines its subject: "Montana is a landlocked state in the Mountain West",
"Rumi (30 September 1207 – 17 December 1273) was a 13th-century Persian poet". The head
nouns of that definition ("state", "poet") are the types a question asks for ("which U.S.
state", "which poet"), and life dates in the lead's first parentheses say it is a person.

The reader reads these types for its candidate names (`reader_features`), and self-practice
asks "which state …" of them, so what the reader learns about types comes from the user's
own index, not from a hand-made gazetteer. `LeadTypes` looks names up in an index through
`BM25Retriever.article_lead` and remembers what it found.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from scim_edge import textutil as tu
from scim_edge.lead_names import COPULA, COPULAS
from scim_edge.retrieval import BM25Retriever
from scim_edge.types import Passage

_SKIP_TAGS = frozenset({"DT", "JJ", "JJR", "JJS", "RB", "CD", "VBN", "VBG", "PRP$", "POS",
                        "NNP", "NNPS", "HYPH", "``", "''"})  # fmt: skip
_NOUN_TAGS = frozenset({"NN", "NNS"})
_FIRST_WORDS = 25  # a copula later than this is not the lead's definition
# A year in the first parentheses: three or four digits that are not part of a larger
# number ("3,200", "319.4") and not a measure ("430 mi", "328 ft"). Leads of places give
# their size there ("Hawaii is … about 2,000 miles (3,200 km) southwest of …"), and
# 60 of vital-en's leads were read as people's by it.
_MEASURES = (
    "km|mi|m|ft|sq|kg|lb|mph|cm|mm|ml|ha|km2|mi2|metres|meters|miles|feet|kilometres"
    "|kilometers|square|acres|tonnes|tons"
)
_LIFE_DATES = re.compile(
    rf"\b(?:born|died|c\.\s*)?(?<![\d,.])\d{{3,4}}(?![\d,.]?\d)(?!\s*(?:{_MEASURES})\b)|\bborn\b",
    re.IGNORECASE,
)
_PARENS = re.compile(r"\s*\(([^()]*)\)")
_GENDERED = frozenset({"he", "she", "his", "her", "him", "himself", "herself"})
_NEUTER = frozenset({"it", "its", "itself"})
MAX_HEADS = 3
CACHE = 65536  # names remembered per index


@dataclass(frozen=True)
class LeadType:
    """The head nouns of a lead's definition (lower-case, as written), whether the lead is
    about a person (life dates in its first parentheses, unless they come after the copula in
    a lead that speaks of its subject as "it"; it speaks of its subject as "he"
    or "she", or, where it says neither, its definition's head takes the relative "who")
    and whether it is about a thing (it speaks of its subject as "it"). A lead with none of
    these is neither: "Homer was an ancient Greek poet. Homer was highly revered …" says
    nothing either way, and a person must not be read as a thing for it."""

    heads: tuple[str, ...]
    person: bool
    thing: bool = False

    @property
    def head_stems(self) -> frozenset[str]:
        return frozenset(tu.stem(h) for h in self.heads)


UNKNOWN = LeadType((), False)


def lead_type(text: str) -> LeadType:
    """The type a lead passage gives its subject; `UNKNOWN` when its first sentence is not
    a definition ("X is a/the … NOUN …")."""
    first = next(iter(tu.sentences(text)), "")
    if not first:
        return UNKNOWN
    dated = _dated(first)
    if dated == "subject":  # beside the defined name: no need to read the pronouns
        person, thing = True, False
    else:
        person, thing = _pronoun_verdict(text)
        if dated and not thing:
            person, thing = True, False
    plain = _PARENS.sub("", first)
    tags = tu.pos_tags(plain)
    at = next(
        (i for i, (w, _) in enumerate(tags[:_FIRST_WORDS]) if w.lower() in COPULAS),
        None,
    )
    if at is None:
        return LeadType((), person, thing)
    definition = tags[at + 1 :]
    heads = _heads(definition)
    if not (person or thing):
        person = _head_then_who(definition, heads)
    return LeadType(heads, person, thing)


def _dated(first: str) -> str:
    """Where the first sentence's first parentheses give life dates: "subject" when they
    come before its copula, beside the name it defines ("Ivan Turgenev (1818–1883) was …"),
    "later" when after it, where they may belong to another name ("an epic poem by John
    Milton (1608–1674)", so they count only when the lead does not call its subject "it"),
    "" when they give none."""
    found = _PARENS.search(first)
    if found is None or not _LIFE_DATES.search(found.group(1)):
        return ""
    copula = COPULA.search(first)
    return "subject" if copula is None or found.start() < copula.start() else "later"


_WHO_REACH = 4  # words from the head to "who": "philosopher of Classical Athens who"
_NAME_LINKS = frozenset({"of", "the", "a", "an"})


def _head_then_who(tags: tuple[tuple[str, str], ...], heads: tuple[str, ...]) -> bool:
    """The definition's head takes the relative "who", which English keeps for people:
    "Homer was an ancient Greek poet who is traditionally credited …" says that Homer is a
    person where no pronoun or life date does. Only the head's own clause counts, the head
    followed by "who" or by a name first ("a philosopher of Classical Athens who"): in "a
    legal process through which people … who cannot repay", "who" is the people's."""
    words = [w for w, _ in tags]
    who = next((i for i, w in enumerate(words) if w.lower() == "who"), None)
    if who is None:
        return False
    for word in reversed(words[max(0, who - _WHO_REACH) : who]):
        low = word.lower()
        if low in heads:
            return True
        if not (low in _NAME_LINKS or word[:1].isupper() or word == ","):
            return False
    return False


def _pronoun_verdict(text: str) -> tuple[bool, bool]:
    """(about a person, about a thing), from how the lead refers back to its subject.

    A lead's later sentences open with the subject's pronoun ("He is regarded as …", "It
    was published in 1878"), so the pronouns that open sentences vote first; pronouns
    anywhere in the text speak of other people too ("It follows the heroic king of Ithaca,
    Odysseus, … his journey home") and only break a tie (dumps' cleaned leads often lose
    the life dates, and a short lead may open no sentence with a pronoun). On vital-en's
    10,033 leads the opening vote changed 261 verdicts of the whole-text count; 38 of a
    random 40 of them were right ("Leo Tolstoy … He is regarded …" became a person, "The
    Odyssey … It is one of the oldest …" a thing; "Paul Jackson Pollock was an American
    painter. … It was called all-over painting …" wrongly stopped being one)."""
    opening = [s.split(maxsplit=1)[0].lower() for s in tu.sentences(text)[1:] if s.strip()]
    said_person = sum(w in _GENDERED for w in opening)
    said_thing = sum(w in _NEUTER for w in opening)
    if said_person != said_thing:
        return said_person > said_thing, said_thing > said_person
    low = [w.lower() for w in tu.words(text)]
    gendered = sum(w in _GENDERED for w in low)
    neuter = sum(w in _NEUTER for w in low)
    return gendered >= 2 and gendered > neuter, neuter > gendered


def _heads(tags: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    """The last noun of each noun run of the definition's first phrase: "the capital and
    largest city of …" gives ("capital", "city"); "one of the …" is read past."""
    heads: list[str] = []
    run: list[str] = []
    last_adjective = ""  # "a Sufi mystic, poet…": the tagger may read a head as an adjective
    words = [w.lower() for w, _ in tags]
    i = 0
    if words[:2] == ["one", "of"]:  # "one of the …", "one of two major epics"
        i = 2
    for w, t in tags[i:]:
        low = w.lower()
        if t in _NOUN_TAGS and low.isalpha():
            run.append(low)
            continue
        if low in ("and", "or", ","):  # "statesman, politician and soldier"
            if run or last_adjective:
                heads.append(run[-1] if run else last_adjective)
            run, last_adjective = [], ""
            continue
        if t in _SKIP_TAGS or low == "-":
            if run:  # "state Mountain…": a proper noun after the head ends the phrase
                break
            last_adjective = low if t == "JJ" and low.isalpha() else ""
            continue
        break
    if run or last_adjective:
        heads.append(run[-1] if run else last_adjective)
    return tuple(dict.fromkeys(heads))[:MAX_HEADS]


class LeadTypes:
    """Types of names in one index, looked up by exact article title and remembered."""

    def __init__(self, find_lead: Callable[[str], Passage | None]) -> None:
        self._find = find_lead
        self._seen: dict[str, LeadType | None] = {}

    @classmethod
    def for_index(cls, index_dir: Path) -> LeadTypes:
        """Types from the index at `index_dir`, opened at the first look-up."""
        opened: list[BM25Retriever] = []

        def find(name: str) -> Passage | None:
            if not opened:
                opened.append(BM25Retriever.open(index_dir))
            return opened[0].article_lead(name)

        return cls(find)

    @classmethod
    def of_passages(cls, passages: Sequence[Passage]) -> LeadTypes:
        """Types read from the leads among `passages` (an article's passage 0 is its
        lead): a reader with no index to look names up in still knows what the articles
        it reads are about, so "She was born in London" in Ada Lovelace's lead is about
        her."""
        leads = {_key(p.title): p for p in passages if p.doc_id.endswith("-0")}
        return cls(lambda name: leads.get(_key(name)))

    def of(self, name: str) -> LeadType | None:
        """The type of the article titled `name`, or None when the index has none."""
        key = _key(name)
        if key in self._seen:
            return self._seen[key]
        lead = self._find(name)
        found = lead_type(lead.text) if lead is not None else None
        if len(self._seen) >= CACHE:
            self._seen.pop(next(iter(self._seen)))
        self._seen[key] = found
        return found


def _key(name: str) -> str:
    return " ".join(name.lower().split())
