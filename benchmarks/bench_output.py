"""How every benchmark writes what it measured: whole or not at all, and a failure is one line.

A benchmark runs for minutes and its file is what the README's figures cite. A file cut
short by a full disk or Ctrl+C would read as a finished run with broken JSON, and an earlier
run's file would be lost with it, so the text goes to a temporary file beside the target and
is renamed over it (`scim_edge.atomic.write_text`). A folder that cannot be written is one
line on stderr and exit 2, as in the CLI.

The scripts run as `python benchmarks/NAME.py`, so this folder is first on `sys.path` and
they import this module by its plain name. It puts the project root on `sys.path` and
imports the atomic writer at once, so a script that cannot reach it fails before it
measures, not after.

Bad input is refused the same way, before any work: sizes and times are read with the
CLI's own argparse types (`scim_edge.commands._args`), `workdir` makes the folder a
benchmark works in, and `checked_index` finds an index by name or folder; the last two
raise a `UserError` saying why they cannot.
"""

from __future__ import annotations

import atexit
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from scim_edge.atomic import write_text as _write_atomically
from scim_edge.errors import UserError


def fail(message: str, code: int = 2) -> int:
    """Print `SCRIPT: error: message` on stderr (SCRIPT: the benchmark that runs); return
    the exit status to end with."""
    print(f"{Path(sys.argv[0]).stem}: error: {message}", file=sys.stderr)
    return code


def temp_folder(prefix: str) -> Path:
    """A new temporary folder, removed with all it holds when the script exits, whether it
    finished, failed or was interrupted with Ctrl+C: a benchmark's dumps and indexes run to
    hundreds of megabytes, and every run that left them in the temporary folder would add
    its own."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def workdir(path: str | None, flag: str, prefix: str) -> Path:
    """The folder a benchmark keeps its dumps and indexes in: `path` (given as `flag`), made
    when missing and kept, or a `temp_folder` when None. Raises UserError when `path`
    cannot be a folder (a file is there, no permission), before any work is done."""
    if path is None:
        return temp_folder(prefix)
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{flag} {path} is not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot make the {flag} folder {path}: {e.strerror or e}") from None
    return folder


def checked_index(name_or_dir: str) -> Path:
    """The folder of the index `name_or_dir` names (an installed name or a folder), opened
    once to check it, for a benchmark that hands it to other processes or opens it only
    after minutes of other work. Raises UserError when there is none or it is corrupt."""
    from scim_edge.retrieval import BM25Retriever, resolve_index_dir

    index = resolve_index_dir(name_or_dir)
    BM25Retriever.open(index)
    return index


def write_text(out: str | Path, text: str) -> int:
    """Write `text` to `out` atomically; 0, or `fail`'s status when it cannot be written."""
    try:
        _write_atomically(Path(out), text)
    except OSError as e:
        return fail(f"cannot write {out}: {e.strerror or e}")
    return 0


def write_json(out: str | Path, result: Any, indent: int = 2) -> int:
    """`result` as indented JSON (non-ASCII kept as written) with a final newline."""
    return write_text(out, json.dumps(result, indent=indent, ensure_ascii=False) + "\n")
