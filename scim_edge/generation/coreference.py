"""A sentence that opens with a pronoun is about its article's subject.

Wikipedia names a subject once, in the lead's first sentence, and then says "He", "She",
"It" or "His": "Sir Alexander Fleming was a Scottish physician and microbiologist. […] His
discovery in 1928 of what was later named benzylpenicillin […]". The sentence that answers
"Who discovered penicillin?" holds no name, so a reader that takes spans from sentences
never sees the answer there. Reading such a sentence with the pronoun replaced by the
article's name, in brackets as a quotation marks an editor's words, gives the reader the
name where the facts are, and shows the user what was read.

Only the pronoun that opens the sentence, or its main clause after an opening phrase ("A
pioneer of the microcomputer revolution, he co-founded Microsoft", "In 1928, his
discovery…"), is resolved, and only when the index says what the article is about:
"he"/"she"/"his"/"her" for an article about a person, "it"/"its" for one that is not.
Anything else (no lead type, "They", a pronoun later in a clause) is left as written.
"""

from __future__ import annotations

import re

from index_builder.wikitext import strip_paren_tail
from scim_edge.lead_types import LeadTypes

_OPENING = re.compile(r"^(He|She|His|Her|It|Its)\b(?!['’])")
# an opening phrase of up to 100 characters without a clause break or an aside, a comma,
# then the main clause's pronoun
_AFTER_PHRASE = re.compile(r"^[^,;:()\[\]]{2,100},\s+(he|she|his|her|it|its)\b(?!['’])")
_PERSON = frozenset({"He", "She", "His", "Her"})
_POSSESSIVE = frozenset({"His", "Her", "Its"})


def resolve_opening_pronoun(sentence: str, title: str, types: LeadTypes | None) -> str:
    """`sentence` with the pronoun opening it or its main clause, when it refers to the
    article titled `title`, replaced by "[Name]" ("[Name]'s" for a possessive); unchanged
    otherwise."""
    m = _OPENING.match(sentence) or _AFTER_PHRASE.match(sentence)
    if m is None or types is None:
        return sentence
    pronoun = m.group(1).capitalize()
    lead = types.of(title)
    if lead is None or (pronoun in _PERSON) != lead.person:
        return sentence
    if not lead.person and not lead.heads:  # no definition: "It" may be any thing
        return sentence
    name = strip_paren_tail(title).strip()
    if not name:
        return sentence
    said = f"[{name}]'s" if pronoun in _POSSESSIVE else f"[{name}]"
    return sentence[: m.start(1)] + said + sentence[m.end() :]
