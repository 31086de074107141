"""How well `confidence` tells right answers from wrong ones, pooled over several eval runs.

    python benchmarks/pooled_trust.py EVAL_DIR [EVAL_DIR ...] [--out FILE]

Each EVAL_DIR is a folder `scim-edge eval --out` wrote (its `per_question.jsonl`). One of
our question sets is small: on 88 questions one answer moving between tiers moves AUROC by
about 0.015. So the README also gives trust pooled over sets ("pooled over the 211
answerable questions of all four"), and this is the command that gives it: for every system
in every run, over the answerable questions together, the number of questions, EM, the mean
confidence and the AUROC of confidence against exact match. Sweep runs, and abstentions
(which carry no confidence), are left out. Writes JSON to stdout, or to --out.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from bench_output import fail, write_text

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def pooled(dirs: list[Path]) -> dict[str, dict[str, float | int | None]]:
    """Per system: n, em, mean_confidence and auroc over the answerable questions of all
    `dirs`. Raises ValueError naming the folder that holds no readable per-question file."""
    from scim_edge.evaluation.calibration import auroc
    from scim_edge.jsonl import jsonl_lines

    conf: dict[str, list[float]] = defaultdict(list)
    right: dict[str, list[bool]] = defaultdict(list)
    for d in dirs:
        path = d / "per_question.jsonl"
        try:
            rows = [json.loads(line) for _, line in jsonl_lines(path.read_text("utf-8"))]
            for r in rows:
                if r.get("sweep_key") is None and r["answerable"] and r["confidence"] is not None:
                    conf[r["run"]].append(float(r["confidence"]))
                    right[r["run"]].append(float(r["em"]) > 0)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise ValueError(f"{path}: not an eval run's per-question file ({e})") from e
    return {
        run: {
            "n": len(conf[run]),
            "em": round(sum(right[run]) / len(right[run]), 4),
            "mean_confidence": round(sum(conf[run]) / len(conf[run]), 4),
            "auroc": None if (a := auroc(conf[run], right[run])) is None else round(a, 4),
        }
        for run in conf
    }


def main(argv: list[str] | None = None) -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty

    ap = OneLineParser(prog="pooled_trust", description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", type=nonempty, nargs="+", metavar="EVAL_DIR")
    ap.add_argument("--out", type=nonempty, help="write the JSON here instead of stdout")
    a = ap.parse_args(argv)
    dirs = [Path(d) for d in a.dirs]
    try:
        result = {"runs": a.dirs, "systems": pooled(dirs)}
    except ValueError as e:
        return fail(str(e))
    text = json.dumps(result, indent=1) + "\n"
    if a.out is None:
        sys.stdout.write(text)
        return 0
    return write_text(a.out, text)


if __name__ == "__main__":
    raise SystemExit(main())
