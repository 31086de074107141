"""Bad input to the scripts under `benchmarks/`: one line on stderr saying what is wrong, a
non-zero exit (2 for a usage error, a `UserError`'s own code) and no traceback, before any
long work starts (a benchmark that fails after an hour's run, or prints forty lines of
Python, wastes the hour or hides the reason).

Each case runs the script as a user does (`python benchmarks/NAME.py ...`), in a folder of
its own, with an empty SCIM_EDGE_HOME (conftest), so that no index is found by name.
"""

from __future__ import annotations

import bz2
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

from scim_edge.demo import demo_dump_path
from scim_edge.errors import UserError
from tests.conftest import ROOT

BENCHMARKS = ROOT / "benchmarks"


@dataclass(frozen=True)
class Case:
    """`script` run with `base` and then `bad` exits with `code` and says `reason` on
    stderr. In the arguments and `env`, {file} is a file that is not JSON Lines, {empty} an
    empty file, {given} a file holding `given`, {missing} a path where nothing is and {tmp}
    the test's own folder; a flag given twice takes the last value."""

    script: str
    bad: tuple[str, ...]
    reason: str
    code: int = 2
    base: tuple[str, ...] = ()  # given before `bad`
    given: str | bytes = ""  # what {given} holds
    needs: str = ""  # a module the script cannot start without (an optional extra)
    env: tuple[tuple[str, str], ...] = ()  # environment variables set for the run

    @property
    def args(self) -> tuple[str, ...]:
        return (*self.base, *self.bad)

    @property
    def id(self) -> str:
        return f"{self.script} {' '.join(self.bad)}: {self.reason}"


# A case names a small size, a work folder and an output file of its own besides the bad
# input, so that a script that stopped refusing the input fails fast here and writes nothing
# into the repository.
AB = ("--mb", "1", "--rounds", "1", "--workdir", "{tmp}/work", "--out", "{tmp}/out.json")
BI = ("--mb", "1", "--repeat", "1", "--skip-wikiextractor", "--workdir", "{tmp}/work",
      "--out", "{tmp}/out.json")  # fmt: skip
RS = ("--mb", "1", "--checkpoint-every", "1", "--workdir", "{tmp}/work", "--out",
      "{tmp}/out.json")  # fmt: skip
SC = ("--mb", "1", "--queries", "5", "--no-one-worker", "--workdir", "{tmp}/work", "--out",
      "{tmp}/out.json")  # fmt: skip
# An index that is not there: a script that reads its questions after the index, or not at
# all, fails on it with another reason.
MH = ("--index", "{missing}", "--out", "{tmp}/out.json")
NO_BRIDGE = ('{"id": "m1", "question": "On which river stands the city?", "answers": ["Main"], '
             '"type": "multihop", "titles": []}\n')  # fmt: skip
NO_ARTICLE = bz2.compress(b"<mediawiki><page><title>Wikipedia:About</title><ns>4</ns>"
                          b"<revision><text>x</text></revision></page></mediawiki>")  # fmt: skip
CUT_SHORT = bz2.compress(b"<mediawiki><page><title>A</title>")
# No index of that name (the home is empty): a number refused before the index is looked up.
NO_INDEX = ("--index", "nosuch")
TMP_OUT = ("--out", "{tmp}/out.json")
ZIM = {"needs": "libzim", "base": TMP_OUT}
ZIM_FILE = {"needs": "libzim", "base": ("--zim", "{file}", *TMP_OUT)}
# A corpus of one page, and no article: check_dev_set reads it, then the set.
CORPUS = {"base": ("--corpus", "{given}"), "given": NO_ARTICLE}
NO_SHARED_DATA = (("SCIM_EDGE_SHARED_DATA", "{tmp}/nowhere"),)  # no sample dump to build from
# The demo dump builds in a second; `practice` then refuses too few questions at once.
DEMO = ("--dump", str(demo_dump_path()), *TMP_OUT)
# A work folder that is a file: a script that stopped refusing the number fails at once
# instead of making and exporting a model.
GEN = ("--work", "{file}")
CUDA_RUN = ("run", "--work", "{tmp}")  # a folder with nothing prepared in it

