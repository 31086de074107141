"""Throughput of the wikitext cleaner on the real articles of the enwiki sample.

The index build must beat wikiextractor end to end, so the cleaner alone needs at least
15 MB/s of wikitext on one core. This times ``clean_article`` (and ``clean_article`` plus
``is_disambiguation``, as the builder calls them) over every namespace-0, non-redirect page
of ``../shared/data/enwiki-sample.xml.bz2``; wikiextractor's own text cleaner
(``Extractor.clean_text``) runs on the same articles in the same process, alternating run by
run, so load from other processes on the machine hits both alike. One warm-up, then the
median of 5 runs; MB/s counts UTF-8 bytes of wikitext in, per second of this process's CPU
time (wall-clock figures are recorded too).

    python benchmarks/bench_cleaner.py [--runs 5] [--dump PATH]

Writes benchmarks/results/cleaner.json.
"""

from __future__ import annotations

import bz2
import os
import platform
import statistics
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_output import fail, write_json  # noqa: E402

from index_builder.wikitext import clean_article, is_disambiguation  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "cleaner.json"
DEFAULT_DUMP = ROOT.parent / "shared" / "data" / "enwiki-sample.xml.bz2"
TARGET_MB_S = 15.0


def read_articles(path: Path) -> list[tuple[str, str]]:
    """(title, wikitext) of namespace-0 pages that are not redirects."""
    articles = []
    with bz2.open(path, "rb") as f:
        for _, el in ET.iterparse(f):
            if el.tag.rsplit("}", 1)[-1] != "page":
                continue
            if el.findtext("{*}ns") == "0" and el.find("{*}redirect") is None:
                text = el.findtext("{*}revision/{*}text") or ""
                articles.append((el.findtext("{*}title") or "", text))
            el.clear()
    return articles


def load_dump(path: Path) -> list[tuple[str, str]]:
    """`read_articles` of `path`; UserError when it is missing, cannot be read as a bz2
    MediaWiki dump, or holds no article."""
    from scim_edge.errors import UserError

    if not path.exists():
        raise UserError(f"dump not found: {path}")
    if not path.is_file():
        raise UserError(f"dump {path} is not a file")
    try:
        articles = read_articles(path)
    except (OSError, EOFError, ET.ParseError) as e:
        raise UserError(f"cannot read dump {path}: {e}") from None
    if not articles:
        raise UserError(f"dump {path} holds no articles")
    return articles


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(cpu seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    fn()
    return time.process_time() - cpu, time.perf_counter() - wall


def wikiextractor_cleaner() -> Callable[[str, str], object] | None:
    try:
        from wikiextractor.extract import Extractor
    except ImportError:
        return None

    def clean(title: str, text: str) -> object:
        return Extractor(0, 0, "", title, []).clean_text(text)

    return clean


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int
    from scim_edge.errors import UserError

    parser = OneLineParser(prog="bench_cleaner", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=positive_int, default=5)
    parser.add_argument("--dump", type=nonempty, default=str(DEFAULT_DUMP))
    args = parser.parse_args()
    args.dump = Path(args.dump)
    try:
        articles = load_dump(args.dump)
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    size = sum(len(text.encode("utf-8")) for _, text in articles)
    mb = size / 1e6

    def ours() -> None:
        for _, text in articles:
            clean_article(text)

    def ours_with_dab() -> None:
        for title, text in articles:
            is_disambiguation(text, title)
            clean_article(text)

    wx_clean = wikiextractor_cleaner()

    def wikiextractor() -> None:
        for title, text in articles:
            wx_clean(title, text)

    contenders = {"clean_article": ours, "clean_article+is_disambiguation": ours_with_dab}
    if wx_clean is not None:
        contenders["wikiextractor clean_text"] = wikiextractor
    for fn in contenders.values():  # warm-up
        fn()
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in contenders}
    for _ in range(args.runs):
        for name, fn in contenders.items():
            samples[name].append(timed(fn))

    results = {}
    for name, runs in samples.items():
        cpu = statistics.median(c for c, _ in runs)
        wall = statistics.median(w for _, w in runs)
        results[name] = {
            "median_cpu_s": round(cpu, 4),
            "median_wall_s": round(wall, 4),
            "mb_per_s_cpu": round(mb / cpu, 2),
            "mb_per_s_wall": round(mb / wall, 2),
            "runs_cpu_s": [round(c, 4) for c, _ in runs],
        }

    cleaned = [clean_article(text) for _, text in articles]
    out_bytes = sum(len(t.encode("utf-8")) for secs in cleaned for _, t in secs)
    ours_mb_s = results["clean_article"]["mb_per_s_cpu"]
    report = {
        "benchmark": "wikitext cleaner throughput",
        "dump": args.dump.name,
        "articles": len(articles),
        "wikitext_mb": round(mb, 3),
        "plain_text_mb": round(out_bytes / 1e6, 3),
        "sections": sum(len(s) for s in cleaned),
        "runs": args.runs,
        "results": results,
        "target_mb_per_s": TARGET_MB_S,
        "meets_target": ours_mb_s >= TARGET_MB_S,
        "speedup_vs_wikiextractor_clean_text": (
            round(ours_mb_s / results["wikiextractor clean_text"]["mb_per_s_cpu"], 2)
            if "wikiextractor clean_text" in results
            else None
        ),
        "machine": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_average_1m": round(os.getloadavg()[0], 2),
            "platform": platform.platform(),
        },
    }
    if rc := write_json(OUT, report):
        return rc
    for name, r in results.items():
        print(
            f"{name:34s} {r['mb_per_s_cpu']:7.2f} MB/s (cpu)  {r['mb_per_s_wall']:7.2f} MB/s (wall)"
        )
    print(
        f"target {TARGET_MB_S} MB/s: {'met' if report['meets_target'] else 'MISSED'}; wrote {OUT}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
