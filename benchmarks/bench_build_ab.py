"""What resumability costs: `build-index` with its checkpoints against the same build with
checkpoints off, and optionally against another checkout of the project (the code before
resume and ZIM), interleaved round by round on one dump so a busy machine penalises each alike.

    python benchmarks/bench_build_ab.py --mb 100 --rounds 2
    python benchmarks/bench_build_ab.py --mb 100 --rounds 2 --baseline-root ../main

Variants (each a fresh process on the same multistream dump, same --workers):
- `checkpoints`: the default, a commit and checkpoint every --checkpoint-every seconds;
- `no_checkpoints`: --checkpoint-every 1e9 (one commit at the end, as before resume existed);
- `baseline` (with --baseline-root): that tree's code, via PYTHONPATH.
Medians of wall time and XML MB/s, and ratios to `checkpoints`, go to
benchmarks/results/build_ab.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_build_index import MAKE_BIG_DUMP, SOURCE, timed
from bench_output import fail, workdir, write_json

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "build_ab.json"


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_float, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_build_ab", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=positive_float, default=100.0)
    ap.add_argument("--rounds", type=positive_int, default=2)
    ap.add_argument("--workers", type=positive_int, default=2)
    ap.add_argument("--checkpoint-every", type=positive_float, default=30.0)
    ap.add_argument("--baseline-root", type=nonempty, help="another checkout to compare with")
    ap.add_argument("--workdir", type=nonempty)
    ap.add_argument("--out", type=nonempty, default=str(RESULTS))
    a = ap.parse_args()
    baseline = Path(a.baseline_root) if a.baseline_root else None
    if baseline is not None and not (baseline / "scim_edge").is_dir():
        return fail(f"--baseline-root {baseline} is not a checkout of the project (no scim_edge/)")
    try:
        work = workdir(a.workdir, "--workdir", "bench-ab-")
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    dump = work / f"enwiki-{a.mb:g}mb-multistream.xml.bz2"
    if not dump.exists():
        subprocess.run([sys.executable, str(MAKE_BIG_DUMP), "--source", str(SOURCE), "--mb",
                        str(a.mb), "--multistream", "-o", str(dump)], check=True)  # fmt: skip
    home = str(work / "home")
    ours = dict(os.environ, SCIM_EDGE_HOME=home, PYTHONPATH=str(ROOT))
    scim = [sys.executable, "-m", "scim_edge", "build-index", str(dump), "--force"]
    variants: dict[str, tuple[list[str], dict[str, str]]] = {
        "checkpoints": ([*scim, "--restart", "--workers", str(a.workers), "--checkpoint-every",
                         str(a.checkpoint_every), "--out", str(work / "a")], ours),
        "no_checkpoints": ([*scim, "--restart", "--workers", str(a.workers),
                            "--checkpoint-every", "1e9", "--out", str(work / "b")], ours),
    }  # fmt: skip
    if baseline is not None:
        base_env = dict(os.environ, SCIM_EDGE_HOME=home,
                        PYTHONPATH=str(baseline.resolve()))  # fmt: skip
        # the baseline may predate --workers/--restart: it used 2 workers by default
        variants["baseline"] = ([*scim, "--out", str(work / "c")], base_env)
    runs: dict[str, list[dict]] = {k: [] for k in variants}
    for r in range(a.rounds):
        for name, (cmd, env) in variants.items():
            res = timed(cmd, env)
            xml = json.loads((Path(cmd[cmd.index("--out") + 1]) / "manifest.json").read_text())[
                "source"
            ]["xml_bytes"]
            res["xml_mb_per_s"] = round(xml / 1e6 / res["wall_s"], 2)
            res["load_avg_1m"] = round(os.getloadavg()[0], 2)
            runs[name].append(res)
            print(f"round {r + 1} {name}: {res['wall_s']} s {res['xml_mb_per_s']} MB/s",
                  file=sys.stderr)  # fmt: skip
    med = {
        k: {m: round(statistics.median(x[m] for x in v), 3) for m in ("wall_s", "xml_mb_per_s",
                                                                       "peak_rss_tree_mb")}
        for k, v in runs.items()
    }  # fmt: skip
    ref = med["checkpoints"]["xml_mb_per_s"]
    result = {
        "benchmark": "build_ab",
        "dump": {"file": dump.name, "bz2_bytes": dump.stat().st_size},
        "rounds": a.rounds,
        "workers": a.workers,
        "checkpoint_every_s": a.checkpoint_every,
        "median": med,
        "throughput_vs_checkpoints": {k: round(v["xml_mb_per_s"] / ref, 3) for k, v in med.items()},
        "runs": runs,
    }
    if rc := write_json(a.out, result):
        return rc
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
