"""Comparison questions: "Which came first, X or Y?", "Which river is longer, the Nile or
the Paraná?", "Does Vienna or Detroit have the bigger population?".

Such a question names two options and asks which one has more (or less) of something, or
came first (or last). Its answer is one of the options, decided by a fact each option's
passage states: a year, or a quantity with its unit. A reader that picks the option its
best sentence mentions (or the one with more query words) is guessing; this module reads
both stated facts and compares them.

- `parse(question)`: the two options, what is compared (`kind` "time" or "quantity"), the
  direction (`want_max`), for quantities the dimension (area, length, height, count; None
  for a bare "larger") and the question's other words about the attribute ("published").
- `option_queries(question)`: one retrieval query per option (the option's name plus the
  attribute words), so that both options' articles are retrieved (query_formulation
  interleaves their results).
- `compare(question, passages)`: the winning option and the fact stated for each option,
  or None when the question is no comparison or the passages do not state both facts.

Facts for an option come first from its own article (a passage whose title names it), else
from sentences that name it; there, the year or figure is the one stated for the name (its
item of a list, the nearest to it), not the sentence's first. A year is taken from the
sentence that best matches the attribute words ("published", "launched"); a quantity is
the first one in its own article with a unit of the dimension (the lead states the
headline figure first), normalised to km², km, m or a count.

How a reader uses it (the extractive reader's `_choice` compares years only):

    picked = comparison.compare(question, passages)
    if picked is not None:
        option, facts = picked
        text = option                                   # the short answer
        support = [facts[option].support()]             # {sentence, doc_id, title, section}
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from scim_edge import textutil as tu
from scim_edge.bridge import title_names
from scim_edge.types import Passage

EARLIER = ("first", "earlier", "earliest", "before", "older", "oldest", "sooner")
LATER = ("later", "last", "latest", "younger", "youngest", "newer", "newest", "after")
MORE_RECENT = re.compile(r"\bmore recent(?:ly)?\b|\bmost recent(?:ly)?\b", re.I)
# comparative → (want_max, dimension or None)
QUANTITY_WORDS: dict[str, tuple[bool, str | None]] = {
    "larger": (True, None), "largest": (True, None), "bigger": (True, None),
    "biggest": (True, None), "greater": (True, None), "smaller": (False, None),
    "smallest": (False, None), "longer": (True, "length"), "longest": (True, "length"),
    "shorter": (False, "length"), "shortest": (False, "length"), "higher": (True, "height"),
    "highest": (True, "height"), "taller": (True, "height"), "tallest": (True, "height"),
    "lower": (False, "height"), "lowest": (False, "height"), "deeper": (True, "height"),
    "deepest": (True, "height"), "shallower": (False, "height"), "more": (True, None),
    "most": (True, None), "fewer": (False, None), "less": (False, None), "least": (False, None),
}  # fmt: skip
DIMENSION_NOUNS: dict[str, str] = {
    "area": "area", "population": "count", "populous": "count", "inhabitants": "count",
    "people": "count", "residents": "count", "length": "length", "long": "length",
    "height": "height", "tall": "height", "elevation": "height", "depth": "height",
    "deep": "height",
}  # fmt: skip
GENERIC_DIMENSIONS = ("area", "count", "length", "height")
# attribute words whose year is the end of a stated range ("built from 1887 to 1889")
END_WORDS = frozenset(tu.stem(w) for w in "completed finished ended died closed".split())
_SCALE = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "hundred": 100,
}  # fmt: skip
_NUM = (
    r"(?<![\w.,])(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|"
    + "|".join(_NUMBER_WORDS)
    + r")(?![^\W\d]|\d|[.,]\d)(?:\s+(?P<scale>thousand|million|billion|trillion)\b)?"
)
# unit patterns per dimension with their factor to the dimension's base unit
_UNITS: dict[str, list[tuple[str, float]]] = {
    "area": [
        (r"km2|km²|square\s+kilomet(?:re|er)s?|sq\.?\s*km", 1.0),
        (r"sq\.?\s*mi|mi2|mi²|square\s+miles?", 2.589988),
    ],
    "length": [(r"km|kilomet(?:re|er)s?", 1.0), (r"mi|miles?", 1.609344)],
    "height": [(r"m|metres?|meters?", 1.0), (r"ft|feet|foot", 0.3048)],
    "count": [(r"people|inhabitants|residents|persons|citizens|population", 1.0)],
}
_POPULATION_BEFORE = re.compile(
    r"(?:population|inhabitants|residents)\s+(?:\w+\s+){0,3}?"
    r"(?:of|was|is|at|to|about|around|over|nearly|approximately)\s+"
    r"(?:(?:about|around|over|more\s+than|nearly|just\s+over|approximately|some|roughly)\s+)?$",
    re.I,
)
_YEAR = re.compile(r"(?<![\w.,])(\d{3,4})(?![^\W\d]|\d|[.,]\d)(?:\s*(BCE|BC|CE|AD)\b)?")


@dataclass(frozen=True)
class Comparison:
    """A parsed comparison question."""

    options: tuple[str, str]  # as written: "Lindbergh's nonstop flight to Paris"
    names: tuple[str, str]  # what an answer says: "Lindbergh"
    kind: str  # "time" | "quantity"
    want_max: bool  # later / larger wins
    dimension: str | None  # area | length | height | count | None (a bare "larger")
    attribute: tuple[str, ...]  # the question's other content words: ("published",)


@dataclass(frozen=True)
class Fact:
    """The value an option's passage states, and where."""

    value: float  # a year (BC negative), or a quantity in the dimension's base unit
    text: str  # as written: "1813", "7,088 kilometers"
    sentence: str
    doc_id: str
    title: str
    section: str

    def support(self) -> dict[str, str]:
        """The fact as an `Answer.support` entry: {sentence, doc_id, title, section}."""
        return {"sentence": self.sentence, "doc_id": self.doc_id, "title": self.title,
                "section": self.section}  # fmt: skip


