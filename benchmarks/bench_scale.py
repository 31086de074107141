"""Scale figures of `build-index` and BM25 search, and their projection to full English
Wikipedia (issue 15, "Every core" and "The scale figures in the README").

    python benchmarks/bench_scale.py                       # 500 and 2000 MB, as the target
    python benchmarks/bench_scale.py --mb 100 300          # a smaller, quicker run

For each size it makes a multistream dump (../shared/tools/make_big_dump.py) and builds it in
a fresh process with every core, recording wall time, XML MB/s, peak RSS of the process tree
(psutil, every 50 ms), CPU seconds of the main process and of the workers, and the index size.
At the largest size it builds again with 1 worker, so the scaling from 1 to N workers, and
where the time goes (the main process adds documents to Tantivy; the workers decompress,
parse and clean), can be read off. Then it times top-50 BM25 searches on every index (one
thread, the qa-dev questions plus article titles, after a warm-up pass): p50, p95, q/s.

Projection to English Wikipedia's pages-articles dump (FULL_XML_GB of XML): build time =
XML / measured MB/s; index size = XML x measured index/XML ratio; peak RSS = the measured peak
(it must not grow between the sizes, which the JSON checks); search latency = the
latency at the largest size scaled in proportion to the passage count (BM25 cost grows with
posting-list length, at most linearly in the corpus for a fixed vocabulary; Tantivy's
block-max WAND skips most of a long list for top-k, and a real dump has a larger vocabulary
and so shorter lists per term than these repeated-sample dumps: an upper bound).
Results: benchmarks/results/scale.json.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench_build_index import MAKE_BIG_DUMP, SHARED, SOURCE, dir_bytes
from bench_output import fail, workdir, write_json

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "scale.json"
FULL_XML_GB = 100.0  # English Wikipedia pages-articles, uncompressed XML (about; see README)
K = 50


class TreeSampler(threading.Thread):
    """Peak RSS of a process tree, and the last-seen CPU seconds of the main process and of
    each child (summed over children at the end), sampled every 50 ms. Each sample also
    keeps the main process's anonymous and file-backed resident memory and the children's
    total, so `by_tenth` can say where in the build the memory is held."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_tree = 0
        self.main_cpu = 0.0
        self.child_cpu: dict[int, float] = {}
        self.samples: list[tuple[float, int, int, int]] = []  # (s, main anon, main file, kids)
        self.stop = threading.Event()

    def by_tenth(self) -> list[dict[str, float]]:
        """The largest of each part, in MB, in each tenth of the build's wall time."""
        if not self.samples:
            return []
        end = self.samples[-1][0] or 1.0
        out = []
        for tenth in range(10):
            part = [x for x in self.samples if tenth <= 10 * x[0] / end < tenth + 1] or [
                self.samples[-1]
            ]
            out.append({
                "tree": round(max(a + f + k for _, a, f, k in part) / 1e6, 1),
                "main_anon": round(max(a for _, a, _, _ in part) / 1e6, 1),
                "main_file": round(max(f for _, _, f, _ in part) / 1e6, 1),
                "workers": round(max(k for _, _, _, k in part) / 1e6, 1),
            })  # fmt: skip
        return out

    def run(self) -> None:
        try:
            proc = psutil.Process(self.pid)
        except psutil.Error:
            return
        t0 = time.perf_counter()
        while not self.stop.is_set():
            try:
                mem = proc.memory_info()
                tree = mem.rss
                kids = 0
                t = proc.cpu_times()
                self.main_cpu = t.user + t.system
                for child in proc.children(recursive=True):
                    try:
                        kids += child.memory_info().rss
                        ct = child.cpu_times()
                        self.child_cpu[child.pid] = ct.user + ct.system
                    except psutil.Error:
                        pass
            except psutil.Error:
                break
            tree += kids
            # on Linux `shared` is the resident file-backed (and shmem) pages
            anon = max(0, mem.rss - mem.shared)
            self.samples.append((time.perf_counter() - t0, anon, mem.shared, kids))
            self.peak_tree = max(self.peak_tree, tree)
            self.stop.wait(0.05)


def build(dump: Path, out: Path, workers: int, env: dict[str, str]) -> dict:
    cmd = [sys.executable, "-m", "scim_edge", "build-index", str(dump), "--out", str(out),
           "--force", "--restart", "--workers", str(workers)]  # fmt: skip
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    sampler = TreeSampler(proc.pid)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}): {err.decode()}")
    m = json.loads((out / "manifest.json").read_text())
    xml = m["source"]["xml_bytes"]
    size = dir_bytes(out)
    return {
        "workers": workers,
        "wall_s": round(wall, 2),
        "xml_bytes": xml,
        "xml_mb_per_s": round(xml / 1e6 / wall, 2),
        "peak_rss_tree_mb": round(sampler.peak_tree / 1e6, 1),
        "rss_by_tenth_mb": sampler.by_tenth(),
        "cpu_main_s": round(sampler.main_cpu, 1),
        "cpu_workers_s": round(sum(sampler.child_cpu.values()), 1),
        "passages": m["counts"]["passages"],
        "articles": m["counts"]["articles"],
        "index_bytes": size,
        "index_bytes_per_gb_xml": round(size / (xml / 1e9)),
        "index_to_xml_ratio": round(size / xml, 3),
    }


