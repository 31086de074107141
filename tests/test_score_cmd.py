"""`scim-edge score`: the five dimensions, Q and the words behind them."""

from __future__ import annotations

import json

import pytest

from scim_edge.cli import main


@pytest.fixture
def passages(tmp_path):
    path = tmp_path / "p.jsonl"
    rows = [
        {"doc_id": "1-0", "title": "Mona Lisa",
         "text": "Leonardo da Vinci painted the Mona Lisa in Florence."},
        "Portrait painting was common in Florence.",
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    return path


ARGS = ["--question", "Who painted the Mona Lisa?",
        "--answer", "Leonardo painted the Mona Lisa in Paris around 1503."]  # fmt: skip


def test_score_json_reports_scores_and_why(capsys, passages):
    assert main(["score", *ARGS, "--passages", str(passages), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    s = d["scores"]
    assert s["consistency"] == pytest.approx(4 / 7, abs=1e-4)
    assert s["completeness"] == pytest.approx(0.6 + 0.4 * 9 / 30, abs=1e-4)
    assert d["unsupported_words"] == ["paris", "around", "1503"]
    assert d["missing_keywords"] == []
    assert any(p.startswith("temporal") for p in d["patterns"])
    assert d["passages"] == 2
    assert d["tier"] in ("high", "medium", "low")
    expected_q = sum(w * s[k] for k, w in d["weights"].items())
    assert s["quality"] == pytest.approx(expected_q, abs=1e-3)


def test_score_human_output(capsys, passages):
    assert main(["score", *ARGS, "--passages", str(passages)]) == 0
    out = capsys.readouterr().out
    assert "unsupported words: paris, around, 1503" in out
    assert "missing keywords: none" in out
    assert out.strip().splitlines()[-1].startswith("Q")


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ('{"text": "ok"}\nnot json\n', ":2: not valid JSON"),
        ('{"text": "ok"}\n{"title": "no text"}\n', ":2: expected a JSON object"),
        ("[1, 2]\n", ":1: expected a JSON object"),
        ("\n\n", "no passages"),
    ],
)
def test_score_bad_passages_file(capsys, tmp_path, content, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    assert main(["score", *ARGS, "--passages", str(path)]) == 2
    err = capsys.readouterr().err
    assert needle in err and len(err.strip().splitlines()) == 1


def test_score_missing_file(capsys, tmp_path):
    assert main(["score", *ARGS, "--passages", str(tmp_path / "nope.jsonl")]) == 2
    assert "not found" in capsys.readouterr().err


@pytest.mark.parametrize("flag", ["--question", "--answer"])
def test_score_text_that_is_not_utf8_is_refused(flag, capsys, passages):
    """As ask and search refuse it: "café" typed in a Latin-1 terminal is not "caf"."""
    args = {"--question": "Who painted the Mona Lisa?", "--answer": "Leonardo"}
    args[flag] = "caf\udce9"
    rc = main(["score", *(x for kv in args.items() for x in kv), "--passages", str(passages)])
    assert rc == 2
    assert "not UTF-8" in capsys.readouterr().err


def test_score_a_folder_is_named_a_folder(capsys, tmp_path):
    assert main(["score", *ARGS, "--passages", str(tmp_path)]) == 2
    assert "names a folder" in capsys.readouterr().err


def test_score_a_device_is_no_regular_file(capsys):
    assert main(["score", *ARGS, "--passages", "/dev/null"]) == 2
    assert "no regular file" in capsys.readouterr().err


def test_score_an_empty_answer_is_one_line(capsys, passages):
    rc = main(["score", "--question", "Who painted the Mona Lisa?", "--answer", " ",
               "--passages", str(passages)])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1
    assert "the answer is empty" in err[0]
