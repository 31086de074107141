"""`benchmarks/pooled_trust.py`: the README's pooled trust figures, from eval runs' files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "pooled_trust.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=60)  # fmt: skip


def _eval_dir(path: Path, rows: list[tuple[str, float | None, float, bool]]) -> Path:
    """A folder shaped like `eval --out`'s: (run, confidence, em, answerable) per row."""
    path.mkdir()
    lines = [json.dumps({"run": run, "confidence": c, "em": em, "answerable": a,
                         "abstained": c is None, "sweep_key": None})
             for run, c, em, a in rows]  # fmt: skip
    (path / "per_question.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_trust_is_pooled_over_runs(tmp_path):
    """Each run alone ranks its right answer first (AUROC 1); pooled, the first run's wrong
    answer at 0.8 outranks the second run's right one at 0.7."""
    a = _eval_dir(tmp_path / "a", [("scim", 0.9, 1.0, True), ("scim", 0.8, 0.0, True)])
    b = _eval_dir(tmp_path / "b", [("scim", 0.7, 1.0, True), ("scim", 0.1, 0.0, True)])
    out = json.loads(_run(str(a), str(b)).stdout)
    assert out["systems"]["scim"]["auroc"] == 0.75


def test_unanswerable_questions_and_abstentions_are_left_out(tmp_path):
    a = _eval_dir(tmp_path / "a", [("simrag", 0.9, 1.0, True), ("simrag", None, 0.0, True),
                                   ("simrag", 0.95, 0.0, False)])  # fmt: skip
    out = json.loads(_run(str(a)).stdout)
    assert out["systems"]["simrag"]["n"] == 1


def test_a_folder_that_is_no_eval_run_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "empty").mkdir()
    done = _run(str(tmp_path / "empty"))
    assert (done.returncode, len(done.stderr.strip().splitlines())) == (2, 1)


def test_a_folder_that_is_no_eval_run_is_named_as_such(tmp_path):
    (tmp_path / "empty").mkdir()
    assert "not an eval run's per-question file" in _run(str(tmp_path / "empty")).stderr


def test_a_wrong_flag_is_one_line_and_exit_2(tmp_path):
    done = _run("--bogus", str(tmp_path))
    assert (done.returncode, len(done.stderr.strip().splitlines())) == (2, 1)


def test_an_empty_folder_argument_is_refused_not_read_as_here():
    assert "must not be empty" in _run("").stderr


def test_a_truncated_run_keeps_the_file_that_was_there(tmp_path):
    a = _eval_dir(tmp_path / "a", [("scim", 0.9, 1.0, True), ("scim", 0.8, 0.0, True)])
    text = (a / "per_question.jsonl").read_text(encoding="utf-8")
    (a / "per_question.jsonl").write_text(text[:-20], encoding="utf-8")  # mid-line
    out = tmp_path / "pooled.json"
    out.write_text('{"kept": true}\n', encoding="utf-8")
    _run(str(a), "--out", str(out))
    assert out.read_text(encoding="utf-8") == '{"kept": true}\n'


def test_an_unwritable_output_is_one_line_and_exit_2(tmp_path):
    a = _eval_dir(tmp_path / "a", [("scim", 0.9, 1.0, True), ("scim", 0.8, 0.0, True)])
    done = _run(str(a), "--out", str(tmp_path))  # a folder, not a file
    assert (done.returncode, len(done.stderr.strip().splitlines())) == (2, 1)
