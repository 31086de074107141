"""Small linear models in numpy: what the reader learns with, and the Critic's calibration.

They are linear on standardised features, so they train in seconds on two cores, run in
microseconds, need no torch at run time, and their weights are a short JSON file a user
can read:
- `fit_grouped_softmax`: one softmax per question over its candidate spans (a conditional
  logit), trained to put mass on the spans that equal a known answer — the reader;
- `fit_logistic`: P(correct) of one answer — the Critic's across-rounds part (the Critic
  itself is boosted trees, `boosted_trees`; earlier versions fitted it with this);
- `fit_platt`: a one-dimensional logistic map from a score to a calibrated probability.
All fits are deterministic (full-batch Adam from zeros, a fixed number of steps).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@contextmanager
def reading(what: str) -> Iterator[None]:
    """A missing key or a value of the wrong type met while a model file's fields are read
    becomes one ValueError that names `what` (the caller turns it into one line)."""
    try:
        yield
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"malformed {what}: {e}") from None


@dataclass
class LinearModel:
    """score(x) = ((x - mean) / scale) · weights + bias."""

    features: list[str]
    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    bias: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    def score(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        return ((X - self.mean) / self.scale) @ self.weights + self.bias

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(self.features),
            "weights": [round(float(v), 6) for v in self.weights],
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "bias": round(float(self.bias), 6),
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LinearModel:
        """Raises ValueError on anything malformed (the caller turns it into one line)."""
        with reading("linear model"):
            feats = [str(f) for f in d["features"]]
            w = np.asarray(d["weights"], dtype=np.float64)
            mean = np.asarray(d["mean"], dtype=np.float64)
            scale = np.asarray(d["scale"], dtype=np.float64)
            bias = float(d.get("bias", 0.0))
            meta = dict(d.get("meta", {}))
        n = len(feats)
        if not (w.shape == mean.shape == scale.shape == (n,)) or n == 0:
            raise ValueError("malformed linear model: weights, mean and scale must match features")
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(mean)) and np.all(scale > 0)):
            raise ValueError("malformed linear model: non-finite weights or zero scale")
        return cls(feats, w, mean, scale, bias, meta)


def _standardise(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale < 1e-6] = 1.0
    return mean, scale


def _adam(grad_fn: Any, dim: int, steps: int, lr: float) -> np.ndarray:
    w = np.zeros(dim)
    m = np.zeros(dim)
    v = np.zeros(dim)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(1, steps + 1):
        g = grad_fn(w)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        w = w - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    return w


def group_softmax(scores: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Softmax of `scores` within each group; groups are contiguous, starting at `starts`."""
    mx = np.maximum.reduceat(scores, starts)
    sizes = np.diff(np.append(starts, len(scores)))
    e = np.exp(scores - np.repeat(mx, sizes))
    return e / np.repeat(np.add.reduceat(e, starts), sizes)


def fit_grouped_softmax(
    X: np.ndarray,
    y: np.ndarray,
    starts: np.ndarray,
    features: list[str],
    *,
    l2: float = 1e-3,
    steps: int = 400,
    lr: float = 0.05,
) -> LinearModel:
    """Weights maximising the softmax mass on each group's positives (y = 1).

    Groups must be contiguous rows starting at `starts` and hold at least one positive."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    mean, scale = _standardise(X)
    Z = (X - mean) / scale
    sizes = np.diff(np.append(starts, len(y)))
    n_groups = len(starts)

    def grad(w: np.ndarray) -> np.ndarray:
        p = group_softmax(Z @ w, starts)
        pos = p * y
        q = pos / np.repeat(np.add.reduceat(pos, starts), sizes)
        return Z.T @ (p - q) / n_groups + l2 * w

    w = _adam(grad, Z.shape[1], steps, lr)
    return LinearModel(list(features), w, mean, scale)


def grouped_log_loss(model: LinearModel, X: np.ndarray, y: np.ndarray, starts: np.ndarray) -> float:
    p = group_softmax(model.score(X), starts)
    mass = np.add.reduceat(p * y, starts)
    return float(-np.mean(np.log(np.clip(mass, 1e-12, 1.0))))


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -40, 40)))


def _row_weights(sample_weight: np.ndarray | None, y: np.ndarray) -> np.ndarray:
    """One weight per row, normalised to mean 1 (all ones when none are given)."""
    sw = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, np.float64)
    if sw.shape != y.shape or not np.all(np.isfinite(sw)) or np.any(sw < 0) or sw.sum() <= 0:
        raise ValueError("sample_weight must be one finite, non-negative weight per row")
    return sw / sw.mean()


def fit_logistic(
    X: np.ndarray,
    y: np.ndarray,
    features: list[str],
    *,
    l2: float = 1e-2,
    steps: int = 600,
    lr: float = 0.05,
    sample_weight: np.ndarray | None = None,
) -> LinearModel:
    """L2-regularised logistic regression; the bias is the last coordinate, not penalised.
    `sample_weight` (any positive scale; normalised to mean 1) weighs each row's loss."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    sw = _row_weights(sample_weight, y)
    mean, scale = _standardise(X)
    Z = np.hstack([(X - mean) / scale, np.ones((len(y), 1))])
    penal = np.ones(Z.shape[1])
    penal[-1] = 0.0

    def grad(w: np.ndarray) -> np.ndarray:
        return Z.T @ ((sigmoid(Z @ w) - y) * sw) / len(y) + l2 * penal * w

    w = _adam(grad, Z.shape[1], steps, lr)
    return LinearModel(list(features), w[:-1], mean, scale, float(w[-1]))


def fit_platt(
    scores: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None
) -> tuple[float, float]:
    """(a, b) with P(y=1 | s) = sigmoid(a·s + b), fitted with Platt's smoothed targets;
    `sample_weight` (normalised to mean 1) weighs each row, counts included."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    sw = _row_weights(sample_weight, y)
    n_pos, n_neg = float((sw * y).sum()), float((sw * (1.0 - y)).sum())
    t = np.where(y > 0, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    Z = np.stack([s, np.ones_like(s)], axis=1)

    def grad(w: np.ndarray) -> np.ndarray:
        return Z.T @ ((sigmoid(Z @ w) - t) * sw) / len(t)

    a, b = _adam(grad, 2, 2000, 0.05)
    return float(a), float(b)