CASES = [
    Case("bench_build_ab", ("--mb", "0"), "must be a positive number", base=AB),
    Case("bench_build_ab", ("--mb", "nan"), "must be a positive number", base=AB),
    Case("bench_build_ab", ("--rounds", "0"), "must be a positive integer", base=AB),
    Case("bench_build_ab", ("--workers", "x"), "must be a positive integer", base=AB),
    Case("bench_build_ab", ("--checkpoint-every", "-1"), "must be a positive number", base=AB),
    Case("bench_build_ab", ("--workdir", ""), "must not be empty", base=AB),
    Case("bench_build_ab", ("--workdir", "{file}"), "is not a folder", base=AB),
    Case("bench_build_ab", ("--baseline-root", "{missing}"), "not a checkout", base=AB),
    Case("bench_build_ab", ("--out", ""), "must not be empty", base=AB),
    Case("bench_build_index", ("--mb", "-5"), "must be a positive number", base=BI),
    Case("bench_build_index", ("--mb", "inf"), "must be a positive number", base=BI),
    Case("bench_build_index", ("--repeat", "0"), "must be a positive integer", base=BI),
    Case("bench_build_index", ("--workdir", "{file}"), "is not a folder", base=BI),
    Case("bench_build_index", ("--out", ""), "must not be empty", base=BI),
    Case("bench_resume", ("--mb", "0"), "must be a positive number", base=RS),
    Case("bench_resume", ("--kill-at", "-1"), "must be a positive number", base=RS),
    Case("bench_resume", ("--checkpoint-every", "nan"), "must be a positive number", base=RS),
    Case("bench_resume", ("--workers", "0"), "must be a positive integer", base=RS),
    Case("bench_resume", ("--workdir", "{file}"), "is not a folder", base=RS),
    Case("bench_resume", ("--out", ""), "must not be empty", base=RS),
    Case("bench_scale", ("--mb", "1", "0"), "must be a positive number", base=SC),
    Case("bench_scale", ("--queries", "0"), "must be a positive integer", base=SC),
    Case("bench_scale", ("--workers", "-2"), "must be a positive integer", base=SC),
    Case("bench_scale", ("--workdir", "{file}"), "is not a folder", base=SC),
    Case("bench_proximity", ("--mb", "0"), "must be a positive number"),
    Case("bench_proximity", ("--mb", "nan"), "must be a positive number"),
    Case("bench_proximity", ("--index", "nosuch"), "no index named"),
    Case("bench_proximity", ("--index", "{tmp}"), "incomplete or corrupt"),
    Case("multihop", ("--index", "vital"), "no index named", base=MH),
    Case("multihop", ("--index", "{tmp}/nosuch"), "no index at", base=MH),
    Case("multihop", ("--index", "{tmp}"), "incomplete or corrupt", base=MH),
    Case("multihop", ("--index", ""), "must not be empty", base=MH),
    Case("multihop", ("--questions", "{tmp}/nosuch.jsonl"), "QA file not found", base=MH),
    Case("multihop", ("--questions", "{file}"), "not valid JSON", base=MH),
    Case("multihop", ("--questions", "{empty}"), "no questions found", base=MH),
    Case("multihop", ("--questions", "{given}"), "needs its titles", base=MH, given=NO_BRIDGE),
    Case("multihop", ("--out", ""), "must not be empty", base=MH),
    Case("bench_cleaner", ("--runs", "0"), "must be a positive integer", base=("--dump", "{file}")),
    Case("bench_cleaner", ("--dump", ""), "must not be empty"),
    Case("bench_cleaner", ("--dump", "{tmp}/nosuch.xml.bz2"), "dump not found"),
    Case("bench_cleaner", ("--dump", "{tmp}"), "is not a file"),
    Case("bench_cleaner", ("--dump", "{file}"), "cannot read dump"),
    Case("bench_cleaner", ("--dump", "{given}"), "cannot read dump", given=CUT_SHORT),
    Case("bench_cleaner", ("--dump", "{given}"), "holds no articles", given=NO_ARTICLE),
    Case("bench_quality", ("--index", "nosuch"), "no index named"),
    Case("bench_quality", ("--index", "{tmp}"), "incomplete or corrupt"),
    Case("bench_quality", ("--index", ""), "must not be empty"),
    Case("bench_quality", ("--n", "0"), "must be a positive integer", base=NO_INDEX),
    Case("bench_startup", ("--index", "nosuch"), "no index named"),
    Case("bench_startup", ("--index", "{tmp}"), "incomplete or corrupt"),
    Case("bench_startup", ("--n", "0"), "must be a positive integer", base=NO_INDEX),
    Case("bench_startup", ("--n", "1"), "no such file", env=NO_SHARED_DATA),
    Case("bench_vectors", ("--index", "nosuch"), "no index named", base=TMP_OUT),
    Case("bench_vectors", ("--index", "{tmp}"), "incomplete or corrupt", base=TMP_OUT),
    Case("bench_vectors", ("--passages", "0"), "must be a positive integer", base=NO_INDEX),
    Case("bench_vectors", ("--repeats", "0"), "must be a positive integer", base=NO_INDEX),
    Case("bench_practice", ("--dump", "{tmp}/nosuch.xml.bz2"), "no such file", base=TMP_OUT),
    Case("bench_practice", ("--dump", "{file}"), "not an XML dump", base=TMP_OUT),
    Case("bench_practice", ("--dump", ""), "must not be empty", base=TMP_OUT),
    Case("bench_practice", ("--questions", "0"), "must be a positive integer", base=DEMO),
    Case("bench_practice", ("--questions", "10"), "must be at least 50", base=DEMO),
    Case("bench_generate", ("--runs", "0"), "must be a positive integer", base=GEN),
    Case("bench_generate", ("--threads", "0"), "must be a positive integer", base=GEN),
    Case("bench_generate", ("--only", "all"), "invalid choice", base=GEN),
    Case("bench_generate", ("stray",), "unrecognized arguments", base=GEN),
    Case("bench_generate", ("--work", "{file}"), "is not a folder"),
    Case("bench_cuda", ("run", "--work", "{tmp}"), "holds no prepared models"),
    Case("bench_cuda", ("run", "--work", "{file}"), "is not a folder"),
    Case("bench_cuda", ("prepare", "--work", "{file}/sub"), "cannot make the --work folder"),
    Case("bench_cuda", ("run", "--work", ""), "must not be empty"),
    Case("bench_cuda", ("--runs", "0"), "must be a positive integer", base=CUDA_RUN),
    Case("bench_cuda", ("--warmup", "-1"), "must be 0 or more", base=CUDA_RUN),
    Case("check_dev_set", ("--corpus", ""), "must not be empty"),
    Case("check_dev_set", ("--sets", "{file}"), "unrecognized arguments"),
    Case("check_dev_set", ("--corpus", "{tmp}/nosuch.xml.bz2"), "corpus not found"),
    Case("check_dev_set", ("--set", "{tmp}"), "cannot read question set", **CORPUS),
    Case("bench_sentence_similarity", ("--index", "nosuch"), "no index named"),
    Case("span_head", ("--index", "nosuch", "--qa", "{given}"), "no index named"),
    Case("span_head", ("--index", "x", "--qa", ""), "must not be empty"),
    Case(
        "span_head",
        ("--index", "x", "--qa", "{given}", "--epochs", "0"),
        "must be a positive integer",
    ),  # fmt: skip
    Case("bench_sentence_similarity", ("--qa", ""), "must not be empty", base=NO_INDEX),
    Case("bench_sentence_similarity", ("--out", ""), "must not be empty", base=NO_INDEX),
    Case("bench_zim_html", ("--zim", "{tmp}/nosuch.zim"), "no such file", **ZIM),
    Case("bench_zim_html", ("--zim", "{tmp}"), "is a directory", **ZIM),
    Case("bench_zim_html", ("--zim", "{file}"), "not a ZIM file", **ZIM),
    Case("bench_zim_html", ("--zim", "{empty}"), "is empty", **ZIM),
    Case("bench_zim_html", ("--zim", ""), "must not be empty", **ZIM),
    Case("bench_zim_html", ("--rounds", "0"), "must be a positive integer", **ZIM_FILE),
]


