"""Paired significance statistics, implemented in numpy and math alone.

SciPy is a development dependency only (the tests check these functions against it), so
the run-time path carries its own: the Student t CDF through the regularized incomplete
beta function (Lentz's continued fraction), the paired t-test, the Wilcoxon signed-rank
test, Cohen's d for paired samples, a seeded bootstrap CI and percentiles.

Choices, matching SciPy 1.17's defaults so the figures agree with `scipy.stats`:
- Wilcoxon: zero_method='wilcox' (zero differences are dropped before ranking), tied
  absolute differences get average ranks, no continuity correction (correction=False).
  The p-value follows SciPy's method='auto': with more than 50 pairs, the normal
  approximation (variance reduced by sum(t^3 - t)/48 over tie groups); with at most 50
  pairs and no ties or zeros, the exact null distribution; with ties or zeros and at most
  13 pairs, an exact enumeration of all 2^n sign flips (what SciPy's permutation test does
  at that size); otherwise the normal approximation. The reported statistic is
  min(R+, R-), SciPy's two-sided statistic.
- Cohen's d for paired samples is d_z = mean(diff) / sd(diff) with sd using n - 1.
- The bootstrap CI is the percentile interval of the mean difference over `resamples`
  resamples of the pairs, drawn with numpy's default_rng(seed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

_EPS = 3e-16
_TINY = 1e-300


# ---- special functions ----------------------------------------------------------------


def _nonzero(v: float) -> float:
    return _TINY if abs(v) < _TINY else v


def _lentz_step(aa: float, c: float, d: float) -> tuple[float, float, float]:
    """One step of the modified Lentz method: new (c, d) and the factor for h."""
    d = 1.0 / _nonzero(1.0 + aa * d)
    c = _nonzero(1.0 + aa / c)
    return c, d, d * c


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction for the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c = 1.0
    d = 1.0 / _nonzero(1.0 - qab * x / qap)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        c, d, factor = _lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), c, d)
        h *= factor
        c, d, delta = _lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), c, d)
        h *= delta
        if abs(delta - 1.0) < _EPS:
            return h
    return h  # converged to machine precision long before this in practice


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) for a, b > 0 and 0 <= x <= 1."""
    if a <= 0 or b <= 0:
        raise ValueError("betainc needs a > 0 and b > 0")
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    front = math.exp(log_front)
    # The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the
    # symmetry I_x(a, b) = 1 - I_{1-x}(b, a) on the other side.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """CDF of Student's t distribution with `df` degrees of freedom."""
    if math.isnan(t) or df <= 0:
        return math.nan
    if math.isinf(t):
        return 1.0 if t > 0 else 0.0
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))  # P(T > |t|)
    return 1.0 - tail if t > 0 else tail


def t_sf(t: float, df: float) -> float:
    return t_cdf(-t, df)


def norm_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2.0))


# ---- tests ----------------------------------------------------------------------------


@dataclass
class TestResult:
    statistic: float
    pvalue: float
    n: int
    method: str = ""

    def to_dict(self) -> dict[str, float | int | str]:
        return asdict(self)


