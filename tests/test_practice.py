"""Self-practice: pairs made from the index, the practice set on disk, resuming, and the
learned reader it fits (on a copy of the real sample index)."""

from __future__ import annotations

import json
import multiprocessing
import shutil
from pathlib import Path

import pytest

from scim_edge.cli import main
from scim_edge.engine import Engine
from scim_edge.evaluation.metrics import normalize_answer
from scim_edge.generation import reader_features as rf
from scim_edge.generation.extractive import ExtractiveGenerator
from scim_edge.practice import store
from scim_edge.practice.questions import pairs_from_passages
from scim_edge.practice.runner import PracticeOptions, run_practice
from scim_edge.retrieval import BM25Retriever
from scim_edge.settings import Settings

N = 80


@pytest.fixture
def index_copy(sample_index, tmp_path) -> Path:
    """Practice writes beside the index: never into the session's shared one."""
    dst = tmp_path / "enwiki-sample"
    shutil.copytree(sample_index, dst)
    return dst


@pytest.fixture(scope="module")
def practised(sample_index, tmp_path_factory) -> Path:
    """A copy of the sample index with a small practice set (reader and Critic)."""
    dst = tmp_path_factory.mktemp("practised") / "enwiki-sample"
    shutil.copytree(sample_index, dst)
    engine = Engine.open(Settings(index=str(dst), model="extractive"))
    run_practice(engine, dst, PracticeOptions(questions=N, seed=3))
    return dst


def test_pairs_are_deterministic_for_a_seed(sample_index):
    r = BM25Retriever.open(sample_index)
    a = pairs_from_passages(r.sample(7), 40, 7)
    b = pairs_from_passages(r.sample(7), 40, 7)
    assert [p.to_dict() for p in a] == [p.to_dict() for p in b]


def test_the_practice_order_is_the_same_for_two_builds_of_one_dump(tmp_path):
    """One worker and two lay the passages out in segments differently; the order
    practice draws them in must not follow that layout."""
    from index_builder.build import build_index
    from scim_edge.demo import demo_dump_path

    orders = []
    for workers in (1, 2):
        build_index(demo_dump_path(), tmp_path / f"demo{workers}", workers=workers)
        r = BM25Retriever.open(tmp_path / f"demo{workers}")
        orders.append([p.doc_id for p in r.sample(3)])
    assert orders[0] == orders[1]


def test_another_seed_makes_other_pairs(sample_index):
    r = BM25Retriever.open(sample_index)
    a = pairs_from_passages(r.sample(7), 40, 7)
    b = pairs_from_passages(r.sample(8), 40, 8)
    assert [p.question for p in a] != [p.question for p in b]


def test_a_question_never_holds_its_answer(sample_index):
    r = BM25Retriever.open(sample_index)
    for p in pairs_from_passages(r.sample(1), 150, 1):
        answer, question = normalize_answer(p.answer), normalize_answer(p.question)
        assert f" {answer} " not in f" {question} ", p


def test_a_question_does_not_copy_its_sentence(sample_index):
    r = BM25Retriever.open(sample_index)
    pairs = pairs_from_passages(r.sample(2), 150, 2)
    copied = sum(p.question.rstrip("?").split()[1:] == p.sentence.split() for p in pairs)
    assert copied == 0


def test_every_pair_names_its_split(sample_index):
    r = BM25Retriever.open(sample_index)
    splits = {p.split for p in pairs_from_passages(r.sample(2), 150, 2)}
    assert splits == {"train", "heldout"}


def test_practice_set_files(practised):
    names = sorted(p.name for p in store.practice_dir(practised).iterdir())
    used = json.loads((store.practice_dir(practised) / "manifest.json").read_text())["critic"]
    expected = ["README.md", "manifest.json", "pairs.jsonl", "traces.jsonl", "reader.json"]
    expected += ["critic.json"] if used["used"] == "own" else []
    assert names == sorted(expected)


@pytest.mark.parametrize("shipped_better", [True, False])
def test_the_critic_is_written_only_when_the_shipped_one_is_not_better(
    index_copy, monkeypatch, shipped_better
):
    from scim_edge import trained_critic as tc

    figures = {"brier": 0.1, "auroc": 0.9, "ece": 0.05, "accuracy": 0.8}
    monkeypatch.setattr(tc, "shipped_instead",
                        lambda critic, rows: figures if shipped_better else None)  # fmt: skip
    engine = Engine.open(Settings(index=str(index_copy), model="extractive"))
    run_practice(engine, index_copy, PracticeOptions(questions=60, seed=1))
    written = (store.practice_dir(index_copy) / "critic.json").is_file()
    assert written is not shipped_better


