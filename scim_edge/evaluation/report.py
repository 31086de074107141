"""`report.md` and `results.json` from the harness's figures.

The tables follow the SCIM study's layout: the overall comparison, the stopping
strategies (fixed 1/2/3 iterations against the adaptive stop) and the per-iteration cost,
then what the study did not have room for (latency percentiles, stop reasons, abstention,
per-type breakdown, paired statistics, sensitivity sweeps).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scim_edge.atomic import write_text

LABELS = {
    "standard": "Standard RAG",
    "iter-retgen": "ITER-RETGEN",
    "scim": "SCIM (adaptive)",
    "fixed-1": "Fixed-1",
    "fixed-2": "Fixed-2",
    "fixed-3": "Fixed-3",
    "single-dim": "Single-dim",
    "simrag": "SIM-RAG critic",
}


def label(key: str) -> str:
    return LABELS.get(key, key)


def jsonable(obj: Any) -> Any:
    """NaN and infinities become null so results.json is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    return obj


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–" if x is None or math.isnan(x) else ("∞" if x > 0 else "−∞")
    return f"{x:.{digits}f}"


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:,.1f}"


def _p(x: float | None) -> str:
    if x is None:
        return "–"
    return "<0.001" if x < 0.001 else f"{x:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    out += ["| " + " | ".join(row) + " |" for row in rows]
    return out


def main_table(results: dict[str, Any]) -> list[str]:
    rows = []
    for key, s in results["systems"].items():
        if not s.get("n"):
            continue
        rows.append(
            [
                label(key),
                _num(s["quality"]),
                _pct(s["high"]),
                _pct(s["medium"]),
                _pct(s["low"]),
                _pct(s["em"]),
                _pct(s["f1"]),
                _num(s["avg_iterations"], 2),
                _num(s["avg_passages"], 2),
                _ms(s["time_mean_ms"]),
                _pct(s["converged_1_2"]),
            ]
        )
    return _table(
        [
            "System",
            "Quality",
            "High",
            "Medium",
            "Low",
            "EM",
            "F1",
            "Avg Iter",
            "Avg Passages",
            "Time/q (ms)",
            "Conv. 1–2 it. (Q≥0.75)",
        ],
        rows,
    )


