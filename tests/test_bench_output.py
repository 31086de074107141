"""`benchmarks/bench_output.py`: how every benchmark writes what it measured."""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
from pathlib import Path

import pytest

from scim_edge.commands._args import positive_float
from scim_edge.errors import UserError

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
_spec = importlib.util.spec_from_file_location("bench_output", BENCHMARKS / "bench_output.py")
assert _spec is not None and _spec.loader is not None
bench_output = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_output)


def test_a_result_is_written_as_json(tmp_path):
    out = tmp_path / "results" / "x.json"
    bench_output.write_json(out, {"median_ms": 1.5, "title": "Zürich"})
    assert json.loads(out.read_text(encoding="utf-8")) == {"median_ms": 1.5, "title": "Zürich"}


def test_a_written_result_returns_0(tmp_path):
    assert bench_output.write_json(tmp_path / "x.json", {}) == 0


def test_an_unwritable_output_returns_2(tmp_path):
    assert bench_output.write_json(tmp_path, {}) == 2  # a folder, not a file


def test_an_unwritable_output_is_one_line(tmp_path, capsys):
    bench_output.write_json(tmp_path, {})
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_an_unwritable_output_says_it_cannot_be_written(tmp_path, capsys):
    (tmp_path / "x.json").write_text("", encoding="utf-8")
    bench_output.write_json(tmp_path / "x.json" / "y.json", {})  # under a file
    assert "cannot write" in capsys.readouterr().err


def _fail_mid_write(monkeypatch):
    """The disk fails after the text went out and before it is safe (a full disk, a
    pulled drive)."""
    import scim_edge.atomic

    def broken_fsync(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(scim_edge.atomic.os, "fsync", broken_fsync)


def test_a_write_that_fails_midway_keeps_the_earlier_result(tmp_path, monkeypatch):
    out = tmp_path / "x.json"
    out.write_text('{"kept": true}\n', encoding="utf-8")
    _fail_mid_write(monkeypatch)
    bench_output.write_json(out, {"median_ms": 1.5})
    assert out.read_text(encoding="utf-8") == '{"kept": true}\n'


def test_a_write_that_fails_midway_returns_2(tmp_path, monkeypatch):
    _fail_mid_write(monkeypatch)
    assert bench_output.write_json(tmp_path / "x.json", {"median_ms": 1.5}) == 2


def test_every_benchmark_writes_its_result_through_it():
    """A result written in place is cut short by Ctrl+C and loses the earlier run's; the
    device script (`bench_cuda.py`) runs alone on another machine and swaps its own."""
    direct = re.compile(r"\.write_text\(\s*json\.dumps|atomic\.write_text")
    offenders = [
        p.name
        for p in sorted(BENCHMARKS.glob("*.py"))
        if p.name not in ("bench_output.py", "bench_cuda.py")
        and direct.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_a_positive_float_is_read():
    assert positive_float("2.5") == 2.5


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "abc", ""])
def test_a_number_that_is_not_positive_and_finite_is_refused(text):
    with pytest.raises(argparse.ArgumentTypeError, match="must be a positive number"):
        positive_float(text)


def test_a_missing_work_folder_is_made(tmp_path):
    bench_output.workdir(str(tmp_path / "a" / "b"), "--workdir", "x-")
    assert (tmp_path / "a" / "b").is_dir()


def test_no_work_folder_is_a_new_temporary_one():
    folder = bench_output.workdir(None, "--workdir", "scim-edge-test-")
    folder.rmdir()  # it was there, and empty
    assert folder.name.startswith("scim-edge-test-")


def test_a_file_as_work_folder_is_refused(tmp_path):
    (tmp_path / "f").write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="is not a folder"):
        bench_output.workdir(str(tmp_path / "f"), "--workdir", "x-")


def test_a_work_folder_that_cannot_be_made_is_refused(tmp_path):
    (tmp_path / "f").write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="cannot make"):
        bench_output.workdir(str(tmp_path / "f" / "sub"), "--workdir", "x-")


def test_an_index_is_found_by_name(tmp_path, demo_index, monkeypatch):
    monkeypatch.setenv("SCIM_EDGE_HOME", str(tmp_path))
    (tmp_path / "indexes").mkdir()
    (tmp_path / "indexes" / "demo").symlink_to(demo_index)
    assert bench_output.checked_index("demo") == tmp_path / "indexes" / "demo"


def test_an_index_that_is_not_there_is_refused():
    with pytest.raises(UserError, match="no index named"):
        bench_output.checked_index("nosuch")


def test_a_folder_that_is_no_index_is_refused(tmp_path):
    with pytest.raises(UserError, match="incomplete or corrupt"):
        bench_output.checked_index(str(tmp_path))
