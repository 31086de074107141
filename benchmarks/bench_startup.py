"""Start-up cost of the CLI: `scim-edge --help` wall time, and what `scim-edge ask` costs
on top of the engine's own work.

- help_s: median wall time of `scim-edge --help` (target ≤ 0.3 s);
- ask overhead: for each question, the wall time of `scim-edge ask Q` minus the engine
  time of the same question (Engine.open + answer, timed in a fresh process after its
  imports, so lazy loads the first answer pays count as engine, not start-up). Target:
  median ≤ 0.4 s. The engine's module imports (tantivy, numpy; NLTK only where its data
  is installed) count as start-up here; `ask_cli_overhead_s` is what remains without them
  (interpreter, CLI, settings, output). Interpreter start (`python -c pass`) is measured
  in the same run as the floor, and `python -X importtime` names the imports that cost the
  most.

Writes benchmarks/results/startup.json.

    python benchmarks/bench_startup.py [--index DIR] [--n 5]
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_output import checked_index, fail, write_json

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SCIM_EDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
OUT = ROOT / "benchmarks" / "results" / "startup.json"
HELP_TARGET_S = 0.3
OVERHEAD_TARGET_S = 0.4
QUESTIONS = [
    "Who assassinated Abraham Lincoln?",
    "In what year did Jonathan Swift publish A Modest Proposal?",
    "Who developed the Japanese martial art aikido?",
    "In which city did Arthur Schopenhauer settle in 1833?",
    "What is anarchism?",
    "Who wrote the novel Animal Farm?",
    "Where was Albert Einstein born?",
]

ENGINE_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from scim_edge.engine import Engine
from scim_edge.settings import load_settings
import scim_edge.retrieval, scim_edge.loops, scim_edge.loops.scim, scim_edge.loops.simrag
import scim_edge.generation, scim_edge.generation.extractive
t1 = time.perf_counter()
settings = load_settings({"index": sys.argv[1], "model": "extractive"})
engine = Engine.open(settings)
answer = engine.answer(sys.argv[2])
t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "engine_s": t2 - t1,
                  "loop_ms": answer.timing_ms.get("total")}))
"""


def wall(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.strip()}")
    return elapsed


def cli() -> list[str]:
    script = Path(sys.executable).with_name("scim-edge")
    return [str(script)] if script.exists() else [sys.executable, "-m", "scim_edge"]


def importtime_top(cmd: list[str], env: dict[str, str], n: int = 12) -> list[dict]:
    """The top-level imports with the largest cumulative time (µs) of one run of `cmd`."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *cmd], env=env, capture_output=True, text=True
    )
    rows = []
    for line in done.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)", line)
        if m and not m.group(3):  # top level only: nested imports are in their parent
            rows.append({"module": m.group(4), "cumulative_ms": int(m.group(2)) / 1000})
    return sorted(rows, key=lambda r: -r["cumulative_ms"])[:n]


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_startup", description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=nonempty,
                    help="index name or dir (default: build one from enwiki-sample)")  # fmt: skip
    ap.add_argument("--n", type=positive_int, default=5, help="questions (and --help runs) timed")
    args = ap.parse_args()
    try:  # a folder: the timed processes run in a home of their own, where no name is found
        index = None if args.index is None else str(checked_index(args.index))
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    tmp = tempfile.TemporaryDirectory(prefix="scim-bench-start-")
    env = {**os.environ, "SCIM_EDGE_HOME": tmp.name, "PYTHONPATH": str(ROOT)}
    if index is None:
        from index_builder.build import build_index

        index = str(Path(tmp.name) / "enwiki-sample")
        try:  # no sample dump: SCIM_EDGE_SHARED_DATA names the wrong folder, or none is there
            build_index(DATA / "enwiki-sample.xml.bz2", Path(index))
        except UserError as e:
            return fail(e.one_line(), e.exit_code)

    floor = [wall([sys.executable, "-c", "pass"], env) for _ in range(args.n)]
    helps = [wall([*cli(), "--help"], env) for _ in range(args.n)]
    rows = []
    for q in (QUESTIONS * 2)[: args.n]:
        ask = wall([*cli(), "ask", q, "--index", index, "--model", "extractive"], env)
        child = subprocess.run(
            [sys.executable, "-c", ENGINE_CHILD, index, q],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if child.returncode != 0:
            raise SystemExit(f"engine timing failed: {child.stderr.strip()}")
        eng = json.loads(child.stdout)
        rows.append(
            {
                "question": q,
                "ask_wall_s": ask,
                **eng,
                "overhead_s": ask - eng["engine_s"],
                # what is left once the engine's own module imports are taken out too
                "cli_overhead_s": ask - eng["engine_s"] - eng["import_s"],
            }
        )

    help_s = statistics.median(helps)
    overhead_s = statistics.median(r["overhead_s"] for r in rows)
    result = {
        "what": "CLI start-up: `scim-edge --help` wall, and `ask` wall minus engine time",
        "n": args.n,
        "python_floor_s": statistics.median(floor),
        "help_s": help_s,
        "help_target_s": HELP_TARGET_S,
        "help_meets_target": help_s <= HELP_TARGET_S,
        "ask_wall_s": statistics.median(r["ask_wall_s"] for r in rows),
        "engine_s": statistics.median(r["engine_s"] for r in rows),
        "engine_import_s": statistics.median(r["import_s"] for r in rows),
        "ask_overhead_s": overhead_s,
        "ask_overhead_target_s": OVERHEAD_TARGET_S,
        "ask_overhead_meets_target": overhead_s <= OVERHEAD_TARGET_S,
        "ask_cli_overhead_s": statistics.median(r["cli_overhead_s"] for r in rows),
        "per_question": rows,
        "importtime_help_top": importtime_top(["-m", "scim_edge", "--help"], env),
        "importtime_ask_top": importtime_top(
            ["-m", "scim_edge", "ask", QUESTIONS[0], "--index", index, "--model", "extractive"],
            env,
        ),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "load_average_1m": os.getloadavg()[0],
    }
    if rc := write_json(OUT, result):
        return rc
    print(json.dumps({k: v for k, v in result.items() if not isinstance(v, list)}, indent=2))
    shutil.rmtree(tmp.name, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
