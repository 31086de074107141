"""Benchmark `scim-edge build-index` against wikiextractor on the same dump (issue 2, part 5).

    python benchmarks/bench_build_index.py            # the ~170 MB dump, 3 rounds
    python benchmarks/bench_build_index.py --mb 40 --repeat 1   # a quick run

Makes a dump of about --mb MB of XML with ../shared/tools/make_big_dump.py --multistream, and
from the very same XML a true single-stream .bz2 (one bz2 stream, no index), so all variants
read identical pages. Then, round by round (interleaved, so a busy machine penalises every
tool alike), it times end to end in a fresh process:

- `scim-edge build-index` on the single-stream file (bz2 -> committed index),
- `scim-edge build-index` on the multistream file (its index file beside it),
- `python -m wikiextractor.WikiExtractor FILE -o OUT --processes 2 -q` on the single-stream
  file (text extraction only, no index),
- and `build-index` on a dump a quarter the size, to show peak RSS does not grow with size.

It records wall time, CPU time (parent + children), XML MB/s, peak RSS of the process tree
(sampled with psutil every 50 ms) and the index size relative to the XML. Medians over the
rounds go to benchmarks/results/build_index.json.
"""

from __future__ import annotations

import bz2
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
from bench_output import fail, workdir, write_json

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("SCIM_EDGE_SHARED", ROOT.parent / "shared"))
MAKE_BIG_DUMP = SHARED / "tools" / "make_big_dump.py"
SOURCE = SHARED / "data" / "enwiki-sample.xml.bz2"
RESULTS = ROOT / "benchmarks" / "results" / "build_index.json"


def make_dumps(work: Path, mb: float) -> dict[str, Path]:
    multi = work / f"enwiki-{mb:g}mb-multistream.xml.bz2"
    run = [sys.executable, str(MAKE_BIG_DUMP), "--source", str(SOURCE), "--mb", str(mb)]
    subprocess.run([*run, "--multistream", "-o", str(multi)], check=True)
    single = work / f"enwiki-{mb:g}mb.xml.bz2"
    recompress(multi, single)
    small_multi = work / f"enwiki-{mb / 4:g}mb-multistream.xml.bz2"
    subprocess.run([*run[:-1], str(mb / 4), "--multistream", "-o", str(small_multi)], check=True)
    small = work / f"enwiki-{mb / 4:g}mb.xml.bz2"
    recompress(small_multi, small)
    return {"single": single, "multi": multi, "small": small}


def recompress(src: Path, dst: Path) -> None:
    """The XML of `src` (all its streams) as one bz2 stream."""
    comp = bz2.BZ2Compressor(9)
    with bz2.open(src, "rb") as fin, open(dst, "wb") as fout:
        while chunk := fin.read(1 << 22):
            fout.write(comp.compress(chunk))
        fout.write(comp.flush())


def xml_bytes(path: Path) -> int:
    n = 0
    with bz2.open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            n += len(chunk)
    return n


