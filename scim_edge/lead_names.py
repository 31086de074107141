"""The other names a Wikipedia lead gives its subject, before its first copula.

A lead's first sentence names its subject and, by the encyclopedia's own convention, its
other names too, before it says what the subject is: "The Ludwig-Maximilians-Universität
München, also referred to as the University of Munich, is a public research university",
"Han Fei, also known as Han Feizi or Han Fei Tzu, was …", "The National Basketball
Association (NBA) is …". A full dump carries most of these as redirects (`aliases`); a
dump without its redirect pages (a lead-only sample, a hand-picked subset) keeps them only
here. `gives_name` says whether a lead gives a question's name so, and the retriever uses it
to find the article a question names under another name (`BM25Retriever.lead_naming`).

A name of one word counts only as an abbreviation in parentheses right after a capitalised
name ("Association (NBA)"): one word before a copula is mostly an adjective that begins a
title ("Chinese is a group of languages", "The Chinese calendar is …"), and a label after
a common word is a spelling's region ("air con (UK)"). A name with a capitalised word
right before or after it is part of a longer name ("William Clark Gable", "Johann
Sebastian Bach", "the Technical University of Munich", "People's Republic of China"),
not the name itself; an opening "The", "A" or "An" does not count, nor does a capital
after punctuation ("Republics (USSR)", "the Big Apple, New York").

The copula is English ("is", "was", "are", "were"): an index of another language finds no
names this way.
"""

from __future__ import annotations

import re

from scim_edge import textutil as tu

COPULAS = frozenset({"is", "was", "are", "were"})  # a lead's definition begins after one
COPULA = re.compile(rf"\b(?:{'|'.join(sorted(COPULAS))})\b")
FIRST_WORDS = 40  # a copula later than this is not the lead's definition


def subject_names(lead_text: str) -> str:
    """The part of the lead's first sentence before its copula ("" when there is none
    within the first `FIRST_WORDS` words)."""
    first = next(iter(tu.sentences(lead_text)), "")
    found = COPULA.search(first)
    if found is None or len(first[: found.start()].split()) > FIRST_WORDS:
        return ""
    return first[: found.start()]


def gives_name(lead_text: str, name: str) -> bool:
    """The lead's first sentence gives `name` to its subject before its copula."""
    words = re.findall(r"\w+", name)
    if not words:
        return False
    head = subject_names(lead_text)
    if len(words) == 1:
        abbreviation = rf"(?<!\w)[^\W\d_][\w'’.-]*\s*\({re.escape(name)}\)"
        return (
            name.isupper()
            and len(name) > 1
            and any(m.group(0)[0].isupper() for m in re.finditer(abbreviation, head))
        )
    # the name's words in order, in any case ("Lord Of The Rings"), with any non-word
    # characters between ("Divan-i Shams"), not inside a longer word
    said = r"\W+".join(map(re.escape, words))
    return any(
        _stands_alone(head, m.start(), m.end())
        for m in re.finditer(rf"(?<!\w)(?i:{said})(?!\w)", head)
    )


_OPENERS = frozenset({"The", "A", "An"})


def _stands_alone(head: str, start: int, end: int) -> bool:
    """No capitalised word right before `head[start:end]` (an opening "The" aside) or
    right after it, across spaces only, and no word joined to it by a hyphen or dash
    before it: "The post–World War II economic expansion" names no "World War II"."""
    if re.search(r"\w[-–]$", head[:start]):
        return False
    before = re.search(r"([\w'’-]+)\s+$", head[:start])
    if before and before.group(1)[0].isupper() and before.group(1) not in _OPENERS:
        return False
    after = re.match(r"\s+(\w)", head[end:])
    return not (after and after.group(1).isupper())
