"""How well a score tracks correctness: AUROC, ECE, reliability bins, Pearson, Spearman.

A trust signal (the calibrated `confidence`, or the heuristic Q) is only useful if higher
values mean "more likely right". AUROC asks whether it *ranks* right answers above wrong
ones (0.5 is chance); ECE asks whether its *values* are probabilities (a 0.8 is right 80%
of the time). Both are computed here with numpy alone, like `stats.py`, so the run-time
path needs neither scikit-learn nor SciPy; the tests check them against both.

Conventions (matching `sklearn.metrics.roc_auc_score` and the usual ECE):
- AUROC is the Mann-Whitney probability that a random positive outscores a random
  negative, ties counting one half (average ranks); undefined (None) with one class only.
- ECE uses `bins` equal-width bins over [0, 1], each (lo, hi] as in Guo et al. (2017)
  and `sklearn.calibration.calibration_curve` (0.0 joins the first bin); scores outside
  [0, 1] are clipped. ECE = sum over bins of (n_b / N) * |acc_b - conf_b|.
- Spearman's rho is Pearson's r of the average ranks; the p-values of both use the t
  distribution with n - 2 degrees of freedom (as `scipy.stats.pearsonr` / `spearmanr`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from scim_edge.evaluation.stats import rank_average, t_sf

ECE_BINS = 10


def _arrays(scores: Sequence[float], labels: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("scores and labels must be 1-D and of equal length")
    return x, y


def auroc(scores: Sequence[float], labels: Sequence[bool | float]) -> float | None:
    """Area under the ROC curve of `scores` for binary `labels` (truthy = positive)."""
    x, y = _arrays(scores, labels)
    pos = y > 0.5
    n_pos = int(pos.sum())
    n_neg = len(y) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks, _ = rank_average(x)
    u = float(ranks[pos].sum()) - n_pos * (n_pos + 1) / 2.0
    return u / (n_pos * n_neg)


def reliability_bins(
    scores: Sequence[float], labels: Sequence[bool | float], bins: int = ECE_BINS
) -> list[dict[str, Any]]:
    """Per equal-width bin: its edges, count, mean score and share of positives (None
    where the bin is empty). The points of a reliability diagram."""
    x, y = _arrays(scores, labels)
    x = np.clip(x, 0.0, 1.0)
    edges = np.linspace(0.0, 1.0, bins + 1)
    idx = np.searchsorted(edges[1:-1], x)  # bins (lo, hi]; 0.0 joins the first
    out = []
    for b in range(bins):
        sel = idx == b
        n = int(sel.sum())
        out.append(
            {
                "lo": float(edges[b]),
                "hi": float(edges[b + 1]),
                "n": n,
                "mean_score": float(x[sel].mean()) if n else None,
                "accuracy": float((y[sel] > 0.5).mean()) if n else None,
            }
        )
    return out


def ece(
    scores: Sequence[float], labels: Sequence[bool | float], bins: int = ECE_BINS
) -> float | None:
    """Expected calibration error over `bins` equal-width bins (None with no scores)."""
    rows = reliability_bins(scores, labels, bins)
    total = sum(r["n"] for r in rows)
    if total == 0:
        return None
    return float(sum(r["n"] / total * abs(r["accuracy"] - r["mean_score"]) for r in rows if r["n"]))


def _corr_p(r: float, n: int) -> float | None:
    if n < 3:
        return None
    if abs(r) >= 1.0:
        return 0.0
    t = r * math.sqrt((n - 2) / (1.0 - r * r))
    return min(1.0, 2.0 * t_sf(abs(t), n - 2))


def pearson(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """Pearson's r and its two-sided p-value; (None, None) when either side is constant
    or there are fewer than two pairs."""
    a, b = _arrays(x, y)
    if len(a) < 2:
        return None, None
    da, db = a - a.mean(), b - b.mean()
    denom = math.sqrt(float((da * da).sum()) * float((db * db).sum()))
    if denom == 0.0:
        return None, None
    r = max(-1.0, min(1.0, float((da * db).sum()) / denom))
    return r, _corr_p(r, len(a))


def spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    """Spearman's rho (Pearson's r of average ranks) and its two-sided p-value."""
    a, b = _arrays(x, y)
    if len(a) < 2:
        return None, None
    return pearson(rank_average(a)[0], rank_average(b)[0])
