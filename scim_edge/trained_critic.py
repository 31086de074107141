"""The trained Critic (SIM-RAG §3.3): P(this round's answer is right), learned from practice.

It is a set of boosted decision trees (`boosted_trees`) on `critic_features` (SCIM's five
dimensions, the reader's signals, the round, the evidence, agreement across rounds,
retrieval scores), fitted with rounds weighted so that practice's share of hidden sources
cannot stand in for correctness (`source_balanced_weights`), followed by a Platt map
fitted on held-out practice rounds weighted to the mix of questions people ask
(`asked_mix_weights`), so its output is a calibrated probability: the `confidence` every
answer carries. Accept means confidence ≥ the accept threshold. (Versions before the trees
fitted a logistic regression on the same features; such a file still loads and scores.)

A loop of several rounds returns one of them, picked by that same confidence, so the
picked round's value is the best of up to three noisy estimates: biased up when the rounds
disagree. The Critic's second part (`across_rounds`, fitted by `fit_across_rounds`) reads
the returned answer's confidence together with how the rounds agreed (`rounds_features`)
and gives the probability for the answer the loop returns.

Where it comes from, first found wins:
1. `--critic-model NAME`: a Critic in the model store (`scim-edge critic train` puts one
   there, kind `critic`, with a manifest naming the generator and settings it was trained
   for and its held-out accuracy, AUROC and calibration);
2. the index's own `practice/critic.json`, written by `scim-edge practice`;
3. the default shipped in `scim_edge/data/critic.json`, trained the same way on
   self-practice over the vital-articles corpus.
A Critic trained for another generator warns (naming it) and the heuristic is used instead.
An index's own Critic fitted by another version of scim-edge (other features:
`OutdatedCritic`) warns and the shipped one stands in until `practice` refits it; one
chosen by name is refused with one line.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from scim_edge import jsonl, paths
from scim_edge.boosted_trees import KIND as TREES
from scim_edge.boosted_trees import BoostedTrees, fit_boosted_trees
from scim_edge.critic_features import FEATURES, ROUNDS_FEATURES, rounds_features, vector
from scim_edge.errors import ModelError
from scim_edge.evaluation.calibration import auroc, ece
from scim_edge.evaluation.metrics import normalize_answer
from scim_edge.linear import LinearModel, fit_logistic, fit_platt, sigmoid
from scim_edge.refit_choice import better_beyond_chance
from scim_edge.scim_policy import algorithm1, returned

CRITIC_FILE = "critic.json"
ACCEPT_THRESHOLD = 0.5
# Tiers users see: the probability the answer is right.
HIGH, MEDIUM = 0.7, 0.4
# The share of asked questions whose answer the index does not hold, which the calibration
# assumes (`asked_mix_weights`). Practice hides the source of half its pairs so that the
# Critic sees enough rounds without the answer; people mostly ask what the index holds (the
# top passages hold the answer to about five in six of their questions).
ASKED_HIDDEN_SHARE = 0.2
ASKED_MIX_NOTE = "mixed as people ask: 1 question in 5 not answered in the index"


class OutdatedCritic(ModelError):
    """A Critic file fitted by another version of scim-edge: its features are not this
    version's. Not damage: `scim-edge practice` refits it, and until then the loops use
    the shipped Critic (`Confidence`)."""


class _OtherFeatures(ValueError):
    pass


def confidence_tier(p: float) -> str:
    return "high" if p >= HIGH else "medium" if p >= MEDIUM else "low"


@dataclass
class TrainedCritic:
    # boosted trees; a file from an earlier version may hold a linear model on the same
    # features, which still reads and scores the same way
    model: BoostedTrees | LinearModel
    platt: tuple[float, float] = (1.0, 0.0)
    meta: dict[str, Any] = field(default_factory=dict)
    source: str = ""
    rounds: LinearModel | None = None  # the second part; absent in older Critic files

    @property
    def generator(self) -> str:
        return str(self.meta.get("generator", ""))

    @property
    def heldout(self) -> dict[str, Any]:
        """The held-out figures to show: at the asked mix, the one the confidence is
        calibrated for, where the file has them (older files: at practice's mix)."""
        return dict(self.meta.get("heldout_asked_mix") or self.meta.get("heldout") or {})

    @property
    def calibrated_for_asked_mix(self) -> bool:
        """Fitted by a version that calibrates at the asked mix (`asked_mix_weights`);
        older files were calibrated at practice's, which reads low on people's questions."""
        return self.meta.get("calibrated_hidden_share") is not None

    def probability(self, features: Mapping[str, float]) -> float:
        raw = float(self.model.score(np.array([vector(features)]))[0])
        a, b = self.platt
        return float(sigmoid(np.array(a * raw + b)))

    def probabilities(self, X: np.ndarray) -> np.ndarray:
        a, b = self.platt
        return sigmoid(a * self.model.score(X) + b)

    def across_rounds(
        self, answers: Sequence[str], confidences: Sequence[float], chosen: int
    ) -> float:
        """P(`answers[chosen]`, the answer a run of several rounds returns, is right), given
        every round's answer and confidence; that round's own confidence when this Critic
        has no second part."""
        if self.rounds is None:
            return float(confidences[chosen])
        x = np.array([rounds_features(answers, confidences, chosen)])
        return float(sigmoid(self.rounds.score(x))[0])

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": "critic", "model": self.model.to_dict(), "platt": list(self.platt),
             "meta": self.meta}  # fmt: skip
        if self.rounds is not None:
            d["rounds"] = self.rounds.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], source: str = "") -> TrainedCritic:
        if not isinstance(d, Mapping) or d.get("kind") != "critic":
            raise ValueError("not a critic file")
        features = d["model"].get("features")
        if not isinstance(features, list):
            raise ValueError("the model names no features")
        if features != list(FEATURES):
            raise _OtherFeatures("its features do not match this version's")
        trees = d["model"].get("kind") == TREES
        model = (BoostedTrees if trees else LinearModel).from_dict(d["model"])
        a, b = (float(x) for x in d.get("platt", (1.0, 0.0)))
        if not (np.isfinite(a) and np.isfinite(b)):
            raise ValueError("non-finite calibration")
        rounds = LinearModel.from_dict(d["rounds"]) if "rounds" in d else None
        if rounds is not None and list(rounds.features) != list(ROUNDS_FEATURES):
            raise _OtherFeatures("its across-rounds features do not match this version's")
        return cls(model, (a, b), dict(d.get("meta", {})), source, rounds)


