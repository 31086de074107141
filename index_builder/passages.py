"""Cut cleaned article sections into passages of about N words.

A passage never crosses a section boundary, so its section name is true of all its text.
Cuts prefer a sentence end near the target length (within a quarter of it either side), so a
passage rarely starts mid-sentence; a short tail is folded into the previous passage rather
than left as a fragment that BM25 would over-score.

Lines (paragraphs and list items) become one line of text. A list item has no full stop, so
joining items with plain spaces ran them together ("which are: Noord Oranjestad (33,000 in
2006) … Paradera San Nicolaas"), and a reader then took "Noord Oranjestad" as one name. A
line that does not end a sentence or clause is closed with ";" first.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SENTENCE_END = (".", "!", "?", '."', ".)", '?"', '!"')


@dataclass(frozen=True, slots=True)
class PassageRecord:
    doc_id: str  # "<page_id>-<n>", n counting from 0 within the article
    page_id: int
    n: int
    title: str
    section: str
    text: str


def _cut_offsets(target: int) -> list[int]:
    """Offsets from the target length to try for a sentence end, nearest first, within a
    quarter of the target either side."""
    q = target // 4
    out = [0]
    for d in range(1, q + 1):
        out += [d, -d]
    return out


_CLAUSE_END = frozenset(".!?:;,")
_CLOSERS = "\"'”’)]»"


def join_lines(text: str) -> str:
    """Text with its lines joined, each line that lacks closing punctuation ended with ";"
    so list items stay apart; a line ending in ".", ")." or '."' is left as it is."""
    if "\n" not in text:
        return text
    lines = [line for line in (raw.strip() for raw in text.split("\n")) if line]
    for i in range(len(lines) - 1):
        if lines[i].rstrip(_CLOSERS)[-1:] not in _CLAUSE_END:
            lines[i] += ";"
    return " ".join(lines)


def split_words(words: list[str], target: int) -> list[list[str]]:
    """Split a word list into chunks of about `target` words, cutting at sentence ends."""
    n = len(words)
    if n <= target + target // 2:
        return [words]
    offsets = _cut_offsets(target)
    out: list[list[str]] = []
    start = 0
    while n - start > target + target // 2:
        cut = start + target
        for d in offsets:  # the sentence end nearest the target length
            i = start + target + d
            if words[i - 1].endswith(SENTENCE_END):
                cut = i
                break
        out.append(words[start:cut])
        start = cut
    out.append(words[start:])
    return out


def split_sections(sections: Iterable[tuple[str, str]], words: int = 100) -> list[tuple[str, str]]:
    """(section, text) pairs -> (section, passage text) pairs; empty sections vanish."""
    if words <= 0:
        raise ValueError("passage length must be a positive number of words")
    limit = words + words // 2
    out: list[tuple[str, str]] = []
    for section, text in sections:
        text = join_lines(text)
        # Fast path: a section short enough to be one passage needs no word list. Counting
        # spaces over-estimates words when whitespace repeats, which only sends a section
        # down the exact path below.
        if text.count(" ") < limit:
            flat = " ".join(text.split())
            if flat:
                out.append((section, flat))
            continue
        ws = text.split()
        for chunk in split_words(ws, words):
            out.append((section, " ".join(chunk)))
    return out


def make_passages(
    page_id: int, title: str, sections: Iterable[tuple[str, str]], words: int = 100
) -> list[PassageRecord]:
    """The passages of one article, with doc ids `<page_id>-<n>`."""
    return [
        PassageRecord(f"{page_id}-{n}", page_id, n, title, section, text)
        for n, (section, text) in enumerate(split_sections(sections, words))
    ]