def _args(case: Case, tmp: Path) -> list[str]:
    """The case's arguments with its files made in `tmp` and named."""
    (tmp / "not-jsonl.txt").write_text("this is not JSON\n", encoding="utf-8")
    (tmp / "empty.jsonl").write_text("", encoding="utf-8")
    given = case.given if isinstance(case.given, bytes) else case.given.encode("utf-8")
    (tmp / "given.jsonl").write_bytes(given)
    return [_place(arg, tmp) for arg in case.args]


def _place(text: str, tmp: Path) -> str:
    places = {"{file}": tmp / "not-jsonl.txt", "{empty}": tmp / "empty.jsonl",
              "{given}": tmp / "given.jsonl", "{missing}": tmp / "missing",
              "{tmp}": tmp}  # fmt: skip
    for key, path in places.items():
        text = text.replace(key, str(path))
    return text


def _run(
    script: str, args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCHMARKS / f"{script}.py"), *args],
                          capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, **(env or {})})  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_is_one_line_and_a_non_zero_exit(case: Case, tmp_path: Path):
    if case.needs:
        pytest.importorskip(case.needs)
    env = {name: _place(value, tmp_path) for name, value in case.env}
    scratch = tmp_path / "scratch"  # the script's temporary folder (TMPDIR)
    scratch.mkdir()
    r = _run(case.script, _args(case, tmp_path), tmp_path, {"TMPDIR": str(scratch), **env})
    assert r.returncode == case.code, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr[-2000:]
    assert case.reason in r.stderr
    # what a benchmark made in the temporary folder goes with it, even when it fails
    assert sorted(p.name for p in scratch.iterdir()) == []


