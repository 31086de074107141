"""PNG plots of an evaluation, drawn with matplotlib (the optional `plots` extra).

matplotlib is imported only here and only when plots are made, with the Agg backend so
no display is needed. Without it, `make_plots` returns no files and a note saying why.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scim_edge.evaluation.report import label

NO_MATPLOTLIB = (
    "Plots skipped: matplotlib is not installed (install the `plots` extra: "
    "pip install 'scim-edge[plots]')."
)


def make_plots(
    results: dict[str, Any], records: Sequence[dict[str, Any]], out: Path
) -> tuple[list[str], str | None]:
    """Write the four plots under out/plots; return their paths relative to `out` and a
    note (None when all went well)."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        return [], NO_MATPLOTLIB

    systems = [k for k, s in results["systems"].items() if s.get("n")]
    if not systems:
        return [], "Plots skipped: no system results."
    by_run: dict[str, list[dict[str, Any]]] = {k: [] for k in systems}
    for r in records:
        if r["run"] in by_run:
            by_run[r["run"]].append(r)
    pdir = out / "plots"
    pdir.mkdir(parents=True, exist_ok=True)
    written: list[str] = []
    names = [label(k) for k in systems]

    def save(fig: Any, name: str) -> None:
        fig.tight_layout()
        tmp = pdir / f".tmp-{os.getpid()}-{name}"  # written whole, then renamed into place
        fig.savefig(tmp, dpi=110, format="png")
        plt.close(fig)
        os.replace(tmp, pdir / name)
        written.append(f"plots/{name}")

    # 1. Quality per system, split into the high/medium/low shares.
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    qs = [results["systems"][k]["quality"] or 0.0 for k in systems]
    ax1.bar(names, qs, color="#4472c4")
    ax1.set_ylabel("mean quality Q")
    ax1.set_ylim(0, 1)
    ax1.set_title("Quality per system")
    bottom = [0.0] * len(systems)
    for tier, color in (("high", "#2e7d32"), ("medium", "#f9a825"), ("low", "#c62828")):
        vals = [100 * (results["systems"][k][tier] or 0.0) for k in systems]
        ax2.bar(names, vals, bottom=bottom, color=color, label=tier)
        bottom = [b + v for b, v in zip(bottom, vals, strict=True)]
    ax2.set_ylabel("% of questions")
    ax2.set_title("Quality tiers")
    ax2.legend(loc="lower right", fontsize=8)
    for ax in (ax1, ax2):
        plt.setp(ax.get_xticklabels(), rotation=30, ha="right")
    save(fig, "quality_per_system.png")

    # 2. Iteration distribution.
    fig, ax = plt.subplots(figsize=(8, 4))
    max_it = max((r["iterations"] for rs in by_run.values() for r in rs), default=1) or 1
    width = 0.8 / max_it
    for i in range(1, max_it + 1):
        counts = [sum(1 for r in by_run[k] if r["iterations"] == i) for k in systems]
        xs = [j + (i - 1) * width for j in range(len(systems))]
        ax.bar(xs, counts, width=width, label=f"{i} iteration{'s' if i > 1 else ''}")
    ax.set_xticks(
        [j + 0.4 - width / 2 for j in range(len(systems))], names, rotation=30, ha="right"
    )
    ax.set_ylabel("questions")
    ax.set_title("Iterations used")
    ax.legend(fontsize=8)
    save(fig, "iteration_distribution.png")

    # 3. Mean Q at each iteration, over the questions that reached it.
    fig, ax = plt.subplots(figsize=(7, 4))
    for k in systems:
        pts = []
        for t in range(1, max_it + 1):
            vals = [
                c["quality"]
                for r in by_run[k]
                for c in r["iteration_costs"]
                if c["t"] == t and c["quality"] is not None
            ]
            if vals:
                pts.append((t, sum(vals) / len(vals)))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label(k))
    ax.set_xlabel("iteration")
    ax.set_ylabel("mean Q of questions reaching it")
    ax.set_xticks(range(1, max_it + 1))
    ax.set_title("Quality vs. iterations")
    ax.legend(fontsize=8)
    save(fig, "quality_vs_iterations.png")

    # 4. Time per question per system.
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.boxplot([[r["ms"] for r in by_run[k]] or [0.0] for k in systems], showfliers=True)
    ax.set_xticks(range(1, len(systems) + 1), names, rotation=30, ha="right")
    ax.set_ylabel("ms per question")
    ax.set_title("Time per system")
    save(fig, "time_per_system.png")
    return written, None