class RssSampler(threading.Thread):
    """Peak RSS of a process and all its descendants, summed, sampled every 50 ms."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_tree = 0
        self.peak_main = 0
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        t0 = time.perf_counter()
        try:
            proc = psutil.Process(self.pid)
        except psutil.Error:
            return
        while not self.stop.is_set():
            try:
                main = proc.memory_info().rss
                tree = main
                for child in proc.children(recursive=True):
                    try:
                        tree += child.memory_info().rss
                    except psutil.Error:
                        pass
            except psutil.Error:
                break
            self.peak_main = max(self.peak_main, main)
            self.peak_tree = max(self.peak_tree, tree)
            self.samples.append((round(time.perf_counter() - t0, 2), main))
            self.stop.wait(0.05)


def timed(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = RssSampler(proc.pid)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{err.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    quarter = [s[1] for s in sampler.samples]
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "peak_rss_tree_mb": round(sampler.peak_tree / 1e6, 1),
        "peak_rss_main_mb": round(sampler.peak_main / 1e6, 1),
        "rss_main_mb_at_quarters": [
            round(quarter[min(len(quarter) - 1, int(len(quarter) * f))] / 1e6, 1)
            for f in (0.25, 0.5, 0.75, 0.99)
        ]
        if quarter
        else [],
    }


def dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_float, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_build_index", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=positive_float, default=170.0, help="dump size in MB of XML")
    ap.add_argument("--repeat", type=positive_int, default=3,
                    help="rounds (medians are reported)")  # fmt: skip
    ap.add_argument("--workdir", type=nonempty, help="where dumps and outputs go (default: temp)")
    ap.add_argument("--out", type=nonempty, default=str(RESULTS))
    ap.add_argument("--skip-wikiextractor", action="store_true")
    a = ap.parse_args()

    try:
        work = workdir(a.workdir, "--workdir", "bench-build-index-")
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    env = dict(os.environ, SCIM_EDGE_HOME=str(work / "home"), PYTHONUNBUFFERED="1")
    print(f"work dir {work}", file=sys.stderr)
    t = time.perf_counter()
    dumps = make_dumps(work, a.mb)
    print(f"dumps made in {time.perf_counter() - t:.0f} s", file=sys.stderr)
    sizes = {
        k: {"bz2_bytes": p.stat().st_size, "xml_bytes": xml_bytes(p)} for k, p in dumps.items()
    }
    scim = [sys.executable, "-m", "scim_edge"]
    commands = {
        "build_index_single_stream": [*scim, "build-index", str(dumps["single"]),
                                      "--out", str(work / "idx-single"), "--force"],
        "build_index_multistream": [*scim, "build-index", str(dumps["multi"]),
                                    "--out", str(work / "idx-multi"), "--force"],
        "build_index_quarter_size": [*scim, "build-index", str(dumps["small"]),
                                     "--out", str(work / "idx-small"), "--force"],
        "wikiextractor": [sys.executable, "-m", "wikiextractor.WikiExtractor",
                          str(dumps["single"]), "-o", str(work / "wx"), "--processes", "2", "-q"],
    }  # fmt: skip
    if a.skip_wikiextractor:
        commands.pop("wikiextractor")
    xml_of = {
        "build_index_single_stream": sizes["single"]["xml_bytes"],
        "build_index_multistream": sizes["multi"]["xml_bytes"],
        "build_index_quarter_size": sizes["small"]["xml_bytes"],
        "wikiextractor": sizes["single"]["xml_bytes"],
    }
    runs: dict[str, list[dict]] = {k: [] for k in commands}
    load_before = os.getloadavg()
    for r in range(a.repeat):
        for name, cmd in commands.items():
            if name == "wikiextractor":
                shutil.rmtree(work / "wx", ignore_errors=True)
            res = timed(cmd, env)
            res["xml_mb_per_s"] = round(xml_of[name] / 1e6 / res["wall_s"], 2)
            res["load_avg_1m"] = round(os.getloadavg()[0], 2)
            runs[name].append(res)
            print(f"round {r + 1} {name}: {res}", file=sys.stderr)

    def med(name: str, key: str) -> float:
        return round(statistics.median(x[key] for x in runs[name]), 3)

    medians = {
        name: {k: med(name, k) for k in ("wall_s", "cpu_s", "xml_mb_per_s", "peak_rss_tree_mb",
                                          "peak_rss_main_mb")}
        for name in runs
    }  # fmt: skip
    manifest = json.loads((work / "idx-single" / "manifest.json").read_text())
    index_bytes = dir_bytes(work / "idx-single")
    ours = medians["build_index_single_stream"]
    result = {
        "benchmark": "build_index",
        "dump_mb_requested": a.mb,
        "dumps": {k: {"file": dumps[k].name, **v} for k, v in sizes.items()},
        "pages": manifest["counts"]["pages_seen"],
        "articles": manifest["counts"]["articles"],
        "passages": manifest["counts"]["passages"],
        "rounds": a.repeat,
        "median": medians,
        "index_bytes": index_bytes,
        "index_to_xml_ratio": round(index_bytes / sizes["single"]["xml_bytes"], 3),
        "multistream_faster_than_single": medians["build_index_multistream"]["xml_mb_per_s"]
        > ours["xml_mb_per_s"],
        "peak_rss_under_1gb": max(
            m["peak_rss_tree_mb"] for k, m in medians.items() if k.startswith("build_index")
        )
        < 1000,  # fmt: skip
        "peak_rss_growth_quarter_to_full": round(
            ours["peak_rss_tree_mb"] / medians["build_index_quarter_size"]["peak_rss_tree_mb"], 2
        ),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "load_avg_before": [round(x, 2) for x in load_before],
            "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        },
        "runs": runs,
    }
    if "wikiextractor" in medians:
        wx = medians["wikiextractor"]
        result["speedup_vs_wikiextractor_wall"] = round(
            ours["xml_mb_per_s"] / wx["xml_mb_per_s"], 2
        )
        result["speedup_vs_wikiextractor_cpu"] = round(wx["cpu_s"] / ours["cpu_s"], 2)
        result["multistream_speedup_vs_wikiextractor_wall"] = round(
            medians["build_index_multistream"]["xml_mb_per_s"] / wx["xml_mb_per_s"], 2
        )
    if rc := write_json(a.out, result):
        return rc
    summary = {k: v for k, v in result.items() if k not in ("runs", "dumps")}
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
