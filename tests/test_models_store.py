"""Model store: manifests, resolve/list/import/verify/remove, and one-line errors."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from models import store
from scim_edge import paths
from scim_edge.cli import main
from scim_edge.errors import ModelError

SEQ2SEQ_GRAPHS = ("encoder_model", "decoder_model", "decoder_with_past_model")


def make_fake_model(root: Path, name: str = "fake", kind: str = "seq2seq") -> Path:
    """A model directory with a real manifest over placeholder files (not loadable graphs)."""
    d = root / name
    d.mkdir(parents=True)
    shared = ["tokenizer.json", "config.json"]
    (d / "tokenizer.json").write_text('{"version": "1.0"}', encoding="utf-8")
    (d / "config.json").write_text('{"model_type": "t5"}', encoding="utf-8")
    variants: dict[str, list[str]] = {}
    graphs = SEQ2SEQ_GRAPHS if kind == "seq2seq" else ("model",)
    for v in ("fp32", "int8") if kind == "seq2seq" else ("fp32",):
        (d / v).mkdir()
        for g in graphs:
            (d / v / f"{g}.onnx").write_bytes(f"{v}:{g}".encode() * 50)
        variants[v] = [f"{v}/{g}.onnx" for g in graphs]
    m = store.build_manifest(
        d, name=name, kind=kind, source="test", variants=variants, shared=shared
    )
    store.write_manifest(d, m)
    return d


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def assert_one_line_error(rc: int, err: str, *needles: str) -> None:
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in lines[0], lines[0]


def test_manifest_records_sizes_hashes_and_variants(tmp_path):
    d = make_fake_model(tmp_path)
    m = store.read_manifest(d)
    assert m["kind"] == "seq2seq" and m["source"] == "test" and m["created"]
    assert set(m["variants"]) == {"fp32", "int8"}
    entry = m["variants"]["int8"]["files"]["int8/encoder_model.onnx"]
    data = (d / "int8/encoder_model.onnx").read_bytes()
    assert entry["size"] == len(data)
    import hashlib

    assert entry["sha256"] == hashlib.sha256(data).hexdigest()
    assert store.verify(d) == []
    files = store.variant_files(d, m, "int8")
    assert set(files) == set(SEQ2SEQ_GRAPHS)


def test_empty_store(capsys):
    assert store.list_models() == []
    assert store.default_model("seq2seq") is None
    with pytest.raises(ModelError, match="no seq2seq model is installed"):
        store.resolve_model(None)
    rc, out, _ = run_cli(capsys, "models", "list")
    assert rc == 0 and "no models installed" in out
    rc, out, _ = run_cli(capsys, "models", "list", "--json")
    assert rc == 0 and json.loads(out) == []


def test_import_list_resolve_remove(tmp_path, capsys):
    src = make_fake_model(tmp_path / "src", name="carried")
    rc, out, err = run_cli(capsys, "models", "import", str(src))
    assert rc == 0, err
    installed = paths.models_dir() / "carried"
    assert (installed / store.MANIFEST).is_file()
    assert store.verify(installed) == []
    emb = make_fake_model(tmp_path / "src2", name="emb", kind="embedding")
    assert store.import_model(emb, name="minilm") == paths.models_dir() / "minilm"

    names = {(i.name, i.kind) for i in store.list_models()}
    assert names == {("carried", "seq2seq"), ("minilm", "embedding")}
    assert store.resolve_model(None) == installed
    assert store.resolve_model("carried") == installed
    assert store.default_model("embedding") == paths.models_dir() / "minilm"
    assert store.resolve_model(str(installed)) == installed  # a path works too
    with pytest.raises(ModelError, match="is a embedding model, not seq2seq"):
        store.resolve_model("minilm", "seq2seq")

    rc, out, _ = run_cli(capsys, "models", "list", "--json")
    listed = {m["name"]: m for m in json.loads(out)}
    assert (
        listed["carried"]["variants"] == ["fp32", "int8"] and listed["carried"]["problem"] is None
    )

    # importing again needs --force
    rc, _, err = run_cli(capsys, "models", "import", str(src))
    assert_one_line_error(rc, err, "already exists", "--force")
    rc, _, err = run_cli(capsys, "models", "import", str(src), "--force")
    assert rc == 0, err

    rc, out, _ = run_cli(capsys, "models", "remove", "carried")
    assert rc == 0 and not installed.exists()
    assert not [p for p in paths.models_dir().iterdir() if p.name.startswith(".")]


def test_an_installed_name_with_a_trailing_slash_is_that_model(tmp_path, monkeypatch):
    """`--model flan/`, as a shell completes a name in the models folder: the installed
    model, when no such folder is where the command runs."""
    store.import_model(make_fake_model(tmp_path / "src", name="flan"))
    monkeypatch.chdir(tmp_path)
    assert store.resolve_model("flan/") == paths.models_dir() / "flan"


def test_a_local_exported_folder_wins_over_a_store_name_with_a_slash(tmp_path, monkeypatch):
    store.import_model(make_fake_model(tmp_path / "src", name="flan"))
    local = make_fake_model(tmp_path / "here", name="flan")
    monkeypatch.chdir(tmp_path / "here")
    assert store.resolve_model("flan/") == local.resolve()


def test_remove_takes_a_name_with_a_trailing_slash(tmp_path):
    store.import_model(make_fake_model(tmp_path / "src", name="flan"))
    store.remove("flan/")
    assert not (paths.models_dir() / "flan").exists()


def test_unknown_model_name_is_one_line(capsys):
    msg = "model 'nope' is not installed (see scim-edge models list)"
    with pytest.raises(ModelError) as e:
        store.resolve_model("nope")
    assert e.value.one_line() == msg
    for argv in (("verify", "nope"), ("remove", "nope"), ("bench", "nope")):
        rc, _, err = run_cli(capsys, "models", *argv)
        assert_one_line_error(rc, err, msg)


def test_verify_detects_hash_mismatch(tmp_path, capsys):
    store.import_model(make_fake_model(tmp_path, name="m1"))
    target = paths.models_dir() / "m1" / "int8" / "decoder_model.onnx"
    data = bytearray(target.read_bytes())
    data[10] ^= 0xFF  # same size, different content
    target.write_bytes(bytes(data))
    assert store.verify(paths.models_dir() / "m1") == [
        "int8/decoder_model.onnx: sha256 mismatch (file corrupted or modified)"
    ]
    rc, out, err = run_cli(capsys, "models", "verify", "m1")
    assert "sha256 mismatch" in out
    assert_one_line_error(rc, err, "1 model(s) failed verification")


def test_import_dir_with_missing_or_corrupt_file(tmp_path, capsys):
    src = make_fake_model(tmp_path, name="m2")
    (src / "int8" / "encoder_model.onnx").unlink()
    rc, _, err = run_cli(capsys, "models", "import", str(src))
    assert_one_line_error(rc, err, "cannot import", "int8/encoder_model.onnx: missing")
    assert not (paths.models_dir() / "m2").exists()

    src2 = make_fake_model(tmp_path / "b", name="m3")
    with open(src2 / "fp32" / "decoder_model.onnx", "ab") as f:
        f.write(b"x")
    rc, _, err = run_cli(capsys, "models", "import", str(src2))
    assert_one_line_error(rc, err, "fp32/decoder_model.onnx: size")

    rc, _, err = run_cli(capsys, "models", "import", str(tmp_path / "no-such-dir"))
    assert_one_line_error(rc, err, "no such directory")
    a_file = tmp_path / "model.onnx"
    a_file.write_bytes(b"onnx")
    rc, _, err = run_cli(capsys, "models", "import", str(a_file))
    assert_one_line_error(rc, err, "is a file; `models import` takes the directory")
    plain = tmp_path / "plain"
    plain.mkdir()
    rc, _, err = run_cli(capsys, "models", "import", str(plain))
    assert_one_line_error(rc, err, "manifest.json is missing")


def test_size_mismatch_on_load_is_one_line(tmp_path, capsys):
    from models.seq2seq import Seq2SeqModel

    store.import_model(make_fake_model(tmp_path, name="m4"))
    victim = paths.models_dir() / "m4" / "int8" / "decoder_with_past_model.onnx"
    victim.write_bytes(victim.read_bytes()[:100])
    with pytest.raises(ModelError) as e:
        Seq2SeqModel.load("m4")
    line = e.value.one_line()
    assert "int8/decoder_with_past_model.onnx" in line and "truncated" in line
    assert "scim-edge models verify m4" in line
    rc, _, err = run_cli(capsys, "models", "bench", "m4", "--input-tokens", "8")
    assert_one_line_error(rc, err, "truncated", "scim-edge models verify m4")


def test_unparseable_graph_is_one_line_not_a_crash(tmp_path):
    """Same size as the manifest says but not a graph: ONNX Runtime's error becomes one line."""
    from models.seq2seq import Seq2SeqModel

    d = make_fake_model(tmp_path, name="m5")
    with pytest.raises(ModelError) as e:
        Seq2SeqModel.load(d)
    line = e.value.one_line()
    assert line.startswith("cannot load model file int8/encoder_model.onnx of 'm5'")
    assert "\n" not in line and "scim-edge models verify m5" in line