def _diffs(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("paired samples must be 1-D and of equal length")
    return x - y


def paired_ttest(a: Sequence[float], b: Sequence[float]) -> TestResult:
    """Two-sided paired t-test of mean(a - b) = 0 (as scipy.stats.ttest_rel)."""
    d = _diffs(a, b)
    n = len(d)
    if n < 2:
        return TestResult(math.nan, math.nan, n, "paired t")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    if sd == 0.0:
        if mean == 0.0:
            return TestResult(math.nan, math.nan, n, "paired t")
        return TestResult(math.copysign(math.inf, mean), 0.0, n, "paired t")
    t = mean / (sd / math.sqrt(n))
    p = min(1.0, 2.0 * t_sf(abs(t), n - 1))
    return TestResult(t, p, n, "paired t")


def rank_average(values: np.ndarray) -> tuple[np.ndarray, list[int]]:
    """Average ranks (1-based) and the sizes of the tie groups."""
    order = np.argsort(values, kind="mergesort")
    sorted_vals = values[order]
    ranks = np.empty(len(values), dtype=float)
    ties: list[int] = []
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2.0 + 1.0
        ties.append(j - i + 1)
        i = j + 1
    return ranks, ties


def _signed_rank_null_counts(n: int) -> np.ndarray:
    """counts[k] = number of subsets of {1..n} whose sum is k (exact null of R+)."""
    total = n * (n + 1) // 2
    counts = np.zeros(total + 1, dtype=float)
    counts[0] = 1.0
    for r in range(1, n + 1):
        counts[r:] = counts[r:] + counts[: total + 1 - r].copy()
    return counts


def wilcoxon_signed_rank(
    a: Sequence[float], b: Sequence[float], *, correction: bool = False
) -> TestResult:
    """Two-sided Wilcoxon signed-rank test on the pairs (see the module notes)."""
    d_all = _diffs(a, b)
    n_zero = int(np.count_nonzero(d_all == 0))
    d = d_all[d_all != 0]  # zero_method='wilcox'
    n = len(d)
    if n == 0:
        return TestResult(math.nan, math.nan, 0, "wilcoxon")
    ranks, ties = rank_average(np.abs(d))
    r_plus = float(ranks[d > 0].sum())
    r_minus = float(ranks[d < 0].sum())
    statistic = min(r_plus, r_minus)
    has_ties = any(t > 1 for t in ties)
    n_orig = len(d_all)

    if n_orig <= 50 and not has_ties and n_zero == 0:
        counts = _signed_rank_null_counts(n)
        probs = counts / counts.sum()
        k = int(round(r_plus))
        p = 2.0 * min(probs[k:].sum(), probs[: k + 1].sum())
        return TestResult(statistic, min(1.0, float(p)), n, "wilcoxon exact")

    if n_orig <= 13:
        # Every sign assignment of the non-zero differences is equally likely under H0.
        # (Zeros flip to themselves, so each null value appears 2^n_zero times; the
        # proportions are the same.)
        flips = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(float)
        null = flips @ ranks
        tol = abs(r_plus) * 1e-14 + 1e-9
        less = np.count_nonzero(null <= r_plus + tol) / len(null)
        greater = np.count_nonzero(null >= r_plus - tol) / len(null)
        p = min(1.0, 2.0 * min(less, greater))
        return TestResult(statistic, p, n, "wilcoxon exact sign-flip")

    mean = n * (n + 1) / 4.0
    var = (n * (n + 1) * (2 * n + 1) - 0.5 * sum(t**3 - t for t in ties)) / 24.0
    se = math.sqrt(var)
    if se == 0.0:
        return TestResult(statistic, math.nan, n, "wilcoxon normal")
    z = (r_plus - mean) / se
    if correction and z != 0:
        z -= math.copysign(0.5 / se, z)
    p = min(1.0, 2.0 * norm_sf(abs(z)))
    return TestResult(statistic, p, n, "wilcoxon normal")


def cohens_d_paired(a: Sequence[float], b: Sequence[float]) -> float:
    """d_z = mean(a - b) / sd(a - b), sd with n - 1 (nan when undefined)."""
    d = _diffs(a, b)
    if len(d) < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    mean = float(d.mean())
    if sd == 0.0:
        return 0.0 if mean == 0.0 else math.copysign(math.inf, mean)
    return mean / sd


def bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of mean(a - b), resampling the pairs with replacement."""
    d = _diffs(a, b)
    if len(d) == 0:
        return (math.nan, math.nan)
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    chunk = max(1, 2_000_000 // max(1, len(d)))  # bound memory for long QA sets
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        idx = rng.integers(0, len(d), size=(stop - start, len(d)))
        means[start:stop] = d[idx].mean(axis=1)
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    return (float(lo), float(hi))


def percentiles(
    values: Sequence[float], qs: Sequence[float] = (50, 75, 90, 95)
) -> dict[str, float]:
    """Linear-interpolation percentiles (numpy's default), keyed 'p50', 'p75', ..."""
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return {f"p{int(q)}": math.nan for q in qs}
    return {f"p{int(q)}": float(np.percentile(arr, q)) for q in qs}


def compare_paired(
    a: Sequence[float], b: Sequence[float], *, seed: int = 0, resamples: int = 10_000
) -> dict[str, float | int | None]:
    """Every paired figure for a vs b in one dict (JSON-ready; nan becomes None)."""
    t = paired_ttest(a, b)
    w = wilcoxon_signed_rank(a, b)
    lo, hi = bootstrap_ci(a, b, resamples=resamples, seed=seed)
    d = _diffs(a, b)
    out = {
        "n": len(d),
        "mean_a": float(np.mean(a)) if len(d) else math.nan,
        "mean_b": float(np.mean(b)) if len(d) else math.nan,
        "mean_diff": float(d.mean()) if len(d) else math.nan,
        "t": t.statistic,
        "t_p": t.pvalue,
        "wilcoxon_w": w.statistic,
        "wilcoxon_p": w.pvalue,
        "wilcoxon_method": w.method,
        "cohens_d": cohens_d_paired(a, b),
        "ci95_low": lo,
        "ci95_high": hi,
    }
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in out.items()}
