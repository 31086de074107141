"""Speed of the ZIM HTML cleaner (`index_builder.zim_html.html_sections`), per core.

    python benchmarks/bench_zim_html.py [--zim FILE.zim] [--rounds 3]

Reads every HTML article of a ZIM (default: one made from ../shared/data/vital-en.xml.bz2
with ../shared/tools/make_zim.py) into memory, then times, round by round (interleaved):
- `html_sections` on every page;
- a peer: the standard library's `html.parser.HTMLParser` doing nothing but collecting text,
  a floor for any cleaner built on it.
Medians of MB/s of HTML and the ratio go to benchmarks/results/zim_html.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

from bench_output import fail, temp_folder, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = Path(os.environ.get("SCIM_EDGE_SHARED", ROOT.parent / "shared"))
RESULTS = ROOT / "benchmarks" / "results" / "zim_html.json"


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def text_only(doc: str) -> str:
    p = _TextOnly()
    p.feed(doc)
    p.close()
    return "".join(p.parts)


def main() -> int:
    from libzim.reader import Archive

    from index_builder.zim_html import html_sections
    from index_builder.zim_reader import ZimReader
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="bench_zim_html", description=__doc__.split("\n\n")[0])
    ap.add_argument("--zim", type=nonempty)
    ap.add_argument("--rounds", type=positive_int, default=3)
    ap.add_argument("--out", type=nonempty, default=str(RESULTS))
    a = ap.parse_args()
    if a.zim is None:
        zim = temp_folder("bench-zim-") / "vital.zim"
        subprocess.run([sys.executable, str(SHARED / "tools" / "make_zim.py"),
                        str(SHARED / "data" / "vital-en.xml.bz2"), "-o", str(zim)],
                       check=True, capture_output=True)  # fmt: skip
    else:
        zim = Path(a.zim)
        try:
            ZimReader(zim)  # build-index's checks: there, readable, a whole ZIM
        except UserError as e:
            return fail(e.one_line(), e.exit_code)
    archive = Archive(str(zim))
    docs = []
    for i in range(archive.entry_count):
        e = archive._get_entry_by_id(i)
        if not e.is_redirect and e.get_item().mimetype.startswith("text/html"):
            docs.append(bytes(e.get_item().content).decode("utf-8", "replace"))
    mb = sum(len(d.encode()) for d in docs) / 1e6
    speeds: dict[str, list[float]] = {"html_sections": [], "stdlib_text_only": []}
    for _ in range(a.rounds):
        for name, fn in (("html_sections", html_sections), ("stdlib_text_only", text_only)):
            t0 = time.perf_counter()
            for d in docs:
                fn(d)
            speeds[name].append(mb / (time.perf_counter() - t0))
    med = {k: round(statistics.median(v), 2) for k, v in speeds.items()}
    result = {
        "benchmark": "zim_html",
        "zim": zim.name,
        "pages": len(docs),
        "html_mb": round(mb, 2),
        "rounds": a.rounds,
        "median_mb_per_s": med,
        "ratio_to_stdlib_text_only": round(med["html_sections"] / med["stdlib_text_only"], 2),
        "load_avg_after": [round(x, 2) for x in os.getloadavg()],
        "runs": speeds,
    }
    if rc := write_json(a.out, result):
        return rc
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
