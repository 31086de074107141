"""Given names, read from the titles of an index's own articles about people.

Capitalisation alone cannot tell a person's name from a region's or a programme's:
"Western Europe", "Project Gemini" and "Sagittarius Arm" look like "Rosalind Franklin".
Self-practice that asks "who" of every such name teaches the reader that a region answers
"who", and the reader then answers "Who founded Microsoft?" with "Big Tech". An index says
which names are people's: an article whose lead gives life dates or speaks of its subject
as "he" or "she" (`lead_types`) is about a person, and the first word of its title
("Rosalind", "Johannes", "Pope") is a given name. A name that starts with one is a
person's; one whose own article calls it "it" is not.

`practice` reads the names from the index it practises on, adds those the shipped reader
knows (a small index has few articles about people), asks "who" only of names known to be
people's, and stores the names in the meta of the reader it fits (`Reader.names`), so the
shipped reader knows the given names of the corpus it was fitted on.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from index_builder.wikitext import strip_paren_tail
from scim_edge import textutil as tu
from scim_edge.generation.reader_features import PLACE_WORDS, person_like, starts_with_given_name
from scim_edge.generation.spans import NOT_PERSON_WORDS, ROLE_TITLES, Span, is_demonym
from scim_edge.lead_types import LeadTypes, lead_type
from scim_edge.types import Passage

MAX_LEADS = 20_000  # leads read at most: given names are common, a sample finds them
# A word the leads write in lower case at least this often per capitalised use is a
# common word that opens some titles ("Western", "Great", "New", "King"), not a name.
LOWER_SHARE = 1 / 3
_LETTERS = re.compile(r"[^\W\d_]+")
# Titles of rank and sainthood that open people's titles and places' alike ("Saint Peter",
# "Saint Petersburg", "Lord Byron"), besides the role titles: they are no given names.
_RANKS = frozenset(
    "saint st lord lady duke duchess king queen prince princess emperor empress pope sultan "
    "count countess baron baroness earl marquess viscount tsar czar shah".split()
)


def _first_word(title: str) -> str:
    """The title's first word, lower-cased, when the title looks like a person's full
    name (two to four words, the first and last capitalised: "Vincent van Gogh"); ""
    otherwise."""
    words = strip_paren_tail(title).split()
    if not 2 <= len(words) <= 4 or not (words[0][:1].isupper() and words[-1][:1].isupper()):
        return ""
    first = words[0]
    return first.lower() if first.isalpha() else ""


def given_names(
    passages: Iterable[Passage],
    types: LeadTypes | None = None,
    max_leads: int = MAX_LEADS,
    known: Iterable[str] = (),
) -> frozenset[str]:
    """First words of the titles of person articles among the leads of `passages` (an
    article's passage 0), lower-cased, with the `known` names (those the shipped reader
    learned on its own corpus: a small index has few articles about people, and the
    enwiki sample alone gives seven names). A word whose own article calls its subject "it"
    ("Tennessee" of Tennessee Williams, in an index with the state's article) is left
    out, as are stop words, nationalities, words that name institutions or places, titles
    of role or rank ("Saint", "Lord": `_RANKS`), and words the leads often write in lower
    case ("Western", "Great": `LOWER_SHARE`)."""
    found: set[str] = {n.lower() for n in known}
    lower: Counter[str] = Counter()
    upper: Counter[str] = Counter()
    leads = 0
    for p in passages:
        if not p.doc_id.endswith("-0"):
            continue
        leads += 1
        if leads > max_leads:
            break
        for w in _LETTERS.findall(p.text):
            (lower if w.islower() else upper)[w.lower()] += 1
        first = _first_word(p.title)
        if first and first not in found and lead_type(p.text).person:
            found.add(first)
    excluded = tu.STOPWORDS | NOT_PERSON_WORDS | PLACE_WORDS | ROLE_TITLES | _RANKS
    out = set()
    for name in found - excluded:
        common = lower[name] > 0 and lower[name] >= LOWER_SHARE * upper[name]
        if common or is_demonym(name.capitalize()):
            continue
        own = types.of(name) if types is not None else None
        if own is None or not own.thing:
            out.add(name)
    return frozenset(out)


def is_person(span: Span, types: LeadTypes | None, names: frozenset[str]) -> bool:
    """Whether the index says `span` names a person: its own article is a person's; or it
    has no article calling it "it", looks like a name, and starts with a given name."""
    lead = types.of(span.text) if types is not None and span.kind == "entity" else None
    if lead is not None and (lead.person or lead.thing):
        return lead.person
    return person_like(span) and starts_with_given_name(span, names)
