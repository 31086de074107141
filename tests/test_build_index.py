"""Index building: manifests, passages, aliases, multistream, atomicity and bad input."""

from __future__ import annotations

import bz2
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from index_builder.build import ProgressInfo, build_index, norm_title
from index_builder.passages import make_passages, split_sections, split_words
from index_builder.progress import ProgressReporter, summary
from scim_edge.cli import main
from scim_edge.demo import demo_dump_path
from scim_edge.retrieval import BM25Retriever
from tests.conftest import shared_file
from tests.test_dump_reader import make_dump

# ---- passages ---------------------------------------------------------------------------------


def test_passages_never_cross_sections_and_cut_at_sentences():
    sentence = "The quick brown fox jumps over the lazy dog again."  # 10 words
    sections = [("", sentence * 1), ("History", " ".join([sentence] * 30)), ("Empty", "  ")]
    out = split_sections(sections, 100)
    assert [s for s, _ in out] == ["", "History", "History", "History"]
    assert out[0][1] == sentence
    for _, text in out[1:]:
        assert text.endswith("again.")  # cuts fall on sentence ends
        assert 75 <= len(text.split()) <= 150
    assert sum(len(t.split()) for _, t in out) == 310  # no word lost or repeated
    recs = make_passages(42, "Fox", sections, 100)
    assert [r.doc_id for r in recs] == ["42-0", "42-1", "42-2", "42-3"]
    assert recs[1].section == "History" and recs[1].title == "Fox" and recs[1].page_id == 42


def test_list_items_stay_apart_in_a_passage():
    """Items with no full stop are closed with ";" so "Noord" and "Oranjestad" are two
    names, not one; lines that end a sentence or clause are joined as they are."""
    text = "The districts are:\nNoord\nOranjestad (33,000 in 2006)\nSavaneta\nIt is small."
    (_, passage), = split_sections([("Towns", text)], 100)  # fmt: skip
    want = "The districts are: Noord; Oranjestad (33,000 in 2006); Savaneta; It is small."
    assert passage == want


def test_a_line_ending_a_sentence_gets_no_extra_mark():
    (_, passage), = split_sections([("", 'He said "Go."\nThen (he left).\nEnd')], 100)  # fmt: skip
    assert passage == 'He said "Go." Then (he left). End'


def test_passage_length_is_configurable():
    words = [f"w{i}" for i in range(1000)]  # no sentence ends: plain cuts
    chunks = split_words(words, 50)
    assert [len(c) for c in chunks[:-1]] == [50] * (len(chunks) - 1)
    assert sum(map(len, chunks)) == 1000
    assert len(split_words(words[:70], 50)) == 1  # a short tail is not split off
    with pytest.raises(ValueError):
        split_sections([("", "x")], 0)


def test_norm_title():
    assert norm_title("analysis_of variance#History") == "Analysis of variance"
    assert norm_title("  ayn  Rand ") == "Ayn Rand"


# ---- the enwiki sample -------------------------------------------------------------------------


def test_sample_manifest(sample_index):
    m = json.loads((sample_index / "manifest.json").read_text())
    c = m["counts"]
    assert m["schema_version"] == 1 and m["project_version"]
    assert m["source"]["name"] == "enwiki-sample.xml.bz2"
    assert m["source"]["size_bytes"] == shared_file("enwiki-sample.xml.bz2").stat().st_size
    assert m["source"]["lang"] == "en" and m["analyzer"] == "stem_english"
    assert c["pages_seen"] == 206 and c["articles"] == 106 and c["redirects"] == 99
    assert c["other_namespaces"] == 1
    assert c["aliases"] == 13 and c["aliased_articles"] == 11
    assert c["disambiguation"] >= 1 and c["skipped"] == 0 and c["skipped_reasons"] == {}
    assert c["passages"] > 2000
    assert m["build_seconds"] > 0 and m["xml_mb_per_s"] > 0 and m["passage_words"] == 100
    r = BM25Retriever.open(sample_index)
    assert r.passage_count == c["passages"]


def test_sample_passages_are_whole_and_bounded(sample_index):
    r = BM25Retriever.open(sample_index)
    lead = r.get("12-0")
    assert lead.title == "Anarchism" and lead.section == "" and lead.page_id == 12
    n = 0
    while (p := r.get(f"12-{n}")) is not None:
        assert p.title == "Anarchism" and 0 < len(p.text.split()) <= 150
        for junk in ("{{", "}}", "[[", "]]", "<ref", "'''"):
            assert junk not in p.text
        n += 1
    assert n > 50
    assert r.get(f"12-{n}") is None


