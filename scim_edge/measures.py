"""Quantities with units: what kind of measure a question asks for, and what a number in a
sentence measures.

"How tall is Mount Everest?" asks for a length; "Its height … as 8,848.86 m" states one.
A reader that sees only numbers took "11" (a count of countries) for the height of Mont
Blanc, "11.86 years" for Jupiter's distance from the Sun, "6 meters" (the "± 6" of "10,935
± 6 meters") for the Mariana Trench's depth, and stated "8,848.86" without its metres. The
unit that follows a number says what it measures; an encyclopaedia writes it as a symbol
("m", "km2", "°C", "km/h") or a word ("metres", "square miles"), often with a no-break
space, and often as a range ("29.9–30.5 m") or with its error ("10,935 ± 6 meters").

`measure_at(sentence, start)` reads a number with its unit at a position of a sentence,
`dimension(unit)` names what the unit measures, and `asked(question)` the measures a
question asks for ("how tall" a length; "how big" a length, an area, a volume or a mass;
"at what temperature" a temperature; "What is the population of…" and "How many people…"
a number of people). Units of time are read only where a question asks how long something
lasted or how old someone was: "11.86 years" answers no "how far".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scim_edge import textutil as tu
from scim_edge.lead_names import COPULAS

LENGTH = "length"
AREA = "area"
VOLUME = "volume"
MASS = "mass"
TEMPERATURE = "temperature"
SPEED = "speed"
DURATION = "duration"
# a person's or a thing's age: a time ("30,000 years"), or a number alone ("died at 37")
AGE = "age"
# how many people live somewhere: a number alone ("over 14 million") or one of people
PEOPLE = "people"

# Units as the text writes them, by what they measure. Symbols are matched as written
# ("m" is a metre, "M" is not); words in lower case, and with a capital first letter.
_UNITS: dict[str, tuple[str, ...]] = {
    LENGTH: (
        "m", "km", "cm", "mm", "nm", "μm", "µm", "mi", "ft", "yd", "AU", "Gm", "ly", "pc",
        "nmi", "metre", "metres", "meter", "meters", "kilometre", "kilometres", "kilometer",
        "kilometers", "centimetres", "centimeters", "millimetres", "millimeters",
        "nanometres", "nanometers", "micrometres", "micrometers", "mile", "miles", "foot",
        "feet", "inches", "yards", "light-years", "light years", "light-year", "parsecs",
        "astronomical units", "nautical miles",
    ),
    AREA: (
        "km2", "km²", "m2", "m²", "mi2", "mi²", "sq mi", "sq km", "sq ft", "ha", "hectares",
        "acres", "square kilometres", "square kilometers", "square miles", "square metres",
        "square meters", "square feet",
    ),
    VOLUME: (
        "km3", "km³", "m3", "m³", "cu mi", "cu ft", "cubic kilometres", "cubic kilometers",
        "cubic miles", "cubic metres", "cubic meters", "litres", "liters", "gallons",
    ),
    MASS: (
        "kg", "g", "mg", "t", "lb", "lbs", "oz", "kilograms", "kilogrammes", "grams",
        "tonnes", "tons", "long tons", "short tons", "pounds", "ounces",
    ),
    TEMPERATURE: (
        "°C", "°F", "° C", "° F", "K", "kelvin", "kelvins", "degrees Celsius",
        "degrees Fahrenheit", "degrees C", "degrees F",
    ),
    SPEED: (
        "km/h", "kph", "mph", "m/s", "km/s", "mi/s", "m⋅s−1", "m·s−1", "knots", "kn",
        "kilometres per hour", "kilometers per hour", "miles per hour", "metres per second",
        "meters per second", "kilometres per second", "kilometers per second",
    ),
    DURATION: (
        "years", "year", "yr", "days", "hours", "minutes", "seconds", "weeks", "months",
        "centuries", "decades", "millennia",
    ),
    PEOPLE: ("people", "inhabitants", "residents", "persons", "citizens"),
}  # fmt: skip
_DIMENSION = {
    form: dim
    for dim, units in _UNITS.items()
    for unit in units
    # a word unit may open a sentence or a title ("Metres"); a symbol is as written
    for form in (unit, unit.capitalize() if unit.isalpha() and len(unit) > 3 else unit)
}


def _alternatives(units: list[str]) -> str:
    """A regex alternation of units, longest first; a space inside a unit may be any
    space ("sq\u00a0mi")."""
    ordered = sorted(units, key=len, reverse=True)
    return "|".join(re.escape(u).replace(r"\ ", r"\s") for u in ordered)


# a one-letter symbol only after a space ("0 K", "5 t"; not "10K", "5G", "3M")
_SHORT = _alternatives([u for u in _DIMENSION if len(u) == 1])
_LONG = _alternatives([u for u in _DIMENSION if len(u) > 1])
_NUMBER = r"\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s(?:hundred|thousand|million|billion|trillion))?"
_SIGN = "[−–-]?"  # a minus sign, or the dash written for one ("–89.2 °C")
# a number (its sign kept; a range kept whole), an optional error, then a unit that no
# letter, digit or hyphen continues: "−273.15 °C", "29.9–30.5 m", "100 to 115 kg",
# "10,935 ± 6 m"; not "5 t-shirts"
_MEASURE = re.compile(
    rf"(?P<number>{_SIGN}{_NUMBER}(?:\s?(?:–|-|to)\s?{_SIGN}{_NUMBER})?)"
    rf"(?P<error>\s?±\s?{_NUMBER})?"
    rf"(?:\s?(?P<unit>{_LONG})|\s(?P<short>{_SHORT}))(?![\w²³/⋅·-])"
)
_NOT_BEFORE = re.compile(r"[\w.,]$")  # a number's sign or first digit is not mid-word


@dataclass(frozen=True)
class Measure:
    """A number with its unit in a sentence: `number` as written (a range kept whole, its
    sign kept), `unit` as written, `start` and `end` of the whole (unit included), and
    `error`, the span of a "± 6" between them (or None)."""

    number: str
    unit: str
    start: int
    end: int
    error: tuple[int, int] | None


def measure_at(sentence: str, start: int) -> Measure | None:
    """The number with its unit that begins at `start`, or None."""
    if start and _NOT_BEFORE.search(sentence[:start]):
        return None
    m = _MEASURE.match(sentence, start)
    if m is None:
        return None
    unit = "unit" if m.group("unit") is not None else "short"
    error = m.span("error") if m.group("error") else None
    return Measure(m.group("number"), m.group(unit), m.start(), m.end(), error)


def measures(sentence: str) -> list[Measure]:
    """Every number with a unit in the sentence, left to right."""
    out: list[Measure] = []
    pos = 0
    for m in re.finditer(r"[−–-]?\d", sentence):
        if m.start() < pos:
            continue
        found = measure_at(sentence, m.start())
        if found is not None:
            out.append(found)
            pos = found.end
    return out


def answers(text: str, unit: str, asked: frozenset[str]) -> bool:
    """A number (`text`) with this unit ("" for none) is a measure of an asked kind: a
    length for "how tall"; for "how old", a time or a number alone ("at 37"); for a
    population, a number of people, or a number alone in the thousands or more ("over 14
    million"), not "six" (prefectures, the tagger's noun missed after "neighboring")."""
    dim = dimension(unit)
    if dim in asked or (AGE in asked and dim == DURATION):
        return True
    if unit:
        return False
    return AGE in asked or (PEOPLE in asked and _LARGE.search(text) is not None)


_LARGE = re.compile(r"\d,\d{3}|\d{4}|\b(?:thousand|million|billion)\b", re.IGNORECASE)


def dimension(unit: str) -> str:
    """What a unit measures ("km2" → area), or "" for a unit that is not one ("moons")."""
    return _DIMENSION.get(" ".join(unit.split()), "")


# The question's words that ask for a measure, by the measures each may mean.
_PHYSICAL = frozenset({LENGTH, AREA, VOLUME, MASS})
_HOW = {
    "tall": {LENGTH},
    "high": {LENGTH},
    "deep": {LENGTH},
    "far": {LENGTH},
    "wide": {LENGTH},
    "thick": {LENGTH},
    "big": _PHYSICAL,
    "large": _PHYSICAL,
    "heavy": {MASS},
    "fast": {SPEED},
    "quickly": {SPEED},
    "hot": {TEMPERATURE},
    "cold": {TEMPERATURE},
    "warm": {TEMPERATURE},
    "old": {AGE},
}
_NOUNS = {
    "height": {LENGTH},
    "elevation": {LENGTH},
    "altitude": {LENGTH},
    "depth": {LENGTH},
    "length": {LENGTH},
    "width": {LENGTH},
    "diameter": {LENGTH},
    "radius": {LENGTH},
    "distance": {LENGTH},
    "wavelength": {LENGTH},
    "area": {AREA},
    "size": _PHYSICAL,
    "volume": {VOLUME},
    "weight": {MASS},
    "mass": {MASS},
    "temperature": {TEMPERATURE},
    "speed": {SPEED},
    "velocity": {SPEED},
    "population": {PEOPLE},
}
_VERBS = {"weigh": {MASS}, "melt": {TEMPERATURE}, "boil": {TEMPERATURE}, "freez": {TEMPERATURE}}
_LASTS = frozenset("last lasted take took takes live lived reign reigned".split())
# spans of time a "how long is" asks the length of: "How long is a day on Mars?"
_TIMES = frozenset(
    "day days night year years month week hour lifetime lifespan life gestation pregnancy "
    "term season".split()
)
# words between the wh-word and the noun it asks for ("what is the average depth")
_SKIP = frozenset(
    "is was are were the a an average mean maximum minimum total approximate approximately "
    "roughly exact".split()
)
_POINT = re.compile(r"\b(melting|boiling|freezing)\s+point\b", re.IGNORECASE)


# a verb or an auxiliary after the noun a what-phrase asks for: "What area does …"
_AUX = frozenset(
    "is was are were do does did can could will would has have had may might must".split()
)


@tu.tool_cache(maxsize=4096)
def _read(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the measures the question asks for, the words of it that ask for them)."""
    q = " ".join(question.split())
    words = [w.lower() for w in tu.words(q)]
    out: set[str] = set()
    said: set[str] = set()
    for i, w in enumerate(words[:-1]):
        if w != "how":
            continue
        nxt = words[i + 1]
        if nxt == "long":
            rest = set(words[i + 2 :])
            subject = set(words[i + 2 : i + 6])  # "is a day on", "was her reign"
            timed = rest & _LASTS or "ago" in rest or subject & _TIMES
            out |= {DURATION} if timed else {LENGTH}
            said.add(nxt)
        elif nxt == "many" and words[i + 2 : i + 3] and dimension(words[i + 2]) == PEOPLE:
            out.add(PEOPLE)  # "How many people live in Brazil?"
        elif nxt == "much":  # "How much can a beaver weigh?"
            verbs = [x for x in words[i + 2 :] if tu.stem(x) in _VERBS]
            out |= {d for x in verbs for d in _VERBS[tu.stem(x)]}
            said |= set(verbs)
        elif nxt in _HOW:
            out |= _HOW[nxt]
            said.add(nxt)
        break
    noun = _asked_noun(words)
    if noun:
        out |= _NOUNS[noun]
        said.add(noun)
    point = _POINT.search(q)
    if point is not None and words[:1] in (["what"], ["at"]):
        out.add(TEMPERATURE)
        said |= {point.group(1).lower(), "point"}
    if words[:3] == ["at", "what", "age"]:  # not "Which age came after…", an era
        out.add(AGE)
        said.add("age")
    if not out:
        return frozenset(), frozenset()
    # a number alone, which may answer "the population", need not say it
    return frozenset(out), frozenset(said - {"population"})


def asked(question: str) -> frozenset[str]:
    """The measures a question asks for, or an empty set when it asks for none: "How tall
    is…" a length, "What is the area of…" an area, "At what temperature does … melt?" and
    "What is the melting point of…" a temperature, "How long is the Nile?" a length, "How
    long did the war last?" and "How long is a day on Mars?" a duration, "How old…" and
    "At what age…" an age. "What is the largest country by area?" asks for a country,
    "Which age came after…" for an era, "Which area of the brain…" for a place, "What mass
    extinction…" for an event: the measure word must be what the wh-phrase asks."""
    return _read(question)[0]


def asking_words(question: str) -> frozenset[str]:
    """The question's words that ask for its measure, lower-cased ("tall" of "How tall is
    Mount Everest?", "temperature" of "At what temperature…", "weigh" of "How much can a
    beaver weigh?"): a number whose unit measures what is asked states them, as a date
    states the "year" asked, though no sentence that gives a height says "tall"."""
    return _read(question)[1]


# How people ask for a measure of each kind ("How heavy…", "How fast…"); a length is asked
# by what the sentence says it is ("Its height is…" → "how high"), and "how long" else.
_ASKED_AS = {AREA: "how large", VOLUME: "how large", MASS: "how heavy", SPEED: "how fast"}
_LENGTH_AS = (
    ("how high", frozenset("height tall high elevation altitude".split())),
    ("how deep", frozenset("depth deep".split())),
    ("how wide", frozenset("width wide across diameter".split())),
    ("how far", frozenset("distance far away".split())),
    ("how long", frozenset("length long".split())),
)


def asking_phrase(number: str, unit: str, sentence: str, start: int = 0) -> str:
    """How a person asks for this number with its unit, which begins at `start` of the
    sentence that states it: "how high" for "Its height … as 8,848.86 m", "how heavy" for
    "weighing up to 190–200 t", "how cold" for "−89.2 °C"; a length by the measure word
    nearest it ("18 miles wide" is asked "how wide" though the sentence says "deep" too);
    "" for a unit no "how" phrase asks for (a count, a time, people), which a question
    asks for as "how many years". `asked` reads every phrase this returns as the unit's
    measure."""
    dim = dimension(unit)
    if dim in _ASKED_AS:
        return _ASKED_AS[dim]
    if dim == TEMPERATURE:
        return "how cold" if number.startswith(("−", "–", "-")) else "how hot"
    if dim != LENGTH:
        return ""
    said = [
        (abs(m.start() - start), how)
        for m in re.finditer(r"\w+", sentence)
        for how, words in _LENGTH_AS
        if m.group(0).lower() in words
    ]
    return min(said)[1] if said else "how long"


def _asked_noun(words: list[str]) -> str:
    """The measure noun a what/which phrase asks for, or "": "What area does…", "at what
    temperature", "What is the diameter of…", "below what body temperature does…". The
    noun must head the phrase: after a copula ("what is the area of") it may take "of";
    otherwise a verb or the question's end follows it, not "of" ("Which area of the
    brain…") nor another noun ("What mass extinction…", "What temperature scale…")."""
    for i, w in enumerate(words):
        if w not in ("what", "which"):
            continue
        rest = list(words[i + 1 : i + 8])
        copula = False
        while rest and rest[0] in _SKIP:
            copula |= rest.pop(0) in COPULAS
        for k in range(min(2, len(rest))):
            noun = rest[k]
            if noun in tu.STOPWORDS:  # "What in size…": the noun is not the one asked
                break
            if noun not in _NOUNS:
                continue
            nxt = rest[k + 1] if k + 1 < len(rest) else ""
            if nxt == "" or nxt in _AUX or (copula and nxt == "of"):
                return noun
            break
        return ""
    return ""