def test_broken_manifest_is_listed_not_fatal(capsys):
    broken = paths.models_dir() / "broken"
    broken.mkdir(parents=True)
    (broken / store.MANIFEST).write_text("{not json", encoding="utf-8")
    (paths.models_dir() / ".tmp-half-123-abc").mkdir()  # an export in progress: hidden
    infos = store.list_models()
    assert [i.name for i in infos] == ["broken"] and "cannot read" in (infos[0].problem or "")
    assert store.default_model("seq2seq") is None
    rc, out, _ = run_cli(capsys, "models", "list")
    assert rc == 0 and "BROKEN" in out


@pytest.mark.parametrize("name", ["extractive", "default"])
def test_a_name_the_commands_reserve_is_refused(tmp_path, capsys, name):
    """`--model extractive` is the built-in reader and `default` the shipped Critic: a model
    installed under either could never be chosen."""
    src = make_fake_model(tmp_path, name="ok")
    rc, _, err = run_cli(capsys, "models", "import", str(src), "--name", name)
    assert_one_line_error(rc, err, f"the name '{name}' is")


def test_bad_names_rejected(tmp_path):
    src = make_fake_model(tmp_path, name="ok")
    for bad in ("../evil", ".tmp-x", "a b", ""):
        with pytest.raises(ModelError):
            store.import_model(src, name=bad or "/")