def _heldout_groups(pick_shipped_best: bool) -> tuple[dict, list]:
    """Forty held-out groups of four candidates; the right one is the candidate the shipped
    weights score highest (or lowest)."""
    import numpy as np

    from scim_edge.generation.reader import default_weights_path, load_weights
    from scim_edge.practice.questions import PracticePair

    shipped = load_weights(default_weights_path())
    rng = np.random.default_rng(0)
    X = rng.normal(size=(160, len(rf.FEATURES))) * shipped.scale + shipped.mean
    y = np.zeros(160)
    for g in range(40):
        s = shipped.score(X[4 * g : 4 * g + 4])
        y[4 * g + int(np.argmax(s) if pick_shipped_best else np.argmin(s))] = 1.0
    data = {"X": X, "y": y, "sizes": np.full(40, 4), "pair": np.arange(40)}
    pairs = [PracticePair(f"p{i}", "q?", "a", "entity", "1-0", "t", "s", "heldout")
             for i in range(40)]  # fmt: skip
    return data, pairs


def _reversed_shipped():
    from dataclasses import replace

    from scim_edge.generation.reader import default_weights_path, load_weights

    shipped = load_weights(default_weights_path())
    return replace(shipped, weights=-shipped.weights)


def test_the_shipped_reader_stays_when_it_picks_the_held_out_answers_better():
    from scim_edge.practice.runner import shipped_reads_as_well

    data, pairs = _heldout_groups(pick_shipped_best=True)
    assert shipped_reads_as_well(_reversed_shipped(), data, pairs) == 1.0


def test_the_fitted_reader_is_used_when_it_picks_the_held_out_answers_better():
    from scim_edge.practice.runner import shipped_reads_as_well

    data, pairs = _heldout_groups(pick_shipped_best=False)
    assert shipped_reads_as_well(_reversed_shipped(), data, pairs) is None


def test_the_shipped_reader_stays_on_a_tie():
    from scim_edge.generation.reader import default_weights_path, load_weights
    from scim_edge.practice.runner import shipped_reads_as_well

    data, pairs = _heldout_groups(pick_shipped_best=False)
    assert shipped_reads_as_well(load_weights(default_weights_path()), data, pairs) == 0.0


def test_a_refit_that_leads_by_chance_does_not_replace_the_shipped_reader():
    import numpy as np

    from scim_edge.refit_choice import better_beyond_chance

    own = np.array([1.0, 1.0, 0.0] + [0.0] * 37)  # one question more of forty
    shipped = np.array([0.0, 0.0, 1.0] + [0.0] * 37)
    assert not better_beyond_chance(own - shipped)


def test_a_refit_that_leads_beyond_chance_replaces_the_shipped_reader():
    import numpy as np

    from scim_edge.refit_choice import better_beyond_chance

    own = np.array([1.0] * 10 + [0.0] * 30)
    shipped = np.zeros(40)
    assert better_beyond_chance(own - shipped)


def test_kept_shipped_reader_weights_are_written_with_the_index_names(index_copy, monkeypatch):
    from scim_edge.generation.reader import default_weights_path, load_weights
    from scim_edge.practice import runner

    monkeypatch.setattr(runner, "shipped_reads_as_well", lambda fitted, data, pairs: 0.5)
    engine = Engine.open(Settings(index=str(index_copy), model="extractive"))
    run_practice(engine, index_copy, PracticeOptions(questions=60, seed=1))
    written = store.read_json(store.practice_dir(index_copy) / "reader.json")
    shipped = load_weights(default_weights_path()).to_dict()
    assert (written["weights"], "aldous" in written["meta"]["given_names"]) == (
        shipped["weights"],
        True,
    )


@pytest.mark.parametrize("used", ["shipped", "own"])
def test_practice_says_when_the_shipped_reader_stays(sample_index, monkeypatch, capsys, used):
    from scim_edge.practice import runner

    manifest = {"pairs": {"total": 100, "train": 80, "heldout": 20}, "rounds": 300,
                "heldout_round1": {}, "critic": {},
                "reader": {"used": used, "heldout_top1_given_present": 0.7,
                           "own_heldout_top1": 0.65}}  # fmt: skip
    monkeypatch.setattr(runner, "run_practice",
                        lambda *a, **k: runner.PracticeResult(sample_index, manifest))  # fmt: skip
    assert main(["practice", "--index", str(sample_index)]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("reader"))
    if used == "shipped":
        assert "the shipped weights stay: they pick 70.0%" in line
        assert "those fitted here 65.0%" in line
    else:
        assert "fitted here: it picks 70.0%" in line


