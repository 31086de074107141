"""Start-up stays cheap: parsing a command imports only that command's module, and no
heavy library (Textual, tantivy, ONNX Runtime, NLTK, numpy) loads before a command runs.
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
