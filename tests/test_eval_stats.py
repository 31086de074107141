"""The statistics against SciPy on fixed arrays (SciPy is a dev dependency only)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from scim_edge.evaluation import stats

scipy_stats = pytest.importorskip("scipy.stats")

# Fixed paired samples of the shapes the harness sees.
Q_SCIM = [0.71, 0.64, 0.82, 0.55, 0.77, 0.69, 0.73, 0.48, 0.81, 0.66, 0.59, 0.74, 0.70, 0.62]
Q_STD = [0.62, 0.60, 0.80, 0.57, 0.70, 0.61, 0.73, 0.41, 0.75, 0.66, 0.52, 0.71, 0.58, 0.63]
F1_A = [1.0, 0.0, 0.5, 1.0, 0.0, 0.667, 1.0, 0.0, 0.4, 1.0, 0.0, 0.25, 1.0, 0.8, 0.0, 1.0]
F1_B = [1.0, 0.0, 0.0, 1.0, 0.5, 0.667, 0.0, 0.0, 0.4, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
RNG = np.random.default_rng(7)
LONG_A = np.round(RNG.normal(0.6, 0.1, 80), 2)
LONG_B = np.round(LONG_A + RNG.normal(0.02, 0.05, 80), 2)


@pytest.mark.parametrize("df", [1, 2, 3.5, 7, 13, 39, 120, 1000])
@pytest.mark.parametrize("t", [-12.0, -2.5, -0.7, 0.0, 0.3, 1.96, 4.0, 30.0])
def test_t_cdf_matches_scipy(t: float, df: float) -> None:
    assert stats.t_cdf(t, df) == pytest.approx(scipy_stats.t.cdf(t, df), rel=1e-10, abs=1e-14)


@pytest.mark.parametrize(
    ("a", "b", "x"), [(0.5, 0.5, 0.2), (2, 3, 0.9), (10, 0.5, 0.97), (50, 40, 0.55), (0.1, 8, 1e-4)]
)
def test_betainc_matches_scipy(a: float, b: float, x: float) -> None:
    from scipy.special import betainc

    assert stats.betainc(a, b, x) == pytest.approx(betainc(a, b, x), rel=1e-11)


@pytest.mark.parametrize(("a", "b"), [(Q_SCIM, Q_STD), (F1_A, F1_B), (LONG_A, LONG_B)])
def test_paired_ttest_matches_scipy(a, b) -> None:
    ours = stats.paired_ttest(a, b)
    ref = scipy_stats.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-10)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_paired_ttest_degenerate() -> None:
    same = stats.paired_ttest([0.5, 0.6, 0.7], [0.5, 0.6, 0.7])
    assert math.isnan(same.statistic) and math.isnan(same.pvalue)
    shifted = stats.paired_ttest([1.5, 2.5, 3.5], [1.0, 2.0, 3.0])
    assert shifted.statistic == math.inf and shifted.pvalue == 0.0


@pytest.mark.parametrize(
    ("a", "b", "method"),
    [
        # no ties, no zeros, n <= 50: exact null distribution
        (
            [0.5 + k / 64 for k in (9, -1, 5, 14, -3, 11, 2, 7, -6, 13, 4)],
            [0.5] * 11,
            "wilcoxon exact",
        ),
        # zeros and ties, n <= 13: exact sign-flip enumeration
        (Q_SCIM[:12], Q_STD[:12], "wilcoxon exact sign-flip"),
        # zeros and ties, 13 < n <= 50: normal approximation with tie correction
        (F1_A, F1_B, "wilcoxon normal"),
        (Q_SCIM + Q_STD, Q_STD + Q_SCIM[::-1], "wilcoxon normal"),
        # n > 50: normal approximation
        (LONG_A, LONG_B, "wilcoxon normal"),
    ],
)
def test_wilcoxon_matches_scipy_default(a, b, method) -> None:
    ours = stats.wilcoxon_signed_rank(a, b)
    ref = scipy_stats.wilcoxon(a, b)  # zero_method='wilcox', correction=False, method='auto'
    assert ours.method == method
    assert ours.statistic == pytest.approx(ref.statistic)
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_wilcoxon_continuity_correction_matches_scipy() -> None:
    ours = stats.wilcoxon_signed_rank(LONG_A, LONG_B, correction=True)
    ref = scipy_stats.wilcoxon(LONG_A, LONG_B, correction=True, method="asymptotic")
    assert ours.pvalue == pytest.approx(ref.pvalue, rel=1e-9)


def test_cohens_d_paired() -> None:
    d = np.asarray(Q_SCIM) - np.asarray(Q_STD)
    assert stats.cohens_d_paired(Q_SCIM, Q_STD) == pytest.approx(d.mean() / d.std(ddof=1))
    # d_z equals t / sqrt(n), the identity that ties it to the paired t-test.
    t = scipy_stats.ttest_rel(Q_SCIM, Q_STD).statistic
    assert stats.cohens_d_paired(Q_SCIM, Q_STD) == pytest.approx(t / math.sqrt(len(Q_SCIM)))


def test_bootstrap_ci_is_seeded_and_sane() -> None:
    lo, hi = stats.bootstrap_ci(LONG_B, LONG_A, seed=3)
    assert (lo, hi) == stats.bootstrap_ci(LONG_B, LONG_A, seed=3)
    assert (lo, hi) != stats.bootstrap_ci(LONG_B, LONG_A, seed=4)
    diff = np.asarray(LONG_B) - np.asarray(LONG_A)
    assert lo < diff.mean() < hi
    # Close to SciPy's percentile bootstrap of the mean (Monte Carlo error only).
    ref = scipy_stats.bootstrap(
        (diff,),
        np.mean,
        n_resamples=10_000,
        method="percentile",
        random_state=np.random.default_rng(3),
    ).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.004)
    assert hi == pytest.approx(ref.high, abs=0.004)
    # and to the normal-theory interval for a sample this size
    se = diff.std(ddof=1) / math.sqrt(len(diff))
    assert lo == pytest.approx(diff.mean() - 1.96 * se, abs=0.004)
    assert stats.bootstrap_ci([1.0, 1.0], [1.0, 1.0]) == (0.0, 0.0)


def test_percentiles_match_numpy() -> None:
    xs = [12.0, 3.5, 7.25, 100.0, 41.0, 5.0, 9.0]
    got = stats.percentiles(xs)
    for q in (50, 75, 90, 95):
        assert got[f"p{q}"] == pytest.approx(np.percentile(xs, q))
    assert math.isnan(stats.percentiles([])["p50"])


def test_compare_paired_is_json_ready() -> None:
    out = stats.compare_paired([0.5, 0.6, 0.7], [0.5, 0.6, 0.7])
    assert out["t"] is None and out["wilcoxon_p"] is None and out["mean_diff"] == 0.0
