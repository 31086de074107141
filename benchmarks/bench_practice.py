"""Self-practice and the trained Critic: how long they take on this machine.

    python benchmarks/bench_practice.py [--dump ../shared/data/vital-en.xml.bz2] \
        [--questions 6000] [--out benchmarks/results/practice.json]

Builds the dump's index in a throwaway home, then times, in one run:
- `scim-edge practice` with the default settings (target: at most 10 min for vital-en on
  2 cores), stage by stage;
- fitting the Critic alone on the traces it made (target: at most 2 min), median of 3;
- Critic inference per round (target: under 1 ms), median over 2,000 rounds of the traces.
Writes JSON and prints it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_output import fail, temp_folder, write_json

ROOT = Path(__file__).resolve().parents[1]


def run_cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`scim-edge ARGS` run in `env`. UserError with the command's own one-line message and
    exit status when it fails (a dump it cannot read, too few questions)."""
    from scim_edge.errors import UserError

    r = subprocess.run([sys.executable, "-m", "scim_edge", *args], env=env, capture_output=True,
                       text=True, check=False)  # fmt: skip
    if r.returncode != 0:
        said = r.stderr.strip().splitlines()[-1:] or [f"exit status {r.returncode}"]
        raise UserError(f"scim-edge {args[0]}: {said[0].removeprefix('scim-edge: error: ')}",
                        exit_code=r.returncode)  # fmt: skip
    return r


def main(argv: list[str] | None = None) -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_practice", description=__doc__.splitlines()[0])
    ap.add_argument("--dump", type=nonempty,
                    default=str(ROOT.parent / "shared" / "data" / "vital-en.xml.bz2"))  # fmt: skip
    ap.add_argument("--questions", type=positive_int, default=6000)
    ap.add_argument("--out", type=nonempty,
                    default=str(ROOT / "benchmarks" / "results" / "practice.json"))  # fmt: skip
    args = ap.parse_args(argv)
    home = temp_folder("scim-edge-bench-practice-")
    env = {**os.environ, "SCIM_EDGE_HOME": str(home)}
    try:
        run_cli(["build-index", args.dump, "--name", "bench"], env)
        t0 = time.perf_counter()
        r = run_cli(["practice", "--index", "bench", "--questions", str(args.questions),
                       "--json"], env)  # fmt: skip
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    practice_s = time.perf_counter() - t0
    manifest = json.loads(r.stdout)

    os.environ["SCIM_EDGE_HOME"] = str(home)
    from scim_edge.critic_features import vector
    from scim_edge.practice import store
    from scim_edge.settings import Settings
    from scim_edge.trained_critic import train_from_rows

    rows = store.read_jsonl(home / "indexes" / "bench" / "practice" / "traces.jsonl")
    fits = []
    for _ in range(3):
        t1 = time.perf_counter()
        critic = train_from_rows(rows, generator="extractive", settings=Settings(loop="fixed-3"))
        fits.append(time.perf_counter() - t1)
    sample = [r["features"] for r in rows[:2000]]
    times = []
    for f in sample:
        t2 = time.perf_counter()
        critic.probability(f)
        times.append(time.perf_counter() - t2)
    vector(sample[0])
    result = {
        "dump": Path(args.dump).name,
        "questions": args.questions,
        "cores": os.cpu_count(),
        "load_average": os.getloadavg()[0],
        "practice_wall_s": round(practice_s, 1),
        "practice_target_s": 600,
        "practice_stages_s": manifest.get("timings", {}),
        "critic_fit_median_s": round(statistics.median(fits), 3),
        "critic_fit_target_s": 120,
        "critic_inference_median_us": round(statistics.median(times) * 1e6, 1),
        "critic_inference_target_us": 1000,
        "heldout": {
            "reader": manifest.get("reader"),
            "critic": manifest.get("critic"),
            "round1": manifest.get("heldout_round1"),
        },  # fmt: skip
    }
    if rc := write_json(args.out, result, indent=1):
        return rc
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