def _heldout_halves(rows: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[int]]:
    """Held-out rows split by pair into a calibration half and a measurement half.

    Both halves hold hidden-source rounds as well as visible ones: trained with
    `source_balanced_weights`, the raw score no longer says how rare right answers are among
    hidden rounds, so the Platt map must see them to put them back at their rate. (On
    vital-en's held-out rounds, a map fitted on visible rounds alone had calibration error
    0.158; on both kinds, 0.030.) The map weighs them at the asked mix, not practice's
    (`asked_mix_weights`)."""
    cal, meas = [], []
    for i, r in enumerate(rows):
        if r["split"] == "heldout":
            half = meas if zlib.crc32(str(r["pair_id"]).encode()) % 2 == 1 else cal
            half.append(i)
    return cal, meas


def source_balanced_weights(rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Training weights under which being right is independent of whether practice hid the
    round's source passage: each (hidden?, right?) cell weighs P(right?) / P(right? | hidden?).

    Practice mixes two kinds of round. Where the source is in reach, the question shares its
    words with the sentence that answers it and two answers in three are right; where it is
    hidden, one in fourteen is. Unweighted, the Critic's strongest cue is "which kind is this
    round", read off word overlap (the support sentence's overlap with the question, the
    reader's raw score, completeness), and a person's question, which shares few words with
    its answer, looks like a hidden round even when it is answered right. Balanced, the
    overlap features no longer tell the kind apart by their label, so the fit leans on what
    separates right from wrong within each kind (the reader's probability and margin, how
    many candidates compete). On vital-en's held-out practice rounds this raises AUROC among
    the hidden-source rounds (answers found stated in other words) from 0.79 to 0.86, with
    the visible ones about level (0.79 against 0.79)."""
    y = np.array([float(r["correct"]) > 0 for r in rows])
    hidden = np.array([bool(r.get("source_hidden")) for r in rows])
    w = np.ones(len(rows))
    if not len(rows):
        return w
    base = float(y.mean())
    for group in (False, True):
        g = hidden == group
        rate = float(y[g].mean()) if g.any() else base
        if g.any() and 0.0 < rate < 1.0:
            w[g & y] = base / rate
            w[g & ~y] = (1.0 - base) / (1.0 - rate)
    return w


def asked_mix_weights(hidden: np.ndarray, share: float = ASKED_HIDDEN_SHARE) -> np.ndarray:
    """Weights that make hidden-source rows `share` of the total, visible ones the rest.

    The Platt map and the across-rounds part turn a score into a probability at the mix of
    rounds they are fitted on. Fitted at practice's mix (half the sources hidden, where one
    answer in fourteen is right), every probability came out low for a question the index
    can answer: on 600 held-out practice questions asked as a user asks them, the answers
    averaged confidence 0.48 and were right 66% of the time. Weighted to the asked mix, the
    map keeps what the hidden rounds teach (how a score reads when the answer is missing) at
    the rate such rounds occur when people ask."""
    hidden = np.asarray(hidden, dtype=bool)
    w = np.ones(len(hidden))
    h = float(hidden.mean()) if len(hidden) else 0.0
    if 0.0 < h < 1.0:
        w[hidden] = share / h
        w[~hidden] = (1.0 - share) / (1.0 - h)
    return w


def _hidden(rows: Sequence[Mapping[str, Any]], idx: Sequence[int]) -> np.ndarray:
    return np.array([bool(rows[i].get("source_hidden")) for i in idx], dtype=bool)


def metrics(p: np.ndarray, y: np.ndarray) -> dict[str, float]:
    return {
        "n": int(len(y)),
        "positive_rate": round(float(np.mean(y)), 4) if len(y) else 0.0,
        "accuracy": round(float(np.mean((p >= ACCEPT_THRESHOLD) == (y > 0))), 4) if len(y) else 0.0,
        "auroc": round(auroc(p, y) or 0.5, 4),  # 0.5 when one class is absent
        "ece": round(ece(p, y) or 0.0, 4),
        "brier": round(float(np.mean((p - y) ** 2)), 4) if len(y) else 0.0,
    }


def train_from_rows(
    rows: Sequence[Mapping[str, Any]], *, generator: str, settings: Any
) -> TrainedCritic:
    """Fit on the train split, calibrate on half the held-out pairs, measure on the other."""
    X = np.array([vector(r["features"]) for r in rows], dtype=np.float64)
    y = np.array([float(r["correct"]) for r in rows])
    train = [i for i, r in enumerate(rows) if r["split"] == "train"]
    cal, meas = _heldout_halves(rows)
    if len(train) < 20 or len(set(y[train].tolist())) < 2:
        raise ModelError(
            "too few practice rounds, or no right or no wrong answers, to train a Critic"
        )
    train_rows = [rows[i] for i in train]
    model = fit_boosted_trees(
        X[train], y[train], list(FEATURES), sample_weight=source_balanced_weights(train_rows)
    )
    raw = model.score(X)
    platt = (
        fit_platt(raw[cal], y[cal], asked_mix_weights(_hidden(rows, cal)))
        if len(cal) >= 10
        else (1.0, 0.0)
    )
    critic = TrainedCritic(model, platt)
    p = critic.probabilities(X)
    critic.meta = {
        "generator": generator,
        "trained_for": {
            "loop": getattr(settings, "loop", ""),
            "k1": getattr(settings, "k1", 0),
            "k2": getattr(settings, "k2", 0),
        },  # fmt: skip
        "rounds": {"train": len(train), "calibration": len(cal), "heldout": len(meas)},
        "weighting": "source-balanced",
        "calibrated_hidden_share": ASKED_HIDDEN_SHARE,
        "heldout": metrics(p[meas], y[meas]) if meas else {},
        "heldout_asked_mix": _asked_mix_metrics(rows, meas, p, y),
        "train": metrics(p[train], y[train]),
    }
    fit_across_rounds(critic, rows, p, settings)
    return critic


def _asked_mix(rows: Sequence[Mapping[str, Any]], idx: Sequence[int]) -> list[int]:
    """The rounds of `idx` at the asked mix, the one the confidence is calibrated for:
    every visible round, and as many hidden ones (a fixed choice by pair id) as make them
    `ASKED_HIDDEN_SHARE` of the whole."""
    seen = [i for i in idx if not rows[i].get("source_hidden")]
    hidden = sorted((i for i in idx if rows[i].get("source_hidden")),
                    key=lambda i: zlib.crc32(str(rows[i]["pair_id"]).encode()))  # fmt: skip
    k = round(len(seen) * ASKED_HIDDEN_SHARE / (1.0 - ASKED_HIDDEN_SHARE))
    return seen + hidden[:k]


def _asked_mix_metrics(
    rows: Sequence[Mapping[str, Any]], idx: Sequence[int], p: np.ndarray, y: np.ndarray
) -> dict[str, float]:
    """Metrics on the rounds `idx` at the asked mix (`_asked_mix`)."""
    chosen = _asked_mix(rows, idx)
    return metrics(p[chosen], y[chosen]) if chosen else {}


def heldout_figures(critic: TrainedCritic, rows: Sequence[Mapping[str, Any]]) -> dict[str, float]:
    """`critic` measured on the measurement half of `rows`' held-out rounds, at the asked
    mix: what `practice` compares its new Critic with the shipped one by (`shipped_instead`)."""
    _, meas = _heldout_halves(rows)
    if not meas:
        return {}
    y = np.zeros(len(rows))
    p = np.zeros(len(rows))
    y[meas] = [float(rows[i]["correct"]) for i in meas]
    p[meas] = critic.probabilities(np.array([vector(rows[i]["features"]) for i in meas]))
    return _asked_mix_metrics(rows, meas, p, y)


def shipped_instead(
    critic: TrainedCritic,
    rows: Sequence[Mapping[str, Any]],
    shipped: TrainedCritic | None = None,
) -> dict[str, float] | None:
    """The shipped Critic's held-out figures on `rows` unless `critic` judges them better
    beyond chance (a lower squared error at the asked mix, calibration and ranking both
    counted, by more than one standard error of the paired difference: `refit_choice`);
    None when it does, or the shipped one is for another generator.

    A Critic fitted on a small index's few practice rounds can be worse on that index's
    own held-out rounds than the shipped one, fitted on 6,000 questions: on the sample
    index, 300 practice questions gave a Critic with AUROC 0.74 where the shipped one
    had 0.89 on the same rounds. Practice then keeps the shipped one. (`shipped`: the
    Critic to compare with, the shipped file when not given.)"""
    if shipped is None:
        try:
            shipped = load_file(default_path())
        except ModelError:
            return None
    if shipped.generator != critic.generator:
        return None
    _, meas = _heldout_halves(rows)
    chosen = _asked_mix(rows, meas)
    if not critic.heldout or not chosen:
        return None
    X = np.array([vector(rows[i]["features"]) for i in chosen])
    y = np.array([float(rows[i]["correct"]) for i in chosen])
    gain = (shipped.probabilities(X) - y) ** 2 - (critic.probabilities(X) - y) ** 2
    return None if better_beyond_chance(gain) else heldout_figures(shipped, rows)


def repeat_confidence(
    p: float, answer: str, support: str, earlier: Sequence[tuple[str, str, float]]
) -> float:
    """A round's confidence given the earlier rounds' (answer, support sentence,
    confidence), oldest first: an earlier round's when it gave the same answer from the same
    sentence, else `p`.

    Reading the same sentence again is the same reader over much the same evidence, not a
    second witness, yet the later round's features (agreement, more passages, a later
    round) raise the estimate, so it keeps the first value. The same answer found in a
    different sentence is new evidence and is judged on its own: "Who wrote Animal Farm?"
    is first read from "…a novella by George Orwell…" (confidence 0.22, the question's
    "wrote" is not there), then from "George Orwell wrote the manuscript in 1943…" (0.66)."""
    norm = normalize_answer(answer)
    for a, s, c in earlier:
        if normalize_answer(a) == norm and s == support:
            return c
    return p


def _replayed(
    runs: Mapping[str, list[tuple[int, str, str, float, bool]]], settings: Any
) -> Iterator[tuple[str, list[float], bool]]:
    """Each practice pair's rounds (round, answer, support sentence, confidence, right?)
    replayed through SCIM's policy, as the loop would run them on their confidences (a
    repeat keeps an earlier confidence by `repeat_confidence`, as the loop does live):
    (pair id, rounds features, returned answer right?)."""
    theta = float(getattr(settings, "theta", 0.7))
    delta = float(getattr(settings, "delta", 0.05))
    for pair_id, rounds in runs.items():
        rounds = sorted(rounds)
        answers: list[str] = []
        ps: list[float] = []
        for t, (_, answer, support, p, _) in enumerate(rounds, start=1):
            earlier = [(a, s, c) for (_, a, s, _, _), c in zip(rounds, ps, strict=False)]
            answers.append(answer)
            ps.append(repeat_confidence(p, answer, support, earlier))
            d = algorithm1(t, ps[-1], ps[-2] if t > 1 else None, theta=theta,
                           t_max=len(rounds), delta=delta)  # fmt: skip
            if d.decision != "continue":
                i = returned(d, ps)
                yield pair_id, rounds_features(answers, ps, i), rounds[i][4]
                break


def fit_across_rounds(
    critic: TrainedCritic, rows: Sequence[Mapping[str, Any]], p: np.ndarray, settings: Any
) -> None:
    """Fit the Critic's second part on the calibration half of the held-out pairs (the
    rounds the first part never trained on, as the Platt map is), replayed through SCIM's
    policy and weighted to the asked mix (`asked_mix_weights`); measure it on the other half
    against the returned round's own confidence."""
    cal, meas = _heldout_halves(rows)
    hidden = {str(r["pair_id"]) for r in rows if r.get("source_hidden")}
    Pair = list[tuple[int, str, str, float, bool]]
    halves: dict[str, dict[str, Pair]] = {"cal": {}, "meas": {}}
    for name, idx in (("cal", cal), ("meas", meas)):
        for i in idx:
            r = rows[i]
            halves[name].setdefault(str(r["pair_id"]), []).append(
                (int(r.get("round", 1)), str(r.get("answer", "")), str(r.get("support", "")),
                 float(p[i]), float(r["correct"]) > 0)
            )  # fmt: skip
    fit = list(_replayed(halves["cal"], settings))
    y = np.array([right for _, _, right in fit], dtype=np.float64)
    if len(fit) < 20 or len(set(y.tolist())) < 2:
        return
    weights = asked_mix_weights(np.array([pid in hidden for pid, _, _ in fit], dtype=bool))
    critic.rounds = fit_logistic(
        np.array([f for _, f, _ in fit]), y, list(ROUNDS_FEATURES), sample_weight=weights
    )
    test = list(_replayed(halves["meas"], settings))
    if test:
        X = np.array([f for _, f, _ in test])
        yt = np.array([right for _, _, right in test], dtype=np.float64)
        own = sigmoid(X[:, 0])  # the returned round's own confidence
        critic.meta["across_rounds"] = {
            "pairs": {"calibration": len(fit), "heldout": len(test)},
            "heldout": metrics(sigmoid(critic.rounds.score(X)), yt),
            "heldout_own_confidence": metrics(own, yt),
        }


