"""The other names a Wikipedia lead gives its subject, before its first copula.

A lead's first sentence names its subject and, by the encyclopedia's own convention, its
other names too, before it says what the subject is: "The Ludwig-Maximilians-Universität
München, also referred to as the University of Munich, is a public research university",
"Han Fei, also known as Han Feizi or Han Fei Tzu, was …", "The National Basketball
Association (NBA) is …". A full dump carries most of these as redirects (`aliases`); a
dump without its redirect pages (a lead-only sample, a hand-picked subset) keeps them only
here. `gives_name` says whether a lead gives a question's name so, and the retriever uses it
to find the article a question names under another name (`BM25Retriever.lead_naming`).

A name of one word counts only as an abbreviation in parentheses ("(NBA)"): one word before
a copula is mostly an adjective that begins a title ("Chinese is a group of languages",
"The Chinese calendar is …"). A name followed by another capitalised word is part of a
longer name ("William Clark Gable"), not the name itself.
"""

from __future__ import annotations

import re

from scim_edge import textutil as tu

_COPULA = re.compile(r"\b(?:is|was|are|were)\b")
FIRST_WORDS = 40  # a copula later than this is not the lead's definition


def subject_names(lead_text: str) -> str:
    """The part of the lead's first sentence before its copula ("" when there is none
    within the first `FIRST_WORDS` words)."""
    first = next(iter(tu.sentences(lead_text)), "")
    found = _COPULA.search(first)
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
        return name.isupper() and len(name) > 1 and f"({name})" in head
    # the name's words in order, in any case ("Lord Of The Rings"), with any non-word
    # characters between ("Divan-i Shams"), not inside a longer word or followed by
    # another capitalised word
    said = r"\W+".join(map(re.escape, words))
    pattern = rf"(?<!\w)(?i:{said})(?!\w)(?!\W{{0,2}}[A-Z])"
    return re.search(pattern, head) is not None