def queries(index: Path, n: int) -> list[str]:
    """qa-dev questions (hand-written: used here only to time searches) and lead titles."""
    out = []
    qa = SHARED / "data" / "qa-dev.jsonl"
    if qa.exists():
        out += [json.loads(line)["question"] for line in qa.read_text().splitlines() if line]
    from scim_edge.retrieval import BM25Retriever

    r = BM25Retriever.open(index)
    for p in r.search("history of the world", 200):
        out.append(p.title)
    return out[:n]


def search_times(index: Path, qs: list[str]) -> dict:
    from scim_edge.retrieval import BM25Retriever

    r = BM25Retriever.open(index)
    for q in qs:  # warm-up: the OS cache and Tantivy's
        r.search(q, K)
    times = []
    for q in qs:
        t0 = time.perf_counter()
        r.search(q, K)
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return {
        "queries": len(times),
        "k": K,
        "p50_ms": round(statistics.median(times), 2),
        "p95_ms": round(times[int(0.95 * (len(times) - 1))], 2),
        "qps": round(len(times) / (sum(times) / 1e3), 1),
    }


def project(rows: list[dict], workers_1: dict | None) -> dict:
    """Full English Wikipedia, from the largest sizes measured (method in the module doc)."""
    big = rows[-1]
    mb = FULL_XML_GB * 1e3
    passages_per_gb = big["passages"] / (big["xml_bytes"] / 1e9)
    full_passages = passages_per_gb * FULL_XML_GB
    out = {
        "full_xml_gb": FULL_XML_GB,
        "build_hours": round(mb / big["xml_mb_per_s"] / 3600, 2),
        "index_gb": round(big["index_to_xml_ratio"] * FULL_XML_GB, 1),
        "passages_millions": round(full_passages / 1e6, 1),
        "peak_rss_mb": max(r["peak_rss_tree_mb"] for r in rows),
    }
    if workers_1 is not None:
        out["build_hours_1_worker"] = round(mb / workers_1["xml_mb_per_s"] / 3600, 2)
    for key in ("p50_ms", "p95_ms"):
        # proportional to the passage count: an upper bound (see the module doc)
        out[f"search_{key}"] = round(big["search"][key] * full_passages / big["passages"], 1)
    return out


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_float, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_scale", description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=positive_float, nargs="+", default=[500.0, 2000.0])
    ap.add_argument("--workers", type=positive_int, default=None, help="default: every core")
    ap.add_argument("--queries", type=positive_int, default=300)
    ap.add_argument("--workdir", type=nonempty, help="where dumps and indexes go (default: temp)")
    ap.add_argument("--out", type=nonempty, default=str(RESULTS))
    ap.add_argument("--no-one-worker", action="store_true",
                    help="skip the one-worker build at the largest size")  # fmt: skip
    a = ap.parse_args()
    from index_builder.build import default_workers

    workers = a.workers or default_workers()
    try:
        work = workdir(a.workdir, "--workdir", "bench-scale-")
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    env = dict(os.environ, SCIM_EDGE_HOME=str(work / "home"), PYTHONUNBUFFERED="1")
    rows = []
    for mb in sorted(a.mb):
        dump = work / f"enwiki-{mb:g}mb-multistream.xml.bz2"
        if not dump.exists():
            subprocess.run([sys.executable, str(MAKE_BIG_DUMP), "--source", str(SOURCE), "--mb",
                            str(mb), "--multistream", "-o", str(dump)], check=True)  # fmt: skip
        row = {"mb": mb, "bz2_bytes": dump.stat().st_size,
               **build(dump, work / f"idx-{mb:g}", workers, env)}  # fmt: skip
        row["search"] = search_times(work / f"idx-{mb:g}", queries(work / f"idx-{mb:g}",
                                                                   a.queries))  # fmt: skip
        print(json.dumps(row), file=sys.stderr)
        rows.append(row)
    one = None
    if workers > 1 and not a.no_one_worker:
        big = sorted(a.mb)[-1]
        one = build(work / f"enwiki-{big:g}mb-multistream.xml.bz2", work / "idx-1w", 1, env)
        print(json.dumps(one), file=sys.stderr)
    top = rows[-1]
    result = {
        "benchmark": "scale",
        "sizes_mb": sorted(a.mb),
        "rows": rows,
        "one_worker_at_largest": one,
        "speedup_workers": round(top["xml_mb_per_s"] / one["xml_mb_per_s"], 2) if one else None,
        # Where the time goes at the largest size: the main process (Tantivy writer, document
        # building, result unpickling) against the workers (bz2, XML, cleaning).
        "main_cpu_share_of_wall": round(top["cpu_main_s"] / top["wall_s"], 2),
        "workers_cpu_per_worker_share_of_wall": round(
            top["cpu_workers_s"] / workers / top["wall_s"], 2
        ),
        "peak_rss_under_1gb": all(r["peak_rss_tree_mb"] < 1000 for r in rows),
        "peak_rss_growth_smallest_to_largest": round(
            rows[-1]["peak_rss_tree_mb"] / rows[0]["peak_rss_tree_mb"], 2
        ),
        "projection_full_english": project(rows, one),
        "machine": {
            "cpus": os.cpu_count(),
            "workers": workers,
            "python": platform.python_version(),
            "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        },
    }
    if rc := write_json(a.out, result):
        return rc
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