def test_redirect_titles_are_aliases(sample_index):
    r = BM25Retriever.open(sample_index)
    for alias, title in [("AynRand", "Ayn Rand"), ("ANOVA", "Analysis of variance"),
                         ("AbacuS", "Abacus")]:  # fmt: skip
        top = r.search(alias, 1)[0]
        assert top.title == title, alias
        assert alias in r.aliases(top.page_id)
    # a CamelCase title is one token found nowhere but in the alias of the lead passage
    assert (
        r.search("AynRand", 1)[0].doc_id == r.search("Ayn Rand", 50)[0].doc_id.split("-")[0] + "-0"
    )
    # redirects are not documents
    assert not any(p.title == "AynRand" for p in r.search("AynRand", 20))


def test_demo_index_flags_disambiguation_and_aliases(demo_index):
    m = json.loads((demo_index / "manifest.json").read_text())
    assert m["counts"]["disambiguation"] == 1 and m["counts"]["aliases"] == 2
    assert m["counts"]["articles"] == 11
    r = BM25Retriever.open(demo_index)
    hits = r.search("Augusta Ada King", 3)
    assert hits[0].title == "Ada Lovelace"
    assert "Augusta Ada King" in r.aliases(101)
    assert r.search("Gutenberg press", 1)[0].title == "Printing press"
    docs = [r.searcher.doc(a) for _, a in r.searcher.search(r._query(["apollo"], ()), 20).hits]
    flags = {d.get_first("title"): d.get_first("disambiguation") for d in docs}
    assert flags["Apollo (disambiguation)"] == 1 and flags["Apollo 11"] == 0


def test_bgwiki_utf16_build_and_search(tmp_path):
    out = tmp_path / "bg"
    m = build_index(shared_file("bgwiki-sample.xml.bz2"), out)
    assert m["counts"]["articles"] == 1 and m["counts"]["other_namespaces"] == 2
    assert m["source"]["lang"] == "bg" and m["analyzer"] == "plain"
    r = BM25Retriever.open(out)
    hits = r.search("Григориански календар", 3)
    assert hits and hits[0].title == "Григориански календар"
    assert "календар" in hits[0].text.lower()


# ---- multistream, stdin, plain xml -------------------------------------------------------------


@pytest.fixture(scope="module")
def twin_dumps(tmp_path_factory) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("twins")
    ms = make_dump(d / "small-multistream.xml.bz2", 7, multistream=True)
    # The same bytes without an index beside them: read as one sequence of streams.
    ss = d / "small-single.xml.bz2"
    ss.write_bytes(ms.read_bytes())
    return ms, ss


def test_multistream_build_matches_single_stream(twin_dumps, tmp_path):
    ms, ss = twin_dumps
    a = build_index(ms, tmp_path / "ms", workers=2)
    b = build_index(ss, tmp_path / "ss", workers=2)
    assert a["source"]["multistream"] and not b["source"]["multistream"]
    assert a["counts"] == b["counts"]
    assert a["counts"]["articles"] > 100
    ra, rb = BM25Retriever.open(tmp_path / "ms"), BM25Retriever.open(tmp_path / "ss")
    q = "satirical essay Jonathan Swift"
    assert [p.doc_id for p in ra.search(q, 5)] == [p.doc_id for p in rb.search(q, 5)]


def test_build_from_stdin_and_plain_xml(tmp_path, monkeypatch, capsys):
    xml = demo_dump_path().read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(bz2.compress(xml))))
    assert main(["build-index", "-", "--out", str(tmp_path / "stdin")]) == 0
    out = capsys.readouterr().out
    assert "Built index" in out and "articles" in out and "passages" in out
    m = json.loads((tmp_path / "stdin" / "manifest.json").read_text())
    assert m["source"]["name"] == "stdin" and m["counts"]["articles"] == 11
    plain = build_index(demo_dump_path(), tmp_path / "plain", passage_words=40)
    assert plain["counts"]["articles"] == 11 and plain["passage_words"] == 40
    assert plain["counts"]["passages"] > m["counts"]["passages"]


