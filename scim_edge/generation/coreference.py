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
"he"/"she"/"his"/"her" for an article about a person, "it"/"its" for one that is not. Not
after a clause with a subject of its own ("When Chain joined the lab, he …"), in a
speaker's aside ("…, he said, …") or for an "it" that stands for what follows ("In 2010,
it was announced that …").
Anything else (no lead type, "They", a pronoun later in a clause) is left as written.
"""

from __future__ import annotations

import re

from index_builder.wikitext import strip_paren_tail
from scim_edge.lead_types import LeadTypes

_OPENING = re.compile(r"^(He|She|His|Her|It|Its)\b(?!['’])")
# an opening phrase of up to 100 characters without a clause break or an aside, a comma,
# then the main clause's pronoun; a number's thousands and its conversion in brackets are
# neither ("With an area of 9,200,000 square kilometres (3,600,000 sq mi), it is …")
_AFTER_PHRASE = re.compile(
    r"^((?:[^,;:()\[\]]|(?<=\d),(?=\d{3})|\(\d[^()]*\)){2,100}),\s+(he|she|his|her|it|its)\b(?!['’])"
)
# a clause with a subject of its own, whom the pronoun may mean ("When Ernst Chain joined
# the lab, he …")
_OWN_SUBJECT = re.compile(
    r"^(?:When|While|After|Before|Although|Though|Because|Since|As|If|Once|Until|Unless|"
    r"Whereas|Where)\b"
)
_SPEAKER_ASIDE = re.compile(r"\s+(?:said|says|wrote|writes|added|noted)\b")  # "…, he said, …"
# the "it" that stands for what follows: "In 2010, it was announced that …"
_ANTICIPATORY_IT = re.compile(r"\s+(?:is|was|has been|had been)\s+\w+\s+(?:that|to|whether)\b")


def _pronoun(sentence: str) -> tuple[int, int, str] | None:
    """(start, end, pronoun capitalised) of the pronoun that opens `sentence` or its main
    clause after an opening phrase; None when there is none or it may mean another."""
    m = _OPENING.match(sentence)
    if m is not None:
        return m.start(1), m.end(1), m.group(1)
    m = _AFTER_PHRASE.match(sentence)
    if m is None or _OWN_SUBJECT.match(m.group(1)):
        return None
    rest = sentence[m.end() :]
    if _SPEAKER_ASIDE.match(rest) or (m.group(2) == "it" and _ANTICIPATORY_IT.match(rest)):
        return None
    return m.start(2), m.end(2), m.group(2).capitalize()


_PERSON = frozenset({"He", "She", "His", "Her"})
_POSSESSIVE = frozenset({"His", "Her", "Its"})


def resolve_opening_pronoun(sentence: str, title: str, types: LeadTypes | None) -> str:
    """`sentence` with the pronoun opening it or its main clause, when it refers to the
    article titled `title`, replaced by "[Name]" ("[Name]'s" for a possessive); unchanged
    otherwise."""
    found = _pronoun(sentence)
    if found is None or types is None:
        return sentence
    start, end, pronoun = found
    lead = types.of(title)
    if lead is None or (pronoun in _PERSON) != lead.person:
        return sentence
    if not lead.person and not lead.heads:  # no definition: "It" may be any thing
        return sentence
    name = strip_paren_tail(title).strip()
    if not name:
        return sentence
    said = f"[{name}]'s" if pronoun in _POSSESSIVE else f"[{name}]"
    return sentence[:start] + said + sentence[end:]
