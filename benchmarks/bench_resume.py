"""Benchmark a resumed `build-index` against an uninterrupted one (issue 15, target "Resume").

    python benchmarks/bench_resume.py                 # the 600 MB multistream dump of the target
    python benchmarks/bench_resume.py --mb 150 --checkpoint-every 5   # a quicker, smaller run

Makes a multistream dump of about --mb MB of XML with ../shared/tools/make_big_dump.py, then,
each in a fresh process:

1. builds it uninterrupted (time T_full);
2. builds it again and kills the whole process tree with SIGKILL at --kill-at of T_full
   (0.6 by default: past 55% of the dump at the uninterrupted speed), recording how far
   the last checkpoint had got;
3. runs the same command with --resume (time T_resume).

It checks that the resumed index has the same passage count (and every other count) as the
uninterrupted one, and reports T_resume / T_full (target: <= 0.7). Results go to
benchmarks/results/resume.json.
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_build_index import MAKE_BIG_DUMP, SOURCE, timed
from bench_output import fail, workdir, write_json

from index_builder import checkpoint as CK

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "resume.json"


def manifest(path: Path) -> dict:
    return json.loads((path / "manifest.json").read_text())


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_float, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_resume", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=positive_float, default=600.0, help="dump size in MB of XML")
    ap.add_argument("--kill-at", type=positive_float, default=0.6,
                    help="share of T_full to kill at")  # fmt: skip
    ap.add_argument("--checkpoint-every", type=positive_float, default=30.0, help="seconds")
    ap.add_argument("--workers", type=positive_int, default=None, help="default: every core")
    ap.add_argument("--workdir", type=nonempty,
                    help="where the dump and indexes go (default: temp)")  # fmt: skip
    ap.add_argument("--out", type=nonempty, default=str(RESULTS))
    a = ap.parse_args()

    try:
        work = workdir(a.workdir, "--workdir", "bench-resume-")
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    env = dict(os.environ, SCIM_EDGE_HOME=str(work / "home"), PYTHONUNBUFFERED="1")
    dump = work / f"enwiki-{a.mb:g}mb-multistream.xml.bz2"
    if not dump.exists():
        subprocess.run([sys.executable, str(MAKE_BIG_DUMP), "--source", str(SOURCE), "--mb",
                        str(a.mb), "--multistream", "-o", str(dump)], check=True)  # fmt: skip
    full_dir, resumed_dir = work / "idx-full", work / "idx-resumed"
    base = [sys.executable, "-m", "scim_edge", "build-index", str(dump), "--force", "--restart",
            "--checkpoint-every", str(a.checkpoint_every)]  # fmt: skip
    if a.workers:
        base += ["--workers", str(a.workers)]

    full = timed([*base, "--out", str(full_dir)], env)
    print(f"uninterrupted: {full}", file=sys.stderr)

    kill_after = a.kill_at * full["wall_s"]
    proc = subprocess.Popen([*base, "--out", str(resumed_dir)], env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    time.sleep(kill_after)
    finished_before_kill = proc.poll() is not None
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    ck = CK.Checkpoint.load(CK.partial_dir(resumed_dir))
    ck_fraction = ck.done_fraction() if ck else 0.0
    print(f"killed after {kill_after:.1f} s; checkpoint at {ck_fraction:.1%}", file=sys.stderr)

    resume_cmd = [x for x in base if x != "--restart"] + ["--out", str(resumed_dir), "--resume"]
    resumed = timed(resume_cmd, env)
    print(f"resumed: {resumed}", file=sys.stderr)

    mf, mr = manifest(full_dir), manifest(resumed_dir)
    xml = mf["source"]["xml_bytes"]
    result = {
        "benchmark": "resume",
        "dump_mb_requested": a.mb,
        "dump": {"file": dump.name, "bz2_bytes": dump.stat().st_size, "xml_bytes": xml},
        "checkpoint_every_s": a.checkpoint_every,
        "workers": mf["workers"],
        "uninterrupted": {**full, "xml_mb_per_s": round(xml / 1e6 / full["wall_s"], 2)},
        "killed_after_s": round(kill_after, 2),
        "killed_at_share_of_uninterrupted_time": a.kill_at,
        "finished_before_kill": finished_before_kill,
        "last_checkpoint_share_of_dump": round(ck_fraction, 3),
        "resumed": resumed,
        "resume_to_full_time_ratio": round(resumed["wall_s"] / full["wall_s"], 3),
        "target_ratio_max": 0.7,
        "passages": {
            "uninterrupted": mf["counts"]["passages"],
            "resumed": mr["counts"]["passages"],
        },  # fmt: skip
        "same_passage_count": mf["counts"]["passages"] == mr["counts"]["passages"],
        "same_counts": mf["counts"] == mr["counts"],
        "resumed_runs": mr.get("runs"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        },
    }
    if rc := write_json(a.out, result):
        return rc
    print(json.dumps(result, indent=2))
    return 0 if result["same_counts"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
