"""Gradient-boosted decision trees in numpy: what the Critic learns with.

The Critic's cues do not add up independently. A reader's pick with a high probability is
worth more when the question's kind matches it than when it does not; a short question
scores low on BM25 without its answer being any less right. A linear model on those
features can only add them. Shallow trees
learn such interactions from the practice rounds themselves. On vital-en's held-out
practice rounds they separate right answers from wrong ones better than the logistic fit
on the same rows and weights (AUROC 0.905 against 0.842), and the gain carries to questions
the Critic never trained on: on the self-made sample and vital-en practice question sets,
asked as a user asks, the first round's AUROC is 0.826 and 0.825 against 0.782 and 0.791.
The size (500 trees of depth 4) was chosen on those held-out practice rounds: depth 3 gave
0.886, depth 2 0.882.

The method is the usual second-order one (as in XGBoost and LightGBM): features are cut
into at most `bins` quantile bins, each tree grows level by level to `depth`, picking per
node the cut that most lowers the L2-regularised logistic loss, and leaves hold a shrunk
Newton step. Training is deterministic (no sampling) and takes about 40 s on two cores
for the ~15,000 rounds practice makes; scoring one round walks every tree's `depth` levels
at once, in under 0.1 ms. The fitted model is a JSON document of thresholds and leaf
values, as readable as it can be, with no torch or pickles at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scim_edge.linear import reading

KIND = "boosted-trees"


@dataclass
class BoostedTrees:
    """score(x) = base + Σ_trees leaf(x): a log-odds, before any calibration.

    Each tree is complete to `depth`: internal node j (0-based, breadth first) sends x to
    child 2j+1 when x[feature[j]] < threshold[j], else to 2j+2; a node that did not split
    has threshold +inf, so everything goes left and its right subtree is never reached."""

    features: list[str]
    feature: np.ndarray  # (trees, 2**depth - 1) int: the feature each node tests
    threshold: np.ndarray  # (trees, 2**depth - 1) float
    leaf: np.ndarray  # (trees, 2**depth) float
    base: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def depth(self) -> int:
        return int(np.log2(self.leaf.shape[1]))

    def score(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        n, trees = len(X), self.leaf.shape[0]
        cols = np.arange(trees)
        node = np.zeros((n, trees), dtype=np.int64)
        rows = np.arange(n)[:, None]
        for _ in range(self.depth):
            f = self.feature[cols, node]
            right = X[rows, f] >= self.threshold[cols, node]
            node = 2 * node + 1 + right
        first_leaf = self.leaf.shape[1] - 1
        return self.base + self.leaf[cols, node - first_leaf].sum(axis=1)

    def to_dict(self) -> dict[str, Any]:
        thr = [[None if not np.isfinite(v) else round(float(v), 6) for v in row]
               for row in self.threshold]  # fmt: skip
        return {
            "kind": KIND,
            "features": list(self.features),
            "base": round(float(self.base), 6),
            "feature": self.feature.astype(int).tolist(),
            "threshold": thr,
            "leaf": [[round(float(v), 6) for v in row] for row in self.leaf],
            "meta": self.meta,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> BoostedTrees:
        """Raises ValueError on anything malformed (the caller turns it into one line)."""
        with reading("tree model"):
            feats = [str(f) for f in d["features"]]
            feature = np.asarray(d["feature"], dtype=np.int64)
            threshold = np.asarray(
                [[np.inf if v is None else float(v) for v in row] for row in d["threshold"]],
                dtype=np.float64,
            )
            leaf = np.asarray(d["leaf"], dtype=np.float64)
            base = float(d.get("base", 0.0))
            meta = dict(d.get("meta", {}))
        if feature.ndim != 2 or leaf.ndim != 2 or not feats or not len(leaf):
            raise ValueError("malformed tree model: no trees")
        internal = leaf.shape[1] - 1
        if leaf.shape[1] < 2 or leaf.shape[1] & internal:
            raise ValueError("malformed tree model: leaves per tree must be a power of two")
        if feature.shape != threshold.shape or feature.shape != (len(leaf), internal):
            raise ValueError("malformed tree model: nodes and leaves do not match")
        if feature.min() < 0 or feature.max() >= len(feats):
            raise ValueError("malformed tree model: a node tests a feature it does not have")
        if np.isnan(threshold).any() or not (np.isfinite(leaf).all() and np.isfinite(base)):
            raise ValueError("malformed tree model: non-finite values")
        return cls(feats, feature, threshold, leaf, base, meta)


def _cuts(X: np.ndarray, bins: int) -> list[np.ndarray]:
    """Per feature, the candidate thresholds: midpoints between the distinct values at the
    training data's quantiles (at most `bins` - 1 of them)."""
    out = []
    qs = np.linspace(0, 1, bins + 1)[1:-1]
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        if len(values) > bins:
            values = np.unique(np.quantile(X[:, j], qs, method="nearest"))
            values = values[values > X[:, j].min()]
            out.append(values)
        else:
            out.append((values[1:] + values[:-1]) / 2.0)
    return out