def _strip_article(text: str) -> str:
    text = text.strip(" \"'“”‘’.,;:?")
    return re.sub(r"^(?:the|a|an)\s+", "", text, flags=re.I)


def option_name(option: str) -> str:
    """What an answer calls an option: a title-like option as written ("Pride and
    Prejudice", "Statue of Liberty"); otherwise its first name ("Lindbergh's nonstop flight
    to Paris" → "Lindbergh")."""
    text = _strip_article(option)
    words = text.split()
    if words and all(w[0].isupper() or w[0].isdigit() or w in ("of", "and", "the", "de")
                     for w in words):  # fmt: skip
        return text
    ents = tu.entities(text)
    if ents:
        return re.sub(r"['’]s$", "", ents[0])
    return text


def _split_options(question: str) -> tuple[str, str] | None:
    q = question.strip()
    m = re.search(r"[,:]\s*(?:(?:is|was)\s+it\s+)?([^,:?]+?)\s+or\s+([^,:?]+?)\s*\??$", q)
    if m:
        return m.group(1).strip(), m.group(2).strip()
    # "Does Vienna or Detroit have …", "Was Einstein or Huxley born first?": the names
    # either side of "or"
    toks = list(tu.sentence_tokens(q))
    if "or" not in toks:
        return None
    k = toks.index("or")

    def run(seq: list[str]) -> list[str]:
        out: list[str] = []
        for t in seq:
            if t[:1].isupper() or (out and t in ("of", "and", "de")) or (out and t.isdigit()):
                out.append(t)
            elif not out and t.lower() in ("the", "a", "an"):
                continue
            else:
                break
        while out and out[-1] in ("of", "and", "de"):
            out.pop()
        return out

    right = run(toks[k + 1 :])
    left = list(reversed(run(list(reversed(toks[:k])))))
    if left and left[0] == toks[0]:
        left = left[1:]  # the question's first word ("Does") is no name
    if not left or not right:
        return None
    return " ".join(left), " ".join(right)


