"""A sentence that opens with a pronoun is about its article's subject.

Wikipedia names a subject once, in the lead's first sentence, and then says "He", "She",
"It" or "His": "Sir Alexander Fleming was a Scottish physician and microbiologist. […] His
discovery in 1928 of what was later named benzylpenicillin […]". The sentence that answers
"Who discovered penicillin?" holds no name, so a reader that takes spans from sentences
never sees the answer there. Reading such a sentence with the pronoun replaced by the
article's name, in brackets as a quotation marks an editor's words, gives the reader the
name where the facts are, and shows the user what was read.

Only the opening pronoun is resolved, and only when the index says what the article is
about: "he"/"she"/"his"/"her" for an article about a person, "it"/"its" for one that is
not. Anything else (no lead type, "They", a pronoun later in the sentence) is left as
written.
"""

from __future__ import annotations

import re

from index_builder.wikitext import strip_paren_tail
from scim_edge.lead_types import LeadTypes

_OPENING = re.compile(r"^(He|She|His|Her|It|Its)\b(?!['’])")
_PERSON = frozenset({"He", "She", "His", "Her"})
_POSSESSIVE = frozenset({"His", "Her", "Its"})


def resolve_opening_pronoun(sentence: str, title: str, types: LeadTypes | None) -> str:
    """`sentence` with an opening pronoun that refers to the article titled `title`
    replaced by "[Name]" ("[Name]'s" for a possessive); unchanged otherwise."""
    m = _OPENING.match(sentence)
    if m is None or types is None:
        return sentence
    lead = types.of(title)
    if lead is None or (m.group(1) in _PERSON) != lead.person:
        return sentence
    if not lead.person and not lead.heads:  # no definition: "It" may be any thing
        return sentence
    name = strip_paren_tail(title).strip()
    if not name:
        return sentence
    said = f"[{name}]'s" if m.group(1) in _POSSESSIVE else f"[{name}]"
    return said + sentence[m.end() :]
