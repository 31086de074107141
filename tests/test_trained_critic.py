"""The trained Critic and the calibrated confidence: the linear models, the Critic's file,
its fallbacks, the commands, confidence in every loop, and loop timing with a slow
consumer."""

from __future__ import annotations

import json
import math
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from scim_edge import trained_critic as tc
from scim_edge.cli import main
from scim_edge.confidence import Confidence
from scim_edge.critic_features import FEATURES, vector
from scim_edge.engine import Engine
from scim_edge.errors import ModelError
from scim_edge.evaluation.calibration import ece
from scim_edge.evaluation.metrics import normalize_answer
from scim_edge.linear import (
    fit_grouped_softmax,
    fit_logistic,
    fit_platt,
    group_softmax,
    sigmoid,
)
from scim_edge.settings import LOOPS, Settings
from scim_edge.types import Final

RNG = np.random.default_rng(0)


def test_grouped_softmax_learns_which_candidate_is_the_answer():
    # three candidates per group; the answer is the one with the largest first feature
    X = RNG.normal(size=(300, 2))
    y = np.zeros(300)
    starts = np.arange(0, 300, 3)
    for s in starts:
        y[s + int(np.argmax(X[s : s + 3, 0]))] = 1
    model = fit_grouped_softmax(X, y, starts, ["signal", "noise"])
    p = group_softmax(model.score(X), starts)
    hits = [y[s + int(np.argmax(p[s : s + 3]))] for s in starts]
    assert np.mean(hits) > 0.95


def test_logistic_and_platt_give_calibrated_probabilities():
    x = RNG.normal(size=(4000, 1))
    y = (RNG.random(4000) < sigmoid(2 * x[:, 0])).astype(float)
    model = fit_logistic(x, y, ["x"])
    a, b = fit_platt(model.score(x), y)
    p = sigmoid(a * model.score(x) + b)
    assert ece(p, y) < 0.05


def test_a_row_of_weight_zero_does_not_move_the_fit():
    x = RNG.normal(size=(500, 1))
    y = (x[:, 0] > 0).astype(float)
    flipped = np.vstack([x, x[:50]])
    y2 = np.concatenate([y, 1 - y[:50]])
    w = np.concatenate([np.ones(500), np.zeros(50)])
    plain = fit_logistic(x, y, ["x"])
    weighted = fit_logistic(flipped, y2, ["x"], sample_weight=w)
    assert weighted.weights[0] / weighted.scale[0] == pytest.approx(
        plain.weights[0] / plain.scale[0], rel=0.05
    )


def test_a_row_of_weight_zero_does_not_move_the_platt_map():
    s = RNG.normal(size=500)
    y = (RNG.random(500) < sigmoid(2 * s)).astype(float)
    plain = fit_platt(s, y)
    weighted = fit_platt(np.concatenate([s, s[:100]]), np.concatenate([y, 1 - y[:100]]),
                         np.concatenate([np.ones(500), np.zeros(100)]))  # fmt: skip
    assert weighted == pytest.approx(plain, rel=0.02)


@pytest.mark.parametrize("w", [[-1.0, 1.0], [np.nan, 1.0], [0.0, 0.0], [1.0]])
def test_bad_sample_weights_are_refused(w):
    with pytest.raises(ValueError, match="sample_weight"):
        fit_logistic(np.array([[0.0], [1.0]]), np.array([0.0, 1.0]), ["x"], sample_weight=w)


@pytest.mark.parametrize("w", [[-1.0, 1.0], [1.0]])
def test_bad_platt_weights_are_refused(w):
    with pytest.raises(ValueError, match="sample_weight"):
        fit_platt(np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.array(w))


def test_the_shipped_critic_loads_and_names_its_generator():
    critic = tc.load_file(tc.default_path())
    assert critic.generator == "extractive"


def test_the_shipped_critic_reports_held_out_figures():
    critic = tc.load_file(tc.default_path())
    assert 0.5 < critic.meta["heldout"]["auroc"] <= 1.0


def test_critic_inference_is_under_a_millisecond():
    critic = tc.load_file(tc.default_path())
    f = dict.fromkeys(FEATURES, 0.5)
    critic.probability(f)
    t0 = time.perf_counter()
    for _ in range(200):
        critic.probability(f)
    assert (time.perf_counter() - t0) / 200 < 1e-3


def _copy_critic(tmp_path, mutate) -> str:
    data = json.loads(tc.default_path().read_text())
    mutate(data)
    path = tmp_path / "critic.json"
    path.write_text(json.dumps(data) if data is not None else "{broken", encoding="utf-8")
    return str(path)


def test_a_damaged_critic_file_is_one_model_error(tmp_path):
    path = tmp_path / "critic.json"
    path.write_text("{broken", encoding="utf-8")
    with pytest.raises(ModelError, match="damaged"):
        tc.load_file(path)


