"""`benchmarks/practice_qa.py` writes an index's own practice questions as a QA file that
`eval` reads: the dev-free check the README's figures for whole-article indexes rest on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from scim_edge.evaluation.metrics import normalize_answer

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "practice_qa.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=120)  # fmt: skip


def _questions(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def test_writes_questions_eval_can_read(demo_index, tmp_path):
    out = tmp_path / "q.jsonl"
    assert _run("--index", str(demo_index), "--out", str(out), "-n", "20").returncode == 0
    qs = _questions(out)
    assert qs and all(q["answerable"] and q["answers"] and q["titles"] for q in qs)


def test_no_question_holds_its_answer(demo_index, tmp_path):
    out = tmp_path / "q.jsonl"
    _run("--index", str(demo_index), "--out", str(out), "-n", "20")
    assert not any(
        f" {normalize_answer(q['answers'][0])} " in f" {normalize_answer(q['question'])} "
        for q in _questions(out)
    )


def test_the_same_seed_gives_the_same_file(demo_index, tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    _run("--index", str(demo_index), "--out", str(a), "-n", "20", "--seed", "3")
    _run("--index", str(demo_index), "--out", str(b), "-n", "20", "--seed", "3")
    assert a.read_bytes() == b.read_bytes()


def test_a_missing_index_is_one_line_and_exit_2(tmp_path):
    r = _run("--index", str(tmp_path / "nowhere"), "--out", str(tmp_path / "q.jsonl"))
    assert (r.returncode, len(r.stderr.strip().splitlines())) == (2, 1)


def test_a_missing_index_is_reported_as_missing(tmp_path):
    r = _run("--index", str(tmp_path / "nowhere"), "--out", str(tmp_path / "q.jsonl"))
    assert "no index" in r.stderr


def test_a_missing_index_writes_nothing(tmp_path):
    _run("--index", str(tmp_path / "nowhere"), "--out", str(tmp_path / "q.jsonl"))
    assert not (tmp_path / "q.jsonl").exists()


def test_an_empty_index_argument_is_refused_not_read_as_the_default(tmp_path):
    # "" would otherwise mean "the default index", a silent guess
    r = _run("--index", "", "--out", str(tmp_path / "q.jsonl"))
    assert "must not be empty" in r.stderr


def test_a_failed_run_keeps_the_file_that_was_there(tmp_path):
    out = tmp_path / "q.jsonl"
    out.write_text('{"id": "kept"}\n', encoding="utf-8")
    _run("--index", str(tmp_path / "nowhere"), "--out", str(out))
    assert out.read_text(encoding="utf-8") == '{"id": "kept"}\n'


def test_an_unwritable_output_is_one_line_and_exit_2(demo_index, tmp_path):
    r = _run("--index", str(demo_index), "--out", str(tmp_path), "-n", "5")
    assert (r.returncode, len(r.stderr.strip().splitlines())) == (2, 1)
