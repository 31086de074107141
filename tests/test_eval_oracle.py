"""The oracle critic and Oracle SCIM through the real loops on the real sample index,
and the new per-question fields (answer in passages, confidence, judged rounds) through
`scim-edge eval` on it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scim_edge.cli import main
from scim_edge.engine import Engine, check_question
from scim_edge.evaluation import metrics
from scim_edge.evaluation.harness import judged_rounds
from scim_edge.evaluation.oracle import OracleCritic, bound, make_oracle
from scim_edge.evaluation.qa_io import QAItem
from scim_edge.settings import Settings
from scim_edge.types import INSUFFICIENT_EVIDENCE


def _item(q: dict) -> QAItem:
    return QAItem(q["id"], check_question(q["question"]), tuple(q["answers"]), q.get("type"))


def _right(answer: str, golds) -> bool:
    """Correctness recomputed here from the metric, not from the oracle's own helper."""
    return metrics.exact_match(answer, golds, abstained=metrics.is_abstention(answer)) == 1.0


@pytest.fixture(scope="module")
def some_questions(qa_dev_module) -> list[QAItem]:
    answerable = [q for q in qa_dev_module if q["answers"]][:6]
    unanswerable = [q for q in qa_dev_module if not q["answers"]][:1]
    return [_item(q) for q in answerable + unanswerable]


@pytest.fixture(scope="module")
def qa_dev_module() -> list[dict]:
    from conftest import shared_file

    path = shared_file("qa-dev.jsonl")
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]


def _answer_with_oracle(engine: Engine, slot: str, oracle, item: QAItem):
    with bound(engine, slot, oracle, item.question, item.answers):
        return engine.answer(item.question)


def test_oracle_critic_accepts_exactly_the_correct_answers(sample_index, some_questions) -> None:
    settings = Settings(index=str(sample_index), model="extractive", loop="simrag")
    engine = Engine.open(settings)
    oracle = make_oracle("critic", settings)
    rounds = []
    for item in some_questions:
        answer = _answer_with_oracle(engine, "critic", oracle, item)
        assert answer.bindings["critic"] == OracleCritic.name
        judged = judged_rounds(item, answer)
        assert judged  # every question gets at least one judged round
        for it in answer.iterations:
            if it.t in {r["t"] for r in judged}:
                rounds.append((it.verdict["accept"], _right(it.answer, item.answers)))
        if answer.status == "accepted":
            assert _right(answer.answer, item.answers)
        else:
            assert answer.answer == INSUFFICIENT_EVIDENCE
    assert all(accept == right for accept, right in rounds)
    assert any(accept for accept, _ in rounds)  # not vacuous: it accepted something
    assert any(not accept for accept, _ in rounds)  # and rejected something
    assert engine.slots.critic is None  # the slot is restored after each question


def test_oracle_critic_follows_the_gold_answers_it_holds(sample_index, some_questions) -> None:
    settings = Settings(index=str(sample_index), model="extractive", loop="simrag")
    engine = Engine.open(settings)
    item = next(it for it in some_questions if it.answers == ("1729",))
    oracle = make_oracle("critic", settings)
    right = _answer_with_oracle(engine, "critic", oracle, item)
    wrong_gold = QAItem(item.id, item.question, ("1730",))
    wrong = _answer_with_oracle(engine, "critic", oracle, wrong_gold)
    assert (right.status, wrong.status) == ("accepted", "insufficient_evidence")


def test_oracle_scim_accepts_exactly_the_correct_answers(sample_index, some_questions) -> None:
    settings = Settings(index=str(sample_index), model="extractive", loop="scim")
    engine = Engine.open(settings)
    oracle = make_oracle("evaluator", settings)
    decisions = []
    for item in some_questions:
        answer = _answer_with_oracle(engine, "evaluator", oracle, item)
        assert answer.bindings["evaluator"] == oracle.name
        for it in answer.iterations:
            decisions.append((it.decision, _right(it.answer, item.answers)))
    assert all((d == "accept") == right for d, right in decisions)
    assert {"accept", "continue"} <= {d for d, _ in decisions}


def test_oracle_refuses_a_question_it_holds_no_gold_for() -> None:
    critic = OracleCritic()
    critic.gold.expect("Who wrote Animal Farm?", ["George Orwell"])
    with pytest.raises(ValueError, match="no gold answers"):
        critic.judge("Who wrote Brave New World?", "Aldous Huxley", [])


QUESTIONS = [
    {
        "id": "swift",
        "question": "In what year did Jonathan Swift publish the essay A Modest Proposal?",
        "answers": ["1729"],
        "titles": ["A Modest Proposal"],
    },
    {
        # the same question with a gold string the sample holds nowhere
        "id": "absent",
        "question": "In which year did Jonathan Swift publish A Modest Proposal?",
        "answers": ["Quokka Zanzibar Flute"],
    },
    {
        "id": "booth",
        "question": "Who assassinated Abraham Lincoln?",
        "answers": ["John Wilkes Booth", "Booth"],
        "titles": ["Abraham Lincoln"],
    },
    {"id": "none", "question": "How much did the film Actrius gross?", "answers": []},
]