def test_bench_quality_says_when_an_index_has_too_few_passages(demo_index: Path, tmp_path: Path):
    """The demo index has no passage on Lincoln: the 7 passages to time are not there."""
    r = _run("bench_quality", ["--index", str(demo_index), "--n", "5"], tmp_path)
    assert r.returncode == 2, r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr[-2000:]
    assert "passages for the question" in r.stderr


def test_bench_quality_finds_an_index_by_name_in_the_user_s_own_home(
    demo_index: Path, tmp_path: Path
):
    """With no SCIM_EDGE_HOME set, a name is looked up in the platform's data folder, not
    in the temporary home the script builds its default index in."""
    import shutil

    shutil.copytree(demo_index, tmp_path / "data" / "scim-edge" / "indexes" / "mine")
    env = {k: v for k, v in os.environ.items() if k != "SCIM_EDGE_HOME"}
    env["XDG_DATA_HOME"] = str(tmp_path / "data")
    r = subprocess.run([sys.executable, str(BENCHMARKS / "bench_quality.py"), "--index",
                        "mine", "--n", "5"], capture_output=True, text=True, timeout=60,
                       cwd=tmp_path, env=env)  # fmt: skip
    # found: the demo index has too few passages on Lincoln to time, and says so
    assert "passages for the question" in r.stderr, r.stderr[-2000:]


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(BENCHMARKS))  # the scripts import bench_output by its plain name
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(BENCHMARKS))
    return module


def test_bench_generate_only_needs_an_earlier_result(tmp_path: Path, monkeypatch):
    """`--only rss` merges into the results file: without one, it would fail after the
    model's export and an hour's timing, on a missing key."""
    bench_generate = _module("bench_generate")
    monkeypatch.setattr(bench_generate, "OUT", tmp_path / "generate.json")
    with pytest.raises(UserError, match="No such file"):
        bench_generate.earlier_raw("rss")


def test_bench_generate_only_needs_the_part_it_does_not_rerun(tmp_path: Path, monkeypatch):
    bench_generate = _module("bench_generate")
    monkeypatch.setattr(bench_generate, "OUT", tmp_path / "generate.json")
    (tmp_path / "generate.json").write_text('{"raw": {"rss": {}}}', encoding="utf-8")
    with pytest.raises(UserError, match="no timing figures"):
        bench_generate.earlier_raw("rss")
