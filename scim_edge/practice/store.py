"""Where a practice set lives and how it is written: `<index>/practice/`.

The set sits beside the index it was made from (and travels with it in a bundle):

    practice/
      README.md        this format, for whoever opens the folder
      manifest.json    seed, counts, the index and settings it was made with, figures
      pairs.jsonl      one question–answer pair per line (`questions.PracticePair`)
      traces.jsonl     one line per loop round: the answer, its labels and its features
      reader.json      the reader weights fitted on the train split, or the shipped ones
                       when they read the held-out questions at least as well
      critic.json      the Critic fitted on the traces (when trained, and when it judged
                       the held-out rounds better than the shipped one)

Work in progress goes to `<index>/.practice-partial/`, one file per finished chunk, each
written atomically (a JSON-lines file with its row count beside it, so that one cut short
by a disk error or an edit is made again, not read short); a rerun with the same arguments
picks up the finished chunks. The
finished set is assembled in a temporary folder and swapped in whole, so an interrupted run
never leaves a half-written `practice/` and never damages the previous one.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from scim_edge import jsonl
from scim_edge.atomic import atomic_dir, write_text

T = TypeVar("T")

PRACTICE = "practice"
PARTIAL = ".practice-partial"
FORMAT_VERSION = 1

README = """# Self-practice set

Made by `scim-edge practice` from this index's own passages (SIM-RAG §3.2). Nothing here
comes from a hand-written question set: the questions are the index's sentences with one
span taken out and turned into a question, and a few comparisons of two articles' dated
sentences ("Which was founded first, A or B?"; kind `choice`, ids starting with `c`).

- `manifest.json`: format version, seed, counts per split, the index (name, passages), the
  generator and settings the traces were run with, and the figures measured on the
  held-out split (reader EM, answer-in-passages, Critic AUROC and calibration).
- `pairs.jsonl`: `{id, question, answer, kind, doc_id, title, sentence, split}`; `split` is
  `train` (fits the reader and the Critic) or `heldout` (measures them, calibrates the Critic).
- `traces.jsonl`: one line per round of the practice loop: `{pair_id, split, loop, round,
  answer, correct, f1, evidence_present, source_hidden, features}`. `correct` is exact
  match (SQuAD normalisation) against the pair's answer; `evidence_present` says the answer
  string occurs in the passages that round had; `source_hidden` says the loop ran without
  the passage the question was made from; `features` are what the Critic reads (the
  five SCIM dimensions and Q, the reader's span probability, margin and raw score, type
  agreement, support overlap, the round, the new passages it brought, agreement with
  earlier rounds, retrieval scores).
- `reader.json`: the reader's linear weights (`scim_edge.linear.LinearModel`): those fitted
  here, or the shipped ones when they picked the held-out questions' answers at least as
  often (`manifest.json`'s `reader.used` says which); its `meta.given_names` are the first
  words of the titles of this index's articles about people and those the shipped reader
  knows, which tell the reader (and told the question maker's "who") a person's name from
  a region's.
- `critic.json`: the trained Critic, when `practice` trained one and it judged the held-out
  rounds better (Brier score) than the shipped Critic; otherwise the index uses the shipped
  one, and `manifest.json`'s `critic.used` says so.
"""


def practice_dir(index_dir: Path) -> Path:
    return Path(index_dir) / PRACTICE


def partial_dir(index_dir: Path) -> Path:
    return Path(index_dir) / PARTIAL


def write_json(path: Path, data: Any) -> None:
    write_text(path, json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def write_partial_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    """A partial run's rows, then their count beside them (`<name>.rows`): a file cut at
    the end of a line still reads as whole JSON lines, and only the count shows it short."""
    write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    write_text(_count_path(path), f"{len(rows)}\n")


def read_partial_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows `write_partial_jsonl` wrote; ValueError when the file holds fewer or more rows
    than it was written with, OSError when the count is missing."""
    rows = read_jsonl(path)
    written = int(_count_path(path).read_text(encoding="utf-8"))
    if written != len(rows):
        raise ValueError(f"{path.name} holds {len(rows)} of the {written} rows written")
    return rows


def _count_path(path: Path) -> Path:
    return path.with_name(path.name + ".rows")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    from scim_edge.jsonl import jsonl_lines

    return [jsonl.loads(line) for _, line in jsonl_lines(path.read_text(encoding="utf-8"))]


def read_json(path: Path) -> Any:
    return jsonl.loads(path.read_text(encoding="utf-8"))


def finished(path: Path, load: Callable[[Path], T]) -> T | None:
    """A finished file of a partial run, loaded; None when it is missing, or damaged (a
    disk error, an edit): then it is removed, so that the run makes it again rather than
    stopping on it."""
    if not path.is_file():
        return None
    try:
        return load(path)
    except (OSError, ValueError, TypeError, KeyError, EOFError, zipfile.BadZipFile):
        path.unlink(missing_ok=True)
        return None


def open_partial(index_dir: Path, params: dict[str, Any]) -> Path:
    """The partial folder for a run with `params`: kept when a previous run had the same
    parameters (resume), emptied otherwise."""
    part = partial_dir(index_dir)
    state = part / "params.json"
    if part.is_dir():
        try:
            same = read_json(state) == params
        except (OSError, ValueError):
            same = False
        if not same:
            shutil.rmtree(part, ignore_errors=True)
    part.mkdir(parents=True, exist_ok=True)
    if not state.is_file():
        write_json(state, params)
    return part


def publish(index_dir: Path, files: dict[str, str]) -> Path:
    """Write the finished set into a temp folder and swap it in as `practice/`."""
    target = practice_dir(index_dir)
    with atomic_dir(target, force=True, what="practice set") as tmp:
        (tmp / "README.md").write_text(README, encoding="utf-8")
        for name, text in files.items():
            (tmp / name).write_text(text, encoding="utf-8")
    shutil.rmtree(partial_dir(index_dir), ignore_errors=True)
    return target
