"""Property-based tests of everything a user types or feeds in.

- The question path: any Unicode string (controls, surrogates, bidi marks, query syntax,
  10,000-letter words) through `Engine` with the extractive generator on the demo index
  gives an Answer or a one-line UserError, never another exception.
- The JSONL loaders (QA sets for `eval`, passages for `score --passages`): any bytes give
  items or one UserError line.
- Bundle member names: whatever a hostile archive calls a member, unbundle either refuses
  it or gets a path that stays inside the staging directory.

The number of cases each property ran is printed at the end of the module.
"""

from __future__ import annotations

import collections
import json
import tarfile
from pathlib import Path, PurePosixPath

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scim_edge.errors import UserError
from scim_edge.textutil import visible_text
from scim_edge.types import INSUFFICIENT_EVIDENCE, Answer

COUNTS: collections.Counter[str] = collections.Counter()
FUZZ = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,  # nothing written into the checkout
)


@pytest.fixture(scope="module", autouse=True)
def report_counts(request):
    yield
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    total = sum(COUNTS.values())
    lines = [f"fuzz cases run: {total}"] + [f"  {k}: {v}" for k, v in sorted(COUNTS.items())]
    capman = request.config.pluginmanager.getplugin("capturemanager")
    if reporter is not None and capman is not None:
        with capman.global_and_fixture_disabled():
            reporter.write_line("")
            for line in lines:
                reporter.write_line(line)


@pytest.fixture(scope="module")
def engine(demo_index):
    from scim_edge.engine import Engine
    from scim_edge.settings import load_settings

    s = load_settings({"index": str(demo_index), "model": "extractive"}, use_config=False,
                      environ={})  # fmt: skip
    return Engine.open(s)


def assert_one_line(err: UserError) -> None:
    line = err.one_line()
    assert line and "\n" not in line and len(line) < 2000, line


# ---- questions -------------------------------------------------------------------------

ANY_CHAR = st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=())
NASTY = st.sampled_from([
    "{{", "}}", "[[", "]]", '"', "'", "AND", "OR", "NOT", "(", ")", ":", "^", "*", "~", "\\",
    "title:", "\x00", "\x1b[31m", "\u202e", "\u200b", "\ufeff", "\ud800", "🙂", "中文",
    "Гутенберг", "printing", "press", "Apollo", "?", "\n", "\t", "-", "+", "&&", "||", "/",
])  # fmt: skip
QUESTIONS = st.one_of(
    st.text(ANY_CHAR, max_size=300),
    st.lists(st.one_of(NASTY, st.text(ANY_CHAR, max_size=12)), max_size=40).map(" ".join),
    st.builds(
        lambda w, n: f"Who invented {w * n}?", st.sampled_from("ab中🙂"), st.integers(1, 3000)
    ),  # fmt: skip
)


def _check_answer(engine, question: str) -> None:
    try:
        answer = engine.answer(question)
    except UserError as e:
        assert_one_line(e)
        COUNTS["questions: clear UserError"] += 1
        return
    assert isinstance(answer, Answer)
    assert isinstance(answer.answer, str)
    assert answer.status in ("accepted", "force_accepted", "insufficient_evidence")
    if answer.status == "insufficient_evidence":
        assert answer.answer == INSUFFICIENT_EVIDENCE
    json.dumps(answer.to_dict())  # serialisable for --json, whatever came in
    COUNTS["questions: answered"] += 1


@settings(FUZZ, max_examples=300)
@given(question=QUESTIONS)
def test_any_question_gives_an_answer_or_a_clear_error(engine, question):
    _check_answer(engine, question)


@settings(FUZZ, max_examples=25)
@given(word=st.text(st.characters(categories=("L", "N")), min_size=500, max_size=1999))
def test_very_long_words(engine, word):
    _check_answer(engine, f"What is {word}?")


def test_known_edge_questions(engine):
    for q in ["", " \t\n", "\x00\x01\x02", "?" * 5, "a" * 2001, "\ud800\udfff", "the the the",
              "AND OR NOT", "   Apollo   11   ", "é" * 1999]:  # fmt: skip
        _check_answer(engine, q)


# ---- the JSONL loaders -----------------------------------------------------------------

JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                         st.text(ANY_CHAR, max_size=30))  # fmt: skip
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=12,
)  # fmt: skip
QA_OBJECTS = st.fixed_dictionaries(
    {},
    optional={
        "question": st.one_of(st.text(ANY_CHAR, max_size=80), JSON_VALUES),
        "answers": st.one_of(st.lists(st.text(ANY_CHAR, max_size=20), max_size=3), JSON_VALUES),
        "id": st.one_of(st.text(max_size=6), st.integers(), JSON_VALUES),
        "type": JSON_VALUES,
        "titles": st.one_of(st.lists(st.text(max_size=10), max_size=2), JSON_VALUES),
    },
)