def test_practice_names_the_static_variant_as_the_vector_slot_does(
    sample_index, monkeypatch, capsys
):
    from scim_edge.practice import runner

    manifest = {"pairs": {"total": 100, "train": 80, "heldout": 20}, "rounds": 300,
                "heldout_round1": {}, "critic": {},
                "reader": {"used": "own", "heldout_top1_given_present": 0.7,
                           "sentence_similarity": "all-MiniLM-L6-v2, static"}}  # fmt: skip
    monkeypatch.setattr(runner, "run_practice",
                        lambda *a, **k: runner.PracticeResult(sample_index, manifest))  # fmt: skip
    assert main(["practice", "--index", str(sample_index)]) == 0
    out = capsys.readouterr().out
    assert "with all-MiniLM-L6-v2 (static), the index's vectors" in out


def test_practice_leaves_no_partial_folder(practised):
    assert not store.partial_dir(practised).exists()


def test_every_trace_round_is_labelled(practised):
    rows = store.read_jsonl(store.practice_dir(practised) / "traces.jsonl")
    keys = {"pair_id", "split", "round", "answer", "correct", "f1", "evidence_present",
            "features"}  # fmt: skip
    assert all(keys <= set(r) for r in rows)


def test_traces_cover_every_round_of_the_practice_loop(practised):
    rows = store.read_jsonl(store.practice_dir(practised) / "traces.jsonl")
    assert sorted({r["round"] for r in rows}) == [1, 2, 3]


def test_manifest_reports_held_out_figures(practised):
    m = store.read_json(store.practice_dir(practised) / "manifest.json")
    assert 0.0 <= m["reader"]["heldout_top1_given_present"] <= 1.0


def test_the_reader_keeps_the_given_names_of_the_index(practised):
    reader = store.read_json(store.practice_dir(practised) / "reader.json")
    assert "aldous" in reader["meta"]["given_names"]


def test_the_index_reader_weights_are_used(practised):
    gen = ExtractiveGenerator()
    gen.attach_index(practised)
    assert gen.reader.source == str(store.practice_dir(practised) / "reader.json")


def _interrupt_at_traces(index_copy) -> Engine:
    """Run practice on `index_copy` until its loop-trace pass starts, then interrupt it."""
    engine = Engine.open(Settings(index=str(index_copy), model="extractive"))

    def stop_at_traces(stage: str, done: int, total: int) -> None:
        if stage == "loop traces":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_practice(engine, index_copy, PracticeOptions(questions=60, seed=1), stop_at_traces)
    return engine


def test_interrupted_practice_keeps_nothing_then_resumes(index_copy):
    engine = _interrupt_at_traces(index_copy)
    assert not store.practice_dir(index_copy).exists()
    done_before = sorted(p.name for p in store.partial_dir(index_copy).glob("reader-*.npz"))
    seen: list[str] = []
    run_practice(engine, index_copy, PracticeOptions(questions=60, seed=1),
                 lambda stage, d, t: seen.append(stage))  # fmt: skip
    assert done_before == ["reader-0000.npz"]
    assert store.practice_dir(index_copy).is_dir()