def build_report(results: dict[str, Any], plots: list[str], plot_note: str | None) -> str:
    meta = results["meta"]
    systems: dict[str, Any] = results["systems"]
    lines = ["# scim-edge evaluation", ""]
    unans = meta.get("unanswerable")
    lines += [
        f"- QA file: `{meta.get('qa_file')}` ({meta.get('questions')} questions"
        f"{f', {unans} unanswerable' if unans else ''})",
        f"- Index: `{meta.get('index')}`; generator: `{meta.get('generator')}`; "
        f"profile: `{meta.get('profile')}`; seed: {meta.get('seed')}",
        f"- Settings: θ = {meta.get('theta')}, T_max = {meta.get('t_max')}, "
        f"δ = {meta.get('delta')}, weights = {meta.get('weights')}",
        f"- Started {meta.get('started')}; written {meta.get('finished')}",
        "",
        "EM and F1 are over answerable questions (SQuAD normalisation, best over the gold "
        "aliases). Quality and the tier shares (high Q ≥ 0.7, medium 0.5–0.7, low < 0.5) are "
        "over all questions. Avg Passages counts the distinct passages a system retrieved for a "
        "question. Time is the wall time of one question, end to end, measured after an "
        f"untimed warm-up ({meta.get('warmup', 'full')}). Quality is the five-dimension Q of "
        "the returned answer: Single-dim's answers are re-scored with it (its own relevance "
        "score is kept in per_question.jsonl as loop_quality); an abstention keeps the Q its "
        "loop gave it.",
        "",
    ]
    if any(s.get("errors") for s in systems.values()):
        errs = ", ".join(
            f"{label(k)}: {s['errors']}" for k, s in systems.items() if s.get("errors")
        )
        lines += [f"**Errors** (counted as wrong, Q = 0): {errs}", ""]

    if systems:
        lines += ["## Overall comparison", "", *main_table(results), ""]

        lines += ["## Latency per question (ms)", ""]
        lines += _table(
            ["System", "Mean", "P50", "P75", "P90", "P95"],
            [
                [
                    label(k),
                    _ms(s["time_mean_ms"]),
                    _ms(s["p50_ms"]),
                    _ms(s["p75_ms"]),
                    _ms(s["p90_ms"]),
                    _ms(s["p95_ms"]),
                ]
                for k, s in systems.items()
                if s.get("n")
            ],
        )
        lines.append("")

    stopping = [k for k in ("fixed-1", "fixed-2", "fixed-3", "scim") if k in systems]
    if len(stopping) >= 2:
        lines += ["## Stopping strategies", ""]
        lines += _table(
            ["Strategy", "Quality", "High", "EM", "F1", "Avg Iter", "Avg Passages", "Time/q (ms)"],
            [
                [
                    label(k),
                    _num(systems[k]["quality"]),
                    _pct(systems[k]["high"]),
                    _pct(systems[k]["em"]),
                    _pct(systems[k]["f1"]),
                    _num(systems[k]["avg_iterations"], 2),
                    _num(systems[k]["avg_passages"], 2),
                    _ms(systems[k]["time_mean_ms"]),
                ]
                for k in stopping
                if systems[k].get("n")
            ],
        )
        lines.append("")

    costs = results.get("iteration_costs", {})
    if costs:
        lines += [
            "## Per-iteration cost",
            "",
            "Questions that reached each iteration and the mean time of its steps; Mean Q is "
            "each loop's own score at that iteration.",
            "",
        ]
        rows = []
        # The study's table is SCIM's; the other iterating systems sit beside it. Standard
        # and fixed-1/2 repeat the first iterations of fixed-3, so they are left out.
        order = [
            k for k in ("scim", "iter-retgen", "fixed-3", "single-dim", "simrag") if k in costs
        ] or list(costs)
        for key in order:
            for row in costs[key]:
                if row["reached"] == 0:
                    continue
                rows.append(
                    [
                        label(key),
                        str(row["t"]),
                        str(row["reached"]),
                        _ms(row["retrieval_ms"]),
                        _ms(row["generation_ms"]),
                        _ms(row["evaluation_ms"]),
                        _ms(row["coordination_ms"]),
                        _num(row["mean_quality"]),
                    ]
                )
        lines += _table(
            [
                "System",
                "Iteration",
                "Reached",
                "Retrieval (ms)",
                "Generation (ms)",
                "Evaluation (ms)",
                "Coordination (ms)",
                "Mean Q",
            ],
            rows,
        )
        lines.append("")

    if systems:
        lines += ["## Stop reasons", ""]
        lines += _table(
            ["System", "Stop reasons (count)"],
            [
                [label(k), ", ".join(f"{r}: {c}" for r, c in s["stop_reasons"].items())]
                for k, s in systems.items()
                if s.get("n")
            ],
        )
        lines.append("")
        if any(s.get("n_unanswerable") for s in systems.values()) or "simrag" in systems:
            lines += [
                "## Abstention",
                "",
                "Abstention: share of unanswerable questions answered with an abstention "
                "(the right outcome). Over-abstention: share of answerable questions that "
                "ended in an abstention.",
                "",
            ]
            lines += _table(
                [
                    "System",
                    "Abstention (unanswerable)",
                    "Over-abstention (answerable)",
                    "Recall@5 of gold titles",
                ],
                [
                    [
                        label(k),
                        _pct(s["abstention_unanswerable"]),
                        _pct(s["over_abstention"]),
                        _pct(s["recall_at_5"]),
                    ]
                    for k, s in systems.items()
                    if s.get("n")
                ],
            )
            lines.append("")

        typed = [k for k, s in systems.items() if s.get("by_type")]
        if typed:
            lines += ["## By question type", ""]
            rows = []
            for k in typed:
                for t, s in systems[k]["by_type"].items():
                    rows.append(
                        [
                            label(k),
                            t,
                            str(s["n"]),
                            _num(s["quality"]),
                            _pct(s["high"]),
                            _pct(s["em"]),
                            _pct(s["f1"]),
                            _num(s["avg_iterations"], 2),
                            _num(s["avg_passages"], 2),
                            _ms(s["time_mean_ms"]),
                            _pct(
                                s["abstention_unanswerable"]
                                if not s["n_answerable"]
                                else s["over_abstention"]
                            ),
                        ]
                    )
            lines += _table(
                [
                    "System",
                    "Type",
                    "n",
                    "Quality",
                    "High",
                    "EM",
                    "F1",
                    "Avg Iter",
                    "Avg Passages",
                    "Time/q (ms)",
                    "Abstained",
                ],
                rows,
            )
            lines.append("")

    stats = results.get("statistics", [])
    if stats:
        lines += [
            "## Paired statistics",
            "",
            "Per-question differences A − B; Q over all questions, F1 over answerable ones. "
            "Paired t-test (two-sided); Wilcoxon signed-rank (zero differences dropped, average "
            "ranks for ties, no continuity correction; exact null distribution when n ≤ 50 "
            "without ties, otherwise the normal approximation with tie correction, or exact "
            "sign-flip enumeration when n ≤ 13); Cohen's d_z = mean(diff) / sd(diff); 95% CI "
            f"of the mean difference from {meta.get('bootstrap_resamples', 10000):,} seeded "
            "bootstrap resamples.",
            "",
        ]
        lines += _table(
            [
                "A",
                "B",
                "Metric",
                "n",
                "Mean A",
                "Mean B",
                "Diff",
                "95% CI",
                "t",
                "p (t)",
                "W",
                "p (W)",
                "d",
            ],
            [
                [
                    label(s["a"]),
                    label(s["b"]),
                    "Q" if s["metric"] == "quality" else "F1",
                    str(s["n"]),
                    _num(s["mean_a"]),
                    _num(s["mean_b"]),
                    _num(s["mean_diff"]),
                    f"[{_num(s['ci95_low'])}, {_num(s['ci95_high'])}]",
                    _num(s["t"], 2),
                    _p(s["t_p"]),
                    _num(s["wilcoxon_w"], 1),
                    _p(s["wilcoxon_p"]),
                    _num(s["cohens_d"], 2),
                ]
                for s in stats
            ],
        )
        lines.append("")

    sens = results.get("sensitivity", {})
    if sens:
        lines += ["## Sensitivity", ""]
        lines += sensitivity_lines(sens, meta)

    lines += ["## Plots", ""]
    if plots:
        lines += [f"![{Path(p).stem}]({p})" for p in plots]
    if plot_note:
        lines.append(plot_note)
    lines.append("")
    return "\n".join(lines)