@lru_cache(maxsize=8)
def _load(path_text: str, mtime: float) -> TrainedCritic:
    path = Path(path_text)
    try:
        return TrainedCritic.from_dict(jsonl.loads(path.read_text(encoding="utf-8")), str(path))
    except _OtherFeatures as e:
        raise OutdatedCritic(
            f"Critic file {path} was fitted by another version of scim-edge ({e})",
            hint="refit it with `scim-edge practice`",
        ) from None
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise ModelError(
            f"Critic file {path} is damaged ({' '.join(str(e).split())[:120]})",
            hint="retrain it with `scim-edge practice` or `scim-edge critic train`, or delete it",
        ) from None


def load_file(path: Path) -> TrainedCritic:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        raise ModelError(f"Critic file {path} is missing") from None
    return _load(str(path), mtime)


def default_path() -> Path:
    return Path(str(resources.files("scim_edge") / "data" / CRITIC_FILE))


def named_path(name: str) -> Path:
    """The file of the Critic `scim-edge critic list` calls `name`: "default" (the shipped
    one), "index:NAME" (that index's own, from `practice`), a store name, or the folder of
    a Critic exported elsewhere."""
    from models import store

    if name == "default":
        return default_path()
    if name.startswith("index:"):
        from scim_edge.retrieval import resolve_index_dir

        index_name = name.removeprefix("index:")
        if not index_name.strip():
            raise ModelError("'index:' names no index", hint="write index:NAME")
        path = resolve_index_dir(index_name) / "practice" / CRITIC_FILE
        if not path.is_file():
            raise ModelError(
                f"index '{index_name}' has no Critic of its own",
                hint=f"train one with `scim-edge practice --index {index_name}`",
            )
        return path
    is_path = "/" in name or name.startswith(".")
    if not is_path and name not in {m.name for m in store.list_models() if m.kind == "critic"}:
        if store.is_fine_tuned_critic(paths.models_dir() / name):
            raise ModelError(
                f"'{name}' is a fine-tuned Flan-T5 Critic, which judges simrag's rounds",
                hint=f"use it with `--loop simrag --critic model --critic-model {name}`",
            )
        raise ModelError(f"no Critic named '{name}'", hint="see `scim-edge critic list`")
    return store.resolve_model(name, "critic") / CRITIC_FILE


def find(index_dir: Path | None, name: str | None = None) -> TrainedCritic | None:
    """The Critic to use (see the module doc), or None when none exists at all."""
    if name:
        return load_file(named_path(name))
    if index_dir is not None:
        own = Path(index_dir) / "practice" / CRITIC_FILE
        if own.is_file():
            return load_file(own)
    path = default_path()
    return load_file(path) if path.is_file() else None