def parse(question: str) -> Comparison | None:
    """The comparison `question` asks, or None when it is not one."""
    opts = _split_options(question)
    if opts is None:
        return None
    q_low = question.lower()
    words = [w.lower() for w in tu.words(question)]
    opt_stems = tu.stem_set(opts[0]) | tu.stem_set(opts[1])
    dimension = next((DIMENSION_NOUNS[w] for w in words if w in DIMENSION_NOUNS), None)
    later = MORE_RECENT.search(q_low) is not None or any(w in LATER for w in words)
    earlier = any(w in EARLIER for w in words)
    quantity = [QUANTITY_WORDS[w] for w in words if w in QUANTITY_WORDS]
    if later or earlier:
        kind, want_max = "time", later and not earlier
    elif quantity:
        kind, want_max = "quantity", quantity[0][0]
        dimension = dimension or quantity[0][1]
    else:
        return None
    skip = set(EARLIER) | set(LATER) | set(QUANTITY_WORDS) | {"recent"}
    attribute = tuple(
        w for w in tu.ordered_unique(tu.content_words(question))
        if w not in skip and tu.stem(w) not in opt_stems
    )  # fmt: skip
    names = (option_name(opts[0]), option_name(opts[1]))
    if not all(names) or tu.stem_set(names[0]) == tu.stem_set(names[1]):
        return None
    return Comparison(opts, names, kind, want_max, dimension, attribute)


def option_queries(question: str) -> list[str]:
    """One retrieval query per option: its name, its other words, the attribute words."""
    c = parse(question)
    if c is None:
        return []
    out = []
    for opt, name in zip(c.options, c.names, strict=True):
        extra = [w for w in tu.content_words(opt) if w not in tu.content_set(name)]
        out.append(" ".join(tu.ordered_unique([name, *extra, *c.attribute])))
    return out


# ---- facts ----------------------------------------------------------------------------


def _number(m: re.Match[str]) -> float:
    raw = m.group("num").lower()
    value = float(_NUMBER_WORDS[raw]) if raw in _NUMBER_WORDS else float(raw.replace(",", ""))
    if m.group("scale"):
        value *= _SCALE[m.group("scale").lower()]
    return value


def quantities(sentence: str, dimension: str) -> list[tuple[int, float, str]]:
    """(position, value in the base unit, text) of each quantity of `dimension`."""
    out = []
    for m in re.finditer(_NUM, sentence, re.I):
        if m.group("scale") is None and m.group("num").lower() in _NUMBER_WORDS:
            if dimension != "count":
                continue  # "two" alone is no measurement
        rest = sentence[m.end() :]
        for unit, factor in _UNITS[dimension]:
            u = re.match(r"[\s\u00a0-]*(?:" + unit + r")(?![\w²])", rest, re.I)
            if u:
                text = sentence[m.start() : m.end() + u.end()]
                out.append((m.start(), _number(m) * factor, text))
                break
        else:
            if dimension == "count" and _POPULATION_BEFORE.search(sentence[: m.start()]):
                if not _YEAR.fullmatch(m.group(0)) or m.group("scale"):
                    out.append((m.start(), _number(m), m.group(0)))
    return out


def years(sentence: str) -> list[tuple[int, int, str]]:
    """(position, year, text) of each year in `sentence`; BC years are negative."""
    out = []
    for m in _YEAR.finditer(sentence):
        year = int(m.group(1))
        era = (m.group(2) or "").upper()
        if era in ("BC", "BCE"):
            year = -year
        elif year < 500 or year > 2100:
            continue  # a count or a measure, not a year
        rest = sentence[m.end() : m.end() + 12]
        if re.match(r"[\s\u00a0]*(?:km|m\b|ft|mi|kg|%|metres|meters|people)", rest):
            continue
        out.append((m.start(), year, m.group(0)))
    return out


def _about(p: Passage, name: str) -> list[tuple[bool, int, str]]:
    """(own article, sentence index, sentence) of the passage's sentences about `name`."""
    own = title_names(p.title, name)
    n = tu.stem_set(name)
    return [(own, i, s) for i, s in enumerate(tu.sentences(p.text)) if own or n <= tu.stem_set(s)]


def _fact(p: Passage, sentence: str, value: float, text: str) -> Fact:
    return Fact(value, text, sentence, p.doc_id, p.title, p.section)


