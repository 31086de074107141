"""Candidate answer spans of a sentence: names, dates, numbers and short noun phrases.

The learned reader ranks these; self-practice picks its answers from the same set, so what
the reader is trained to choose is exactly what it can produce. A span keeps its kind, its
character offset in the sentence and the words right before and after it, which the
reader's features read ("by George Orwell", "79 moons").

Kinds:
- `date`: a full or partial date ("25 June 1950", "the 1920s", "19th century");
- `year`: a bare year ("1729");
- `number`: a count or measure, with its unit word when one follows ("79 moons", "36%"); a
  measure is read with its unit symbol, its range and its sign ("8,848.86 m", "29.9–30.5
  m", "−273.15 °C"; `measures`), and its conversion in parentheses is no span of its own
  ("7,088 kilometers (4,404 mi)");
- `entity`: a run of proper nouns ("George Orwell", "Bank of England");
- `np`: a short common noun phrase ("earth pig", "allegorical novella").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scim_edge import textutil as tu
from scim_edge.measures import Measure, dimension, measures
from scim_edge.quality import _TEMPORAL_RE

KINDS = ("date", "year", "number", "entity", "np")

YEAR_RE = re.compile(r"^(?:1\d{3}|20\d{2}|\d{3,4}\s?(?:BC|BCE|AD|CE))$")
_YEAR_IN_TEXT = re.compile(r"\b(?:1\d{3}|20\d{2})(?:\s?(?:BC|BCE|AD|CE))?\b")
NUMBER_RE = re.compile(
    r"(?:[$€£¥]\s?)?\b\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s?(?:%|percent|per cent))?"
    r"(?:\s(?:million|billion|trillion|thousand|hundred))?",
    re.IGNORECASE,
)
_NUMBER_WORD_RE = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|"
    r"fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion)"
    r"(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine|hundred|thousand|million|billion))*\b",
    re.IGNORECASE,
)
_UNIT_AFTER = re.compile(r"\s([A-Za-z][a-z-]+)")
MAX_UNIT_WORDS = 3
_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)
_DEMONYM = re.compile(r"^[A-Z][a-z]+(?:an|ese|ish|ic|i)(?:-born)?$")
_NOUN_TAGS = ("NN", "NNS")
_ADJ_TAGS = ("JJ", "JJR", "JJS", "VBN", "VBG")
# Participles that give a name to what comes before them: "a fish sauce called garum" is a
# phrase and its name, two spans, not one ("fish sauce called garum")
NAMING_PARTICIPLES = frozenset("called named known termed nicknamed dubbed".split())
# Words that mark a name as not a person's: organisations, places, works, languages.
NOT_PERSON_WORDS = frozenset(
    """
    university college school institute academy museum library house church cathedral
    temple palace castle hall theatre theater hospital company corporation party army navy
    states kingdom republic empire union federation province county city river mountain
    mount peak lake ocean sea island islands bay valley street road bridge station airport
    war battle treaty award prize medal trophy cup championship league festival council
    committee parliament congress court ministry department agency society association
    foundation club team latin greek english french german spanish italian
    """.split()
)
# Courtesy titles, and role and rank titles, written before a person's name ("Sir Francis
# Drake", "Sculptor George Stanley", "Command Module Pilot James Lovell"). They are not part
# of the name people give as an answer, nor of the person's article title. Titles that are
# ("Queen Victoria", "Pope Francis", "Saint Peter") are not listed.
COURTESY_TITLES = frozenset("professor prof doctor dr mr mrs ms sir dame".split())
ROLE_TITLES = COURTESY_TITLES | frozenset(
    """
    president vice prime minister chancellor premier governor senator congressman
    congresswoman representative mayor secretary ambassador general admiral colonel major
    captain lieutenant sergeant corporal commander commodore marshal pilot astronaut
    cosmonaut sculptor painter architect composer conductor actor actress singer author
    writer poet novelist playwright director producer chairman chairwoman founder judge
    justice chief coach explorer inventor physicist chemist mathematician philosopher
    """.split()
)
# Words that end a run as an institution or a document, not a name ("General Assembly
# Resolution"), besides those that mark a name as not a person's.
_NOT_A_NAME = NOT_PERSON_WORDS | frozenset("assembly resolution act convention staff".split())
MAX_NP_WORDS = 4
MAX_ENTITY_WORDS = 6


@dataclass(frozen=True)
class Span:
    text: str
    kind: str
    start: int  # character offset in the sentence
    before: str  # the lower-cased word right before the span ("" at the start)
    after: str  # the lower-cased word right after the span ("" at the end)
    unit: str = ""  # for numbers: the nouns that follow ("moons", "spider species")

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _word_before(sentence: str, start: int) -> str:
    head = sentence[:start].rstrip()
    if not head:
        return ""
    if head[-1] in ",;:(–—":
        return head[-1]
    parts = head.split()
    return parts[-1].lower().strip("\"'“”‘’") if parts else ""


def _word_after(sentence: str, end: int) -> str:
    tail = sentence[end:].lstrip()
    if not tail:
        return ""
    if tail[0] in ",;:().–—":
        return tail[0]
    parts = tail.split()
    return parts[0].lower().strip("\"'“”‘’.,;:") if parts else ""


def _unit(sentence: str, end: int, nouns: frozenset[str]) -> str:
    """The common nouns that follow a number, lower-cased ("79 moons", "53,680 spider
    species"): the last one is what it counts, so "How many legs…" is not matched by a
    count of spider species; "" when no noun follows ("at 37 followed")."""
    words: list[str] = []
    while len(words) < MAX_UNIT_WORDS:
        m = _UNIT_AFTER.match(sentence, end)
        word = m.group(1).lower() if m else ""
        if not word or word in tu.STOPWORDS or word in _MONTHS or word not in nouns:
            break
        words.append(word)
        end = m.end()
    return " ".join(words)


def unit_head(unit: str) -> str:
    """The word a unit counts: the last of its nouns."""
    return unit.rsplit(" ", 1)[-1]


@tu.tool_cache(maxsize=32768)
def common_nouns(sentence: str) -> frozenset[str]:
    """Lower-cased words the tagger reads as common nouns: a number's unit must be one, and
    a name followed by one modifies it ("the Dutch painter Vincent van Gogh"); cached, since
    the reader asks once per candidate of the sentence."""
    return frozenset(tok.lower() for tok, tag in tu.sentence_tags(sentence) if tag in _NOUN_TAGS)


_POSSESSIVE = re.compile(r"\s*['’]s?$")


def _overlaps(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(start < e and s < end for s, e in taken)


def _add(out: list[Span], taken: list[tuple[int, int]], sentence: str, text: str, kind: str,
         start: int, unit: str = "") -> None:  # fmt: skip
    text = text.strip(" ,;:.()\"'“”‘’")
    if kind == "entity":  # "Rumi’s" names Rumi
        text = _POSSESSIVE.sub("", text)
    # "penicillin G", "Op. 67": a letter, or the abbreviation before a number, is no name
    if not text or (kind == "entity" and (len(text) == 1 or text in tu.NUMBER_ABBREVIATIONS)):
        return
    start = sentence.find(text, max(0, start))
    if start < 0 or _overlaps(taken, start, start + len(text)):
        return
    taken.append((start, start + len(text)))
    before = _word_before(sentence, start)
    after = _word_after(sentence, start + len(text))
    out.append(Span(text, kind, start, before, after, unit))


def _converts(sentence: str, stated: Measure, ms: Measure) -> bool:
    """`ms` is `stated` again in another unit, in parentheses right after it: "7,088
    kilometers (4,404 mi)" states one length, and its "4,404 mi" is no rival answer to
    its "7,088 kilometers"."""
    same_kind = dimension(stated.unit) == dimension(ms.unit)
    return same_kind and _CONVERSION.fullmatch(sentence, stated.end, ms.start) is not None


_CONVERSION = re.compile(r"\s*\(\s*(?:about|approximately|approx\.|c\.|~)?\s*")


@tu.tool_cache(maxsize=32768)
def sentence_spans(sentence: str) -> tuple[Span, ...]:
    """Every candidate span of one sentence: numbers with a unit first, so that "1850 m"
    is no year, then dates, so numbers inside them are not counted twice; cached because
    practice and the reader see the same sentences often."""
    out: list[Span] = []
    taken: list[tuple[int, int]] = []
    # "8,848.86 m", "29.9–30.5 m", "10,935 ± 6 meters"; before dates, so "1850 m" is no year
    stated: Measure | None = None
    for ms in measures(sentence):
        if stated is not None and _converts(sentence, stated, ms):
            taken.append((ms.start, ms.end))  # the conversion is no number of its own
            continue
        stated = ms
        _add(out, taken, sentence, ms.number, "number", ms.start, " ".join(ms.unit.split()))
        if ms.error is not None:  # the "± 6" is no number of its own
            taken.append(ms.error)
    for m in _TEMPORAL_RE.finditer(sentence):
        text = re.sub(r"^(?:in|on|by|since|until|from|during|circa|c\.)\s+", "", m.group(0),
                      flags=re.I)  # fmt: skip
        _add(out, taken, sentence, text, "year" if is_year(text) else "date", m.start())
    for m in _YEAR_IN_TEXT.finditer(sentence):
        _add(out, taken, sentence, m.group(0), "year", m.start())
    runs = [
        (ent, start)
        for ent, start in _entity_runs(sentence)
        if len(ent.split()) <= MAX_ENTITY_WORDS and not {w.lower() for w in ent.split()} & _MONTHS
    ]
    for ent, start in runs:  # "Apollo 11", "Boeing 747": before the number alone is taken
        if ent.rsplit(" ", 1)[-1].isdigit():
            _add(out, taken, sentence, ent, "entity", start)
    nouns = common_nouns(sentence)
    for rx in (NUMBER_RE, _NUMBER_WORD_RE):
        for m in rx.finditer(sentence):
            _add(out, taken, sentence, m.group(0), "number", m.start(),
                 _unit(sentence, m.end(), nouns))  # fmt: skip
    for ent, start in runs:
        _add(out, taken, sentence, ent, "entity", start)
    _noun_phrases(sentence, out, taken)
    units = _unit_starts(sentence, out)
    out = [s for s in out if not (s.kind == "np" and s.start in units)]
    out.sort(key=lambda s: s.start)
    return tuple(out)


def _unit_starts(sentence: str, spans: list[Span]) -> set[int]:
    """Where the unit of each counted number begins: "minutes" of "128 minutes" is the
    number's unit, said with it ("128 minutes"), and no answer alone."""
    starts: set[int] = set()
    for s in spans:
        if s.kind == "number" and s.unit:
            rest = sentence[s.end :]
            said = rest.lstrip()
            if len(said) < len(rest) and said.lower().startswith(s.unit.split()[0]):
                starts.add(s.end + len(rest) - len(said))
    return starts


# A number of at most three digits, so that a year after a name stays a year ("Athens 1896")
_NAME_NUMBER = re.compile(r"^\d{1,3}$")
_CONNECT = frozenset(
    {"of", "de", "von", "van", "da", "del", "al", "bin", "ibn", "&", "the", "la", "le"}
)


def _entity_runs(sentence: str) -> list[tuple[str, int]]:
    """Runs of capitalised words tagged as names or name modifiers ("Hanseatic League",
    "Bank of England", "Tang dynasty" keeps "Tang"); a sentence's first word counts only
    when the tagger calls it a proper noun."""
    tags = tu.sentence_tags(sentence)
    runs: list[tuple[str, int]] = []
    run: list[str] = []
    starts: list[int] = []
    cursor = 0

    def flush() -> None:
        while run and run[-1].lower() in _CONNECT:
            run.pop()
            starts.pop()
        if run:
            title = _title_words(run)
            runs.append((" ".join(run[title:]), starts[title]))
        run.clear()
        starts.clear()

    for i, (tok, tag) in enumerate(tags):
        at = sentence.find(tok, cursor)
        if at >= 0:
            cursor = at + len(tok)
        cap = tok[:1].isupper() and any(ch.isalpha() for ch in tok)
        proper = tag in ("NNP", "NNPS")
        if cap and (proper or (i > 0 and tag in ("JJ", "NN", "NNS", "CD"))):
            run.append(tok)
            starts.append(max(at, 0))
        elif run and _NAME_NUMBER.match(tok) and _named(run):
            run.append(tok)  # a number that ends a name: "Apollo 11", "Boeing 747"
            starts.append(max(at, 0))
            flush()
        elif run and tok.lower() in _CONNECT and i + 1 < len(tags) and tags[i + 1][0][:1].isupper():
            run.append(tok)
            starts.append(max(at, 0))
        elif (
            run
            and tok in ("'s", "’s")
            and at == starts[-1] + len(run[-1])
            and _owns_a_place(tags, i)
        ):
            run[-1] += tok  # "St James's Theatre", "People's Republic of China"
        else:
            flush()
    flush()
    return runs


def _owns_a_place(tags: tuple[tuple[str, str], ...], i: int) -> bool:
    """The possessive at `i` is inside a name: the capitalised word after it names a kind
    of place or body ("St James's Theatre", "King's College"), where "Orwell's Animal
    Farm" is two names."""
    if i + 1 >= len(tags):
        return False
    nxt = tags[i + 1][0]
    return nxt[:1].isupper() and nxt.lower() in NOT_PERSON_WORDS


def _named(run: list[str]) -> bool:
    """The run names something a number can end ("Apollo", "Symphony No."), not only an
    abbreviation said before numbers ("Op.": "Op. 67" is no name) or a connecting word."""
    if run[-1].lower() in _CONNECT:
        return False
    return any(w.rstrip(".") not in tu.NUMBER_ABBREVIATIONS for w in run)


def _title_words(words: list[str]) -> int:
    """How many leading words of a capitalised run are a role title before a name: up to
    the last title word that still leaves two or more name words ("Command Module Pilot |
    James Lovell"), none when what would remain is not a person's name ("General | Motors
    Company", "Director | of Music")."""
    last = -1
    for i, word in enumerate(words[:-2]):
        if word.lower().rstrip(".") in ROLE_TITLES:
            last = i
    if last < 0:
        return 0
    rest = [w.lower() for w in words[last + 1 :]]
    if rest[0] in _CONNECT or set(rest) & _NOT_A_NAME:
        return 0
    return last + 1


def _noun_phrases(sentence: str, out: list[Span], taken: list[tuple[int, int]]) -> None:
    """Adjective* noun+ runs of common nouns, at most MAX_NP_WORDS words; a naming
    participle ends one."""
    run: list[tuple[str, str]] = []
    pos = 0
    cursor = 0

    def flush() -> None:
        while run and run[-1][1] not in _NOUN_TAGS:
            run.pop()
        if run and len(run) <= MAX_NP_WORDS:
            phrase = " ".join(tok for tok, _ in run)
            if any(len(tok) > 2 for tok, _ in run):
                _add(out, taken, sentence, phrase, "np", pos)
        run.clear()

    for tok, tag in tu.sentence_tags(sentence):
        at = sentence.find(tok, cursor)
        if at >= 0:
            cursor = at + len(tok)
        low = tok.lower()
        word_ok = tok.isalpha() and low not in tu.STOPWORDS and low not in NAMING_PARTICIPLES
        if word_ok and (tag in _NOUN_TAGS or (tag in _ADJ_TAGS and not tok[0].isupper())):
            if not run:
                pos = max(at, 0)
            run.append((tok, tag))
        else:
            flush()
    flush()


def is_demonym(text: str) -> bool:
    """ "American", "Canadian-born", "Sri Lankan": nationality adjectives, not names. A
    name whose last word is a thing's kind is a name, though its words look alike:
    "Pacific Ocean", "Roman Republic", "Catholic Church"."""
    words = text.split()
    if len(words) > 1 and words[-1].lower() in NOT_PERSON_WORDS:
        return False
    return bool(words) and all(_DEMONYM.match(w) for w in words)


def span_head(text: str) -> str:
    """The word that says what kind of thing a span is, as written: its last word
    ("Arafura Sea", "left side"), or the word before "of" ("Battle of Segesvár", "Gulf of
    Oman"). People ask for such answers by that word: "which sea", "in which battle"."""
    words = text.split()
    if "of" in words[1:-1]:
        return words[words.index("of") - 1].strip(".,;:()")
    return words[-1].strip(".,;:()") if words else ""


def is_year(text: str) -> bool:
    return bool(YEAR_RE.match(text.strip()))
