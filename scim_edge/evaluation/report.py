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
from scim_edge.evaluation.oracle import ORACLE_SYSTEMS
from scim_edge.trained_critic import HIGH, MEDIUM

LABELS = {
    "standard": "Standard RAG",
    "iter-retgen": "ITER-RETGEN",
    "scim": "SCIM (adaptive)",
    "fixed-1": "Fixed-1",
    "fixed-2": "Fixed-2",
    "fixed-3": "Fixed-3",
    "single-dim": "Single-dim",
    "simrag": "SIM-RAG critic",
    "simrag-oracle": "SIM-RAG, oracle critic †",
    "scim-oracle": "Oracle SCIM †",
}
ORACLE_FOOTNOTE = (
    "† Uses the gold answers (SIM-RAG §4.6): the oracle critic accepts exactly the correct "
    "answers, and Oracle SCIM's Q is 1 for a correct answer and 0 otherwise. An upper bound "
    "on the same retrieval and reader, not a system a user can run."
)


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
                _pct(s.get("answer_in_passages")),
                _pct(s.get("em_given_in_passages")),
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
            "Answer in passages",
            "EM given in passages",
            "Avg Iter",
            "Avg Passages",
            "Time/q (ms)",
            "Conv. 1–2 it. (Q≥0.75)",
        ],
        rows,
    )


