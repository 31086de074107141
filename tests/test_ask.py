"""`scim-edge ask` end to end on the enwiki-sample index, and its bad-input errors."""

from __future__ import annotations

import json

import pytest

from scim_edge.cli import main
from scim_edge.types import DIMENSIONS, INSUFFICIENT_EVIDENCE, Answer
from scim_edge.wording import percent


def ask(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["ask", *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def ask_json(capsys, index, question: str, *extra: str) -> dict:
    rc, out, err = ask(capsys, question, "--index", str(index), "--model", "extractive",
                       "--json", *extra)  # fmt: skip
    assert rc == 0, err
    return json.loads(out)


def test_ask_json_scim_end_to_end(capsys, sample_index):
    d = ask_json(capsys, sample_index, "Who developed the Japanese martial art aikido?")
    for key in ("question", "answer", "status", "stop_reason", "tier", "quality", "citations",
                "generator", "index", "timing_ms", "iterations"):  # fmt: skip
        assert key in d
    assert d["status"] != "insufficient_evidence"
    assert d["generator"] == "extractive"
    assert d["index"]
    assert "Ueshiba" in d["answer"]
    assert d["citations"]
    assert all({"doc_id", "title"} <= set(c) for c in d["citations"])
    assert d["timing_ms"]["total"] > 0
    it = d["iterations"][0]
    assert (it["t"], it["mode"]) == (1, "initial")
    assert it["queries"] == ["Who developed the Japanese martial art aikido?"]
    assert len(it["new_doc_ids"]) == 3
    assert it["doc_ids"] == it["new_doc_ids"]
    assert set(it["scores"]) == {*DIMENSIONS, "quality"}
    assert it["decision"] in ("accept", "continue", "force_accept")
    assert set(it["timing_ms"]) == {"retrieval", "generation", "evaluation", "coordination",
                                    "total"}  # fmt: skip
    scores = [i["scores"]["quality"] for i in d["iterations"]]
    if d["stop_reason"] == "quality_declined":  # Q fell by δ: the previous answer is returned
        assert d["quality"] == pytest.approx(scores[-2], abs=1e-3)
    else:
        assert d["quality"] == pytest.approx(scores[-1], abs=1e-3)
    assert d["bindings"]["retriever"]
    # what the run binds comes first (for SCIM: whether θ is set against Q or confidence)
    assert [e["kind"] for e in d["trace"][:2]] == ["bindings", "iteration_started"]
    assert d["trace"][0]["bindings"]["quality"] == d["bindings"]["quality"]


def test_ask_json_records_the_text_tools(capsys, sample_index):
    """Scores rest on the sentence splitter and tagger: every answer says which were used."""
    from scim_edge import textutil as tu

    d = ask_json(capsys, sample_index, "Who developed the Japanese martial art aikido?")
    assert d["bindings"]["tokenizer"] == tu.text_tools()["tokenizer"]
    assert d["bindings"]["tagger"] == tu.text_tools()["tagger"]


@pytest.mark.parametrize("loop", ["standard", "iter-retgen", "fixed-2", "single-dim"])
def test_ask_json_baselines(capsys, sample_index, loop):
    d = ask_json(capsys, sample_index, "In which city did Arthur Schopenhauer settle in 1833?",
                 "--loop", loop)  # fmt: skip
    expected = {"standard": 1, "iter-retgen": 3, "fixed-2": 2}.get(loop)
    if expected:
        assert len(d["iterations"]) == expected
    ids = [i for it in d["iterations"] for i in it["new_doc_ids"]]
    assert len(ids) == len(set(ids))
    assert d["loop"] == loop


def test_ask_max_iterations_and_theta(capsys, sample_index):
    d = ask_json(capsys, sample_index, "Who was the mother of the Greek hero Achilles?",
                 "--theta", "1.0", "--max-iterations", "2")  # fmt: skip
    assert len(d["iterations"]) <= 2
    assert d["status"] == "force_accepted"
    assert d["disclaimers"]


@pytest.mark.parametrize("question", ["zxqvw blorptastic frumiousness?", "the of and?"])
def test_ask_unmatched_question_is_insufficient_evidence(capsys, sample_index, question):
    d = ask_json(capsys, sample_index, question)
    assert d["status"] == "insufficient_evidence"
    assert d["answer"] == INSUFFICIENT_EVIDENCE
    assert d["stop_reason"] == "no_evidence"


def test_ask_human_output(capsys, sample_index):
    rc, out, err = ask(capsys, "What is the capital of Aruba?", "--index", str(sample_index),
                       "--model", "extractive")  # fmt: skip
    assert rc == 0
    assert "Oranjestad" in out
    assert "Sources:" in out
    assert "confidence" in out
    assert "answered by the extractive reader" in out
    assert "coord" not in out  # no per-iteration table by default
    assert "force_accept" not in out  # no loop jargon by default
    rc, out, err = ask(capsys, "What is the capital of Aruba?", "--index", str(sample_index),
                       "--model", "extractive", "--details")  # fmt: skip
    assert rc == 0
    assert "retr" in out  # the per-iteration table
    assert "coord" in out


def test_details_show_each_rounds_answer_and_confidence(capsys, sample_index):
    rc, out, err = ask(capsys, "Who was the mother of the Greek hero Achilles?", "--index",
                       str(sample_index), "--model", "extractive", "--loop", "fixed-3",
                       "--details")  # fmt: skip
    assert rc == 0, err
    rounds = [ln for ln in out.splitlines() if ln.startswith("     answer: ")]
    assert len(rounds) == 3
    assert all(" · confidence " in ln for ln in rounds)


def test_no_model_note_said_once(capsys, sample_index):
    rc, out, err = ask(capsys, "What is the capital of Aruba?", "--index", str(sample_index))
    assert rc == 0
    assert err.count("no Flan-T5 model installed") == 1


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["", "--model", "extractive"], "empty"),
        (["   \t ", "--model", "extractive"], "empty"),
        (["\x1b[31m\x1b[0m", "--model", "extractive"], "empty"),  # a terminal's colours
        (["x" * 2001, "--model", "extractive"], "2000"),
        (["caf\udce9?", "--model", "extractive"], "not UTF-8"),  # a Latin-1 terminal's "é"
        (["Who?", "--index", "/no/such/index", "--model", "extractive"], "index"),
        (["Who?", "--loop", "nope"], "loop"),
        (["Who?", "--profile", "nope"], "profile"),
        (["Who?", "--max-iterations", "0"], "positive"),
        (["Who?", "--max-iterations", "-2"], "positive"),
        (["Who?", "--max-iterations", "two"], "positive"),
        (["Who?", "--max-tokens", "0"], "positive"),
        (["Who?", "--critic-max-tokens", "1.5"], "positive"),
        (["Who?", "--theta", "2"], "between 0 and 1"),
    ],
)
def test_bad_input_one_line_exit_2(capsys, argv, needle):
    with pytest.raises(SystemExit) as exc:
        raise SystemExit(main(["ask", *argv]))
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert needle in err
    assert "Traceback" not in err