def test_a_critic_with_other_features_is_refused(tmp_path):
    with pytest.raises(tc.OutdatedCritic, match="features do not match"):
        tc.load_file(tc.Path(_copy_critic(tmp_path, _older)))


def _older(d: dict) -> None:
    """A Critic file as an older version wrote it: one feature fewer (its trees never
    test the last one)."""
    d["model"]["features"] = d["model"]["features"][:-1]
    last = len(d["model"]["features"])
    trees = d["model"]["feature"]
    d["model"]["feature"] = [[0 if f == last else f for f in tree] for tree in trees]


@pytest.mark.parametrize("loop", ["standard", "scim", "simrag"])
def test_an_index_critic_from_another_version_gives_way_to_the_shipped_one(
    sample_index, tmp_path, loop
):
    """After an upgrade, an index practised before it keeps answering, with the shipped
    Critic's confidence and a warning that says how to refit its own."""
    data = json.loads(tc.default_path().read_text())
    _older(data)
    index = _practised_index(sample_index, tmp_path, data)
    engine = Engine.open(Settings(index=index, model="extractive", loop=loop))
    answer = engine.answer("Who wrote Animal Farm?")
    assert any("another version" in w and "scim-edge practice" in w for w in answer.warnings)
    if answer.status != "insufficient_evidence":  # simrag may abstain: no confidence then
        assert answer.confidence is not None


