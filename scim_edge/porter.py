"""The Porter stemmer exactly as NLTK 3.10.4 runs it by default (mode NLTK_EXTENSIONS).

Why a copy: importing anything from NLTK imports all of NLTK (about 0.3 s, most of
`scim-edge ask`'s start-up), and every answer needs stems. Other stemmers on PyPI
(snowballstemmer's and PyStemmer's "porter") follow Martin Porter's own version and differ
from NLTK's extensions on about 2% of Wikipedia's words (sky, dying, happy → happi); the
ranking, the reader's learned weights and the trained critic were fitted on NLTK's stems,
so the stems must stay the same word for word (tests/test_nlp_parity.py checks it against
NLTK over a whole vocabulary when NLTK is installed).

Ported from `nltk/stem/porter.py` of NLTK 3.10.4 (Copyright (C) 2001-2026 NLTK Project,
Apache License 2.0), keeping only the NLTK_EXTENSIONS mode; the algorithm is Porter,
"An algorithm for suffix stripping", Program 14.3 (1980): 130-137, with the extensions
NLTK documents (an irregular-forms table, 'ies'/'ied' on four-letter words, y → i only
after a consonant, 'alli' first, 'fulli', 'logi' keeping its 'l', short words untouched).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["stem"]

_VOWELS = frozenset("aeiou")

# NLTK's table of irregular forms: each form stems to its key.
_POOL: dict[str, str] = {
    form: key
    for key, forms in {
        "sky": ["sky", "skies"],
        "die": ["dying"],
        "lie": ["lying"],
        "tie": ["tying"],
        "news": ["news"],
        "inning": ["innings", "inning"],
        "outing": ["outings", "outing"],
        "canning": ["cannings", "canning"],
        "howe": ["howe"],
        "proceed": ["proceed"],
        "exceed": ["exceed"],
        "succeed": ["succeed"],
    }.items()
    for form in forms
}

Condition = Callable[[str], bool] | None
Rule = tuple[str, str, Condition]


def _is_consonant(word: str, i: int) -> bool:
    """A letter other than a, e, i, o, u, and other than a y after a consonant."""
    if word[i] in _VOWELS:
        return False
    if word[i] == "y":
        negate = False
        while i > 0 and word[i] == "y":
            negate = not negate
            i -= 1
        return (word[i] not in _VOWELS) != negate
    return True


def _consonant_flags(word: str) -> list[bool]:
    """`_is_consonant` of every position, in one pass."""
    flags: list[bool] = []
    for i, ch in enumerate(word):
        if ch in _VOWELS:
            flags.append(False)
        elif ch == "y":
            flags.append(True if i == 0 else not flags[i - 1])
        else:
            flags.append(True)
    return flags


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in [C](VC){m}[V]."""
    return "".join("c" if c else "v" for c in _consonant_flags(stem)).count("vc")


def _has_positive_measure(stem: str) -> bool:
    return _measure(stem) > 0


def _measure_gt_1(stem: str) -> bool:
    return _measure(stem) > 1


def _contains_vowel(stem: str) -> bool:
    return not all(_consonant_flags(stem))


def _ends_double_consonant(word: str) -> bool:
    """Porter's *d."""
    return len(word) >= 2 and word[-1] == word[-2] and _is_consonant(word, len(word) - 1)


def _ends_cvc(word: str) -> bool:
    """Porter's *o (consonant-vowel-consonant, the last not w, x or y), and NLTK's
    two-letter vowel-consonant words."""
    return (
        len(word) >= 3
        and _is_consonant(word, len(word) - 3)
        and not _is_consonant(word, len(word) - 2)
        and _is_consonant(word, len(word) - 1)
        and word[-1] not in ("w", "x", "y")
    ) or (len(word) == 2 and not _is_consonant(word, 0) and _is_consonant(word, 1))


def _replace_suffix(word: str, suffix: str, replacement: str) -> str:
    if suffix == "":
        return word + replacement
    return word[: -len(suffix)] + replacement


def _apply_rule_list(word: str, rules: Sequence[Rule]) -> str:
    """The first rule whose suffix matches decides: applied if its condition holds on the
    stem, else the word is kept (no later rule is tried)."""
    for suffix, replacement, condition in rules:
        if suffix == "*d" and _ends_double_consonant(word):
            stem = word[:-2]
            if condition is None or condition(stem):
                return stem + replacement
            return word
        if word.endswith(suffix):
            stem = _replace_suffix(word, suffix, "")
            if condition is None or condition(stem):
                return stem + replacement
            return word
    return word


def _step1a(word: str) -> str:
    if word.endswith("ies") and len(word) == 4:
        return _replace_suffix(word, "ies", "ie")
    return _apply_rule_list(
        word, [("sses", "ss", None), ("ies", "i", None), ("ss", "ss", None), ("s", "", None)]
    )