def test_a_page_the_cleaner_rejects_is_skipped(tmp_path, monkeypatch):
    from index_builder import wikitext

    real = wikitext.clean_article

    def picky(text: str):
        if "Kilimanjaro" in text[:200]:
            raise RuntimeError("cannot handle this page")
        return real(text)

    monkeypatch.setattr(wikitext, "clean_article", picky)
    m = build_index(demo_dump_path(), tmp_path / "idx", workers=0)
    assert m["counts"]["skipped"] == 1
    assert m["counts"]["skipped_reasons"] == {"cleaner error: RuntimeError": 1}
    assert m["counts"]["articles"] == 10
    r = BM25Retriever.open(tmp_path / "idx")
    assert all(p.title != "Mount Kilimanjaro" for p in r.search("Kilimanjaro Tanzania", 10))


# ---- atomicity ---------------------------------------------------------------------------------


def _visible(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


def test_interrupted_build_leaves_old_index_usable(tmp_path):
    target = tmp_path / "indexes" / "main"
    build_index(demo_dump_path(), target)
    before = BM25Retriever.open(target).passage_count

    calls = []

    def interrupt(info: ProgressInfo) -> None:
        calls.append(info)
        if len(calls) == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(shared_file("enwiki-sample.xml.bz2"), target, force=True,
                    progress=interrupt, workers=2)  # fmt: skip
    # only the hidden resumable build is left beside it, nothing under the index name
    assert _visible(target.parent) == [".partial-main", "main"]
    r = BM25Retriever.open(target)
    assert r.passage_count == before
    assert r.search("Apollo 11 Moon landing", 1)[0].title == "Apollo 11"


def _ctrl_c_in_cli_build(tmp_path, monkeypatch, capsys, *, after: int, extra=()) -> str:
    """Ctrl+C at the `after`-th progress report of a CLI build over an existing index: the
    one line it says (exit 130), the index still answering."""
    target = tmp_path / "idx"
    build_index(demo_dump_path(), target)
    calls = []

    def boom(self, info):
        calls.append(info)
        if len(calls) > after:
            raise KeyboardInterrupt

    monkeypatch.setattr(ProgressReporter, "__call__", boom)
    src = str(shared_file("enwiki-sample.xml.bz2"))
    rc = main(["build-index", src, "--out", str(target), "--force", *extra])
    assert rc == 130
    assert BM25Retriever.open(target).search("Reykjavík", 1)[0].title == "Reykjavík"
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    return err[0]


def test_ctrl_c_before_the_first_checkpoint_keeps_nothing_to_resume(tmp_path, monkeypatch, capsys):
    line = _ctrl_c_in_cli_build(tmp_path, monkeypatch, capsys, after=0)
    assert "left as it was, nothing was kept" in line
    assert _visible(tmp_path) == ["idx"]


def test_ctrl_c_after_a_checkpoint_offers_resume(tmp_path, monkeypatch, capsys):
    line = _ctrl_c_in_cli_build(tmp_path, monkeypatch, capsys, after=3,
                                extra=("--checkpoint-every", "0.001"))  # fmt: skip
    assert "--resume" in line
    assert _visible(tmp_path) == [".partial-idx", "idx"]


def test_ctrl_c_in_a_build_from_stdin_offers_no_resume_and_keeps_a_file_build_s(tmp_path):
    """An earlier file build of the same index, stopped after a checkpoint, keeps its
    partial folder; the stdin build that was interrupted cannot resume and says so."""
    from index_builder import checkpoint as ck
    from scim_edge.commands.build_index import interrupted

    out = tmp_path / "idx"
    work = ck.partial_dir(out)
    work.mkdir()
    ck.Checkpoint(source={"path": "dump.xml.bz2"}, options={}, position={"pages": 9}).save(work)
    line = interrupted(out, stdin=True)
    assert "--resume" not in line
    assert ck.Checkpoint.load(work) is not None


def test_reader_keeps_working_while_index_is_replaced(tmp_path):
    target = tmp_path / "live"
    build_index(demo_dump_path(), target)
    old = BM25Retriever.open(target)
    build_index(shared_file("enwiki-sample.xml.bz2"), target, force=True)
    assert old.search("emperor penguin breeding", 1)[0].title == "Emperor penguin"
    new = BM25Retriever.open(target)
    assert new.search("Jonathan Swift A Modest Proposal", 1)[0].title == "A Modest Proposal"
    assert _visible(tmp_path) == ["live"]


def test_existing_index_needs_force(tmp_path, capsys):
    target = tmp_path / "idx"
    src = str(demo_dump_path())
    assert main(["build-index", src, "--out", str(target)]) == 0
    capsys.readouterr()
    assert main(["build-index", src, "--out", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "already exists" in err and "--force" in err
    assert main(["build-index", src, "--out", str(target), "--force"]) == 0


def test_build_index_by_name_goes_to_indexes_dir(isolated_home, capsys):
    assert main(["build-index", str(demo_dump_path()), "--name", "mini"]) == 0
    assert (isolated_home / "indexes" / "mini" / "manifest.json").exists()
    assert main(["build-index", str(demo_dump_path())]) == 0
    assert (isolated_home / "indexes" / "default" / "manifest.json").exists()


# ---- bad input: one line on stderr, exit 2, nothing written ------------------------------------


def _bad_inputs(tmp: Path) -> dict[str, tuple[list[str], str]]:
    xml = bz2.decompress(shared_file("enwiki-sample.xml.bz2").read_bytes())
    raw = shared_file("enwiki-sample.xml.bz2").read_bytes()
    (tmp / "notes.txt").write_text("not a dump\n")
    (tmp / "bogus-enc.xml").write_text(
        '<?xml version="1.0" encoding="bogus-enc"?>\n<mediawiki><page><title>A</title>'
        "<ns>0</ns><id>1</id><revision><text>hello</text></revision></page></mediawiki>\n"
    )
    (tmp / "cut.xml.bz2").write_bytes(raw[: len(raw) // 2])
    (tmp / "cut.xml").write_bytes(xml[: len(xml) // 2])
    mid = xml.index(b"<page>", len(xml) // 2)
    (tmp / "bad.xml").write_bytes(xml[:mid] + b"<page><ns>0</nss></page>" + xml[mid:])
    (tmp / "empty-wiki.xml").write_text(
        '<mediawiki xml:lang="en"><siteinfo><sitename>x</sitename></siteinfo>'
        '<page><title>A</title><ns>0</ns><id>1</id><redirect title="B"/>'
        "<revision><text>#REDIRECT [[B]]</text></revision></page>"
        "<page><title>Talk:B</title><ns>1</ns><id>2</id>"
        "<revision><text>Some talk.</text></revision></page></mediawiki>"
    )
    (tmp / "a-file").write_text("occupies the parent of the output\n")
    demo = str(demo_dump_path())
    return {
        "missing": ([str(tmp / "nope.xml.bz2")], "no such file"),
        "name-too-long": ([str(tmp / ("a" * 300 + ".xml.bz2"))], "cannot read the dump"),
        "empty-path": ([""], "the dump path is empty"),
        "directory": ([str(tmp)], "is a directory"),
        "non-xml": ([str(tmp / "notes.txt")], "not an XML dump"),
        "truncated-bz2": ([str(tmp / "cut.xml.bz2")], "truncated bz2"),
        "xml-breaks-off": ([str(tmp / "cut.xml")], "XML ends early"),
        "malformed-midway": ([str(tmp / "bad.xml")], "malformed XML"),
        "zero-articles": ([str(tmp / "empty-wiki.xml")], "no articles"),
        "unknown-encoding": ([str(tmp / "bogus-enc.xml")], "unsupported XML encoding"),
        "unwritable-output": ([demo, "--out", "/sys/scim-edge-test/idx"], "cannot"),
        "read-only-parent": ([demo, "--out", str(tmp / "ro" / "idx")], "cannot write"),
        "parent-is-a-file": ([demo, "--out", str(tmp / "a-file" / "idx")], "not a directory"),
        "output-is-a-file": ([demo, "--out", str(tmp / "a-file")], "not a directory"),
        "bad-passage-words": ([demo, "--passage-words", "0"], "--passage-words"),
        "missing-multistream-index": (
            [str(shared_file("enwiki-sample.xml.bz2")), "--multistream-index", str(tmp / "no")],
            "multistream index not found",
        ),
    }


CASES = [
    "missing", "name-too-long", "empty-path", "directory", "non-xml", "truncated-bz2",
    "xml-breaks-off",
    "malformed-midway", "zero-articles", "unknown-encoding", "unwritable-output",
    "read-only-parent",
    "parent-is-a-file", "output-is-a-file", "bad-passage-words",
    "missing-multistream-index",
]  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_bad_input_gives_one_line_and_exit_2(case, tmp_path, capsys, isolated_home, request):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    args, expected = _bad_inputs(inputs)[case]
    if case == "unwritable-output" and not Path("/sys").is_dir():
        pytest.skip("no /sys on this system")
    if case == "read-only-parent":
        (inputs / "ro").mkdir(mode=0o500)
        if os.geteuid() == 0:  # root ignores modes: make it a read-only mount instead
            ro = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "tmpfs",
                                 str(inputs / "ro")], capture_output=True)  # fmt: skip
            if ro.returncode != 0:
                pytest.skip("running as root and cannot mount a read-only tmpfs")
            request.addfinalizer(lambda: subprocess.run(["umount", str(inputs / "ro")]))
    if "--out" not in args:
        args = [*args, "--out", str(tmp_path / "out" / "idx")]
    rc = main(["build-index", *args])
    captured = capsys.readouterr()
    err = captured.err
    assert rc == 2, err
    assert err.count("\n") == 1 and err.startswith("scim-edge: error: "), err
    assert "Traceback" not in err
    assert expected in err, err
    assert _visible(tmp_path / "out") == []
    assert not (isolated_home / "indexes").exists() or _visible(isolated_home / "indexes") == []
    if case in ("truncated-bz2", "xml-breaks-off", "malformed-midway"):
        assert "pages" in err  # says how far it got


# ---- progress ----------------------------------------------------------------------------------


def _info(phase: str = "reading") -> ProgressInfo:
    return ProgressInfo(phase, 500_000, 1_000_000, 2_000_000, 120, 60, 900, 2.0)


def test_progress_bar_on_a_terminal():
    buf = io.StringIO()
    rep = ProgressReporter(buf, tty=True)
    rep(_info())
    rep(_info("done"))
    text = buf.getvalue()
    assert "━" in text  # rich's bar
    assert "50.0%" in text
    assert "pages/s" in text
    assert "\r" in text  # redrawn in place
    assert text.endswith("\n\x1b[?25h")  # ends the line, cursor shown again
    assert "ETA" in rep.stats(_info())


def test_progress_lines_off_a_terminal():
    quiet = io.StringIO()
    rep = ProgressReporter(quiet, tty=False, every=3600)
    for _ in range(50):
        rep(_info())
    assert quiet.getvalue() == ""  # throttled: nothing before `every` seconds
    buf = io.StringIO()
    rep = ProgressReporter(buf, tty=False, every=0)
    rep(_info())
    rep(_info("committing"))
    rep(_info("done"))
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2 and "committing" in lines[1]
    assert "\r" not in buf.getvalue() and "pages/s" in lines[0] and "50.0% of" in lines[0]


def test_summary_fits_one_screen(sample_index):
    m = json.loads((sample_index / "manifest.json").read_text())
    text = summary(m, str(sample_index))
    assert len(text.splitlines()) <= 20
    for needle in ("106", "redirects", "aliases", "MB/s", "index size", "passages"):
        assert needle in text


def test_index_writer_failure_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, capsys):
    import index_builder.build as build

    target = tmp_path / "idx"
    build_index(demo_dump_path(), target)

    def killed(row, aliases=()):
        raise ValueError("An error occurred in a thread: 'An index writer was killed.'")

    monkeypatch.setattr(build, "_doc", killed)
    rc = main(["build-index", str(demo_dump_path()), "--out", str(target), "--force"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "index writer was killed" in err
    assert "writing the index" in err or "no space left" in err
    assert _visible(tmp_path) == ["idx"]
    assert BM25Retriever.open(target).search("Reykjavík", 1)[0].title == "Reykjavík"


def test_a_quick_task_writes_no_progress_line_off_a_terminal():
    """A log gets a line per tenth of a long task; a task done in under `quiet_s` writes
    none, so a refused bundle's error is the only line said."""
    from index_builder.progress import TaskProgress

    plain = io.StringIO()
    lines = TaskProgress("verify", plain, tty=False)
    for done in range(0, 1_000_001, 50_000):
        lines(done, 1_000_000)
    assert plain.getvalue() == ""


def test_task_progress_bar_and_plain_lines():
    from index_builder.progress import TaskProgress

    buf = io.StringIO()
    bar = TaskProgress("bundle", buf, tty=True)
    for done in range(0, 1_000_001, 250_000):
        bar(done, 1_000_000)
    assert "━" in buf.getvalue()
    assert "1.0 / 1.0 MB (100%)" in buf.getvalue()
    plain = io.StringIO()
    lines = TaskProgress("bundle", plain, tty=False, quiet_s=0)
    for done in range(0, 1_000_001, 50_000):
        lines(done, 1_000_000)
    out = plain.getvalue().splitlines()
    assert len(out) == 10  # one per tenth, none for 0%
    assert out[-1].startswith("bundle: 1.0 / 1.0 MB (100%)")
    assert "\r" not in plain.getvalue()
