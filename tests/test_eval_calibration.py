"""AUROC, ECE, reliability bins and correlations on hand-made arrays, and against
scikit-learn / SciPy where those (development-only) packages are installed."""

from __future__ import annotations

import numpy as np
import pytest

from scim_edge.evaluation.calibration import auroc, ece, pearson, reliability_bins, spearman

LABELS = [1, 1, 1, 0, 0, 0, 1, 0]
SEPARATING = [0.9, 0.8, 0.95, 0.1, 0.3, 0.2, 0.7, 0.4]
RNG = np.random.default_rng(11)
MIXED_SCORES = np.round(RNG.uniform(0, 1, 60), 2)  # rounded: plenty of ties
MIXED_LABELS = (RNG.uniform(0, 1, 60) < MIXED_SCORES).astype(int)


def test_auroc_of_perfectly_separating_scores_is_one() -> None:
    assert auroc(SEPARATING, LABELS) == 1.0


def test_auroc_of_inverted_scores_is_zero() -> None:
    assert auroc([1.0 - s for s in SEPARATING], LABELS) == 0.0


def test_auroc_of_all_tied_scores_is_one_half() -> None:
    assert auroc([0.5] * len(LABELS), LABELS) == 0.5


def test_auroc_counts_a_tie_between_classes_as_one_half() -> None:
    # one positive and one negative share 0.5: 3 of 4 pairs ordered right, 1 tied
    assert auroc([0.9, 0.5, 0.5, 0.1], [1, 1, 0, 0]) == pytest.approx(3.5 / 4)


def test_auroc_is_undefined_with_one_class() -> None:
    assert auroc([0.2, 0.9], [1, 1]) is None


def test_ece_of_perfectly_calibrated_bins_is_zero() -> None:
    # bin [0.2, 0.3): five at 0.2, one right; bin [0.8, 0.9): five at 0.8, four right
    scores = [0.2] * 5 + [0.8] * 5
    labels = [1, 0, 0, 0, 0] + [1, 1, 1, 1, 0]
    assert ece(scores, labels) == pytest.approx(0.0, abs=1e-12)


def test_ece_of_overconfident_scores() -> None:
    # all at 0.9, half right: |0.5 - 0.9| = 0.4
    assert ece([0.9] * 4, [1, 0, 1, 0]) == pytest.approx(0.4)


def test_ece_weights_bins_by_their_size() -> None:
    # bin 0.95: 3 of 3 right (gap 0.05); bin 0.05: 0 of 1 right (gap 0.05) -> 0.05
    assert ece([0.95, 0.95, 0.95, 0.05], [1, 1, 1, 0]) == pytest.approx(0.05)


def test_reliability_bins_put_one_in_the_last_bin() -> None:
    bins = reliability_bins([1.0, 0.0, 0.55], [1, 0, 1])
    assert [b["n"] for b in bins] == [1, 0, 0, 0, 0, 1, 0, 0, 0, 1]


def test_ece_of_no_scores_is_none() -> None:
    assert ece([], []) is None


def test_correlations_of_a_monotone_relation() -> None:
    x = [0.1, 0.2, 0.3, 0.4, 0.5]
    y = [1.0, 4.0, 9.0, 16.0, 25.0]
    assert spearman(x, y)[0] == pytest.approx(1.0)


def test_pearson_of_a_constant_is_none() -> None:
    assert pearson([0.3, 0.3, 0.3], [0.0, 1.0, 0.5]) == (None, None)


def test_auroc_matches_sklearn() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    ref = metrics.roc_auc_score(MIXED_LABELS, MIXED_SCORES)
    assert auroc(MIXED_SCORES, MIXED_LABELS) == pytest.approx(ref, rel=1e-12)


def test_reliability_bins_match_sklearn_calibration_curve() -> None:
    calibration = pytest.importorskip("sklearn.calibration")
    prob_true, prob_pred = calibration.calibration_curve(
        MIXED_LABELS, MIXED_SCORES, n_bins=10, strategy="uniform"
    )
    bins = [b for b in reliability_bins(MIXED_SCORES, MIXED_LABELS) if b["n"]]
    assert [b["accuracy"] for b in bins] == pytest.approx(list(prob_true))
    assert [b["mean_score"] for b in bins] == pytest.approx(list(prob_pred))


def test_correlations_match_scipy() -> None:
    scipy_stats = pytest.importorskip("scipy.stats")
    y = MIXED_SCORES * 0.5 + RNG.normal(0, 0.2, len(MIXED_SCORES))
    r, p = pearson(MIXED_SCORES, y)
    ref = scipy_stats.pearsonr(MIXED_SCORES, y)
    assert (r, p) == pytest.approx((ref.statistic, ref.pvalue), rel=1e-9)
    rho, p_rho = spearman(MIXED_SCORES, y)
    ref_s = scipy_stats.spearmanr(MIXED_SCORES, y)
    assert (rho, p_rho) == pytest.approx((ref_s.statistic, ref_s.pvalue), rel=1e-9)
