"""The Critic's boosted trees: they learn what a linear model cannot, they read back from
their file exactly, a damaged file is refused, and fitting is deterministic."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scim_edge.boosted_trees import BoostedTrees, fit_boosted_trees
from scim_edge.evaluation.calibration import auroc
from scim_edge.linear import fit_logistic


def _interaction(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Right exactly when two cues agree (both high or both low): no weighted sum of the
    cues tells right from wrong."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, size=(n, 3))
    y = ((X[:, 0] > 0.5) == (X[:, 1] > 0.5)).astype(float)
    return X, y


@pytest.fixture(scope="module")
def fitted() -> BoostedTrees:
    X, y = _interaction(2000, 0)
    return fit_boosted_trees(X, y, ["a", "b", "noise"], trees=60)


def test_trees_learn_an_interaction_a_linear_model_cannot(fitted):
    X, y = _interaction(1000, 1)
    assert auroc(fitted.score(X), y) > 0.95


def test_a_cue_that_says_right_raises_the_score():
    """Scoring walks each node the way the fit split it: a row whose cue is high, where
    high means right, scores above one whose cue is low (a symmetric task would not tell
    a mirrored walk apart)."""
    rng = np.random.default_rng(6)
    X = rng.uniform(0, 1, size=(1000, 2))
    y = (X[:, 0] > 0.7).astype(float)
    model = fit_boosted_trees(X, y, ["cue", "noise"], trees=20)
    high, low = model.score(np.array([[0.9, 0.5], [0.1, 0.5]]))
    assert high > low


def test_the_linear_model_is_near_chance_on_the_same_task():
    X, y = _interaction(2000, 0)
    Xt, yt = _interaction(1000, 1)
    assert auroc(fit_logistic(X, y, ["a", "b", "noise"]).score(Xt), yt) < 0.6


def test_a_tree_model_reads_back_from_its_file_exactly(fitted):
    X, _ = _interaction(200, 2)
    again = BoostedTrees.from_dict(json.loads(json.dumps(fitted.to_dict())))
    assert np.allclose(again.score(X), fitted.score(X), atol=1e-4)


def test_fitting_is_deterministic():
    X, y = _interaction(500, 3)
    a = fit_boosted_trees(X, y, ["a", "b", "noise"], trees=10)
    b = fit_boosted_trees(X, y, ["a", "b", "noise"], trees=10)
    assert a.to_dict() == b.to_dict()


def test_a_node_never_splits_below_the_smallest_leaf():
    X, y = _interaction(100, 4)
    model = fit_boosted_trees(X, y, ["a", "b", "noise"], trees=5, min_leaf=60)
    assert np.isinf(model.threshold).all()  # 100 rows cannot make two leaves of 60


def test_row_weights_change_the_fit():
    X, y = _interaction(500, 5)
    w = np.where(X[:, 2] > 0.5, 5.0, 1.0)
    plain = fit_boosted_trees(X, y, ["a", "b", "noise"], trees=10)
    weighted = fit_boosted_trees(X, y, ["a", "b", "noise"], trees=10, sample_weight=w)
    assert plain.to_dict() != weighted.to_dict()


def test_constant_features_fit_a_constant_model():
    X = np.zeros((50, 2))
    y = np.array([0.0, 1.0] * 25)
    model = fit_boosted_trees(X, y, ["a", "b"], trees=3)
    assert np.allclose(model.score(np.array([[0.0, 0.0], [5.0, -5.0]])), 0.0, atol=1e-9)


@pytest.mark.parametrize(
    "damage, reason",
    [
        (lambda d: d.__setitem__("leaf", [row[:-1] for row in d["leaf"]]), "power of two"),
        (lambda d: d["feature"][0].__setitem__(0, 99), "feature it does not have"),
        (lambda d: d["leaf"][0].__setitem__(0, "x"), "malformed tree model"),
        (lambda d: d.pop("threshold"), "malformed tree model"),
        (lambda d: d["feature"].pop(), "nodes and leaves do not match"),
    ],
)
def test_a_damaged_tree_model_is_a_value_error_that_says_why(fitted, damage, reason):
    d = json.loads(json.dumps(fitted.to_dict()))
    damage(d)
    with pytest.raises(ValueError, match=reason):
        BoostedTrees.from_dict(d)


def test_the_shipped_critic_is_boosted_trees():
    from scim_edge import trained_critic as tc

    assert isinstance(tc.load_file(tc.default_path()).model, BoostedTrees)
