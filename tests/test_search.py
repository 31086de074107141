"""Retrieval: query safety, analyzer parity, index resolution, CLI search and recall."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import shared_file

from index_builder import schema as S
from scim_edge.cli import main
from scim_edge.errors import IndexError_, UserError
from scim_edge.retrieval import BM25Retriever, list_indexes, open_retriever, resolve_index_dir
from scim_edge.settings import Settings


@pytest.fixture(scope="module")
def retriever(sample_index) -> BM25Retriever:
    return BM25Retriever.open(sample_index)


def test_plain_english_question_with_quotes(retriever):
    hits = retriever.search('Who wrote "Animal Farm"?', 5)
    assert hits[0].title == "Animal Farm"
    assert all(h.score > 0 and h.doc_id.startswith(f"{h.page_id}-") for h in hits)


def test_a_query_without_word_pairs_comes_in_the_order_of_its_scores(retriever):
    # (the pairs of a question order its hits beyond their words' scores: test_proximity)
    hits = retriever.search("Who was Orwell?", 8)  # one content word
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


@pytest.mark.parametrize(
    "query",
    ["AND OR ( ) : ^ *", 'title:"x" -y +z', "NOT", "a ~ b [1 TO 2] {c}", "\\", "¿Qué? 🙂 ^2"],
)
def test_query_syntax_is_just_text(retriever, query):
    hits = retriever.search(query, 5)  # must not raise
    assert isinstance(hits, list)


def test_query_terms_drop_stopwords_and_stem(retriever):
    assert retriever.query_terms("Who wrote the novels?") == ["wrote", "novel"]
    assert retriever.query_terms("The Who") == ["the", "who"]  # only stopwords: keep them
    assert retriever.query_terms("  ?!  ") == []
    assert retriever.search("?!", 5) == []


def test_query_analyzer_matches_the_index(retriever):
    # the index stems "aardvarks" and "Aardvark" alike; so must the query side
    assert retriever.search("aardvarks", 1)[0].title == "Aardvark"
    analyzer = S.text_analyzer(retriever.manifest["analyzer"])
    assert analyzer.analyze("Running Anarchists") == ["run", "anarchist"]


def test_exclude_get_and_get_many(retriever):
    first = retriever.search("Abraham Lincoln assassinated", 3)
    assert first[0].title == "Abraham Lincoln"
    ids = [p.doc_id for p in first]
    rest = retriever.search("Abraham Lincoln assassinated", 3, exclude_ids=ids)
    assert not set(ids) & {p.doc_id for p in rest}
    got = retriever.get(ids[0])
    assert got is not None and got.text == first[0].text and got.title == first[0].title
    assert retriever.get("no-such-id") is None
    assert [p.doc_id for p in retriever.get_many([ids[1], "nope", ids[0]])] == [ids[1], ids[0]]
    assert retriever.search("Lincoln", 0) == []


def test_snippet_highlights_query_terms(retriever):
    p = retriever.search("Abraham Lincoln assassinated Booth", 1)[0]
    snip = retriever.snippet(p, "Abraham Lincoln assassinated Booth", words=20, mark=("<", ">"))
    assert "<" in snip and len(snip.split()) <= 22


def test_passage_count_name_manifest(retriever, sample_index):
    assert retriever.name == sample_index.name
    assert retriever.passage_count == retriever.manifest["counts"]["passages"]


def test_recall_at_5_on_qa_dev(retriever, qa_dev):
    answerable = [q for q in qa_dev if q["answers"]]
    hits5 = sum(
        any(p.title in q["titles"] for p in retriever.search(q["question"], 5)) for q in answerable
    )
    assert hits5 / len(answerable) >= 0.85


# ---- resolution and broken indexes ---------------------------------------------------------


def _install(sample_index, isolated_home, name: str):
    dest = isolated_home / "indexes" / name
    shutil.copytree(sample_index, dest)
    return dest


def test_resolve_index_dir(sample_index, isolated_home, tmp_path):
    with pytest.raises(UserError) as e:
        resolve_index_dir(None)
    assert "build-index" in e.value.one_line() and "demo" in e.value.one_line()
    only = _install(sample_index, isolated_home, "wiki")
    assert resolve_index_dir(None) == only
    _install(sample_index, isolated_home, "other")
    with pytest.raises(UserError, match="several indexes"):
        resolve_index_dir(None)
    default = _install(sample_index, isolated_home, "default")
    (isolated_home / "indexes" / ".tmp-default-1-abc").mkdir()  # a build in progress
    assert resolve_index_dir(None) == default
    assert [i.name for i in list_indexes()] == ["default", "other", "wiki"]
    assert resolve_index_dir("other") == isolated_home / "indexes" / "other"
    assert resolve_index_dir(str(sample_index)) == sample_index.resolve()
    assert resolve_index_dir(Settings(index="wiki")) == only
    with pytest.raises(UserError, match="no index named 'nope'"):
        resolve_index_dir("nope")
    with pytest.raises(UserError, match="no index at"):
        resolve_index_dir(str(tmp_path / "missing"))
    retriever, name = open_retriever(Settings(index="other"))
    assert name == "other" and retriever.passage_count > 0


def test_an_installed_name_with_a_trailing_slash_is_that_index(
    sample_index, isolated_home, tmp_path, monkeypatch
):
    """`--index sample/`, as a shell completes a name in the indexes folder: the installed
    index, where no folder of that name is in the working directory."""
    installed = _install(sample_index, isolated_home, "sample")
    monkeypatch.chdir(tmp_path)
    assert resolve_index_dir("sample/") == installed


def test_corrupt_or_incomplete_index(sample_index, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(sample_index, broken)
    (broken / "meta.json").write_text("{ not json")
    with pytest.raises(IndexError_) as e:
        BM25Retriever.open(broken)
    msg = e.value.one_line()
    assert str(broken) in msg and "rebuild" in msg and "\n" not in msg
    # outside the indexes directory it is rebuilt where it is, by --out, not by --name
    assert f"--out {broken}" in msg
    (broken / "manifest.json").unlink()
    with pytest.raises(IndexError_, match="manifest"):
        BM25Retriever.open(broken)
    old = tmp_path / "old"
    shutil.copytree(sample_index, old)
    m = json.loads((old / "manifest.json").read_text())
    m["schema_version"] = 0
    (old / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(IndexError_, match="schema version"):
        BM25Retriever.open(old)


class _SwapDuringOpen:
    """Stands in for the `tantivy` module in `scim_edge.retrieval`: the first
    `Index.open` swaps another index in under the path being opened, as a finishing build
    does, either failing on a segment file that left with the old directory (as Tantivy
    does when the swap falls between its meta file and a segment) or opening the new one
    after the manifest was read from the old."""

    def __init__(self, real, replacement, fail: bool) -> None:
        import types

        self._real, self._replacement, self._fail = real, replacement, fail
        self.opens = 0
        self.Index = types.SimpleNamespace(open=self._open)

    def __getattr__(self, name):
        return getattr(self._real, name)

    def _open(self, where: str):
        from scim_edge.atomic import swap_into_place

        self.opens += 1
        if self.opens == 1:
            swap_into_place(self._replacement, type(self._replacement)(where))
            if self._fail:
                raise ValueError(f"Failed to open file for read: FileDoesNotExist({where}/x.idx)")
        return self._real.Index.open(where)


@pytest.mark.parametrize("fail", [True, False], ids=["segment-gone", "manifest-stale"])
def test_open_during_a_swap_reads_one_index(sample_index, demo_index, tmp_path, monkeypatch, fail):
    """A reader opening an index while a build swaps the new one in gets one whole index,
    the new one, with its own manifest: never an error and never a mix of the two."""
    import tantivy

    from scim_edge import retrieval

    wiki, new = tmp_path / "wiki", tmp_path / ".partial-wiki"
    shutil.copytree(sample_index, wiki)
    shutil.copytree(demo_index, new)
    new_count = json.loads((new / "manifest.json").read_text())["counts"]["passages"]
    shim = _SwapDuringOpen(tantivy, new, fail)
    monkeypatch.setattr(retrieval, "tantivy", shim)
    opened = BM25Retriever.open(wiki)
    assert opened.passage_count == new_count
    assert opened.manifest["counts"]["passages"] == new_count
    assert shim.opens == 2


def test_an_index_that_never_holds_still_is_a_clear_error(sample_index, monkeypatch):
    """If the directory keeps changing under every try, the reader stops with one line."""
    from itertools import count

    from scim_edge import retrieval

    ticks = count()
    monkeypatch.setattr(retrieval, "_identity", lambda path: (0, next(ticks)))
    with pytest.raises(IndexError_) as e:
        BM25Retriever.open(sample_index)
    assert "kept changing" in e.value.one_line()


# ---- CLI -----------------------------------------------------------------------------------


def test_cli_search_human(sample_index, capsys):
    rc = main(["search", 'Who wrote "Animal Farm"?', "--index", str(sample_index), "-k", "3"])
    out = capsys.readouterr().out
    assert rc == 0
    assert out.startswith("1. Animal Farm") and "(BM25 " in out and "[" in out
    assert out.count("\n   ") == 3  # one snippet per hit


def test_cli_search_json(sample_index, capsys):
    rc = main(["search", "aardvark earth pig", "--index", str(sample_index), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert rc == 0 and len(data) == 5
    assert set(data[0]) == {"doc_id", "title", "section", "score", "text"}
    assert data[0]["title"] == "Aardvark"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["search", "x"], "scim-edge build-index"),
        (["search", "x", "--index", "nope"], "no index named"),
        (["search", "x", "--index", "/no/such/dir"], "no index at"),
        (["search", "   "], "empty"),
        (["search", "\x1b[1m\x07"], "empty"),
        (["search", "x", "-k", "0"], "-k"),
        (["search", "x", "-k", "99999999999999999999999"], "-k must be at most"),
        (["search", "caf\udce9"], "not UTF-8"),  # "café" typed in a Latin-1 terminal
    ],
)
def test_cli_search_errors(args, needle, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err


def test_cli_search_reads_the_index_named_by_the_environment(
    demo_index, isolated_home, monkeypatch, capsys
):
    """With several indexes installed and no --index, SCIM_EDGE_INDEX names the one to
    search, as it does for `ask` (the config file's `index` goes the same way)."""
    for name in ("one", "two"):
        shutil.copytree(demo_index, isolated_home / "indexes" / name)
    monkeypatch.setenv("SCIM_EDGE_INDEX", "two")
    rc = main(["search", "Apollo 11", "-k", "1", "--json"])
    assert (rc, capsys.readouterr().err) == (0, "")


def test_demo_command(capsys, isolated_home):
    assert main(["demo", "--no-question"]) == 0
    out = capsys.readouterr().out
    assert "Built the demo index" in out and "Apollo 11" in out
    assert (isolated_home / "indexes" / "demo" / "manifest.json").exists()
    assert main(["demo", "--no-question"]) == 0
    assert "Using the demo index" in capsys.readouterr().out


def test_damage_noticed_at_query_time_is_a_clear_error(sample_index, tmp_path):
    damaged = tmp_path / "damaged"
    shutil.copytree(sample_index, damaged)
    for f in damaged.glob("*.pos"):  # positions are read only when a query needs them
        f.unlink()
    with pytest.raises(IndexError_) as e:
        BM25Retriever.open(damaged).search("anarchism history", 5)
    msg = e.value.one_line()
    assert str(damaged) in msg and "rebuild" in msg and "\n" not in msg


class PanicException(BaseException):
    """Named as pyo3 names the Rust panic it raises (garbled bytes in a segment file:
    "index out of bounds"), and like it no Exception."""


class _PanickingSearcher:
    def __getattr__(self, name):
        def panic(*args, **kwargs):
            raise PanicException("index out of bounds: the len is 97 but the index is 97")

        return panic


@pytest.mark.parametrize(
    "read",
    [
        lambda r: r.search("anarchism history", 5),
        lambda r: r.get("12-0"),
        lambda r: r.article_lead("Anarchism"),
        lambda r: r.score_of("anarchism", "12-0"),
        lambda r: r.aliases(12),
        lambda r: next(r.sample(0)),
    ],
    ids=["search", "get", "article_lead", "score_of", "aliases", "sample"],
)
def test_a_rust_panic_on_a_damaged_index_is_a_clear_error(sample_index, read):
    retriever = BM25Retriever.open(sample_index)
    retriever.searcher = _PanickingSearcher()
    with pytest.raises(IndexError_) as e:
        read(retriever)
    assert "is corrupt" in e.value.one_line()


def test_ctrl_c_during_a_search_stays_ctrl_c(sample_index):
    class Interrupted:
        def search(self, *args, **kwargs):
            raise KeyboardInterrupt

    retriever = BM25Retriever.open(sample_index)
    retriever.searcher = Interrupted()
    with pytest.raises(KeyboardInterrupt):
        retriever.search("anarchism history", 5)


def test_every_title_finds_its_own_article_first(sample_index):
    """An exact title wins over stemming collisions and the disambiguation discount
    ("Animal (disambiguation)" against "Animal", "Animation")."""
    import tantivy

    r = BM25Retriever.open(sample_index)
    hits = r.searcher.search(tantivy.Query.all_query(), r.passage_count).hits
    titles = sorted({str(r.searcher.doc(a).get_first("title")) for _, a in hits})
    missed = [t for t in titles if r.search(t, 1)[0].title != t]
    assert missed == []


def test_two_builds_of_one_dump_rank_tied_passages_alike(tmp_path):
    """Passages that tie on score (an article's passages matched only by its title) come
    in the order of their own ids, not of where each build put them: one worker and two
    lay the index out differently."""
    from index_builder.build import build_index

    dump = shared_file("enwiki-sample.xml.bz2")
    queries = ["Algeria provinces municipalities", "Avicenna writings alchemy", "Alberta"]
    got = []
    for workers in (1, 2):
        build_index(dump, tmp_path / f"w{workers}", workers=workers)
        r = BM25Retriever.open(tmp_path / f"w{workers}")
        got.append([[p.doc_id for p in r.search(q, 10)] for q in queries])
    assert got[0] == got[1]


def test_hits_that_tie_at_the_cut_are_all_fetched_before_it_is_made():
    """A tie that runs past the hits first fetched is fetched whole (up to a cap), so the
    cut after ordering ties by id does not depend on which tied hits Tantivy kept."""
    from types import SimpleNamespace

    class Searcher:  # 30 hits that all tie, then lower ones
        def search(self, query, limit):
            ranked = [(2.0, i) for i in range(30)] + [(1.0, i) for i in range(30, 60)]
            return SimpleNamespace(hits=ranked[:limit])

    stub = SimpleNamespace(searcher=Searcher())
    hits = BM25Retriever._hits(stub, None, 5, 10)
    assert sum(score == 2.0 for score, _ in hits) == 30


@pytest.mark.parametrize(
    "argv",
    [["search", "x"], ["eval", "QA"], ["practice"], ["critic", "train"]],
    ids=["search", "eval", "practice", "critic-train"],
)
def test_a_folder_that_is_no_index_is_one_line_naming_out(argv, tmp_path, capsys):
    """Every command that takes --index says a plain folder is not an index, and how to
    build one there (`--out`), as `ask` does."""
    folder = tmp_path / "notes"
    folder.mkdir()
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"question": "Who?", "answers": ["x"]}\n', encoding="utf-8")
    argv = [str(qa) if a == "QA" else a for a in argv]
    rc = main([*argv, "--index", str(folder)])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert len(err) == 1
    assert "not a scim-edge index" in err[0]
    assert "build-index DUMP --out" in err[0]


@pytest.mark.parametrize(
    "argv",
    [["search", "x"], ["eval", "QA"], ["practice"], ["critic", "train"]],
    ids=["search", "eval", "practice", "critic-train"],
)
def test_without_index_every_command_reads_scim_edge_index(
    argv, tmp_path, isolated_home, monkeypatch, capsys
):
    """No --index: the index SCIM_EDGE_INDEX names is the one opened, as for `ask` (here
    a plain folder, so the command's one line is about that folder)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    qa = tmp_path / "qa.jsonl"
    qa.write_text('{"question": "Who?", "answers": ["x"]}\n', encoding="utf-8")
    monkeypatch.setenv("SCIM_EDGE_INDEX", str(folder))
    rc = main([str(qa) if a == "QA" else a for a in argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert "not a scim-edge index" in err


def test_a_broken_installed_index_is_rebuilt_by_name(sample_index, isolated_home):
    broken = isolated_home / "indexes" / "mine"
    shutil.copytree(sample_index, broken)
    (broken / "meta.json").write_text("{ not json")
    with pytest.raises(IndexError_) as e:
        BM25Retriever.open(broken)
    assert "scim-edge build-index DUMP --name mine --force" in e.value.one_line()
