"""The eval harness: outputs, resume, bad lines, sweeps; fake loops and the real engine.

The fast tests drive the harness with a scripted engine whose quality trajectories are
chosen so every figure (tiers, declines, premature stops) has a known value. The
end-to-end test runs `scim-edge eval` over the real enwiki-sample index with the
extractive generator.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest

from scim_edge.cli import main
from scim_edge.errors import UserError
from scim_edge.evaluation import harness
from scim_edge.evaluation.qa_io import load_qa, parse_qa_text
from scim_edge.settings import Settings
from scim_edge.types import INSUFFICIENT_EVIDENCE, Answer, IterationRecord

QUESTIONS = [
    {
        "id": "q1",
        "question": "Who assassinated Abraham Lincoln?",
        "answers": ["John Wilkes Booth", "Booth"],
        "type": "factoid",
        "titles": ["Abraham Lincoln"],
    },
    {
        "id": "q2",
        "question": "Who was the mother of Achilles?",
        "answers": ["Thetis"],
        "type": "factoid",
        "titles": ["Achilles"],
    },
    {
        "id": "q3",
        "question": "Which is older, Athens or Alaska's statehood?",
        "answers": ["Athens"],
        "type": "comparison",
    },
    {
        "id": "q4",
        "question": "Who designed the flag of Alaska?",
        "answers": [],
        "type": "unanswerable",
        "titles": ["Alaska"],
    },
    {
        "id": "q5",
        "question": "In what year did Swift publish A Modest Proposal?",
        "answers": ["1729"],
        "type": "factoid",
        "titles": ["A Modest Proposal"],
    },
]

# Quality per iteration for the scripted SCIM family, per question.
TRAJECTORIES = {
    "q1": [0.80],  # accepted at once
    "q2": [0.55, 0.45, 0.85],  # declines at t=2 (δ ≤ 0.10) but would have recovered
    "q3": [0.60, 0.40, 0.50],  # declines at t=2 and would not have recovered
    "q4": [0.30, 0.35, 0.40],  # runs out of budget
    "q5": [0.65, 0.72],  # accepted at t=2
}
GOOD = {"q1": "John Wilkes Booth", "q2": "Thetis", "q3": "Athens", "q5": "in 1729"}


class FakeGenerator:
    name = "scripted"


class FakeEngine:
    """Implements Algorithm 1 over scripted trajectories; answers depend on the loop."""

    def __init__(self, settings: Settings | None = None, fail_on: str | None = None) -> None:
        self.settings = settings or Settings()
        self.index_name = "fake-index"
        self.generator = FakeGenerator()
        self.notes: list[str] = []
        self.calls: list[tuple[str, str]] = []
        self.fail_on = fail_on
        self.interrupt_after: int | None = None

    def _qid(self, question: str) -> str:
        return next(q["id"] for q in QUESTIONS if q["question"] == question)

    def answer(self, question: str, settings: Settings | None = None) -> Answer:
        s = settings or self.settings
        if self.interrupt_after is not None and len(self.calls) >= self.interrupt_after:
            raise KeyboardInterrupt
        qid = self._qid(question)
        self.calls.append((s.loop, qid))
        if self.fail_on == qid and s.loop == "scim":
            raise RuntimeError("scripted loop bug")
        traj = TRAJECTORIES[qid]
        if s.loop == "standard":
            qs, stop, chosen = traj[:1], "single_pass", 0
        elif s.loop.startswith("fixed-") or s.loop == "iter-retgen":
            n = 3 if s.loop == "iter-retgen" else int(s.loop[-1])
            qs = (traj + [traj[-1]] * 3)[:n]
            stop, chosen = "fixed_iterations", n - 1
        else:
            qs, stop, chosen = [], "budget", 0
            for t, q in enumerate(traj, start=1):
                qs.append(q)
                chosen = t - 1
                if q >= s.theta:
                    stop = "accepted"
                    break
                if t >= s.t_max:
                    stop = "budget"
                    break
                if t > 1 and q <= qs[-2] - s.delta:
                    stop, chosen = "decline", t - 2
                    break
        iters = []
        for t, q in enumerate(qs, start=1):
            decision = "continue"
            if t == len(qs):
                decision = "accept" if stop == "accepted" else "force_accept"
            iters.append(
                IterationRecord(
                    t=t,
                    mode="initial" if t == 1 else "augment",
                    queries=[question],
                    new_doc_ids=[f"{qid}-{t}a", f"{qid}-{t}b"],
                    doc_ids=[f"{qid}-{i}{x}" for i in range(1, t + 1) for x in "ab"],
                    answer="",
                    scores={"quality": q},
                    decision=decision,
                    timing_ms={
                        "retrieval": 2.0 * t,
                        "generation": 10.0,
                        "evaluation": 0.5,
                        "coordination": 0.1,
                        "total": 12.6,
                    },
                    new_titles={f"{qid}-{t}a": "Abraham Lincoln" if qid == "q1" else "Other"},
                )
            )
        good = chosen == len(traj) - 1 or qs[chosen] >= 0.7
        if qid == "q4":
            text = INSUFFICIENT_EVIDENCE if s.loop == "simrag" else "Benny Benson"
        else:
            text = GOOD[qid] if good else "something else"
        status = (
            "insufficient_evidence"
            if text == INSUFFICIENT_EVIDENCE
            else ("accepted" if stop == "accepted" else "force_accepted")
        )
        q = qs[chosen]
        return Answer(
            question=question,
            answer=text,
            status=status,
            stop_reason=stop,
            tier="high" if q >= 0.7 else "low",
            quality=q,
            citations=[],
            generator="scripted",
            index="fake-index",
            iterations=iters,
            timing_ms={"total": 12.6 * len(qs)},
            loop=s.loop,
        )


@pytest.fixture
def qa_file(tmp_path: Path) -> Path:
    p = tmp_path / "qa.jsonl"
    p.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n", encoding="utf-8")
    return p


def _evaluate(
    engine, qa_file: Path, out: Path, systems, sweeps=(), resume=False, plots=False, warmup="none"
):
    items = load_qa(qa_file)
    runs = harness.plan_runs(engine.settings, systems, sweeps)
    return harness.evaluate(
        engine,
        items,
        runs,
        out,
        qa_file=str(qa_file),
        qa_bytes=qa_file.read_bytes(),
        seed=1,
        resume=resume,
        make_plots=plots,
        warmup=warmup,
    )


def _records(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "per_question.jsonl").read_text().splitlines()]


def test_figures_from_scripted_loops(qa_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = _evaluate(FakeEngine(), qa_file, out, ["standard", "iter-retgen", "scim", "simrag"])
    std, scim, simrag = (res["systems"][k] for k in ("standard", "scim", "simrag"))
    assert std["n"] == 5 and std["avg_iterations"] == 1.0 and std["avg_passages"] == 2.0
    assert std["quality"] == pytest.approx((0.8 + 0.55 + 0.6 + 0.3 + 0.65) / 5)
    assert std["high"] == pytest.approx(0.2) and std["low"] == pytest.approx(0.2)
    # scim: q1 t=1, q2 declines t=2 (returns 0.55), q3 declines (0.60), q4 budget, q5 t=2
    assert scim["iteration_distribution"] == {"1": 1, "2": 3, "3": 1}
    assert scim["stop_reasons"] == {"decline": 2, "accepted": 2, "budget": 1}
    assert scim["converged_1_2"] == pytest.approx(0.2)  # only q1 has Q >= 0.75 in <= 2 it.
    assert scim["em"] == pytest.approx(0.25)  # only q1 exact; "in 1729" is not EM
    assert scim["f1"] == pytest.approx((1 + 0 + 0 + 2 / 3) / 4)
    assert simrag["abstention_unanswerable"] == 1.0 and simrag["over_abstention"] == 0.0
    assert std["abstention_unanswerable"] == 0.0
    assert std["by_type"]["factoid"]["n"] == 3 and "unanswerable" in std["by_type"]
    assert std["recall_at_5"] == pytest.approx(1 / 4)  # only q1's gold title retrieved
    cost = {r["t"]: r for r in res["iteration_costs"]["scim"]}
    assert cost[1]["reached"] == 5 and cost[2]["reached"] == 4 and cost[3]["reached"] == 1
    assert cost[2]["retrieval_ms"] == pytest.approx(4.0)
    pairs = {(s["a"], s["b"], s["metric"]) for s in res["statistics"]}
    assert ("scim", "standard", "quality") in pairs and ("scim", "iter-retgen", "f1") in pairs
    f1_stats = next(
        s
        for s in res["statistics"]
        if (s["a"], s["b"], s["metric"]) == ("iter-retgen", "standard", "f1")
    )
    assert f1_stats["n"] == 4  # F1 is paired over answerable questions only

    report = (out / "report.md").read_text()
    for heading in (
        "## Overall comparison",
        "## Per-iteration cost",
        "## Paired statistics",
        "## Abstention",
        "## By question type",
    ):
        assert heading in report
    assert "| SCIM (adaptive) |" in report
    data = json.loads((out / "results.json").read_text())
    assert data["systems"]["scim"]["stop_reasons"]["decline"] == 2
    recs = _records(out)
    assert len(recs) == 20 and {r["run"] for r in recs} == {
        "standard",
        "iter-retgen",
        "scim",
        "simrag",
    }
    assert recs[0]["trace"]["iterations"][0]["scores"]["quality"] == 0.8


def test_delta_sweep_counts_caught_and_premature(qa_file: Path, tmp_path: Path) -> None:
    sweeps = [harness.parse_sweep("delta=0.05,0.30"), harness.parse_sweep("theta=0.6,0.9")]
    res = _evaluate(FakeEngine(), qa_file, tmp_path / "o", [], sweeps)
    assert res["systems"] == {}
    rows = {r["value"]: r for r in res["sensitivity"]["delta"]}
    # δ = 0.05: q2 (0.55 -> 0.45, later 0.85: premature) and q3 (0.60 -> 0.40, never
    # recovers: caught). δ = 0.30: no drop is that large.
    assert rows["0.05"]["decline_stops"] == 2
    assert rows["0.05"]["premature_stops"] == 1 and rows["0.05"]["degradations_caught"] == 1
    assert rows["0.30"]["decline_stops"] == 0
    assert "scim@delta=off" in res["sweep_runs"]
    theta = {r["value"]: r for r in res["sensitivity"]["theta"]}
    assert theta["0.6"]["avg_iterations"] < theta["0.9"]["avg_iterations"]
    report = (tmp_path / "o" / "report.md").read_text()
    assert "Premature stops" in report and "### Threshold θ" in report


def test_resume_skips_done_pairs(qa_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    eng = FakeEngine()
    eng.interrupt_after = 7  # standard: 5 done, scim: 2 done, then Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        _evaluate(eng, qa_file, out, ["standard", "scim"])
    assert len(_records(out)) == 7
    # A torn last line (crash mid-write) is dropped and repaired on resume.
    with (out / "per_question.jsonl").open("a") as f:
        f.write('{"run": "scim", "id": "q3", "qual')
    with pytest.raises(UserError, match="already holds results"):
        _evaluate(FakeEngine(), qa_file, out, ["standard", "scim"])
    eng2 = FakeEngine()
    res = _evaluate(eng2, qa_file, out, ["standard", "scim"], resume=True)
    assert eng2.calls == [("scim", "q3"), ("scim", "q4"), ("scim", "q5")]
    recs = _records(out)
    assert len(recs) == 10 and len({(r["run"], r["id"]) for r in recs}) == 10
    fresh = _evaluate(FakeEngine(), qa_file, tmp_path / "fresh", ["standard", "scim"])
    for key in ("standard", "scim"):
        for fig in ("quality", "em", "f1", "avg_iterations", "stop_reasons"):
            assert res["systems"][key][fig] == fresh["systems"][key][fig]


def test_resume_refuses_other_settings(qa_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    _evaluate(FakeEngine(), qa_file, out, ["standard"])
    with pytest.raises(UserError, match=r"its setting theta was .* and is 0\.8 now"):
        _evaluate(FakeEngine(Settings(theta=0.8)), qa_file, out, ["standard"], resume=True)


def test_resume_takes_the_index_by_name_or_folder() -> None:
    """The index named as typed ("sample") or by its folder is one index: the fingerprint
    records the index's name (never the spelling, nor a local path)."""
    by_name = harness.fingerprint(Settings(index="sample"), "sample", "g", b"q")
    by_dir = harness.fingerprint(Settings(index="/h/indexes/sample"), "sample", "g", b"q")
    assert by_name == by_dir