def _live(systems: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The systems that answered at least one question, in run order."""
    return [(k, s) for k, s in systems.items() if s.get("n")]


def _section(title: str, intro: str | None, body: list[str]) -> list[str]:
    return [f"## {title}", "", *([intro, ""] if intro else []), *body, ""]


def header_lines(meta: dict[str, Any]) -> list[str]:
    unans = meta.get("unanswerable")
    return [
        "# scim-edge evaluation",
        "",
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
        "the returned answer: Single-dim's and Oracle SCIM's answers are re-scored with it "
        "(the loop's own score is kept in per_question.jsonl as loop_quality); an abstention "
        "keeps the Q its loop gave it.",
        "",
    ]


def errors_lines(systems: dict[str, Any]) -> list[str]:
    errs = ", ".join(f"{label(k)}: {s['errors']}" for k, s in systems.items() if s.get("errors"))
    return [f"**Errors** (counted as wrong, Q = 0): {errs}", ""] if errs else []


def overall_lines(results: dict[str, Any]) -> list[str]:
    note = (
        "Answer in passages: share of answerable questions where a gold answer (SQuAD-"
        "normalised, whole words) occurs in the passages the system finally held; EM given in "
        "passages: the EM on those questions, i.e. what the reader made of evidence it had."
    )
    body = [*main_table(results)]
    if any(k in ORACLE_SYSTEMS for k in results["systems"]):
        body += ["", ORACLE_FOOTNOTE]
    return _section("Overall comparison", note, body)


def latency_lines(systems: dict[str, Any]) -> list[str]:
    rows = [
        [
            label(k),
            _ms(s["time_mean_ms"]),
            _ms(s["p50_ms"]),
            _ms(s["p75_ms"]),
            _ms(s["p90_ms"]),
            _ms(s["p95_ms"]),
        ]
        for k, s in _live(systems)
    ]
    return _section(
        "Latency per question (ms)",
        None,
        _table(["System", "Mean", "P50", "P75", "P90", "P95"], rows),
    )


def stopping_lines(systems: dict[str, Any]) -> list[str]:
    stopping = [k for k in ("fixed-1", "fixed-2", "fixed-3", "scim") if k in systems]
    if len(stopping) < 2:
        return []
    rows = [
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
    ]
    header = ["Strategy", "Quality", "High", "EM", "F1", "Avg Iter", "Avg Passages", "Time/q (ms)"]
    return _section("Stopping strategies", None, _table(header, rows))


def iteration_cost_lines(costs: dict[str, list[dict[str, Any]]]) -> list[str]:
    if not costs:
        return []
    # The study's table is SCIM's; the other iterating systems sit beside it. Standard
    # and fixed-1/2 repeat the first iterations of fixed-3, so they are left out.
    order = [
        k for k in ("scim", "iter-retgen", "fixed-3", "single-dim", "simrag") if k in costs
    ] or list(costs)
    rows = [
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
        for key in order
        for row in costs[key]
        if row["reached"]
    ]
    header = [
        "System",
        "Iteration",
        "Reached",
        "Retrieval (ms)",
        "Generation (ms)",
        "Evaluation (ms)",
        "Coordination (ms)",
        "Mean Q",
    ]
    intro = (
        "Questions that reached each iteration and the mean time of its steps; Mean Q is "
        "each loop's own score at that iteration."
    )
    return _section("Per-iteration cost", intro, _table(header, rows))


def stop_reason_lines(systems: dict[str, Any]) -> list[str]:
    rows = [
        [label(k), ", ".join(f"{r}: {c}" for r, c in s["stop_reasons"].items())]
        for k, s in _live(systems)
    ]
    return _section("Stop reasons", None, _table(["System", "Stop reasons (count)"], rows))


def abstention_lines(systems: dict[str, Any]) -> list[str]:
    if not (any(s.get("n_unanswerable") for s in systems.values()) or "simrag" in systems):
        return []
    intro = (
        "Abstention: share of unanswerable questions answered with an abstention "
        "(the right outcome). Over-abstention: share of answerable questions that "
        "ended in an abstention."
    )
    rows = [
        [label(k), _pct(s["abstention_unanswerable"]), _pct(s["over_abstention"])]
        for k, s in _live(systems)
    ]
    header = ["System", "Abstention (unanswerable)", "Over-abstention (answerable)"]
    return _section("Abstention", intro, _table(header, rows))


def retrieval_reader_lines(systems: dict[str, Any]) -> list[str]:
    """Where answers are lost: retrieval (the gold answer or article never arrived) or
    reading (it arrived and the reader did not state it)."""
    intro = (
        "Recall@5: share of the gold articles (the QA file's `titles`) among the titles of "
        "the first five passages a system retrieved. Answer in passages: a gold answer occurs "
        "in the passages it finally held (answerable questions). The EM and F1 columns are "
        "over the questions whose passages held a gold answer; the gap to 100% is the "
        "reader's loss."
    )
    rows = [
        [
            label(k),
            _pct(s.get("recall_at_5")),
            _pct(s.get("answer_in_passages")),
            str(s.get("n_answer_in_passages", "–")),
            _pct(s.get("em_given_in_passages")),
            _pct(s.get("f1_given_in_passages")),
        ]
        for k, s in _live(systems)
    ]
    header = [
        "System",
        "Recall@5 of gold titles",
        "Answer in passages",
        "n in passages",
        "EM given in passages",
        "F1 given in passages",
    ]
    return _section("Retrieval and reader", intro, _table(header, rows))


def by_type_lines(systems: dict[str, Any]) -> list[str]:
    rows = [
        [
            label(k),
            t,
            str(s["n"]),
            _num(s["quality"]),
            _pct(s["high"]),
            _pct(s["em"]),
            _pct(s["f1"]),
            _pct(s.get("answer_in_passages")),
            _num(s["avg_iterations"], 2),
            _num(s["avg_passages"], 2),
            _ms(s["time_mean_ms"]),
            _pct(s["abstention_unanswerable"] if not s["n_answerable"] else s["over_abstention"]),
        ]
        for k, sys_s in systems.items()
        for t, s in (sys_s.get("by_type") or {}).items()
    ]
    if not rows:
        return []
    header = [
        "System",
        "Type",
        "n",
        "Quality",
        "High",
        "EM",
        "F1",
        "Answer in passages",
        "Avg Iter",
        "Avg Passages",
        "Time/q (ms)",
        "Abstained",
    ]
    return _section("By question type", None, _table(header, rows))


def _r_p(r: float | None, p: float | None) -> str:
    return "–" if r is None else f"{r:+.3f} (p {_p(p)})"


def trust_lines(trust: dict[str, Any]) -> list[str]:
    """AUROC / ECE of confidence and of Q against correctness, and Q's correlation with F1."""
    if not trust:
        return []
    rows = []
    for key, t in trust.items():
        cal = t["calibration"]
        for field, name in (("confidence", "confidence"), ("quality", "Q")):
            c = cal.get(field) or {}
            if not c.get("n"):
                continue
            rows.append(
                [
                    label(key),
                    name,
                    str(c["n"]),
                    _num(c["em"]["auroc"]),
                    _num(c["em"]["ece"]),
                    _num(c["f1"]["auroc"]),
                    _num(c["f1"]["ece"]),
                    _num(c["em"]["mean_correct"]),
                    _num(c["em"]["mean_wrong"]),
                ]
            )
    header = [
        "System",
        "Signal",
        "n",
        "AUROC (EM)",
        "ECE (EM)",
        "AUROC (F1≥0.5)",
        "ECE (F1≥0.5)",
        "Mean if right",
        "Mean if wrong",
    ]
    intro = (
        "Does the trust signal track correctness? Over the answers each system gave "
        "(abstentions are judged in the abstention table; an answer to an unanswerable "
        "question is wrong). AUROC: the chance that a "
        "right answer scores above a wrong one (0.5 is chance, ties count half). ECE: expected "
        "calibration error over 10 equal-width bins, (lo, hi]. Correct means exact match, or "
        "F1 ≥ 0.5 in the second pair of columns. `confidence` is the calibrated probability a "
        "loop reports; Q is the five-dimension score (not meant as a probability, so its ECE "
        "says how far it is from one)."
    )
    corr_rows = [
        [
            label(k),
            str(t["q_f1"]["n"]),
            _r_p(t["q_f1"]["pearson"], t["q_f1"]["pearson_p"]),
            _r_p(t["q_f1"]["spearman"], t["q_f1"]["spearman_p"]),
        ]
        for k, t in trust.items()
        if t["q_f1"]["n"]
    ]
    corr = [
        "",
        "Correlation of Q with F1 over answerable questions, as the SCIM paper reports it "
        "(two-sided p from the t distribution):",
        "",
        *_table(["System", "n", "Pearson r", "Spearman ρ"], corr_rows),
    ]
    return _section(
        "Trust: confidence and Q against correctness", intro, _table(header, rows) + corr
    )


def tier_lines(trust: dict[str, Any]) -> list[str]:
    """The tiers users see, and how often an answer in each was right."""
    rows = []
    for key, t in trust.items():
        ts = t.get("tiers") or {}
        if not sum(ts.get(k, {}).get("n", 0) for k in ("high", "medium", "low")):
            continue
        cells = [label(key)]
        for k in ("high", "medium", "low"):
            c = ts.get(k, {})
            cells += [str(c.get("n", 0)), _pct(c.get("right"))]
        rows.append(cells)
    if not rows:
        return []
    high, medium = f"{HIGH:.0%}", f"{MEDIUM:.0%}"
    intro = (
        f"The confidence tier each answer is shown with (High ≥ {high}, Medium ≥ {medium}, "
        "Low below), over the answers given, and the share of each tier that was right "
        "(exact match; an answer to an unanswerable question is wrong). A tier means what "
        f"it says when High answers are right at least {high} of the time and Low ones less "
        f"than {medium}."
    )
    header = ["System", "High", "right", "Medium", "right", "Low", "right"]
    return _section("Confidence tiers as users see them", intro, _table(header, rows))


def critic_lines(trust: dict[str, Any]) -> list[str]:
    """SIM-RAG §4.5: how often the Critic's accepts are right and its rejects are wrong."""
    rows = []
    for key, t in trust.items():
        c = t.get("critic")
        if not c:
            continue
        for round_key, r in [("all", c), *c["by_round"].items()]:
            rows.append(
                [
                    label(key),
                    round_key,
                    str(r["rounds"]),
                    str(r["accepted"]),
                    _pct(r["accept_correct"]),
                    str(r["rejected"]),
                    _pct(r["reject_incorrect"]),
                ]
            )
    if not rows:
        return []
    intro = (
        "Every round a Critic judged (SIM-RAG §4.5). Accept-correct: of the answers it "
        "accepted, the share that were right (exact match); reject-incorrect: of the answers "
        "it rejected, the share that were wrong. A round that ended for want of new passages "
        "is not a new judgement and is not counted."
    )
    header = [
        "System",
        "Round",
        "Judged",
        "Accepted",
        "Accept-correct",
        "Rejected",
        "Reject-incorrect",
    ]
    return _section("Critic verdicts", intro, _table(header, rows))


def statistics_lines(stats: list[dict[str, Any]], meta: dict[str, Any]) -> list[str]:
    if not stats:
        return []
    intro = (
        "Per-question differences A − B; Q over all questions, F1 over answerable ones. "
        "Paired t-test (two-sided); Wilcoxon signed-rank (zero differences dropped, average "
        "ranks for ties, no continuity correction; exact null distribution when n ≤ 50 "
        "without ties, otherwise the normal approximation with tie correction, or exact "
        "sign-flip enumeration when n ≤ 13); Cohen's d_z = mean(diff) / sd(diff); 95% CI "
        f"of the mean difference from {meta.get('bootstrap_resamples', 10000):,} seeded "
        "bootstrap resamples. Oracle runs are left out."
    )
    header = [
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
    ]
    rows = [
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
    ]
    return _section("Paired statistics", intro, _table(header, rows))


def plot_lines(plots: list[str], plot_note: str | None) -> list[str]:
    body = [f"![{Path(p).stem}]({p})" for p in plots]
    return _section("Plots", None, body + ([plot_note] if plot_note else []))


def build_report(results: dict[str, Any], plots: list[str], plot_note: str | None) -> str:
    meta = results["meta"]
    systems: dict[str, Any] = results["systems"]
    trust: dict[str, Any] = results.get("trust", {})
    sens = results.get("sensitivity", {})
    lines = [*header_lines(meta), *errors_lines(systems)]
    if systems:
        lines += overall_lines(results) + retrieval_reader_lines(systems) + latency_lines(systems)
    lines += stopping_lines(systems) + iteration_cost_lines(results.get("iteration_costs", {}))
    if systems:
        lines += stop_reason_lines(systems) + abstention_lines(systems) + by_type_lines(systems)
    lines += trust_lines(trust) + tier_lines(trust) + critic_lines(trust)
    lines += statistics_lines(results.get("statistics", []), meta)
    if sens:
        lines += ["## Sensitivity", "", *sensitivity_lines(sens, meta)]
    lines += plot_lines(plots, plot_note)
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