@pytest.mark.parametrize("name", ["pairs.jsonl", "reader-0000.npz"])
def test_a_damaged_partial_file_is_made_again(index_copy, name):
    engine = _interrupt_at_traces(index_copy)
    damaged = store.partial_dir(index_copy) / name
    damaged.write_bytes(damaged.read_bytes()[: damaged.stat().st_size // 2])
    run_practice(engine, index_copy, PracticeOptions(questions=60, seed=1))
    assert store.practice_dir(index_copy).is_dir()


def test_a_partial_file_cut_at_a_line_end_is_made_again(index_copy):
    engine = _interrupt_at_traces(index_copy)
    damaged = store.partial_dir(index_copy) / "pairs.jsonl"
    lines = damaged.read_text(encoding="utf-8").splitlines(keepends=True)
    damaged.write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    run_practice(engine, index_copy, PracticeOptions(questions=60, seed=1))
    assert store.practice_dir(index_copy).is_dir()


def test_an_interrupted_practice_keeps_the_previous_set(practised, tmp_path):
    index = tmp_path / "idx"
    shutil.copytree(practised, index)
    before = (store.practice_dir(index) / "reader.json").read_text()
    engine = Engine.open(Settings(index=str(index), model="extractive"))

    def stop(stage: str, done: int, total: int) -> None:
        if stage == "loop traces":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_practice(engine, index, PracticeOptions(questions=60, seed=9), stop)
    assert (store.practice_dir(index) / "reader.json").read_text() == before


def _tiny_dump(path: Path) -> Path:
    page = (
        "<page><title>Tiny {n}</title><ns>0</ns><id>{n}</id><revision><id>{n}</id>"
        "<text>Tiny {n} is a word.</text></revision></page>"
    )
    pages = "".join(page.format(n=n) for n in range(1, 4))
    path.write_text(f"<mediawiki>{pages}</mediawiki>", encoding="utf-8")
    return path


def test_practice_on_a_too_small_index_is_one_line(tmp_path, capsys):
    from index_builder.build import build_index

    out = tmp_path / "tiny"
    build_index(_tiny_dump(tmp_path / "tiny.xml"), out)
    rc = main(["practice", "--index", str(out), "--questions", "100"])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("scim-edge: error")]
    assert rc == 2
    assert len(errors) == 1
    assert "Traceback" not in err
    assert "practice questions" in errors[0]


def test_practice_without_a_critic_says_the_earlier_one_is_gone(
    sample_index, tmp_path, monkeypatch, capsys
):
    """--no-critic writes a practice set with no Critic in place of one that had one: the
    trained Critic goes with it, and the summary says so."""
    from scim_edge.practice import runner

    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    store.practice_dir(index).mkdir()
    (store.practice_dir(index) / "critic.json").write_text("{}", encoding="utf-8")
    manifest = {"pairs": {"total": 100, "train": 80, "heldout": 20}, "rounds": 300,
                "heldout_round1": {}, "critic": {},
                "reader": {"used": "own", "heldout_top1_given_present": 0.7}}  # fmt: skip
    monkeypatch.setattr(runner, "run_practice",
                        lambda *a, **k: runner.PracticeResult(index, manifest))  # fmt: skip
    assert main(["practice", "--index", str(index), "--no-critic"]) == 0
    assert "the index's earlier Critic went with its practice set" in capsys.readouterr().out


def test_asking_for_a_typo_s_many_questions_is_one_line(sample_index, capsys):
    rc = main(["practice", "--index", str(sample_index), "--questions", "99999999999"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "--questions must be at most 1,000,000" in err


def test_asking_for_too_few_questions_is_exit_2(sample_index, capsys):
    assert main(["practice", "--index", str(sample_index), "--questions", "5"]) == 2


def test_asking_for_too_few_questions_names_the_request_not_the_index(sample_index, capsys):
    main(["practice", "--index", str(sample_index), "--questions", "5"])
    err = capsys.readouterr().err
    assert "--questions must be at least" in err


def test_asking_for_too_few_questions_is_one_line(sample_index, capsys):
    main(["practice", "--index", str(sample_index), "--questions", "5"])
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_damaged_reader_weights_name_the_fix(practised, tmp_path, capsys):
    index = tmp_path / "idx"
    shutil.copytree(practised, index)
    (store.practice_dir(index) / "reader.json").write_text("{not json", encoding="utf-8")
    rc = main(["ask", "Who wrote Animal Farm?", "--index", str(index), "--model", "extractive"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "scim-edge practice --index idx" in err


def _outdated_reader_index(practised: Path, tmp_path: Path) -> Path:
    """A practised index whose reader weights name a feature this version does not have."""
    index = tmp_path / "idx"
    shutil.copytree(practised, index)
    path = store.practice_dir(index) / "reader.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["features"] = [*data["features"][:-1], "a_feature_of_another_version"]
    path.write_text(json.dumps(data), encoding="utf-8")
    return index


def test_reader_weights_of_another_version_still_answer(practised, tmp_path, capsys):
    index = _outdated_reader_index(practised, tmp_path)
    rc = main(["ask", "Who wrote Animal Farm?", "--index", str(index), "--model", "extractive",
               "--json"])  # fmt: skip
    assert rc == 0


def test_reader_weights_of_another_version_are_named_with_the_fix(practised, tmp_path, capsys):
    index = _outdated_reader_index(practised, tmp_path)
    main(["ask", "Who wrote Animal Farm?", "--index", str(index), "--model", "extractive",
          "--json"])  # fmt: skip
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any("another version" in w and "scim-edge practice" in w for w in warnings)


def test_the_reader_never_answers_with_a_span_of_the_question(sample_index):
    engine = Engine.open(Settings(index=str(sample_index), model="extractive", loop="standard"))
    for q in ("Who wrote Animal Farm?", "Who was Abraham Lincoln?", "What is Anarchism?",
              "When did Achilles die?"):  # fmt: skip
        answer = engine.answer(q).answer
        q_words = {w.lower() for w in q.rstrip("?").split()}
        assert not {w.lower() for w in answer.split()} <= q_words, (q, answer)


def test_candidates_never_repeat_the_question(sample_index):
    r = BM25Retriever.open(sample_index)
    q = "Who wrote Animal Farm?"
    cands = rf.candidates(q, r.search(q, 5))
    assert all(normalize_answer(c.text) not in ("animal farm", "animal", "farm") for c in cands)


def test_ask_json_carries_support_and_confidence(sample_index, capsys):
    rc = main(["ask", "What is the capital of Aruba?", "--index", str(sample_index),
               "--model", "extractive", "--json"])  # fmt: skip
    d = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert set(d["support"][0]) == {"sentence", "doc_id", "title", "section"}
    assert 0.0 <= d["confidence"] <= 1.0


def _practise_fresh(index: str, workers: int) -> None:
    """Practice in a process of its own, as `scim-edge practice` runs, with chunks small
    enough that two workers share them."""
    from scim_edge.practice import runner

    runner.CHUNK = 25
    engine = Engine.open(Settings(index=index, model="extractive"))
    run_practice(engine, Path(index), PracticeOptions(questions=60, seed=1, workers=workers))


FRESH_RUN_SECONDS = 600


def test_practice_on_two_workers_writes_what_one_process_writes(sample_index, tmp_path):
    """Each run starts in a fresh process, as a user's does. Run inside the test
    session's own process, which has read other indexes and questions first, the
    one-process traces have differed from the workers' in some full-suite runs; the
    state behind it is not yet found."""
    spawn = multiprocessing.get_context("spawn")
    written = []
    for workers in (1, 2):
        dst = tmp_path / f"workers-{workers}" / "enwiki-sample"
        shutil.copytree(sample_index, dst)
        run = spawn.Process(target=_practise_fresh, args=(str(dst), workers))
        run.start()
        run.join(FRESH_RUN_SECONDS)
        if run.is_alive():  # fail, not hang the suite (its exit would wait for the child)
            run.kill()
            run.join()
        assert run.exitcode == 0
        files = ("traces.jsonl", "reader.json")
        written.append([(store.practice_dir(dst) / name).read_text() for name in files])
    assert written[0] == written[1]


def test_practice_interrupted_on_two_workers_keeps_finished_chunks_and_resumes(
    index_copy, monkeypatch
):
    from scim_edge.practice import runner

    monkeypatch.setattr(runner, "CHUNK", 25)
    engine = Engine.open(Settings(index=str(index_copy), model="extractive"))

    def stop_at_traces(stage: str, done: int, total: int) -> None:
        if stage == "loop traces":
            raise KeyboardInterrupt

    opts = PracticeOptions(questions=60, seed=1, workers=2)
    with pytest.raises(KeyboardInterrupt):
        run_practice(engine, index_copy, opts, stop_at_traces)
    assert not store.practice_dir(index_copy).exists()
    run_practice(engine, index_copy, opts)
    assert store.practice_dir(index_copy).is_dir()


def test_ctrl_c_to_every_process_of_practice_ends_it_at_once(index_copy):
    """A terminal's Ctrl+C reaches the workers too. A worker that took it died with a
    traceback, holding a queue's lock the parent's exit then waited on for ever; the
    workers leave it to the parent, which stops them: one line, exit 130, no process
    left behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    cmd = [sys.executable, "-m", "scim_edge", "practice", "--index", str(index_copy),
           "--questions", "200", "--workers", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    partial = store.partial_dir(index_copy)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not list(partial.glob("reader-*.npz")):
        time.sleep(0.05)  # the workers are running once their first chunk is written
    assert proc.poll() is None, "practice ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("practice did not end within 60 s of Ctrl+C")
    left = True
    until = time.monotonic() + 15  # an exited worker is reaped by init, in its own time
    while left and time.monotonic() < until:
        try:
            os.killpg(proc.pid, 0)
            time.sleep(0.2)
        except ProcessLookupError:
            left = False
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
    assert "Traceback" not in err, err
    assert not left, "worker processes outlived practice"
