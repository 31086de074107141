"""Does a system's trust signal track whether its answers are right?

Computed from per_question.jsonl records alone (like every harness figure), per run:

- `calibration`: AUROC and ECE (10 equal-width bins) of the calibrated `confidence` and of
  the five-dimension Q against correctness, where correct means exact match (`em`), and
  the cheap variant F1 >= 0.5 (`f1`); plus the reliability bins for the diagram. Over
  the answers a run gave: an abstention carries no answer to trust (the abstention table
  judges those), and counting its Q of 0 as a "low score" would credit a signal for the
  loop's abstaining. A non-abstaining answer to an unanswerable question counts as wrong.
  Confidence figures cover the answers that carry one.
- `q_f1`: Pearson and Spearman correlation of Q with F1 over the answerable questions, as
  the SCIM paper reports the relation of its score to answer quality.
- `critic`: for a critic loop, per judged round (SIM-RAG §4.5), the accept-correct rate
  (of the answers the Critic accepted, the share that were right) and the reject-incorrect
  rate (of the answers it rejected, the share that were wrong), overall and by round.
- `tiers`: the confidence tiers users see (High, Medium, Low): how many answers each got
  and the share of them that were right, the test of whether "High" can be believed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scim_edge.evaluation.calibration import auroc, ece, pearson, reliability_bins, spearman
from scim_edge.trained_critic import confidence_tier

F1_CORRECT = 0.5  # the F1 variant of correctness


def _signal(scores: Sequence[float], labels: Sequence[float]) -> dict[str, Any]:
    return {
        "auroc": auroc(scores, labels),
        "ece": ece(scores, labels),
        "mean_correct": _mean([s for s, y in zip(scores, labels, strict=True) if y]),
        "mean_wrong": _mean([s for s, y in zip(scores, labels, strict=True) if not y]),
    }


def _mean(xs: Sequence[float]) -> float | None:
    return float(sum(xs) / len(xs)) if xs else None


def _given(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answers given: neither abstentions nor errors."""
    return [r for r in records if r.get("status") != "error" and not r.get("abstained")]


def calibration(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """AUROC / ECE / reliability bins of confidence and Q against EM and F1 >= 0.5."""
    ok = _given(records)
    out: dict[str, Any] = {"n": len(ok)}
    for field in ("confidence", "quality"):
        rows = [r for r in ok if r.get(field) is not None]
        scores = [float(r[field]) for r in rows]
        em = [float(r["em"]) for r in rows]
        f1 = [float(r["f1"] >= F1_CORRECT) for r in rows]
        out[field] = {
            "n": len(rows),
            "em": _signal(scores, em),
            "f1": _signal(scores, f1),
            "bins": reliability_bins(scores, em),
        }
    return out


def q_f1_correlation(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    rows = [r for r in records if r.get("answerable") and r.get("status") != "error"]
    qs = [float(r["quality"]) for r in rows]
    f1s = [float(r["f1"]) for r in rows]
    r, p = pearson(qs, f1s)
    rho, p_rho = spearman(qs, f1s)
    return {"n": len(rows), "pearson": r, "pearson_p": p, "spearman": rho, "spearman_p": p_rho}


def _rates(rounds: Sequence[dict[str, Any]]) -> dict[str, Any]:
    accepted = [r for r in rounds if r["accept"]]
    rejected = [r for r in rounds if not r["accept"]]
    return {
        "rounds": len(rounds),
        "accepted": len(accepted),
        "rejected": len(rejected),
        "accept_correct": _mean([float(r["correct"]) for r in accepted]),
        "reject_incorrect": _mean([float(not r["correct"]) for r in rejected]),
    }


def critic_rates(records: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The Critic's accept-correct and reject-incorrect rates over every judged round;
    None for a run whose records hold no judged rounds (a loop without a Critic)."""
    rounds = [rd for r in records for rd in r.get("rounds") or []]
    if not rounds:
        return None
    ts = sorted({rd["t"] for rd in rounds})
    return {
        **_rates(rounds),
        "by_round": {str(t): _rates([rd for rd in rounds if rd["t"] == t]) for t in ts},
    }


def tiers(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per confidence tier, over the answers given that carry a confidence (as
    `calibration` counts them): how many, and the share right by exact match."""
    right: dict[str, list[float]] = {"high": [], "medium": [], "low": []}
    for r in _given(records):
        if r.get("confidence") is not None:
            right[confidence_tier(float(r["confidence"]))].append(float(r["em"]))
    return {tier: {"n": len(ems), "right": _mean(ems)} for tier, ems in right.items()}


def trust_figures(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "calibration": calibration(records),
        "q_f1": q_f1_correlation(records),
        "critic": critic_rates(records),
        "tiers": tiers(records),
    }