def test_resume_refuses_an_index_rebuilt_in_between(tmp_path: Path) -> None:
    """The first half's answers came from the index as it was built then."""
    out = tmp_path / "out"
    then = harness.fingerprint(Settings(), "sample", "g", b"q", "2026-12-01T10:00:00Z")
    harness.prepare_out(out, then, resume=False)
    (out / harness.PER_QUESTION).write_text('{"run": "standard", "id": "q1"}\n')
    now = harness.fingerprint(Settings(), "sample", "g", b"q", "2026-12-04T09:00:00Z")
    with pytest.raises(UserError, match="its index was built at 2026-12-01T10:00:00Z"):
        harness.prepare_out(out, now, resume=True)


def test_loop_error_is_recorded_and_retried_on_resume(qa_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    res = _evaluate(FakeEngine(fail_on="q2"), qa_file, out, ["scim"])
    assert res["systems"]["scim"]["errors"] == 1
    assert "Errors" in (out / "report.md").read_text()
    eng = FakeEngine()
    res = _evaluate(eng, qa_file, out, ["scim"], resume=True)
    assert eng.calls == [("scim", "q2")] and res["systems"]["scim"]["errors"] == 0


def test_plots_written(qa_file: Path, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "out"
    res = _evaluate(FakeEngine(), qa_file, out, ["standard", "scim"], plots=True)
    assert len(res["plots"]) == 5
    assert "plots/reliability.png" in res["plots"]
    for rel in res["plots"]:
        assert (out / rel).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert rel in (out / "report.md").read_text()


def test_plots_skipped_without_matplotlib(qa_file: Path, tmp_path: Path, monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    out = tmp_path / "out"
    res = _evaluate(FakeEngine(), qa_file, out, ["standard"], plots=True)
    assert res["plots"] == [] and not (out / "plots").exists()
    assert "matplotlib is not installed" in (out / "report.md").read_text()


def test_bad_lines_reported_with_numbers(tmp_path: Path) -> None:
    text = "\n".join(
        [
            json.dumps(QUESTIONS[0]),
            "{not json",
            json.dumps({"question": "   ", "answers": ["x"]}),
            "",
            json.dumps({"question": "Who?", "answers": "Booth"}),
            json.dumps({"answers": []}),
            json.dumps(QUESTIONS[0]),
            json.dumps({"question": "Fine?", "answers": [], "titles": "Alaska"}),
        ]
    )
    with pytest.raises(UserError) as e:
        parse_qa_text(text, "qa.jsonl")
    msg = e.value.one_line()
    assert "6 bad lines" in msg and "\n" not in msg
    for n in (2, 3, 5, 6, 7, 8):
        assert f"line {n}:" in msg
    assert "line 1:" not in msg and "line 4:" not in msg
    assert "duplicate id 'q1' (first on line 1)" in msg


def test_cli_bad_input_exits_2_before_running(tmp_path: Path, capsys, monkeypatch) -> None:
    from scim_edge import engine as engine_mod

    def no_open(settings):
        raise AssertionError("the engine must not open for bad input")

    monkeypatch.setattr(engine_mod.Engine, "open", staticmethod(no_open))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "Who?", "answers": ["a"]}\n{"question": 3}\n', encoding="utf-8")
    assert main(["eval", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 2" in err[0]
    assert not (tmp_path / "o").exists()
    assert main(["eval", str(bad), "--systems", "scim,magic"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown system 'magic'" in err[0]
    assert main(["eval", str(bad), "--sweep", "gamma=1,2"]) == 2
    assert "unknown sweep key" in capsys.readouterr().err
    assert main(["eval", str(tmp_path / "missing.jsonl")]) == 2
    assert "not found" in capsys.readouterr().err
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine", encoding="utf-8")
    good = tmp_path / "good.jsonl"
    good.write_text('{"question": "Who?", "answers": ["x"]}\n', encoding="utf-8")
    assert main(["eval", str(good), "--out", str(a_file)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "is a file; --out names the folder" in err[0]
    assert a_file.read_text(encoding="utf-8") == "mine"


def test_cli_with_scripted_engine_and_interrupt(
    qa_file: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    from scim_edge import engine as engine_mod

    eng = FakeEngine()
    eng.interrupt_after = 8  # a full warm-up pass of standard, then 3 timed questions
    monkeypatch.setattr(engine_mod.Engine, "open", staticmethod(lambda s: eng))
    monkeypatch.setattr(harness, "check_loops", lambda runs, engine: None)
    out = tmp_path / "out"
    args = ["eval", str(qa_file), "--systems", "standard,scim", "--out", str(out), "--no-plots"]
    assert main(args) == 130
    err = capsys.readouterr().err
    assert "[standard]" in err
    printed = shlex.split(err.split("continue with: ", 1)[1].splitlines()[0])
    assert printed[:2] == ["scim-edge", "eval"]
    assert printed[printed.index("--systems") + 1] == "standard,scim"  # not every system
    eng.interrupt_after = None
    assert main([*printed[1:], "--json"]) == 0  # the printed command itself resumes
    data = json.loads(capsys.readouterr().out)
    assert data["systems"]["scim"]["n"] == 5 and data["meta"]["resumed_records"] == 3
    # 10 timed answers; warm-up: 5 + 2 (standard, in each session) and 5 (scim)
    assert len(eng.calls) == 22
    assert eng.calls[8:10] == [("standard", "q4"), ("standard", "q5")]


# ---- end to end on the real sample index -------------------------------------------------


def test_eval_end_to_end_on_sample_index(
    sample_index: Path, qa_dev, tmp_path: Path, capsys
) -> None:
    five = [q for q in qa_dev if q["type"] != "unanswerable"][:4] + [
        next(q for q in qa_dev if q["type"] == "unanswerable")
    ]
    qa = tmp_path / "five.jsonl"
    qa.write_text("\n".join(json.dumps(q) for q in five) + "\n", encoding="utf-8")
    out = tmp_path / "eval"
    base = [
        "eval",
        str(qa),
        "--index",
        str(sample_index),
        "--model",
        "extractive",
        "--out",
        str(out),
        "--systems",
        "standard,iter-retgen,scim",
    ]
    # First only 2 questions (an interrupted run), then the rest with --resume.
    assert main([*base, "--limit", "2", "--no-plots"]) == 0
    capsys.readouterr()
    assert len(_records(out)) == 6
    first = {(r["run"], r["id"]): r["answer"] for r in _records(out)}
    assert main([*base, "--resume"]) == 0
    stdout = capsys.readouterr().out
    assert "| SCIM (adaptive) |" in stdout
    recs = _records(out)
    assert len(recs) == 15 and len({(r["run"], r["id"]) for r in recs}) == 15
    assert {(r["run"], r["id"]): r["answer"] for r in recs[:6]} == first  # not redone

    results = json.loads((out / "results.json").read_text())
    assert set(results["systems"]) == {"standard", "iter-retgen", "scim"}
    for s in results["systems"].values():
        assert s["n"] == 5 and s["errors"] == 0
        assert 0.0 <= s["quality"] <= 1.0 and 0.0 <= s["f1"] <= 1.0
        assert s["avg_passages"] >= 3  # k1 = 3 passages on the first iteration
    assert results["systems"]["standard"]["avg_iterations"] == 1.0
    assert results["systems"]["iter-retgen"]["avg_iterations"] == 3.0
    assert results["meta"]["generator"] and results["meta"]["questions"] == 5
    report = (out / "report.md").read_text()
    assert "## Overall comparison" in report and "## Per-iteration cost" in report
    assert all(r["trace"]["iterations"] for r in recs)
    retrieved = [e for r in recs for e in r["trace"]["events"] if e.get("kind") == "retrieved"]
    assert retrieved and all(
        p["doc_id"] and "text" not in p for e in retrieved for p in e["new_passages"]
    )
    umask = os.umask(0)
    os.umask(umask)
    assert (out / "report.md").stat().st_mode & 0o777 == 0o666 & ~umask  # like any new file
    if results["plots"]:
        for rel in results["plots"]:
            assert (out / rel).stat().st_size > 1000


def test_qa_parser_never_crashes_on_garbage() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    line = st.one_of(
        st.text(max_size=60),
        st.builds(
            json.dumps,
            st.dictionaries(
                st.sampled_from(["question", "answers", "id", "type", "titles", "x"]),
                st.one_of(
                    st.none(),
                    st.integers(),
                    st.text(max_size=20),
                    st.lists(st.one_of(st.text(max_size=10), st.integers()), max_size=3),
                ),
                max_size=5,
            ),
        ),
    )

    @settings(max_examples=150, deadline=None)
    @given(st.lists(line, max_size=6))
    def check(lines: list[str]) -> None:
        try:
            items = parse_qa_text("\n".join(lines))
        except UserError as e:
            assert "\n" not in e.one_line()
            return
        assert items and all(it.question.strip() for it in items)
        assert len({it.id for it in items}) == len(items)

    check()


def test_unicode_line_separator_inside_a_string_is_not_a_line_break() -> None:
    row = {"id": "u", "question": "Who wrote\u2028this?", "answers": ["Swift\u2029"]}
    items = parse_qa_text(json.dumps(row, ensure_ascii=False) + "\r\n")
    assert len(items) == 1 and items[0].answers == ("Swift\u2029",)


def test_runs_share_settings_and_never_use_the_answer_cache() -> None:
    base = Settings(profile="efficiency", theta=0.65, t_max=2, cache_answers=True)
    runs = harness.plan_runs(base, ["standard", "scim"], [harness.parse_sweep("theta=0.6,0.8")])
    assert [r.key for r in runs] == ["standard", "scim", "scim@theta=0.6", "scim@theta=0.8"]
    assert all(not r.settings.cache_answers and r.settings.t_max == 2 for r in runs)
    assert [r.settings.theta for r in runs] == [0.65, 0.65, 0.6, 0.8]
    with pytest.raises(UserError, match="unknown weight set"):
        harness.parse_sweep("weights=default,heavy")
    with pytest.raises(UserError, match="outside"):
        harness.parse_sweep("theta=1.5")


def test_warmup_modes(qa_file: Path, tmp_path: Path) -> None:
    eng = FakeEngine()
    _evaluate(eng, qa_file, tmp_path / "o", ["standard", "scim"], warmup="first")
    assert len(eng.calls) == 12 and eng.calls[0] == eng.calls[1] == ("standard", "q1")
    assert len(_records(tmp_path / "o")) == 10
    eng = FakeEngine()
    _evaluate(eng, qa_file, tmp_path / "o2", ["standard", "scim"], warmup="full")
    assert eng.calls[:10] == [("standard", q["id"]) for q in QUESTIONS] * 2
    assert len(eng.calls) == 20 and len(_records(tmp_path / "o2")) == 10


def test_single_dim_answers_are_rescored_with_five_dimensions(qa_file: Path, tmp_path) -> None:
    res = _evaluate(FakeEngine(), qa_file, tmp_path / "o", ["single-dim", "scim"])
    recs = _records(tmp_path / "o")
    single = [r for r in recs if r["run"] == "single-dim"]
    assert all(r["quality_source"] == "rescored" for r in single)
    assert all(r["quality_source"] == "loop" for r in recs if r["run"] == "scim")
    assert any(r["quality"] != r["loop_quality"] for r in single)
    assert res["systems"]["single-dim"]["quality"] == pytest.approx(
        sum(r["quality"] for r in single) / 5
    )


def test_eval_progress_on_a_terminal_is_the_shared_rich_bar():
    import io
    import time

    from scim_edge.evaluation.harness import Progress

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    progress = Progress(out)
    started = time.monotonic()
    for done in (1, 2):
        progress.update("standard", done, 2, started, 0, final=done == 2)
    assert "━" in out.getvalue()  # rich's bar, not a bare status line
    assert "2/2 questions" in out.getvalue()


def test_a_system_that_cannot_run_is_one_line_before_any_note(
    sample_index: Path, qa_dev, tmp_path: Path, capsys, monkeypatch
) -> None:
    """simrag with the zero-shot Critic and no Flan-T5 installed: the error alone, not
    after the engine's note that the extractive generator stands in, and nothing run."""
    qa = tmp_path / "two.jsonl"
    qa.write_text("\n".join(json.dumps(q) for q in qa_dev[:2]) + "\n", encoding="utf-8")
    monkeypatch.setenv("SCIM_EDGE_CRITIC", "model")
    out = tmp_path / "o"
    rc = main(["eval", str(qa), "--index", str(sample_index), "--systems", "simrag",
               "--out", str(out)])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1
    assert "--critic model needs an installed Flan-T5 model" in err[0]
    assert not out.exists()


@pytest.mark.parametrize("case", ["earlier results", "nothing to resume"])
def test_a_refused_out_folder_is_the_only_line_said(
    case: str, sample_index: Path, qa_dev, tmp_path: Path, capsys
) -> None:
    """--out holding an earlier run's results, or --resume of an empty folder: the error
    alone, not after the engine's notes and the run's summary line."""
    qa = tmp_path / "two.jsonl"
    qa.write_text("\n".join(json.dumps(q) for q in qa_dev[:2]) + "\n", encoding="utf-8")
    out = tmp_path / "o"
    out.mkdir()
    if case == "earlier results":
        (out / "per_question.jsonl").write_text('{"run": "standard"}\n', encoding="utf-8")
    more = [] if case == "earlier results" else ["--resume"]
    rc = main(["eval", str(qa), "--index", str(sample_index), "--systems", "standard",
               "--out", str(out), *more])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1


def test_resume_of_a_folder_with_no_run_is_refused(qa_file: Path, tmp_path: Path) -> None:
    """A mistyped --out with --resume would silently start over; it is refused, and the
    folder is not created."""
    out = tmp_path / "typo"
    with pytest.raises(UserError, match="nothing to resume in"):
        _evaluate(FakeEngine(), qa_file, out, ["standard"], resume=True)
    assert not out.exists()


def test_resume_refuses_other_systems(qa_file: Path, tmp_path: Path) -> None:
    """The report covers the resuming command's runs, so resuming with other --systems
    would leave the interrupted systems' answers out of report.md: it is refused, naming
    both."""
    out = tmp_path / "out"
    eng = FakeEngine()
    eng.interrupt_after = 7
    with pytest.raises(KeyboardInterrupt):
        _evaluate(eng, qa_file, out, ["standard", "scim"])
    with pytest.raises(UserError, match="it ran standard, scim and would run standard now"):
        _evaluate(FakeEngine(), qa_file, out, ["standard"], resume=True)


def test_resume_takes_the_same_systems_in_another_order(qa_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    eng = FakeEngine()
    eng.interrupt_after = 7
    with pytest.raises(KeyboardInterrupt):
        _evaluate(eng, qa_file, out, ["standard", "scim"])
    res = _evaluate(FakeEngine(), qa_file, out, ["scim", "standard"], resume=True)
    assert res["systems"]["scim"]["n"] == 5


def test_an_out_folder_of_the_user_s_own_files_is_not_written_over(qa_file: Path, tmp_path: Path):
    """A folder with a report.md that no run wrote (no run.json) is the user's: refused,
    and the file is kept."""
    out = tmp_path / "myproj"
    out.mkdir()
    (out / "report.md").write_text("MY OWN NOTES\n")
    with pytest.raises(UserError, match="holds report.md, which no eval run wrote there"):
        _evaluate(FakeEngine(), qa_file, out, ["standard"])
    assert (out / "report.md").read_text() == "MY OWN NOTES\n"