def test_ask_with_an_installed_onnx_model(capsys, sample_index, tmp_path_factory, isolated_home):
    """The ONNX generator behind the same loop: a tiny random T5 exported for the tests."""
    import shutil

    from test_offline import exported_tiny_t5

    src = exported_tiny_t5(tmp_path_factory)
    shutil.copytree(src, isolated_home / "models" / src.name)
    # no --model: the installed model is the default generator
    rc, out, err = ask(capsys, "Who developed aikido?", "--index", str(sample_index),
                       "--loop", "standard", "--max-tokens", "4", "--json")  # fmt: skip
    assert rc == 0, err
    assert "no Flan-T5 model installed" not in err
    d = json.loads(out)
    assert d["generator"].startswith(f"{src.name} (onnx cpu")
    it = d["iterations"][0]
    assert it["timing_ms"]["generation"] > 0
    generated = next(e for e in d["trace"] if e["kind"] == "generated")
    assert 0 < generated["output_tokens"] <= 4
    assert generated["input_tokens"] <= 1024


def test_prompt_respects_the_model_tokenizer_caps(tmp_path_factory):
    from test_offline import exported_tiny_t5

    from models.seq2seq import Seq2SeqModel
    from scim_edge.generation.prompting import build_prompt
    from scim_edge.types import Passage

    model = Seq2SeqModel.load(exported_tiny_t5(tmp_path_factory))
    ps = [
        Passage(f"{i}-0", f"T{i}", "", "The Danube flows through Vienna. " * 80) for i in range(4)
    ]
    p = build_prompt("Where does the Danube flow?", ps, tokenizer=model, passage_max_tokens=100,
                     input_max_tokens=260)  # fmt: skip
    assert len(model.encode(p.text)) <= 260
    assert p.text.startswith("question: Where does the Danube flow? context: ")
    assert p.text.endswith(" answer:")
    assert 2 <= len(p.passages) <= 3


def test_no_embedding_model_names_the_commands_that_install_one(capsys, sample_index):
    rc, out, err = ask(capsys, "What is the capital of Aruba?", "--index", str(sample_index),
                       "--model", "extractive", "--reranker", "embedding")  # fmt: skip
    lines = err.strip().splitlines()
    assert rc == 2
    assert len(lines) == 1
    assert "models export --from sentence-transformers/all-MiniLM-L6-v2 --kind embedding" in err


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--loop", "fixed-3", "--max-iterations", "1"], "--max-iterations"),
        (["--loop", "standard", "--max-iterations", "5"], "--max-iterations"),
        (["--loop", "simrag", "--theta", "0.2"], "--theta"),
        (["--loop", "iter-retgen", "--quality", "paper"], "--quality"),
        (["--loop", "single-dim", "--quality", "learned"], "--quality"),  # it keeps its Q
        (["--loop", "scim", "--critic", "heuristic"], "--critic"),  # simrag's Critic only
        (["--loop", "standard", "--critic-max-tokens", "5"], "--critic-max-tokens"),
        (["--loop", "standard", "--rewriter", "keyword"], "--rewriter"),
    ],
)
def test_an_option_the_loop_would_ignore_is_refused(argv, flag, capsys, sample_index):
    """fixed-3 always runs three rounds and simrag accepts at the Critic's 0.5: an option
    that would not change the answer is one line naming it, not silently dropped."""
    rc, out, err = ask(capsys, "Who?", "--index", str(sample_index), *argv)
    lines = err.strip().splitlines()
    assert rc == 2
    assert len(lines) == 1
    assert f"{flag} does not apply to the {argv[1]} loop" in lines[0]