def _step1b(word: str) -> str:
    if word.endswith("ied"):
        if len(word) == 4:
            return _replace_suffix(word, "ied", "ie")
        return _replace_suffix(word, "ied", "i")
    if word.endswith("eed"):
        stem = _replace_suffix(word, "eed", "")
        return stem + "ee" if _measure(stem) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix):
            intermediate = _replace_suffix(word, suffix, "")
            if _contains_vowel(intermediate):
                break
    else:
        return word
    last = intermediate[-1]
    return _apply_rule_list(
        intermediate,
        [
            ("at", "ate", None),
            ("bl", "ble", None),
            ("iz", "ize", None),
            ("*d", last, lambda stem: last not in ("l", "s", "z")),
            ("", "e", lambda stem: _measure(stem) == 1 and _ends_cvc(stem)),
        ],
    )


def _step1c(word: str) -> str:
    # NLTK: y -> i only after a consonant, and not when that consonant is the whole stem.
    return _apply_rule_list(
        word, [("y", "i", lambda stem: len(stem) > 1 and _is_consonant(stem, len(stem) - 1))]
    )


_STEP2: list[Rule] = [
    ("ational", "ate", _has_positive_measure),
    ("tional", "tion", _has_positive_measure),
    ("enci", "ence", _has_positive_measure),
    ("anci", "ance", _has_positive_measure),
    ("izer", "ize", _has_positive_measure),
    ("bli", "ble", _has_positive_measure),
    ("alli", "al", _has_positive_measure),
    ("entli", "ent", _has_positive_measure),
    ("eli", "e", _has_positive_measure),
    ("ousli", "ous", _has_positive_measure),
    ("ization", "ize", _has_positive_measure),
    ("ation", "ate", _has_positive_measure),
    ("ator", "ate", _has_positive_measure),
    ("alism", "al", _has_positive_measure),
    ("iveness", "ive", _has_positive_measure),
    ("fulness", "ful", _has_positive_measure),
    ("ousness", "ous", _has_positive_measure),
    ("aliti", "al", _has_positive_measure),
    ("iviti", "ive", _has_positive_measure),
    ("biliti", "ble", _has_positive_measure),
    ("fulli", "ful", _has_positive_measure),
]


def _step2(word: str) -> str:
    if word.endswith("alli") and _has_positive_measure(_replace_suffix(word, "alli", "")):
        return _step2(_replace_suffix(word, "alli", "al"))
    # 'logi' -> 'log' with the 'l' counted in the stem ("geology" like "archaeology").
    logi: Rule = ("logi", "log", lambda stem: _has_positive_measure(word[:-3]))
    return _apply_rule_list(word, [*_STEP2, logi])


_STEP3: list[Rule] = [
    ("icate", "ic", _has_positive_measure),
    ("ative", "", _has_positive_measure),
    ("alize", "al", _has_positive_measure),
    ("iciti", "ic", _has_positive_measure),
    ("ical", "ic", _has_positive_measure),
    ("ful", "", _has_positive_measure),
    ("ness", "", _has_positive_measure),
]

_STEP4: list[Rule] = [
    ("al", "", _measure_gt_1),
    ("ance", "", _measure_gt_1),
    ("ence", "", _measure_gt_1),
    ("er", "", _measure_gt_1),
    ("ic", "", _measure_gt_1),
    ("able", "", _measure_gt_1),
    ("ible", "", _measure_gt_1),
    ("ant", "", _measure_gt_1),
    ("ement", "", _measure_gt_1),
    ("ment", "", _measure_gt_1),
    ("ent", "", _measure_gt_1),
    ("ion", "", lambda stem: _measure(stem) > 1 and stem[-1] in ("s", "t")),
    ("ou", "", _measure_gt_1),
    ("ism", "", _measure_gt_1),
    ("ate", "", _measure_gt_1),
    ("iti", "", _measure_gt_1),
    ("ous", "", _measure_gt_1),
    ("ive", "", _measure_gt_1),
    ("ize", "", _measure_gt_1),
]


def _step5a(word: str) -> str:
    # Both rules are tried (m>1, then m=1 and not *o), so not _apply_rule_list.
    if word.endswith("e"):
        stem = _replace_suffix(word, "e", "")
        if _measure(stem) > 1:
            return stem
        if _measure(stem) == 1 and not _ends_cvc(stem):
            return stem
    return word


def _step5b(word: str) -> str:
    return _apply_rule_list(word, [("ll", "l", lambda stem: _measure(word[:-1]) > 1)])


def stem(word: str, to_lowercase: bool = True) -> str:
    """`PorterStemmer().stem(word, to_lowercase)` of NLTK 3.10.4: "assassinated" →
    "assassin", "happy" → "happi", "dying" → "die"."""
    s = word.lower() if to_lowercase else word
    if s in _POOL:
        return _POOL[s]
    if len(word) <= 2:  # NLTK: words of one or two letters are left alone
        return s
    s = _step1a(s)
    s = _step1b(s)
    s = _step1c(s)
    s = _step2(s)
    s = _apply_rule_list(s, _STEP3)
    s = _apply_rule_list(s, _STEP4)
    s = _step5a(s)
    return _step5b(s)