def _name_end(sentence: str, name: str) -> int:
    """Where the last word of `name` that `sentence` holds ends (0 when it holds none)."""
    n = tu.stem_set(name)
    words = [w for w in re.finditer(r"\w+", sentence) if tu.stem(w.group(0).lower()) in n]
    return words[-1].end() if words else 0


def _year_near_name(
    sentence: str, name: str, ys: list[tuple[int, int, str]]
) -> tuple[int, int, str]:
    """Of another article's years, the one stated for `name`: in the same item of a list
    ("1932 Brave New World; 1936 Eyeless in Gaza") or clause, the nearest to the name."""
    m = re.search(re.escape(name), sentence, re.I)
    start, end = (m.start(), m.end()) if m else (_name_end(sentence, name),) * 2
    lo = sentence.rfind(";", 0, start) + 1
    hi = sentence.find(";", end)
    hi = len(sentence) if hi < 0 else hi
    inside = [y for y in ys if lo <= y[0] < hi] or ys
    return min(inside, key=lambda y: start - y[0] - len(y[2]) if y[0] < start else y[0] - end)


def _year_fact(c: Comparison, option: str, name: str, passages: Sequence[Passage]) -> Fact | None:
    want = tu.stems_of(list(c.attribute)) | (
        tu.stem_set(option) - tu.stem_set(name)
    )  # the attribute, and the option's own words ("launch", "flight")
    end = bool(want & END_WORDS)  # "finished": the year a stated range ends
    best: tuple[tuple[bool, int, int, int], Fact] | None = None
    for rank, p in enumerate(passages):
        for own, i, sent in _about(p, name):
            ys = years(sent)
            if not ys:
                continue
            hits = want & tu.stem_set(sent)
            if own:
                _, year, text = ys[-1] if end else ys[0]
            else:  # another article ("1932 Brave New World; 1936 Eyeless in Gaza"): the
                # year stated for the option, not the sentence's first
                _, year, text = _year_near_name(sent, name, ys)
            key = (own, len(hits), -rank, -i)
            if best is None or key > best[0]:
                best = (key, _fact(p, sent, year, text))
    return best[1] if best else None


def _quantity_fact(name: str, dimension: str, passages: Sequence[Passage]) -> Fact | None:
    best: tuple[tuple[bool, int, int, int], Fact] | None = None
    for rank, p in enumerate(passages):
        for own, i, sent in _about(p, name):
            qs = quantities(sent, dimension)
            if not qs:
                continue
            if own:
                pos, value, text = qs[0]
                dist = 0
            else:  # another article: the figure nearest after the option's name
                at = _name_end(sent, name)
                pos, value, text = min(qs, key=lambda q: (q[0] < at, abs(q[0] - at)))
                dist = abs(pos - at)
            key = (own, -rank, -i, -dist)
            if best is None or key > best[0]:
                best = (key, _fact(p, sent, value, text))
    return best[1] if best else None


def compare(question: str, passages: Sequence[Passage]) -> tuple[str, dict[str, Fact]] | None:
    """The option that wins `question`'s comparison, and the fact stated for each option.

    Returns (option name, {option name: Fact}) or None when `question` compares nothing,
    or the passages do not state a comparable fact for both options, or the facts tie.
    """
    c = parse(question)
    if c is None:
        return None
    facts: dict[str, Fact] = {}
    if c.kind == "time":
        for opt, name in zip(c.options, c.names, strict=True):
            f = _year_fact(c, opt, name, passages)
            if f is not None:
                facts[name] = f
    else:
        for dim in (c.dimension,) if c.dimension else GENERIC_DIMENSIONS:
            got = {n: _quantity_fact(n, dim, passages) for n in c.names}
            if all(f is not None for f in got.values()):
                facts = {n: f for n, f in got.items() if f is not None}
                break
    if len(facts) < 2 or facts[c.names[0]].value == facts[c.names[1]].value:
        return None
    pick = max if c.want_max else min
    return pick(c.names, key=lambda n: facts[n].value), facts
