"""Property-based tests of the wikitext cleaner: it never raises, never loops, and stays linear.

Three generators: a grammar of well-formed, arbitrarily nested constructs whose visible words
are known (so the test checks what survives, not only that nothing crashed); a "soup" of
delimiters and fragments (unbalanced, interleaved, unclosed); and arbitrary Unicode text.
The number of cases each property ran is printed at the end of the module.
"""

from __future__ import annotations

import gc
import signal
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from index_builder.wikitext import clean_article, is_disambiguation, redirect_target

# Strategy reprs of the recursive grammar are large; hypothesis warns when it builds them.
pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")

CASES: Counter[str] = Counter()
# No example database: the examples are cheap to regenerate and nothing is written to disk.
FUZZ = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module", autouse=True)
def report_case_counts(request) -> Iterator[None]:
    """Print how many cases each property ran (on the terminal, even without ``-s``)."""
    yield
    line = f"wikitext fuzz cases: {dict(CASES)} (total {sum(CASES.values())})"
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():
        print(f"\n{line}")


class Hung(Exception):
    pass


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Fail instead of hanging if the cleaner ever loops (SIGALRM, main thread)."""

    def on_alarm(signum, frame):
        raise Hung(f"cleaner ran over {seconds}s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_shape(sections: object) -> None:
    assert isinstance(sections, list)
    for item in sections:
        assert isinstance(item, tuple) and len(item) == 2
        name, text = item
        assert isinstance(name, str) and isinstance(text, str)
        assert text and text == text.strip() and "\n\n" not in text


# ---- 1. a grammar of nested constructs with a known visible text ---------------------------

WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=3, max_size=8)
# Nodes are (wikitext, visible words). Words are joined by spaces, so no link trail forms.


def text_node() -> st.SearchStrategy[tuple[str, list[str]]]:
    return WORDS.map(lambda w: (w, [w]))


def join(nodes: list[tuple[str, list[str]]]) -> tuple[str, list[str]]:
    return " ".join(w for w, _ in nodes), [v for _, vis in nodes for v in vis]


def hidden(wikitext: str) -> tuple[str, list[str]]:
    return wikitext, []


def extend(children: st.SearchStrategy, tables: bool = True) -> st.SearchStrategy:
    """Every construct built from already generated children (arbitrary nesting).

    A kept template's own arguments hold no table: its "|" rows would split the arguments
    (MediaWiki too needs {{!}} there), so those come from the table-free INLINE grammar.
    """
    inline = st.lists(children, min_size=1, max_size=4).map(join)
    kept_arg = st.lists(INLINE, min_size=1, max_size=3).map(join)
    label = st.lists(text_node(), min_size=1, max_size=3).map(join)
    table = st.lists(children, min_size=1, max_size=3).map(
        lambda cells: hidden(
            '\n{| class="wikitable"\n|-\n'
            + "".join("| " + w.replace("\n", " ") + "\n" for w, _ in cells)
            + "|}\n"
        )
    )
    return st.one_of(
        # dropped templates, with nested anything as arguments (named and positional)
        st.tuples(WORDS, st.lists(children, max_size=4)).map(
            lambda t: hidden(
                "{{tpl" + t[0] + "".join(f"|p{i}=" + w for i, (w, _) in enumerate(t[1])) + "}}"
            )
        ),
        # kept templates: their visible words survive, nested or not
        kept_arg.map(lambda n: ("{{nowrap|" + n[0] + "}}", n[1])),
        kept_arg.map(lambda n: ("{{lang|fr|" + n[0] + "}}", n[1])),
        # references, paired and self-closing
        # (tags do not nest in MediaWiki: a paired ref holds no paired ref)
        inline.filter(lambda n: "</ref>" not in n[0]).map(lambda n: hidden(f"<ref>{n[0]}</ref>")),
        WORDS.map(lambda w: hidden(f'<ref name="{w}" />')),
        # tables on their own lines, nested content in cells
        *([table] if tables else []),
        # links: labelled, plain, namespaced, files with nested links in the caption
        st.tuples(WORDS, label).map(lambda t: (f"[[{t[0]}|{t[1][0]}]]", t[1][1])),
        WORDS.map(lambda w: (f"[[{w}]]", [w])),
        WORDS.map(lambda w: (f"[[Help:{w}]]", [f"Help:{w}"])),
        st.tuples(WORDS, inline).map(lambda t: hidden(f"[[File:{t[0]}.jpg|thumb|{t[1][0]}]]")),
        WORDS.map(lambda w: hidden(f"[[Category:{w}]]")),
        # bold, italic, external links, comments, entities
        inline.map(lambda n: ("'''" + n[0] + "'''", n[1])),
        inline.map(lambda n: ("''" + n[0] + "''", n[1])),
        label.map(lambda n: (f"[https://example.org/{n[1][0]} {n[0]}]", n[1])),
        label.map(lambda n: hidden("<!-- " + n[0] + " -->")),
        WORDS.map(lambda w: (f"{w}&nbsp;&amp;", [w, "&"])),
    )


INLINE = st.deferred(
    lambda: st.recursive(text_node(), lambda ch: extend(ch, tables=False), max_leaves=6)
)
CONSTRUCTS = st.recursive(text_node(), extend, max_leaves=25)
DOCUMENTS = st.lists(CONSTRUCTS, min_size=1, max_size=4).map(join)


@settings(
    max_examples=500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(DOCUMENTS)
def test_nested_constructs_keep_exactly_the_visible_words(doc: tuple[str, list[str]]) -> None:
    CASES["nested grammar"] += 1
    wikitext, visible = doc
    with time_limit(5):
        sections = clean_article(wikitext)
    check_shape(sections)
    words = " ".join(text for _, text in sections).split()
    assert words == visible
    for marker in ("{{", "}}", "[[", "]]", "<ref", "{|", "|}", "'''", "<!--"):
        assert all(marker not in text for _, text in sections), marker


# ---- 2. unbalanced delimiter soup ------------------------------------------------------------

FRAGMENTS = [
    "{{",
    "}}",
    "{{{",
    "}}}",
    "[[",
    "]]",
    "[",
    "]",
    "{|",
    "|}",
    "\n{|",
    "\n|}",
    "\n|-",
    "|",
    "!",
    "\n",
    "\n\n",
    "<ref>",
    "</ref>",
    "<ref name=a/>",
    '<ref name="b">',
    "<references/>",
    "<!--",
    "-->",
    "'''",
    "''",
    "<nowiki>",
    "</nowiki>",
    "<nowiki/>",
    "<math>",
    "</math>",
    "<gallery>",
    "</gallery>",
    "<br>",
    "<span>",
    "</div>",
    "&amp;",
    "&",
    "&#",
    "&#x26;",
    ";",
    "=",
    "==",
    "== h ==\n",
    "*",
    "#",
    ":",
    "[http://x.org ",
    "http://",
    "https://e.org/a ",
    "File:",
    "Category:",
    "Файл:",
    "de:",
    "{{lang|fr|",
    "{{convert|5|km",
    "{{nowrap|",
    "{{circa}}",
    "__NOTOC__",
    "#REDIRECT [[",
    "{{disambiguation}}",
    "a",
    "word ",
    " ",
    "\t",
    "Ж",
    "東京",
    "é",
    "\u00a0",
    "\u200b",
    "\x00",
]
SOUP = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=120).map(
    "".join
)


@settings(
    max_examples=500, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow]
)
@given(SOUP)
def test_delimiter_soup_never_raises_or_loops(wikitext: str) -> None:
    CASES["delimiter soup"] += 1
    with time_limit(5):
        sections = clean_article(wikitext)
        is_disambiguation(wikitext, "Title")
        redirect_target(wikitext)
    check_shape(sections)


@settings(max_examples=300, **FUZZ)
@given(st.text(max_size=500))
def test_arbitrary_unicode_never_raises(wikitext: str) -> None:
    CASES["arbitrary text"] += 1
    with time_limit(5):
        check_shape(clean_article(wikitext))
        assert isinstance(is_disambiguation(wikitext, wikitext[:50]), bool)


# ---- 3. pathological input stays linear ------------------------------------------------------

PATHOLOGICAL = {
    "unclosed {{": "{{a",  # "{{" * n alone would be one brace run, i.e. one opener
    "one long brace run": "{{",
    "unclosed {{ per line": "{{a\n",
    "unclosed [[": "[[",
    "stray ]]": "]]",
    "stray }}": "}}",
    "unclosed {|": "{|",
    "unclosed {| per line": "{|\n",
    "text then {|": "x{|",
    "unclosed <ref>": "<ref>",
    "unclosed <!--": "<!--",
    "unclosed <nowiki>": "<nowiki>",
    "unclosed [http": "[http://",
    "braces of three": "{{{",
    "mixed unclosed": "{{[[{|<ref>",
    "unclosed kept templates": "{{lang|fr|[[a|",
    "nested templates": None,  # "{{a|" * n + "}}" * n, built below
    "nested links": None,
    "nested tables": None,
    "nested kept templates": None,
}


def pathological(name: str, n: int) -> str:
    unit = PATHOLOGICAL[name]
    if unit is not None:
        return unit * n
    if name == "nested templates":
        return "{{a|" * n + "}}" * n
    if name == "nested links":
        return "[[File:a|" * n + "]]" * n
    if name == "nested tables":
        return "{|\n" * n + "|}\n" * n
    return "{{nowrap|" * n + "x" + "}}" * n


def best_time(wikitext: str) -> float:
    """Best of 3 CPU times; the garbage collector is paused so its runs add no noise."""
    best = float("inf")
    for _ in range(3):
        gc.disable()
        try:
            start = time.process_time()
            with time_limit(20):
                clean_article(wikitext)
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best


@pytest.mark.parametrize("name", PATHOLOGICAL)
def test_pathological_input_is_linear(name: str) -> None:
    """Time at 4n against n: linear is ~4x, quadratic ~16x; the bound leaves room for noise."""
    CASES["pathological"] += 1
    n = 10_000  # "10,000 unclosed {{" of the issue, and 40,000
    small = best_time(pathological(name, n))
    large = best_time(pathological(name, 4 * n))
    assert large < 10 * small + 0.005, f"{name}: {small:.4f}s at n, {large:.4f}s at 4n"