def test_an_option_the_loop_uses_is_taken(capsys, sample_index):
    d = ask_json(capsys, sample_index, "Who wrote Animal Farm?", "--loop", "simrag",
                 "--max-iterations", "1")  # fmt: skip
    assert len(d["iterations"]) == 1


def test_one_round_is_said_in_the_singular(capsys, sample_index):
    rc, out, err = ask(capsys, "Who wrote Animal Farm?", "--index", str(sample_index),
                       "--model", "extractive", "--loop", "fixed-1")  # fmt: skip
    assert rc == 0, err
    assert "Fixed run of 1 iteration;" in out


def test_sources_of_one_section_are_told_apart(capsys, sample_index):
    """Two passages of one article's lead read "Animal Farm" twice: each names its place."""
    rc, out, err = ask(capsys, "Who wrote Animal Farm?", "--index", str(sample_index),
                       "--model", "extractive")  # fmt: skip
    assert rc == 0, err
    sources = out.split("Sources:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    labels = [line.split("] ", 1)[1] for line in sources]
    assert len(labels) > 1
    assert len(set(labels)) == len(labels)


def test_a_confidence_under_high_never_reads_as_high_s_70_percent():
    from scim_edge.wording import confidence_words

    answer = Answer(question="q", answer="a", status="accepted", stop_reason="accepted",
                    tier="medium", quality=0.8, citations=[], generator="extractive",
                    index="sample", iterations=[], timing_ms={}, confidence=0.697)  # fmt: skip
    assert confidence_words(answer) == "medium confidence · 69%"


def test_an_answer_with_no_text_is_said_to_be_none():
    from scim_edge.commands.ask import format_answer
    from scim_edge.wording import NO_ANSWER

    answer = Answer(question="q", answer="", status="accepted", stop_reason="single_pass",
                    tier="low", quality=0.2, citations=[], generator="extractive",
                    index="sample", iterations=[], timing_ms={}, confidence=0.0)  # fmt: skip
    assert format_answer(answer).splitlines()[0] == NO_ANSWER


def test_a_verdict_under_its_threshold_never_reads_as_reaching_it():
    from scim_edge.critic import score_reason

    assert score_reason(0.497, 0.5) == "confidence 49% < 50%"


def test_a_percent_is_whole_where_the_float_falls_short():
    assert percent(0.29) == 29  # 0.29 * 100 is 28.999…


def test_source_labels_number_only_the_repeats():
    from scim_edge.wording import source_labels

    labels = source_labels([("A", "", "1-0"), ("A", "", "1-4"), ("A", "History", "1-7")])
    assert labels == ["A · passage 1", "A · passage 5", "A › History"]


def test_details_say_why_the_answers_confidence_differs_from_its_rounds(capsys, sample_index):
    """SCIM reads its returned answer with how the rounds agreed: the details say so when
    that moves the figure the accepting round showed."""
    d = ask_json(capsys, sample_index, "Who wrote Animal Farm?")
    returned = [it for it in d["iterations"] if it["decision"] == "accept"][-1]
    assert percent(d["confidence"]) != percent(returned["confidence"])
    rc, out, err = ask(capsys, "Who wrote Animal Farm?", "--index", str(sample_index),
                       "--model", "extractive", "--details")  # fmt: skip
    assert rc == 0, err
    assert f"The answer's {percent(d['confidence'])}% is the Critic's second look" in out
    assert f"round {returned['t']} alone read {percent(returned['confidence'])}%." in out


def test_standard_rag_does_not_show_a_right_easy_answer_as_low(capsys, sample_index):
    """ "a novella by George Orwell" states who wrote it: the one round's confidence is
    not Low for want of the word "wrote"."""
    d = ask_json(capsys, sample_index, "Who wrote Animal Farm?", "--loop", "standard")
    assert (d["answer"], d["tier"] != "low") == ("George Orwell", True)


def test_a_single_pass_has_no_confidence_note(capsys, sample_index):
    """Standard RAG's answer is its one round's: its confidence is that round's."""
    rc, out, err = ask(capsys, "Who wrote Animal Farm?", "--index", str(sample_index),
                       "--model", "extractive", "--loop", "standard", "--details")  # fmt: skip
    assert rc == 0, err
    assert "second look" not in out
