"""`critic train --fine-tune`: a T5 fine-tuned as the Critic on practice traces (SIM-RAG
§3.3), exported to ONNX and run as the simrag loop's model critic. Tested on the tiny
random T5 (real Flan-T5 weights are not available offline)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from scim_edge.cli import main
from scim_edge.engine import Engine
from scim_edge.errors import ModelError
from scim_edge.settings import Settings
from scim_edge.types import Verdict

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_fine_tuned_critic_is_exported_and_judges(sample_index, tmp_path, capsys, isolated_home):
    import importlib.util

    for extra in ("torch", "transformers", "optimum"):
        if importlib.util.find_spec(extra) is None:
            pytest.skip(f"the export extra is not installed ({extra} missing)")
    from scim_edge.practice.runner import PracticeOptions, run_practice

    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    engine = Engine.open(Settings(index=str(index), model="extractive"))
    run_practice(engine, index, PracticeOptions(questions=60, seed=4, train_critic=False))
    hf = tmp_path / "tiny-hf"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys.executable, str(ROOT / "tests" / "fixtures" / "make_tiny_t5.py"),
                    str(hf)], check=True, capture_output=True, env=env, timeout=300)  # fmt: skip
    rc = main(["critic", "train", "--index", str(index), "--fine-tune", str(hf),
               "--name", "critic-t5", "--steps", "3"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    manifest = json.loads((isolated_home / "models" / "critic-t5" / "manifest.json").read_text())
    assert manifest["source"] == str(hf)  # not the temporary folder the export read
    from scim_edge.critic import ModelCritic, make_critic

    settings = Settings(index=str(index), loop="simrag", critic="model", critic_model="critic-t5")
    critic = make_critic(settings, engine)
    assert isinstance(critic, ModelCritic)
    verdict = critic.judge("What is the capital of Aruba?", "Oranjestad",
                           engine.retriever.search("Aruba capital", 2))  # fmt: skip
    assert isinstance(verdict, Verdict)
    # the way its docs say to use it: simrag judged by it, confidence from the trained one
    capsys.readouterr()
    rc = main(["ask", "What is the capital of Aruba?", "--index", str(index), "--model",
               "extractive", "--loop", "simrag", "--critic", "model", "--critic-model",
               "critic-t5", "--json"])  # fmt: skip
    assert rc == 0, capsys.readouterr().err


def test_fine_tune_needs_a_model_directory(sample_index, tmp_path, capsys):
    from scim_edge.practice.runner import PracticeOptions, run_practice

    index = tmp_path / "idx"
    shutil.copytree(sample_index, index)
    engine = Engine.open(Settings(index=str(index), model="extractive"))
    run_practice(engine, index, PracticeOptions(questions=60, seed=4, train_critic=False))
    plain = tmp_path / "plain"
    plain.mkdir()
    rc = main(["critic", "train", "--index", str(index), "--fine-tune", str(plain)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "config.json" in err


def test_a_missing_fine_tune_folder_is_named_before_the_index(sample_index, tmp_path, capsys):
    """The folder --fine-tune names is checked first: the index (here never practised)
    is not what the user got wrong."""
    rc = main(["critic", "train", "--index", str(sample_index), "--fine-tune",
               str(tmp_path / "nope")])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1
    assert f"no such directory: {tmp_path / 'nope'}" in err[0]


def _fine_tuned_in_store(isolated_home: Path, name: str) -> Path:
    """A store model as `critic train --fine-tune` leaves one: kind seq2seq, role critic
    (its ONNX files stand in as one small file; only the manifest's hashes are read)."""
    from models import store

    folder = isolated_home / "models" / name
    folder.mkdir(parents=True)
    (folder / "decoder.onnx").write_bytes(b"onnx")
    manifest = store.build_manifest(folder, name=name, kind="seq2seq", source="/src/flan-t5",
                                    variants={"fp32": ["decoder.onnx"]}, shared=[],
                                    extra={"role": "critic"})  # fmt: skip
    store.write_manifest(folder, manifest)
    return folder


def test_critic_list_and_verify_name_a_fine_tuned_critic(isolated_home, capsys):
    _fine_tuned_in_store(isolated_home, "ft-critic")
    assert main(["critic", "list", "--json"]) == 0
    listed = {e["name"]: e for e in json.loads(capsys.readouterr().out)}
    assert listed["ft-critic"]["fine_tuned"] is True
    assert main(["critic", "verify", "ft-critic"]) == 0


def test_a_fine_tuned_critic_is_never_the_default_generator(isolated_home):
    """Installed first by name, it still is no model to answer with."""
    from models import store

    _fine_tuned_in_store(isolated_home, "a-critic")
    assert store.default_model("seq2seq") is None


def test_a_fine_tuned_critic_damaged_fails_verify(isolated_home, capsys):
    folder = _fine_tuned_in_store(isolated_home, "ft-critic")
    (folder / "decoder.onnx").write_bytes(b"oops")
    assert main(["critic", "verify", "ft-critic"]) == 1


def test_a_fine_tuned_critic_named_for_confidence_says_how_to_use_it(isolated_home, capsys):
    """--critic-model names a trained Critic for confidence; a fine-tuned Flan-T5 one judges
    simrag's rounds instead, and the one line says so."""
    from scim_edge.trained_critic import named_path

    _fine_tuned_in_store(isolated_home, "ft-critic")
    with pytest.raises(ModelError) as e:
        named_path("ft-critic")
    assert "--critic model --critic-model ft-critic" in e.value.one_line()