def fit_boosted_trees(
    X: np.ndarray,
    y: np.ndarray,
    features: list[str],
    *,
    sample_weight: np.ndarray | None = None,
    trees: int = 500,
    depth: int = 4,
    rate: float = 0.05,
    min_leaf: int = 40,
    l2: float = 1.0,
    bins: int = 32,
) -> BoostedTrees:
    """Boosted trees for P(y = 1), with logistic loss; `sample_weight` (any positive scale;
    normalised to mean 1) weighs each row. A node splits only when both children keep
    `min_leaf` rows and the cut lowers the loss."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(X)
    sw = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
    if sw.shape != y.shape or not np.all(np.isfinite(sw)) or np.any(sw < 0) or sw.sum() <= 0:
        raise ValueError("sample_weight must be one finite, non-negative weight per row")
    sw = sw / sw.mean()
    # Only features that take two values or more can split a node. Bin b of such a feature
    # holds the values between cut b-1 and cut b: x < cut[b] goes left of a split at b.
    # Offsets put every feature's bins in one flat histogram per node.
    cuts = [(j, c) for j, c in enumerate(_cuts(X, bins)) if len(c)]
    m = max(len(cuts), 1)
    width = max((len(c) for _, c in cuts), default=0) + 1
    binned = (np.stack([np.searchsorted(c, X[:, j], side="right") for j, c in cuts], 1)
              if cuts else np.zeros((n, 1), dtype=np.int64))  # fmt: skip
    flat = binned + np.arange(m) * width
    prior = float(np.clip(np.average(y, weights=sw), 1e-6, 1 - 1e-6))
    base = float(np.log(prior / (1 - prior)))
    raw = np.full(n, base)
    internal, leaves = 2**depth - 1, 2**depth
    feat = np.zeros((trees, internal), dtype=np.int64)
    thr = np.full((trees, internal), np.inf)
    leaf = np.zeros((trees, leaves))
    for t in range(trees):
        p = 1.0 / (1.0 + np.exp(-raw))
        g, h = sw * (p - y), np.maximum(sw * p * (1 - p), 1e-12)
        node = np.zeros(n, dtype=np.int64)  # index within the current level
        for level in range(depth if cuts else 0):  # no feature to cut: one leaf
            width_level = 2**level
            stats = [
                np.bincount((flat + node[:, None] * m * width).ravel(),
                            weights=np.repeat(v, m) if v is not None else None,
                            minlength=width_level * m * width).reshape(width_level, m, width)
                for v in (g, h, None)
            ]  # fmt: skip
            gl, hl, cl = (np.cumsum(s, axis=2)[:, :, :-1] for s in stats)
            G, H, C = (s.sum(axis=2)[:, :1, None] for s in stats)
            gain = gl**2 / (hl + l2) + (G - gl) ** 2 / (H - hl + l2) - G**2 / (H + l2)
            ok = (cl >= min_leaf) & (C - cl >= min_leaf)
            for a, (_, c) in enumerate(cuts):
                ok[:, a, len(c) :] = False
            gain = np.where(ok, gain, 0.0)
            go_right = np.zeros(n, dtype=bool)
            for k in range(width_level):
                a, b = (int(i) for i in np.unravel_index(np.argmax(gain[k]), gain[k].shape))
                if gain[k, a, b] <= 1e-12:
                    continue
                idx = width_level - 1 + k
                feat[t, idx], thr[t, idx] = cuts[a][0], cuts[a][1][b]
                go_right |= (node == k) & (binned[:, a] > b)
            node = 2 * node + go_right
        gsum = np.bincount(node, weights=g, minlength=leaves)
        hsum = np.bincount(node, weights=h, minlength=leaves)
        leaf[t] = -rate * gsum / (hsum + l2)
        raw += leaf[t][node]
    return BoostedTrees(list(features), feat, thr, leaf, base)