def _wordy(chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Text with a letter or digit a reader sees: "\x1bA" is a terminal escape sequence,
    no question."""
    return st.text(chars, min_size=1, max_size=60).filter(
        lambda t: any(c.isalnum() for c in visible_text(t))
    )


def _valid_qa(chars: st.SearchStrategy[str]) -> st.SearchStrategy[list[dict]]:
    wordy = _wordy(chars)
    return st.lists(
        st.fixed_dictionaries(
            {"question": wordy, "answers": st.lists(wordy, max_size=3)},
            optional={"type": st.sampled_from(["factoid", "multi-hop"]),
                      "titles": st.lists(wordy, max_size=2)},
        ),
        min_size=1, max_size=6,
    ).map(lambda objs: [dict(o, id=f"q{i}") for i, o in enumerate(objs)])  # fmt: skip


WORDY = _wordy(ANY_CHAR)
VALID_QA = _valid_qa(ANY_CHAR)
VALID_QA_UTF8 = _valid_qa(st.characters(exclude_categories=("Cs",)))  # encodable as UTF-8
VALID_PASSAGES = st.lists(
    st.one_of(st.fixed_dictionaries({"text": st.text(ANY_CHAR, max_size=80)},
                                    optional={"title": WORDY, "doc_id": WORDY}),
              st.text(ANY_CHAR, max_size=80)),
    min_size=1, max_size=6,
)  # fmt: skip


def _encode(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")  # lone surrogates become invalid UTF-8


def _lines(objs: list, garbage: list[str]) -> str:
    rows = [json.dumps(o, ensure_ascii=False) for o in objs] + garbage
    return "\n".join(rows)


@settings(FUZZ, max_examples=300)
@given(
    objs=st.one_of(VALID_QA, st.lists(QA_OBJECTS, max_size=6)),
    garbage=st.one_of(st.just([]), st.lists(st.text(ANY_CHAR, max_size=40), max_size=2)),
)
def test_qa_loader_on_any_lines(objs, garbage):
    from scim_edge.evaluation.qa_io import parse_qa_text

    try:
        items = parse_qa_text(_lines(objs, garbage), source="fuzz.jsonl")
    except UserError as e:
        assert_one_line(e)
        COUNTS["qa loader: clear UserError"] += 1
        return
    assert items and all(it.question.strip() and isinstance(it.answers, tuple) for it in items)
    assert len({it.id for it in items}) == len(items)
    COUNTS["qa loader: parsed"] += 1


@settings(FUZZ, max_examples=150)
@given(
    data=st.one_of(
        st.binary(max_size=400),
        st.one_of(VALID_QA_UTF8, st.lists(QA_OBJECTS, max_size=4)).map(
            lambda o: _encode(_lines(o, []))
        ),
    )
)
def test_qa_loader_on_any_bytes(tmp_path_factory, data):
    from scim_edge.evaluation.qa_io import load_qa

    path = tmp_path_factory.mktemp("qa") / "qa.jsonl"
    path.write_bytes(data)
    try:
        load_qa(path)
        COUNTS["qa file: parsed"] += 1
    except UserError as e:
        assert_one_line(e)
        COUNTS["qa file: clear UserError"] += 1


PASSAGE_OBJECTS = st.one_of(
    st.fixed_dictionaries({}, optional={"text": JSON_VALUES | st.text(ANY_CHAR, max_size=60),
                                        "title": JSON_VALUES, "doc_id": JSON_VALUES,
                                        "section": JSON_VALUES}),
    JSON_VALUES,
)  # fmt: skip


@settings(FUZZ, max_examples=300)
@given(data=st.one_of(
    st.binary(max_size=400),
    VALID_PASSAGES.map(lambda objs: _encode(_lines(objs, []))),
    st.tuples(st.lists(PASSAGE_OBJECTS, max_size=5),
              st.lists(st.text(ANY_CHAR, max_size=30), max_size=2))
      .map(lambda t: _encode(_lines(*t))),
))  # fmt: skip
def test_score_passages_loader_on_any_bytes(tmp_path_factory, data):
    from scim_edge.commands.score import read_passages

    path = tmp_path_factory.mktemp("passages") / "p.jsonl"
    path.write_bytes(data)
    try:
        passages = read_passages(path)
    except UserError as e:
        assert_one_line(e)
        COUNTS["passages loader: clear UserError"] += 1
        return
    assert passages and all(isinstance(p.text, str) for p in passages)
    COUNTS["passages loader: parsed"] += 1


# ---- bundle member names ---------------------------------------------------------------

NAME_PARTS = st.one_of(
    st.sampled_from(["indexes", "models", "nltk_data", "wheelhouse", "..", ".", "", "/",
                     "BUNDLE.json", "x", ".hidden", "~", "\\..\\", "C:", "\x00"]),
    st.text(ANY_CHAR.filter(lambda c: c != "\x00"), max_size=8),
)  # fmt: skip


@settings(FUZZ, max_examples=500)
@given(parts=st.lists(NAME_PARTS, min_size=1, max_size=6),
       lead=st.sampled_from(["", "/", "./", "../"]))  # fmt: skip
def test_bundle_member_names_never_escape(parts, lead):
    from scim_edge.bundle import check_member

    name = lead + "/".join(parts)
    info = tarfile.TarInfo(name)
    info.size = 1
    try:
        rel = check_member(Path("fuzz.tar"), info)
    except UserError as e:
        assert_one_line(e)
        COUNTS["member names: refused"] += 1
        return
    except UnicodeError:
        pytest.fail(f"{name!r} raised UnicodeError")
    COUNTS["member names: accepted"] += 1
    if rel is None:
        return
    assert not rel.is_absolute() and ".." not in rel.parts
    staging = Path("/staging")
    resolved = PurePosixPath(staging / rel)
    assert resolved.is_relative_to(staging)
    assert rel.parts[0] in ("indexes", "models", "nltk_data", "wheelhouse", "BUNDLE.json",
                            "SHA256SUMS")  # fmt: skip


# ---- valid input must load, content intact ---------------------------------------------


@settings(FUZZ, max_examples=150)
@given(objs=VALID_QA_UTF8)
def test_qa_loader_accepts_every_valid_file(tmp_path_factory, objs):
    """JSON Lines are split on \\n only: U+2028, U+0085 and friends inside a string are
    valid JSON and must not break a line."""
    from scim_edge.evaluation.qa_io import load_qa

    path = tmp_path_factory.mktemp("qa-valid") / "qa.jsonl"
    path.write_bytes(_encode(_lines(objs, [])))
    items = load_qa(path)
    assert [it.id for it in items] == [o["id"] for o in objs]
    assert [list(it.answers) for it in items] == [o["answers"] for o in objs]
    COUNTS["qa file (valid): parsed"] += 1


VALID_PASSAGES_UTF8 = st.lists(
    st.fixed_dictionaries({"text": st.text(st.characters(exclude_categories=("Cs",)),
                                           max_size=80)}),
    min_size=1, max_size=6,
)  # fmt: skip


@settings(FUZZ, max_examples=150)
@given(objs=VALID_PASSAGES_UTF8)
def test_score_passages_loader_accepts_every_valid_file(tmp_path_factory, objs):
    from scim_edge.commands.score import read_passages

    path = tmp_path_factory.mktemp("passages-valid") / "p.jsonl"
    path.write_bytes(_encode(_lines(objs, [])))
    assert [p.text for p in read_passages(path)] == [o["text"] for o in objs]
    COUNTS["passages loader (valid): parsed"] += 1


# ---- documents nested too deeply for Python's parsers ------------------------------------

DEEP_JSON = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("what", ["qa file", "passages", "model manifest", "config"])
def test_a_document_nested_too_deeply_is_one_line(tmp_path, what):
    """json and tomllib raise RecursionError (caught by no `except ValueError`) on arrays
    nested thousands deep; every reader of a user's file says it is damaged instead."""
    from scim_edge.commands.score import read_passages
    from scim_edge.errors import ConfigError, ModelError
    from scim_edge.evaluation.qa_io import load_qa
    from scim_edge.settings import load_settings

    path = tmp_path / "f"
    path.write_text(DEEP_JSON)
    if what == "qa file":
        call, errors = (lambda: load_qa(path)), UserError
    elif what == "passages":
        call, errors = (lambda: read_passages(path)), UserError
    elif what == "model manifest":
        from models.store import read_manifest

        path.rename(tmp_path / "manifest.json")
        call, errors = (lambda: read_manifest(tmp_path)), ModelError
    else:
        path.write_text("[settings]\ntheta = " + "[" * 5000 + "]" * 5000 + "\n")
        call, errors = (lambda: load_settings(config_file=path, environ={})), ConfigError
    with pytest.raises(errors, match="nest(ed|s) too deeply"):  # the file's name is "f"
        call()


def test_a_number_too_long_to_read_is_named_so(tmp_path):
    """Python refuses to read an integer of over 4,300 digits, with a hint about its own
    interpreter limit; the QA file's line says what is wrong in the file."""
    from scim_edge.evaluation.qa_io import load_qa

    path = tmp_path / "qa.jsonl"
    path.write_text('{"id": ' + "9" * 5000 + ', "question": "q?", "answers": ["a"]}\n')
    with pytest.raises(UserError) as e:
        load_qa(path)
    assert "a number too long to read" in str(e.value)
