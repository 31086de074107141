"""Penn Treebank word tokens exactly as NLTK 3.10.4's `TreebankWordTokenizer().tokenize`.

Why a copy: importing anything from NLTK imports all of NLTK (about 0.3 s, most of
`scim-edge ask`'s start-up), and every answer tokenizes words. The algorithm is a fixed
list of regular-expression substitutions; here they run on the standard library's `re`
(NLTK routes its own through a time-limited `regex` wrapper that makes each call several
times slower and buys nothing for these constant, linear patterns). Tokens are the ones
NLTK gives, which tests/test_nlp_parity.py checks on real Wikipedia text when NLTK is
installed.

Ported from `nltk/tokenize/treebank.py` and the `MacIntyreContractions` of
`nltk/tokenize/destructive.py`, NLTK 3.10.4 (Copyright (C) 2001-2026 NLTK Project,
Apache License 2.0), with the default arguments (no parenthesis conversion).
"""

from __future__ import annotations

import re

__all__ = ["tokenize"]

_STARTING_QUOTES = [
    (re.compile(r"^\""), r"``"),
    (re.compile(r"(``)"), r" \1 "),
    (re.compile(r"([ \(\[{<])(\"|\'{2})"), r"\1 `` "),
]

_PUNCTUATION = [
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.\.\."), r" ... "),
    (re.compile(r"[;@#$%&]"), r" \g<0> "),
    (re.compile(r'([^\.])(\.)([\]\)}>"\']*)\s*$'), r"\1 \2\3 "),  # the final period
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])' "), r"\1 ' "),
]

_PARENS_BRACKETS = (re.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> ")

_DOUBLE_DASHES = (re.compile(r"--"), r" -- ")

_ENDING_QUOTES = [
    (re.compile(r"''"), " '' "),
    (re.compile(r'"'), " '' "),
    (re.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
]

# Contractions adapted from Robert MacIntyre's tokenizer (NLTK leaves out CONTRACTIONS4).
_CONTRACTIONS2 = [
    re.compile(p)
    for p in (
        r"(?i)\b(can)(?#X)(not)\b",
        r"(?i)\b(d)(?#X)('ye)\b",
        r"(?i)\b(gim)(?#X)(me)\b",
        r"(?i)\b(gon)(?#X)(na)\b",
        r"(?i)\b(got)(?#X)(ta)\b",
        r"(?i)\b(lem)(?#X)(me)\b",
        r"(?i)\b(more)(?#X)('n)\b",
        r"(?i)\b(wan)(?#X)(na)(?=\s)",
    )
]
_CONTRACTIONS3 = [re.compile(r"(?i) ('t)(?#X)(is)\b"), re.compile(r"(?i) ('t)(?#X)(was)\b")]


def tokenize(text: str) -> list[str]:
    """Treebank tokens of `text`: "They'll pay $5." → They 'll pay $ 5 ."""
    for regexp, substitution in _STARTING_QUOTES:
        text = regexp.sub(substitution, text)
    for regexp, substitution in _PUNCTUATION:
        text = regexp.sub(substitution, text)
    regexp, substitution = _PARENS_BRACKETS
    text = regexp.sub(substitution, text)
    regexp, substitution = _DOUBLE_DASHES
    text = regexp.sub(substitution, text)
    text = " " + text + " "
    for regexp, substitution in _ENDING_QUOTES:
        text = regexp.sub(substitution, text)
    for regexp in _CONTRACTIONS2:
        text = regexp.sub(r" \1 \2 ", text)
    for regexp in _CONTRACTIONS3:
        text = regexp.sub(r" \1 \2 ", text)
    return text.split()
