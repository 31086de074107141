"""Which of a question's words belong together, and whether a passage keeps them together.

A bag of words cannot tell the lead that answers "Who was the first president of the
United States?" ("George Washington was … the first president of the United States") from
the dozens of passages that use "first", "president" and "United States" apart, and the
articles titled with the question's own words ("United States", "Capitalism" for
"capital") outrank it. Term proximity is the classic remedy (Metzler and Croft's
sequential dependence model; Tao and Zhai, SIGIR 2007): two words next to each other in the
question count again where a passage has them close together too.

A pair is two content words of the question with at most `MAX_GAP` stopwords between them
("capital of France", "first emperor", "emperor of Rome"); a passage keeps it when the
second word follows the first within `WINDOW` words. BM25 reads the pairs as sloppy phrase
queries (`retrieval`), which Tantivy scores about as the sum of the two words' scores and
also matches with the words swapped and close ("president … first" within two words); the
loops' lexical ranking reads them in order only, as a share of the pairs kept (`ranking`),
weighed as the title is. Neither weight was fitted. At most `MAX_PAIRS` pairs are read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

MAX_GAP = 2  # stopwords allowed between a pair's two words in the question
WINDOW = 4  # the second word at most this many words after the first in the passage
MAX_PAIRS = 64  # as many as the query terms BM25 reads


def adjacent_pairs(
    words: Sequence[str], stems: Sequence[str], is_stopword: Callable[[str], bool]
) -> list[tuple[str, str]]:
    """The (stem, stem) pairs of consecutive content words of a question given as aligned
    word and stem lists; a pair of one stem twice is no pair."""
    pairs: list[tuple[str, str]] = []
    last: tuple[int, str] | None = None
    for i, (word, stem) in enumerate(zip(words, stems, strict=True)):
        if is_stopword(word):
            continue
        if last is not None and i - last[0] - 1 <= MAX_GAP and last[1] != stem:
            pairs.append((last[1], stem))
        last = (i, stem)
    return list(dict.fromkeys(pairs))[:MAX_PAIRS]


def kept_share(pairs: Sequence[tuple[str, str]], positions: dict[str, list[int]]) -> float:
    """The share of `pairs` whose second word follows the first within WINDOW words, by
    the passage's word positions per stem."""
    if not pairs:
        return 0.0
    kept = 0
    for a, b in pairs:
        pa, pb = positions.get(a), positions.get(b)
        if pa and pb and any(0 < y - x <= WINDOW for x in pa for y in pb):
            kept += 1
    return kept / len(pairs)