def test_a_named_critic_from_another_version_is_one_line(
    sample_index, tmp_path, monkeypatch, capsys
):
    """A Critic chosen by name is used as it is or not at all: no stand-in."""
    data = json.loads(tc.default_path().read_text())
    _older(data)
    (tmp_path / "critic.json").write_text(json.dumps(data), encoding="utf-8")
    monkeypatch.setattr(tc, "named_path", lambda name: tmp_path / "critic.json")
    rc = main(["ask", "Who wrote Animal Farm?", "--index", str(sample_index), "--model",
               "extractive", "--critic-model", "old-critic"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert "Traceback" not in err
    assert "another version" in err
    assert "critic train" in err


def _practised_index(sample_index, tmp_path, critic: dict, name: str = "idx") -> str:
    """A copy of the sample index, as `name` under `tmp_path`, with `critic` as its own."""
    index = tmp_path / name
    shutil.copytree(sample_index, index)
    (index / "practice").mkdir()
    (index / "practice" / "critic.json").write_text(json.dumps(critic), encoding="utf-8")
    return str(index)


def test_a_critic_for_another_generator_warns_and_falls_back(sample_index, tmp_path):
    data = json.loads(tc.default_path().read_text())
    data["meta"]["generator"] = "flan-t5-base (onnx cpu int8)"
    index = _practised_index(sample_index, tmp_path, data)
    engine = Engine.open(Settings(index=index, model="extractive", loop="standard"))
    answer = engine.answer("What is the capital of Aruba?")
    assert answer.confidence is None
    assert any("flan-t5-base" in w for w in answer.warnings)


def test_a_damaged_index_critic_is_one_line_on_the_cli(sample_index, tmp_path, capsys):
    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    (index / "practice").mkdir()
    (index / "practice" / "critic.json").write_text("{broken", encoding="utf-8")
    rc = main(["ask", "What is the capital of Aruba?", "--index", str(index), "--model",
               "extractive"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert "Traceback" not in err
    assert "Critic file" in err


def test_quality_learned_without_a_critic_names_practice(sample_index, capsys, monkeypatch):
    monkeypatch.setattr(tc, "default_path", lambda: tc.Path("/nonexistent/critic.json"))
    rc = main(["ask", "What is the capital of Aruba?", "--index", str(sample_index),
               "--model", "extractive", "--quality", "learned"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert "scim-edge practice" in err


def test_quality_learned_with_a_critic_for_another_generator_is_refused_as_such(
    sample_index, tmp_path, capsys
):
    """Required and unfit, the Critic is refused: the line says why and names practice,
    and claims no fallback to the heuristic, which `--quality learned` does not make."""
    data = json.loads(tc.default_path().read_text())
    data["meta"]["generator"] = "flan-t5-base (onnx cpu int8)"
    index = _practised_index(sample_index, tmp_path, data)
    rc = main(["ask", "What is the capital of Aruba?", "--index", index,
               "--model", "extractive", "--quality", "learned"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert "trained for the 'flan-t5-base (onnx cpu int8)' generator" in err
    assert "instead" not in err
    assert "scim-edge practice" in err


@pytest.mark.parametrize("loop", LOOPS)
def test_every_loop_answers_with_a_confidence(sample_index, loop):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive", loop=loop))
    answer = engine.answer("Who developed the Japanese martial art aikido?")
    if answer.status == "insufficient_evidence":
        assert answer.confidence is None or answer.confidence <= 1.0
    else:
        assert 0.0 <= answer.confidence <= 1.0


@pytest.mark.parametrize("loop", ["standard", "scim", "simrag", "iter-retgen"])
def test_a_slow_consumer_is_not_counted_as_loop_time(sample_index, loop):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive", loop=loop))
    engine.answer("Who developed the Japanese martial art aikido?")  # warm caches
    final = None
    for event in engine.ask("Who developed the Japanese martial art aikido?"):
        time.sleep(0.05)  # a front end that takes 50 ms per event
        if isinstance(final := event, Final):
            break
    assert isinstance(final, Final)
    coordination = sum(it.timing_ms["coordination"] for it in final.answer.iterations)
    assert coordination < 40.0


def _said(answer: str, sentence: str, confidence: float) -> SimpleNamespace:
    return SimpleNamespace(answer=answer, support=[{"sentence": sentence}], confidence=confidence)


NOVELLA = [{"sentence": "Animal Farm is a novella by George Orwell."}]


def test_a_repeated_answer_from_the_same_sentence_keeps_its_first_confidence():
    earlier = [_said("George Orwell", NOVELLA[0]["sentence"], 0.3),
               _said("Eric Blair", "Orwell was born Eric Blair.", 0.5)]  # fmt: skip
    assert Confidence.as_first_given(0.9, "george orwell.", NOVELLA, earlier) == 0.3


def test_a_repeated_answer_from_another_sentence_is_judged_on_its_own():
    earlier = [_said("George Orwell", "George Orwell wrote the manuscript in 1943.", 0.3)]
    assert Confidence.as_first_given(0.9, "George Orwell", NOVELLA, earlier) == 0.9


def test_a_new_answer_keeps_its_own_confidence():
    earlier = [_said("George Orwell", NOVELLA[0]["sentence"], 0.3)]
    assert Confidence.as_first_given(0.9, "Eric Blair", NOVELLA, earlier) == 0.9


def test_no_critic_stays_no_confidence_when_an_answer_repeats():
    earlier = [_said("George Orwell", NOVELLA[0]["sentence"], 0.3)]
    assert Confidence.as_first_given(None, "George Orwell", NOVELLA, earlier) is None


def test_the_critic_fit_replays_repeats_as_the_loop_does():
    pair = [(1, "George Orwell", "a novella by George Orwell", 0.2, True),
            (2, "George Orwell", "a novella by George Orwell", 0.9, True),
            (3, "George Orwell", "George Orwell wrote it", 0.8, True)]  # fmt: skip
    ((_, features, _),) = tc._replayed({"p": pair}, Settings(theta=0.7, delta=0.05))
    assert features[0] == pytest.approx(math.log(0.8 / 0.2))


def _first_of_each(its):
    first = {}
    for it in its:
        key = (normalize_answer(it.answer), it.support[0]["sentence"] if it.support else "")
        first.setdefault(key, it.confidence)
    return first


def test_in_the_loop_rounds_that_reread_an_answer_carry_its_first_confidence(sample_index):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive", loop="fixed-3"))
    its = engine.answer("Who wrote Animal Farm?").iterations
    first = _first_of_each(its)
    assert len(first) < len(its)  # some round re-read an earlier round's sentence
    assert all(
        it.confidence == first[(normalize_answer(it.answer), it.support[0]["sentence"])]
        for it in its
    )


def test_tiers_follow_confidence():
    assert [tc.confidence_tier(p) for p in (0.9, 0.5, 0.1)] == ["high", "medium", "low"]


def test_confidence_names_the_shipped_critic(sample_index):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive"))
    assert Confidence.for_engine(engine, engine.settings).name == "trained:default"


def _practised_copy(sample_index, tmp_path) -> Path:
    """A copy of the sample index with a small practice set (no Critic fitted)."""
    from scim_edge.practice.runner import PracticeOptions, run_practice

    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    engine = Engine.open(Settings(index=str(index), model="extractive"))
    run_practice(engine, index, PracticeOptions(questions=60, seed=2, train_critic=False))
    return index


def test_critic_train_list_verify(sample_index, tmp_path, capsys):
    index = _practised_copy(sample_index, tmp_path)
    assert main(["critic", "train", "--index", str(index), "--name", "critic-t"]) == 0
    capsys.readouterr()
    assert main(["critic", "list", "--json"]) == 0
    listed = {e["name"] for e in json.loads(capsys.readouterr().out)}
    assert {"critic-t", "default"} <= listed
    assert main(["critic", "verify", "critic-t"]) == 0


def test_critic_train_without_practice_names_it(sample_index, capsys):
    rc = main(["critic", "train", "--index", str(sample_index)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "scim-edge practice" in err


def test_critic_train_on_a_truncated_practice_set_is_one_line(sample_index, tmp_path, capsys):
    index = _practised_copy(sample_index, tmp_path)
    traces = index / "practice" / "traces.jsonl"
    traces.write_text(traces.read_text()[:500], encoding="utf-8")
    rc = main(["critic", "train", "--index", str(index)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "Traceback" not in err
    assert "practice set" in err


def test_critic_train_on_traces_of_another_version_is_one_line(sample_index, tmp_path, capsys):
    """Traces made for other Critic features would fit a Critic blind to the new ones."""
    index = _practised_copy(sample_index, tmp_path)
    manifest = index / "practice" / "manifest.json"
    data = json.loads(manifest.read_text())
    data["params"]["features"] = "0123456789abcdef"
    manifest.write_text(json.dumps(data), encoding="utf-8")
    rc = main(["critic", "train", "--index", str(index)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "Traceback" not in err
    assert "another version" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["practice", "--index", ""],
        ["critic", "train", "--index", ""],
        ["ask", "Q?", "--critic-model", ""],
        ["search", "Q", "--index", ""],
        ["eval", "qa.jsonl", "--index", ""],
        ["eval", ""],
        ["tui", "--index", ""],
        ["bundle", "out.tar", "--index", ""],
        ["ask", "Q?", "--model", ""],
        ["eval", "qa.jsonl", "--model", ""],
        ["tui", "--model", ""],
        ["bundle", "out.tar", "--model", ""],
        ["build-index", "dump.xml", "--embeddings", "", "--embedding-variant", "static"],
    ],
)
def test_an_empty_name_is_refused_not_taken_as_the_default(argv, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert "must not be empty" in capsys.readouterr().err


def _rounds(n: int, hidden: bool, rng: np.random.Generator) -> list[dict]:
    """Held-out and train rounds whose right answers have the higher span probability."""
    out = []
    for i in range(n):
        right = bool(rng.random() < 0.5)
        prob = float(np.clip(rng.normal(0.7 if right else 0.3, 0.15), 0, 1))
        out.append({"pair_id": f"{'h' if hidden else 'v'}{i}", "correct": right,
                    "split": "heldout" if i % 2 else "train", "source_hidden": hidden,
                    "features": {"r:span_prob": prob, "has_reader": 1.0}})  # fmt: skip
    return out


def test_the_platt_map_is_fitted_on_hidden_source_rounds_too():
    rng = np.random.default_rng(0)
    visible = _rounds(400, False, rng)
    hidden = [{**r, "correct": False} for r in _rounds(400, True, rng) if r["split"] == "heldout"]
    settings = Settings()
    alone = tc.train_from_rows(visible, generator="extractive", settings=settings)
    mixed = tc.train_from_rows(visible + hidden, generator="extractive", settings=settings)
    assert mixed.platt != alone.platt


def _kinds(rng: np.random.Generator) -> list[dict]:
    """Practice-like rounds: visible sources are right two times in three and share the
    question's words; hidden ones are right one time in fourteen and share few. Within each
    kind only the span probability tells right from wrong."""
    out = []
    for i in range(3000):
        hidden = i % 2 == 1
        right = bool(rng.random() < (0.07 if hidden else 0.66))
        overlap = float(np.clip(rng.normal(0.35 if hidden else 0.75, 0.1), 0, 1))
        prob = float(np.clip(rng.normal(0.6 if right else 0.4, 0.15), 0, 1))
        out.append({"pair_id": f"p{i}", "correct": right, "split": "train",
                    "source_hidden": hidden,
                    "features": {"r:span_prob": prob, "r:sent_idf_overlap": overlap}})  # fmt: skip
    return out


def test_balanced_weights_make_rightness_independent_of_hiding():
    rows = _kinds(np.random.default_rng(1))
    w = tc.source_balanced_weights(rows)
    y = np.array([r["correct"] for r in rows], dtype=float)
    hidden = np.array([r["source_hidden"] for r in rows])
    rate_hidden = float((w * y)[hidden].sum() / w[hidden].sum())
    rate_visible = float((w * y)[~hidden].sum() / w[~hidden].sum())
    assert rate_hidden == pytest.approx(rate_visible, abs=1e-9)


def test_overlap_that_only_tells_the_kinds_apart_does_not_become_the_cue():
    rows = _kinds(np.random.default_rng(2))
    critic = tc.train_from_rows(rows + _heldout_copy(rows), generator="x", settings=Settings())
    overlap = _effect(critic, rows, "r:sent_idf_overlap", 0.35, 0.75)  # hidden → visible
    prob = _effect(critic, rows, "r:span_prob", 0.4, 0.6)  # a wrong pick's → a right one's
    assert abs(overlap) < 0.25 * abs(prob)


def _effect(critic: tc.TrainedCritic, rows: list[dict], feature: str, lo: float, hi: float
            ) -> float:  # fmt: skip
    """How much the Critic's score moves, on average over `rows`, when `feature` goes from
    `lo` to `hi` with the rest of each row as it is."""
    X = np.array([vector(r["features"]) for r in rows])
    j = list(FEATURES).index(feature)
    X_lo, X_hi = X.copy(), X.copy()
    X_lo[:, j], X_hi[:, j] = lo, hi
    return float(np.mean(critic.model.score(X_hi) - critic.model.score(X_lo)))


def test_asked_mix_weights_give_hidden_sources_the_asked_share():
    hidden = np.array([True, False] * 50 + [True] * 20)
    w = tc.asked_mix_weights(hidden)
    assert w[hidden].sum() / w.sum() == pytest.approx(tc.ASKED_HIDDEN_SHARE)


def test_the_confidence_is_calibrated_at_the_asked_mix_not_practices():
    """Practice hides half its sources; people mostly ask what the index holds. Measured at
    the asked mix, the mean confidence is the rate of right answers."""
    rows = _kinds(np.random.default_rng(4))
    calibration = [{**r, "pair_id": "h" + r["pair_id"], "split": "heldout"}
                   for r in _kinds(np.random.default_rng(5))]  # fmt: skip
    critic = tc.train_from_rows(rows + calibration, generator="x", settings=Settings())
    held = _kinds(np.random.default_rng(6))
    p = critic.probabilities(np.array([vector(r["features"]) for r in held]))
    y = np.array([r["correct"] for r in held], dtype=float)
    w = tc.asked_mix_weights(np.array([r["source_hidden"] for r in held]))
    assert float(np.average(p, weights=w)) == pytest.approx(float(np.average(y, weights=w)),
                                                            abs=0.03)  # fmt: skip


def test_held_out_figures_are_shown_at_the_asked_mix():
    rows = _kinds(np.random.default_rng(4))
    measured = [{**r, "pair_id": "h" + r["pair_id"], "split": "heldout"}
                for r in _kinds(np.random.default_rng(5))]  # fmt: skip
    critic = tc.train_from_rows(rows + measured, generator="x", settings=Settings())
    _, meas = tc._heldout_halves(rows + measured)
    visible = sum(not (rows + measured)[i]["source_hidden"] for i in meas)
    shown = critic.heldout["n"]
    assert (shown - visible) / shown == pytest.approx(tc.ASKED_HIDDEN_SHARE, abs=0.005)


def _few_and_many() -> tuple[list[dict], tc.TrainedCritic]:
    """Practice rounds with a few train rows and many held-out ones, and a Critic fitted on
    3,000 rounds of the same kind."""
    many = _kinds(np.random.default_rng(8))
    held = [{**r, "pair_id": "h" + r["pair_id"], "split": "heldout"}
            for r in _kinds(np.random.default_rng(9))]  # fmt: skip
    strong = tc.train_from_rows(many + held, generator="x", settings=Settings())
    few = [r for r in _kinds(np.random.default_rng(10))[:40]]
    return few + held, strong


def test_a_critic_fitted_on_few_rounds_gives_way_to_a_better_one():
    rows, strong = _few_and_many()
    weak = tc.train_from_rows(rows, generator="x", settings=Settings())
    assert tc.shipped_instead(weak, rows, strong) is not None


def test_a_critic_keeps_its_place_against_a_worse_one():
    rows, strong = _few_and_many()
    weak = tc.train_from_rows(rows, generator="x", settings=Settings())
    strong.model.leaf, strong.model.base = -strong.model.leaf, -strong.model.base  # ranks
    # right answers below wrong ones
    assert tc.shipped_instead(weak, rows, strong) is None


def test_a_critic_no_better_than_the_shipped_one_beyond_chance_gives_way_to_it():
    rows, strong = _few_and_many()
    assert tc.shipped_instead(strong, rows, strong) is not None  # level on every round


def _heldout_copy(rows: list[dict]) -> list[dict]:
    return [{**r, "pair_id": "h" + r["pair_id"], "split": "heldout"} for r in rows[:400]]


def _runs(n: int, rng: np.random.Generator) -> list[dict]:
    """Held-out three-round practice pairs. Every round looks equally sure of itself (the
    same span probability), but a pair whose rounds disagree has a wrong answer in its
    later rounds: what SCIM returns from such a run is less often right than its round's
    own confidence says."""
    rows = []
    for i in range(n):
        steady = bool(rng.random() < 0.5)
        prob = float(np.clip(rng.normal(0.6, 0.15), 0, 1))
        for t in (1, 2, 3):
            answer = "Orwell" if steady or t == 1 else f"Other {i} {t}"
            right = steady if t > 1 else bool(rng.random() < 0.5)
            rows.append({"pair_id": f"r{i}", "round": t, "answer": answer, "correct": right,
                         "split": "heldout", "source_hidden": False,
                         "features": {"r:span_prob": prob + 0.01 * t}})  # fmt: skip
    return rows


def _trained_with_rounds() -> tc.TrainedCritic:
    rng = np.random.default_rng(3)
    train = [{**r, "split": "train", "pair_id": "t" + r["pair_id"]} for r in _runs(300, rng)]
    return tc.train_from_rows(train + _runs(600, rng), generator="x", settings=Settings())


def test_rounds_that_disagree_lower_the_returned_answers_confidence():
    critic = _trained_with_rounds()
    steady = critic.across_rounds(["Orwell", "Orwell", "Orwell"], [0.6, 0.6, 0.6], 2)
    changed = critic.across_rounds(["Orwell", "Blair", "Huxley"], [0.6, 0.6, 0.6], 2)
    assert changed < steady


def test_the_across_rounds_part_is_measured_on_pairs_it_was_not_fitted_on():
    figures = _trained_with_rounds().meta["across_rounds"]
    assert figures["heldout"]["auroc"] > figures["heldout_own_confidence"]["auroc"]


def _runs_of_both_kinds(n: int, rng: np.random.Generator, split: str) -> list[dict]:
    """`_runs` pairs, and as many whose source practice hid: as sure of themselves, right
    about one time in ten."""
    hidden = [{**r, "pair_id": "x" + r["pair_id"], "source_hidden": True,
               "correct": r["correct"] and r["pair_id"].endswith("0")}
              for r in _runs(n, rng)]  # fmt: skip
    return [{**r, "split": split, "pair_id": split + r["pair_id"]}
            for r in _runs(n, rng) + hidden]  # fmt: skip


def test_the_across_rounds_part_is_calibrated_at_the_asked_mix():
    rng = np.random.default_rng(7)
    rows = _runs_of_both_kinds(500, rng, "train") + _runs_of_both_kinds(1500, rng, "heldout")
    critic = tc.train_from_rows(rows, generator="x", settings=Settings())
    runs: dict[str, list] = {}
    for r in _runs_of_both_kinds(1000, rng, "new"):
        p = critic.probability(r["features"])
        runs.setdefault(r["pair_id"], []).append((r["round"], r["answer"], "", p, r["correct"]))
    replayed = list(tc._replayed(runs, Settings()))
    p = sigmoid(critic.rounds.score(np.array([f for _, f, _ in replayed])))
    y = np.array([right for _, _, right in replayed], dtype=float)
    w = tc.asked_mix_weights(np.array(["x" in pid for pid, _, _ in replayed]))
    assert float(np.average(p, weights=w)) == pytest.approx(float(np.average(y, weights=w)),
                                                            abs=0.03)  # fmt: skip


def test_the_across_rounds_part_survives_a_round_trip_through_its_file():
    critic = _trained_with_rounds()
    again = tc.TrainedCritic.from_dict(json.loads(json.dumps(critic.to_dict())))
    args = (["Orwell", "Blair"], [0.6, 0.5], 1)
    assert again.across_rounds(*args) == pytest.approx(critic.across_rounds(*args), abs=1e-5)


def test_a_critic_without_the_across_rounds_part_keeps_the_rounds_own_confidence():
    critic = _trained_with_rounds()
    critic.rounds = None
    assert critic.across_rounds(["Orwell", "Blair"], [0.6, 0.45], 1) == 0.45


def test_a_critic_whose_across_rounds_features_differ_is_refused(tmp_path):
    def mutate(d: dict) -> None:
        d["rounds"]["features"][0] = "something else"

    with pytest.raises(ModelError):
        tc.load_file(Path(_copy_critic(tmp_path, mutate)))


def test_the_shipped_critic_has_an_across_rounds_part():
    assert tc.load_file(tc.default_path()).rounds is not None


@pytest.mark.parametrize("loop", ["scim", "fixed-3"])
def test_a_loop_of_several_rounds_returns_the_across_rounds_confidence(sample_index, loop):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive", loop=loop))
    answer = engine.answer("Who wrote Animal Farm?")
    its = answer.iterations
    chosen = max(i for i, it in enumerate(its) if it.answer == answer.answer)
    critic = tc.load_file(tc.default_path())
    expected = critic.across_rounds([it.answer for it in its], [it.confidence for it in its],
                                    chosen)  # fmt: skip
    assert answer.confidence == pytest.approx(expected, abs=1e-4)


def test_a_single_round_keeps_its_own_confidence(sample_index):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive", loop="standard"))
    answer = engine.answer("Who wrote Animal Farm?")
    assert answer.confidence == pytest.approx(answer.iterations[0].confidence, abs=1e-4)


def test_the_critic_reads_the_readers_whole_view_of_its_pick():
    """Beyond its probability and a few summary signals, the Critic reads the rest of the
    reader's features of the span it picked ("by" right before it, its kind against the
    question's), which the shipped Critic weighs."""
    from scim_edge import critic_features
    from scim_edge.generation.reader import Reader
    from scim_edge.types import Passage

    passage = Passage("1-0", "Animal Farm", "", "Animal Farm is a novella by George Orwell.", 9.0)
    reading = Reader.for_index(None).read("Who wrote Animal Farm?", [passage])
    row = critic_features.round_features(
        reading.candidate.text,
        {},
        reading.features("person"),
        1,
        ["1-0"],
        ["1-0"],
        [],
        {"1-0": 9.0},
    )
    assert row["r:before_by"] == 1.0
    assert "r:before_by" in tc.load_file(tc.default_path()).model.features


def _doctor_checks(capsys) -> tuple[int, list[dict]]:
    rc = main(["doctor", "--json", "--no-network-check"])
    return rc, json.loads(capsys.readouterr().out)["checks"]


def test_doctor_names_an_index_critic_from_another_version(sample_index, capsys):
    import os

    data = json.loads(tc.default_path().read_text())
    _older(data)
    _practised_index(sample_index, Path(os.environ["SCIM_EDGE_HOME"]) / "indexes", data, "wiki")
    _, checks = _doctor_checks(capsys)
    (check,) = [c for c in checks if c["name"] == "index wiki practice Critic"]
    assert check["status"] == "warning"
    assert "scim-edge practice --index wiki" in check["hint"]


def _reader_check(sample_index, capsys, outdated: bool, used: str = "own") -> dict:
    """doctor's check of the practice reader weights of an index named wiki, written as this
    version writes them or with a feature this version lacks; `used`: whether practice kept
    its own fit or the shipped weights."""
    import os

    from scim_edge.generation.reader import default_weights_path

    data = json.loads(tc.default_path().read_text())
    index = Path(_practised_index(sample_index, Path(os.environ["SCIM_EDGE_HOME"]) / "indexes",
                                  data, "wiki"))  # fmt: skip
    weights = json.loads(default_weights_path().read_text())
    if outdated:
        weights["features"] = [*weights["features"][:-1], "a_feature_of_another_version"]
    weights["meta"] = {**weights.get("meta", {}), "used": used}
    (index / "practice" / "reader.json").write_text(json.dumps(weights), encoding="utf-8")
    _, checks = _doctor_checks(capsys)
    (check,) = [c for c in checks if c["name"] == "index wiki practice reader"]
    return check


def test_doctor_warns_of_index_reader_weights_from_another_version(sample_index, capsys):
    assert _reader_check(sample_index, capsys, outdated=True)["status"] == "warning"


def test_doctor_passes_index_reader_weights_of_this_version(sample_index, capsys):
    assert _reader_check(sample_index, capsys, outdated=False)["status"] == "ok"


def test_doctor_says_an_index_reader_is_its_own_fit(sample_index, capsys):
    check = _reader_check(sample_index, capsys, outdated=False, used="own")
    assert "fitted by `practice`" in check["detail"]


def test_doctor_says_practice_kept_the_shipped_reader(sample_index, capsys):
    """practice keeps the shipped weights when its own fit reads no better; doctor must not
    call them fitted for the index."""
    check = _reader_check(sample_index, capsys, outdated=False, used="shipped")
    assert "shipped reader weights, kept by `practice`" in check["detail"]


def test_doctor_warns_of_a_critic_calibrated_at_practices_mix(sample_index, capsys):
    import os

    data = json.loads(tc.default_path().read_text())
    del data["meta"]["calibrated_hidden_share"]  # as an older version wrote it
    _practised_index(sample_index, Path(os.environ["SCIM_EDGE_HOME"]) / "indexes", data, "wiki")
    _, checks = _doctor_checks(capsys)
    (check,) = [c for c in checks if c["name"] == "index wiki practice Critic"]
    assert check["status"] == "warning"


def test_doctor_passes_a_critic_calibrated_at_the_asked_mix(sample_index, capsys):
    import os

    data = json.loads(tc.default_path().read_text())
    _practised_index(sample_index, Path(os.environ["SCIM_EDGE_HOME"]) / "indexes", data, "wiki")
    _, checks = _doctor_checks(capsys)
    (check,) = [c for c in checks if c["name"] == "index wiki practice Critic"]
    assert check["status"] == "ok"


def test_doctor_loads_an_installed_critic_as_a_critic(sample_index, tmp_path, capsys):
    """A Critic installed by `critic train` is read as `--critic-model` reads it, not
    opened as a Flan-T5 model."""
    from scim_edge.critic_store import install

    critic = tc.load_file(tc.default_path())
    install(critic, "critic-x", source="test")
    _, checks = _doctor_checks(capsys)
    (check,) = [c for c in checks if c["name"] == "model critic-x loads"]
    assert check["status"] == "ok", check


def test_a_linear_critic_file_from_an_earlier_version_still_loads_and_scores(tmp_path):
    rng = np.random.default_rng(11)
    X = rng.normal(size=(200, len(FEATURES)))
    y = (X[:, 0] > 0).astype(float)
    linear = tc.TrainedCritic(fit_logistic(X, y, list(FEATURES)), (1.0, 0.0))
    path = tmp_path / "critic.json"
    path.write_text(json.dumps(linear.to_dict()), encoding="utf-8")
    loaded = tc.load_file(path)
    f = dict(zip(FEATURES, X[0], strict=True))
    assert loaded.probability(f) == pytest.approx(linear.probability(f), abs=1e-5)


def test_a_critic_whose_model_names_no_features_is_damaged_not_outdated(tmp_path):
    def unnamed(d):
        del d["model"]["features"]

    with pytest.raises(ModelError, match=r"is damaged \(the model names no features\)") as e:
        tc.load_file(tc.Path(_copy_critic(tmp_path, unnamed)))
    assert not isinstance(e.value, tc.OutdatedCritic)


@pytest.mark.parametrize("which", ["default", "index"])
def test_critic_model_takes_the_names_critic_list_shows(which, sample_index, isolated_home, capsys):
    """`critic list` names the shipped Critic "default" and an index's own "index:NAME";
    `--critic-model` takes those names, as listed."""
    data = json.loads(tc.default_path().read_text())
    _practised_index(sample_index, isolated_home / "indexes", data, name="own")
    assert main(["critic", "list", "--json"]) == 0
    listed = {e["name"] for e in json.loads(capsys.readouterr().out)}
    name = "default" if which == "default" else "index:own"
    assert name in listed
    rc = main(["ask", "Who wrote Animal Farm?", "--index", str(sample_index), "--model",
               "extractive", "--loop", "standard", "--critic-model", name, "--json"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert json.loads(out)["bindings"]["confidence"] == f"trained:{which}"


def test_an_unknown_critic_model_is_one_line_naming_critic_list(sample_index, capsys):
    # no --model: the engine has a note to give (no Flan-T5 installed), which must not
    # come before the error
    rc = main(["ask", "Who wrote Animal Farm?", "--index", str(sample_index),
               "--critic-model", "nope"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1  # no engine note before the error
    assert "scim-edge critic list" in err[0]


def test_a_trained_critic_cannot_take_the_shipped_ones_name(sample_index, capsys):
    """`critic list` and `--critic-model` call the shipped Critic "default": a store
    Critic of that name could never be chosen."""
    rc = main(["critic", "train", "--index", str(sample_index), "--name", "default"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1
    assert "the name 'default' is the shipped Critic's" in err[0]


def test_an_index_prefix_without_a_name_is_refused(sample_index, capsys):
    rc = main(["ask", "Who wrote Animal Farm?", "--index", str(sample_index), "--model",
               "extractive", "--critic-model", "index:"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert "'index:' names no index" in err[0]


def test_with_the_model_critic_critic_model_names_the_judge_not_the_confidence(sample_index):
    """`--critic model --critic-model NAME` names the Flan-T5 that judges simrag's rounds
    (a fine-tuned Critic is one); the answer's confidence still comes from the trained
    Critic, not from a lookup of NAME among trained Critics."""
    settings = Settings(index=str(sample_index), model="extractive", loop="simrag",
                        critic="model", critic_model="critic-t5")  # fmt: skip
    engine = Engine.open(settings)
    assert Confidence.for_engine(engine, settings).name == "trained:default"


def test_critic_train_never_replaces_a_generator(sample_index, tmp_path, capsys):
    """--force replaces an installed Critic, never a Flan-T5 model of the same name: `ask
    --model NAME` would then find a Critic where its generator was."""
    from models import store
    from scim_edge import paths
    from tests.test_models_store import make_fake_model

    store.import_model(make_fake_model(tmp_path / "src", name="tiny"))
    index = _practised_copy(sample_index, tmp_path)
    rc = main(["critic", "train", "--index", str(index), "--name", "tiny", "--force"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "model 'tiny' is a seq2seq model, not a Critic" in err
    assert store.read_manifest(paths.models_dir() / "tiny")["kind"] == "seq2seq"


def test_doctor_warns_of_a_folder_where_the_practice_critic_belongs(sample_index, capsys):
    """The loops pass over a critic.json that is no file as absent, without a word."""
    import os

    index = Path(_practised_index(sample_index, Path(os.environ["SCIM_EDGE_HOME"]) / "indexes",
                                  {}, "wiki"))  # fmt: skip
    (index / "practice" / "critic.json").unlink()
    (index / "practice" / "critic.json").mkdir()
    _, checks = _doctor_checks(capsys)
    (check,) = [c for c in checks if c["name"] == "index wiki practice Critic"]
    assert "is not a file" in check["detail"]


@pytest.mark.parametrize("text", ["", "[1]", "{garbage"])
def test_doctor_warns_of_a_damaged_practice_manifest(sample_index, capsys, text):
    """`critic train` refuses a practice set whose manifest does not read; doctor says so."""
    import os

    index = Path(_practised_index(sample_index, Path(os.environ["SCIM_EDGE_HOME"]) / "indexes",
                                  json.loads(tc.default_path().read_text()), "wiki"))  # fmt: skip
    (index / "practice" / "manifest.json").write_text(text, encoding="utf-8")
    _, checks = _doctor_checks(capsys)
    (check,) = [c for c in checks if c["name"] == "index wiki practice set"]
    assert check["status"] == "warning"