@pytest.fixture(scope="module")
def eval_run(sample_index, tmp_path_factory) -> tuple[Path, list[dict], dict]:
    work = tmp_path_factory.mktemp("eval-oracle")
    qa = work / "qa.jsonl"
    qa.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n", encoding="utf-8")
    out = work / "out"
    argv = ["eval", str(qa), "--index", str(sample_index), "--model", "extractive"]
    argv += ["--out", str(out), "--systems", "standard,simrag,simrag-oracle,scim-oracle"]
    assert main([*argv, "--no-plots", "--warmup", "none"]) == 0
    records = [json.loads(x) for x in (out / "per_question.jsonl").read_text().splitlines()]
    return out, records, json.loads((out / "results.json").read_text())


def _rec(records: list[dict], run: str, qid: str) -> dict:
    return next(r for r in records if r["run"] == run and r["id"] == qid)


def test_answer_in_passages_on_a_real_run(eval_run) -> None:
    _, records, _ = eval_run
    found = {r["id"]: r["answer_in_passages"] for r in records if r["run"] == "standard"}
    assert {k: found[k] for k in ("swift", "absent", "none")} == {
        "swift": True,
        "absent": False,
        "none": None,
    }


def test_answer_in_passages_agrees_with_the_passages_read_back(eval_run, sample_index) -> None:
    """Each record's flag against the texts of the passages its trace names, read back
    from the index: whole-word containment of a normalised gold alias."""
    from scim_edge.retrieval import BM25Retriever

    _, records, _ = eval_run
    index = BM25Retriever.open(sample_index)
    checked = 0
    for r in records:
        if not r["gold"]:
            continue
        ids = {d for it in r["trace"]["iterations"] for d in it["doc_ids"]}
        texts = [" " + metrics.normalize_answer(index.get(d).text) + " " for d in ids]
        golds = [" " + metrics.normalize_answer(g) + " " for g in r["gold"]]
        assert r["answer_in_passages"] == any(g in t for g in golds for t in texts), r["run"]
        checked += 1
    assert checked == 12  # 3 answerable questions x 4 runs


def test_em_given_in_passages_counts_only_questions_whose_passages_hold_the_answer(
    eval_run,
) -> None:
    _, records, results = eval_run
    held = [r["em"] for r in records if r["run"] == "simrag" and r["answer_in_passages"] is True]
    summary = results["systems"]["simrag"]
    assert summary["em_given_in_passages"] == pytest.approx(sum(held) / len(held))


def test_every_record_carries_confidence_and_quality(eval_run) -> None:
    _, records, _ = eval_run
    assert all("confidence" in r and 0.0 <= r["quality"] <= 1.0 for r in records)


def test_oracle_critic_rates_are_perfect_through_the_harness(eval_run) -> None:
    _, _, results = eval_run
    critic = results["trust"]["simrag-oracle"]["critic"]
    assert (critic["accept_correct"], critic["reject_incorrect"]) == (1.0, 1.0)


def test_critic_rates_count_the_judged_rounds_of_the_records(eval_run) -> None:
    _, records, results = eval_run
    rounds = [rd for r in records if r["run"] == "simrag" for rd in r["rounds"]]
    assert results["trust"]["simrag"]["critic"]["rounds"] == len(rounds) > 0


def test_oracle_runs_are_labelled_as_using_gold_answers(eval_run) -> None:
    out, _, results = eval_run
    report = (out / "report.md").read_text()
    assert "| Oracle SCIM † |" in report
    assert "† Uses the gold answers" in report
    assert results["meta"]["oracle_runs"] == ["simrag-oracle", "scim-oracle"]


def test_oracle_scim_is_rescored_with_the_real_five_dimensions(eval_run) -> None:
    _, records, _ = eval_run
    rec = _rec(records, "scim-oracle", "swift")
    assert (rec["quality_source"], rec["loop_quality"]) == ("rescored", 1.0)


def test_oracle_systems_are_accepted_by_name() -> None:
    from scim_edge.evaluation.harness import parse_systems, plan_runs

    runs = plan_runs(Settings(), parse_systems("simrag-oracle,scim-oracle"), [])
    assert [(r.key, r.system, r.settings.loop, r.oracle) for r in runs] == [
        ("simrag-oracle", "simrag", "simrag", "critic"),
        ("scim-oracle", "scim", "scim", "evaluator"),
    ]


def test_json_output_carries_the_new_figures(sample_index, tmp_path, capsys) -> None:
    qa = tmp_path / "qa.jsonl"
    qa.write_text(json.dumps(QUESTIONS[0]) + "\n", encoding="utf-8")
    argv = ["eval", str(qa), "--index", str(sample_index), "--model", "extractive", "--json"]
    argv += ["--out", str(tmp_path / "o"), "--systems", "simrag-oracle", "--no-plots"]
    assert main([*argv, "--warmup", "none"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["systems"]["simrag-oracle"]["answer_in_passages"] == 1.0
    assert printed["trust"]["simrag-oracle"]["critic"]["accept_correct"] == 1.0
