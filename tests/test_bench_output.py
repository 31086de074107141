"""`benchmarks/bench_output.py`: how every benchmark writes what it measured."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

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