def test_export_of_non_t5_source_is_one_line(tmp_path, capsys):
    pytest.importorskip("transformers")
    src = tmp_path / "gpt"
    src.mkdir()
    (src / "config.json").write_text(json.dumps({"model_type": "gpt2"}), encoding="utf-8")
    rc, _, err = run_cli(capsys, "models", "export", "--from", str(src))
    assert_one_line_error(rc, err, "is not a T5/seq2seq model", "gpt2")
    rc, _, err = run_cli(capsys, "models", "export", "--from", str(tmp_path / "missing"))
    assert_one_line_error(rc, err, "no such directory")
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, _, err = run_cli(capsys, "models", "export", "--from", str(empty))
    assert_one_line_error(rc, err, "config.json is missing")
    assert not paths.models_dir().exists() or not list(paths.models_dir().iterdir())


@pytest.mark.parametrize("hub_id", ["nobody/no-such-model", "a--b/c"])
def test_export_from_the_hub_with_no_network_is_one_line_at_once(capsys, monkeypatch, hub_id):
    """A hub id with no network: one line naming the unreachable host, and no retries
    (the hub library would retry for ~25 s, warning each time)."""
    pytest.importorskip("transformers")
    import socket

    def no_dns(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    from huggingface_hub import constants

    monkeypatch.setattr(socket, "getaddrinfo", no_dns)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the suite runs offline
    rc, _, err = run_cli(capsys, "models", "export", "--from", hub_id)
    assert_one_line_error(rc, err, hub_id)


def test_export_extra_missing_prints_pip_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "optimum.exporters.onnx", None)
    rc, _, err = run_cli(capsys, "models", "export", "--from", str(tmp_path))
    assert_one_line_error(rc, err, "pip install 'scim-edge[export]'")


def test_failed_export_leaves_nothing_in_the_store(tmp_path, monkeypatch):
    pytest.importorskip("transformers")
    from models import export

    src = tmp_path / "t5"
    src.mkdir()
    (src / "config.json").write_text(
        json.dumps({"model_type": "t5", "is_encoder_decoder": True}), encoding="utf-8"
    )

    def exploding(src, local, out, task, verbose):
        out.mkdir(parents=True)
        (out / "encoder_model.onnx").write_bytes(b"half written")
        raise KeyboardInterrupt  # interrupted mid-export

    monkeypatch.setattr(export, "_main_export", exploding)
    with pytest.raises(KeyboardInterrupt):
        export.export_model(str(src), name="half")
    root = paths.models_dir()
    assert not (root / "half").exists()
    assert list(root.iterdir()) == []


def test_remove_keeps_other_models(tmp_path):
    store.import_model(make_fake_model(tmp_path / "a", name="a"))
    store.import_model(make_fake_model(tmp_path / "b", name="b"))
    store.remove("a")
    assert [i.name for i in store.list_models()] == ["b"]
    shutil.rmtree(paths.models_dir() / "b")
    assert store.list_models() == []
