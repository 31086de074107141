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
from scim_edge.wording import counted

NO_MATPLOTLIB = (
    "Plots skipped: matplotlib is not installed (install the `plots` extra: "
    "pip install 'scim-edge[plots]')."
)


class _Saver:
    """Writes each figure whole to a temporary name, then renames it into place."""

    def __init__(self, plt: Any, pdir: Path) -> None:
        self.plt = plt
        self.pdir = pdir
        self.written: list[str] = []

    def __call__(self, fig: Any, name: str) -> None:
        fig.tight_layout()
        tmp = self.pdir / f".tmp-{os.getpid()}-{name}"
        fig.savefig(tmp, dpi=110, format="png")
        self.plt.close(fig)
        os.replace(tmp, self.pdir / name)
        self.written.append(f"plots/{name}")


def make_plots(
    results: dict[str, Any], records: Sequence[dict[str, Any]], out: Path
) -> tuple[list[str], str | None]:
    """Write the plots under out/plots; return their paths relative to `out` and a note
    (None when all went well)."""
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
    save = _Saver(plt, pdir)
    quality_plot(plt, save, results, systems)
    max_it = max((r["iterations"] for rs in by_run.values() for r in rs), default=1) or 1
    iterations_plot(plt, save, by_run, systems, max_it)
    quality_vs_iterations_plot(plt, save, by_run, systems, max_it)
    time_plot(plt, save, by_run, systems)
    reliability_plot(plt, save, results.get("trust", {}), systems)
    return save.written, None


def quality_plot(plt: Any, save: _Saver, results: dict[str, Any], systems: list[str]) -> None:
    """Quality per system, split into the high/medium/low shares."""
    names = [label(k) for k in systems]
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


def iterations_plot(
    plt: Any, save: _Saver, by_run: dict[str, list[dict[str, Any]]], systems: list[str], max_it: int
) -> None:
    """How many questions used 1, 2, ... iterations, per system."""
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / max_it
    for i in range(1, max_it + 1):
        counts = [sum(1 for r in by_run[k] if r["iterations"] == i) for k in systems]
        xs = [j + (i - 1) * width for j in range(len(systems))]
        ax.bar(xs, counts, width=width, label=counted(i, "iteration"))
    ax.set_xticks(
        [j + 0.4 - width / 2 for j in range(len(systems))],
        [label(k) for k in systems],
        rotation=30,
        ha="right",
    )
    ax.set_ylabel("questions")
    ax.set_title("Iterations used")
    ax.legend(fontsize=8)
    save(fig, "iteration_distribution.png")


def quality_vs_iterations_plot(
    plt: Any, save: _Saver, by_run: dict[str, list[dict[str, Any]]], systems: list[str], max_it: int
) -> None:
    """Mean Q at each iteration, over the questions that reached it."""
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


def time_plot(
    plt: Any, save: _Saver, by_run: dict[str, list[dict[str, Any]]], systems: list[str]
) -> None:
    """Time per question per system."""
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.boxplot([[r["ms"] for r in by_run[k]] or [0.0] for k in systems], showfliers=True)
    ax.set_xticks(range(1, len(systems) + 1), [label(k) for k in systems], rotation=30, ha="right")
    ax.set_ylabel("ms per question")
    ax.set_title("Time per system")
    save(fig, "time_per_system.png")


def reliability_plot(plt: Any, save: _Saver, trust: dict[str, Any], systems: list[str]) -> None:
    """Reliability diagram: per 10 equal-width score bins, the share of right answers
    (exact match) against the mean score, for confidence and for Q. A calibrated signal
    lies on the diagonal; marker area grows with the bin's question count."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for ax, field, title in zip(
        axes, ("confidence", "quality"), ("confidence", "Q (five dimensions)"), strict=True
    ):
        ax.plot([0, 1], [0, 1], linestyle="--", color="#888888", linewidth=1)
        for k in systems:
            cal = (trust.get(k) or {}).get("calibration", {}).get(field) or {}
            pts = [b for b in cal.get("bins", []) if b["n"]]
            if not pts:
                continue
            ax.plot(
                [b["mean_score"] for b in pts],
                [b["accuracy"] for b in pts],
                marker="o",
                label=f"{label(k)} (ECE {cal['em']['ece']:.2f})",
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_xlabel(f"mean {title} in bin")
        ax.set_title(f"Reliability of {title}")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="upper left")
        else:
            ax.text(0.5, 0.5, "no system reports it", ha="center", va="center")
    axes[0].set_ylabel("share right (exact match)")
    save(fig, "reliability.png")
