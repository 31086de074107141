"""Our hand-written dev sets (vital-en's, and two over the enwiki sample) pass
`benchmarks/check_dev_set.py` against the corpus they were written over: every answer is in
its evidence, every evidence in its article, and every id of the set's own form. A set that
drifts from the corpus, or a checker that stops accepting a set's ids, would silently turn
the README's figures into wrong ones."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT, shared_file

SCRIPT = ROOT / "benchmarks" / "check_dev_set.py"
SETS = [  # over vital-en, but the dev_sample ones, over the enwiki sample
    "dev_vital.jsonl",
    "dev_vital_b.jsonl",
    "dev_vital_c.jsonl",
    "dev_vital_who.jsonl",
    "dev_vital_measures.jsonl",
    "dev_vital_d.jsonl",
    "dev_vital_e.jsonl",
    "dev_vital_f.jsonl",
    "dev_sample.jsonl",
    "dev_sample_b.jsonl",
    "dev_sample_c.jsonl",
]


@pytest.mark.parametrize("name", SETS)
def test_a_dev_set_checks_clean_against_vital_en(name: str):
    corpus = shared_file(
        "enwiki-sample.xml.bz2" if name.startswith("dev_sample") else "vital-en.xml.bz2"
    )
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--set", str(ROOT / "benchmarks" / name),
         "--corpus", str(corpus)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]


def test_evidence_typed_with_a_space_matches_the_corpus_no_break_space():
    """The corpus writes a quantity with a no-break space ("8,848.86\u00a0m"); evidence
    typed with a plain space is still found, and found past the first sentence."""
    from tests.test_bench_inputs import _module

    check = _module("check_dev_set")
    docs = {"Mount Everest": "Mount Everest is a mountain. Its height is 8,848.86\u00a0m."}
    problems, late = check._answer_problems(
        "factoid", ["8,848.86 m"], "height is 8,848.86 m", ["Mount Everest"], docs
    )
    assert (problems, late) == ([], True)