SWEEP_TITLES = {"theta": "Threshold θ", "delta": "Decline margin δ", "weights": "Weight set"}


def sensitivity_lines(sens: dict[str, Any], meta: dict[str, Any] | None = None) -> list[str]:
    lines: list[str] = []
    for key, rows in sens.items():
        lines += [f"### {SWEEP_TITLES.get(key, key)}", ""]
        header = [SWEEP_TITLES.get(key, key), "Quality", "High", "Avg Iter", "F1"]
        if key == "delta":
            header += ["Decline stops", "Degradations caught", "Premature stops"]
        body = []
        for r in rows:
            row = [
                r["value"],
                _num(r["quality"]),
                _pct(r["high"]),
                _num(r["avg_iterations"], 2),
                _pct(r["f1"]),
            ]
            if key == "delta":
                row += [
                    str(r["decline_stops"]),
                    str(r["degradations_caught"]),
                    str(r["premature_stops"]),
                ]
            body.append(row)
        lines += _table(header, body)
        lines.append("")
        if key == "delta":
            lines += [
                "A *decline stop* is a question where SCIM force-accepted because Q fell by at "
                "least δ from the previous iteration and returned the previous answer. It is a "
                "*premature stop* when the same loop with the decline rule disabled went on to "
                "accept an answer (Q ≥ θ) at a later iteration, and a *degradation caught* "
                "otherwise (continuing did not recover).",
                "",
            ]
    return lines


def write_outputs(
    out: Path, results: dict[str, Any], plots: list[str], plot_note: str | None
) -> tuple[Path, Path]:
    results = jsonable(results)
    results["plots"] = plots
    if plot_note:
        results["plot_note"] = plot_note
    res_path = out / "results.json"
    rep_path = out / "report.md"
    write_text(res_path, json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    write_text(rep_path, build_report(results, plots, plot_note))
    return res_path, rep_path
