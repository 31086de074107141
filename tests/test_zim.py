"""Kiwix ZIM files as a build source: every article indexed, redirects as aliases, HTML
sections as passage sections, page furniture stripped, metadata in the manifest, and each
way a ZIM can be bad is one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from index_builder import checkpoint as CK
from index_builder.build import build_index
from index_builder.zim_html import html_sections, is_disambiguation
from scim_edge.cli import main
from scim_edge.retrieval import BM25Retriever
from tests.conftest import ROOT, shared_file
from tests.test_resume import index_digest, interrupt_after, one_error_line

MAKE_ZIM = ROOT.parent / "shared" / "tools" / "make_zim.py"

MWOFFLINER_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>{title}</title>
<style>.x{{color:red}}</style><script>var x = "script text";</script></head>
<body class="mw-body"><h1 class="article-header">{title}</h1>
<div id="mw-content-text">
<section data-mw-section-id="0">
<div role="note" class="hatnote">For other uses, see Hatnote text.</div>
<table class="infobox"><tr><th>Infobox label</th><td>Infobox value</td></tr></table>
<p><b>{title}</b> is a bright lead paragraph<sup class="reference"><a>[1]</a></sup> about
the test subject, with a <a href="X">link</a>.</p>
<div id="toc" class="toc"><h2>Contents</h2><ul><li>Toc entry</li></ul></div>
</section>
<section data-mw-section-id="1"><h2 id="History">History<span class="mw-editsection">edit
</span></h2><p>History paragraph of {title} on rivers and mountains.</p>
<h3>Early years</h3><p>Early years paragraph in the valley.</p>
<div class="navbox" role="navigation">Navbox text</div>
<figure><img src="a.png"/><figcaption>Figure caption text</figcaption></figure>
<ul><li>A list item that stays.</li></ul></section>
<section data-mw-section-id="2"><h2>See also</h2><ul><li>See also entry</li></ul>
<h3>Sub of see also</h3><p>Dropped subsection text.</p></section>
<section data-mw-section-id="3"><h2>References</h2><ol class="references">
<li>Reference text</li></ol></section>
<section data-mw-section-id="4"><h2>Legacy</h2><p>Legacy paragraph.</p></section>
</div></body></html>"""


def write_zim(path: Path, articles: dict[str, str], redirects: dict[str, str],
              *, css: bool = True, metadata: bool = True) -> Path:  # fmt: skip
    """A ZIM in mwoffliner's layout, written with libzim's own writer."""
    writer = pytest.importorskip("libzim.writer")

    class Page(writer.Item):
        def __init__(self, p: str, title: str, mime: str, body: str) -> None:
            super().__init__()
            self.p, self.t, self.m, self.b = p, title, mime, body

        def get_path(self) -> str:
            return self.p

        def get_title(self) -> str:
            return self.t

        def get_mimetype(self) -> str:
            return self.m

        def get_contentprovider(self):
            return writer.StringProvider(self.b)

        def get_hints(self) -> dict:
            return {writer.Hint.FRONT_ARTICLE: self.m == "text/html"}

    with writer.Creator(str(path)).config_indexing(False, "eng") as c:
        for title, html in articles.items():
            c.add_item(Page("A/" + title.replace(" ", "_"), title, "text/html", html))
        for alias, target in redirects.items():
            c.add_redirection(
                "A/" + alias.replace(" ", "_"), alias, "A/" + target.replace(" ", "_"), {}
            )
        if css:
            c.add_item(Page("-/style.css", "", "text/css", "body{margin:0}"))
        if metadata:
            for key, value in (("Title", "Test wiki"), ("Language", "eng"),
                               ("Date", "2026-11-30"), ("Name", "test_wiki_en")):  # fmt: skip
                c.add_metadata(key, value)
    return path


@pytest.fixture(scope="module")
def small_zim(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("zim")
    titles = ["Amazon River", "Mount Kenya", "Lake Baikal"]
    articles = {t: MWOFFLINER_PAGE.format(title=t) for t in titles}
    articles["Kenya (disambiguation)"] = (
        "<html><body><h1>Kenya (disambiguation)</h1><section data-mw-section-id='0'>"
        "<p>Kenya may refer to:</p><ul><li>Kenya, a country</li></ul></section></body></html>"
    )
    return write_zim(d / "small.zim", articles, {"Amazonas river": "Amazon River",
                                                 "Baikal": "Lake Baikal",
                                                 "Rio Amazonas": "Amazonas river"})  # fmt: skip


@pytest.fixture(scope="module")
def vital_zim(tmp_path_factory) -> Path:
    pytest.importorskip("libzim")
    if not MAKE_ZIM.exists():
        pytest.skip(f"ZIM generator not present: {MAKE_ZIM}")
    src = shared_file("vital-en.xml.bz2")
    out = tmp_path_factory.mktemp("vital") / "vital.zim"
    subprocess.run([sys.executable, str(MAKE_ZIM), str(src), "-o", str(out)], check=True,
                   capture_output=True)  # fmt: skip
    return out


@pytest.fixture(scope="module")
def vital_index(vital_zim, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vidx") / "vital"
    build_index(vital_zim, out, workers=2)
    return out


# ---- the HTML cleaner ----------------------------------------------------------------------


def test_html_sections_keep_prose_under_headings_and_drop_furniture():
    secs = html_sections(MWOFFLINER_PAGE.format(title="Amazon River"))
    assert [name for name, _ in secs] == ["", "History", "Early years", "Legacy"]
    text = "\n".join(t for _, t in secs)
    assert secs[0][1].startswith("Amazon River is a bright lead paragraph about the test")
    assert "A list item that stays." in secs[2][1]
    for gone in ("Infobox", "Hatnote", "Toc entry", "Contents", "[1]", "Navbox",
                 "caption", "See also entry", "Dropped subsection", "Reference text",
                 "script text", "color:red", "edit"):  # fmt: skip
        assert gone not in text, gone


def test_broken_html_never_raises():
    assert html_sections("<p>unclosed <b>bold</i> text</div></span><h2>Tail") == [
        ("", "unclosed bold text")
    ]
    assert html_sections("") == []
    assert html_sections("<P CLASS='x'>a &lt; b &amp; c</P><SCRIPT>if (a<b) {}</SCRIPT>d") == [
        ("", "a < b & c\nd")
    ]
    assert html_sections("<p>x <!-- never closed <p>y") == [("", "x")]
    assert html_sections('<p title="a>b">kept</p><script>no end') == [("", "kept")]
    assert html_sections("<p>1 < 2 and 3 > 2</p>") == [("", "1 < 2 and 3 > 2")]
    assert html_sections("<h2>Open heading<p>text") == []  # a heading with no end tag


def test_disambiguation_by_title_or_lead():
    assert is_disambiguation("Kenya (disambiguation)", [("", "x")])
    assert is_disambiguation("Mercury", [("", "Mercury may refer to:\nMercury, a planet")])
    assert not is_disambiguation("Mercury (planet)", [("", "Mercury is the first planet.")])


# ---- building from a ZIM -------------------------------------------------------------------


def test_small_zim_build(small_zim, tmp_path):
    m = build_index(small_zim, tmp_path / "idx", workers=1)
    c = m["counts"]
    assert c["articles"] == 4 and c["redirects"] == 3
    assert c["aliases"] == 3 and c["aliased_articles"] == 2  # a chain ends at its article
    assert c["other_namespaces"] == 1  # the stylesheet
    assert c["disambiguation"] == 1
    assert m["source"]["zim"] == {"Title": "Test wiki", "Language": "eng",
                                  "Date": "2026-11-30", "Name": "test_wiki_en"}  # fmt: skip
    assert m["source"]["compression"] == "zim" and m["analyzer"] == "stem_english"
    r = BM25Retriever.open(tmp_path / "idx")
    lead = r.search("Amazonas river", 1)[0]
    assert lead.title == "Amazon River" and lead.section == ""
    assert {"Amazonas river", "Rio Amazonas"} <= set(r.aliases(lead.page_id))
    hit = r.search("Early years valley", 1)[0]
    assert (hit.title, hit.section) in {(t, "Early years") for t in
                                        ("Amazon River", "Mount Kenya", "Lake Baikal")}  # fmt: skip
    assert r.search("Navbox Infobox Hatnote figcaption", 5) == []


def test_every_vital_article_is_indexed(vital_zim, vital_index):
    import libzim.reader

    archive = libzim.reader.Archive(str(vital_zim))
    m = json.loads((vital_index / "manifest.json").read_text())
    assert m["counts"]["articles"] == archive.article_count == 10_033
    assert m["counts"]["skipped"] == 0
    assert m["source"]["zim"]["Title"] == "Wikipedia sample"
    assert m["source"]["zim"]["Language"] == "eng" and m["source"]["lang"] == "en"
    r = BM25Retriever.open(vital_index)
    leads = {r.get(f"{i + 1}-0").title for i in range(archive.entry_count)}
    titles = {archive._get_entry_by_id(i).title for i in range(archive.entry_count)}
    assert leads == titles


EXACT_TITLES = [
    "Albert Einstein", "Photosynthesis", "Mount Everest", "World War II",
    "Ludwig van Beethoven", "Amazon River", "Black hole", "Printing press",
    "Roman Empire", "Periodic table", "Leonardo da Vinci", "Great Wall of China",
    "Cell (biology)", "İzmir", "Animal",
]  # fmt: skip


def test_exact_title_search_ranks_that_article_first(vital_index):
    r = BM25Retriever.open(vital_index)
    for title in EXACT_TITLES:
        assert r.search(title, 1)[0].title == title, title


def test_zim_ranks_titles_as_the_same_prose_as_a_dump_does(vital_zim, vital_index, tmp_path):
    """The ZIM source loses nothing against the dump it was made from: an exact-title search
    finds the article first for the very same titles, and that is every title."""
    import libzim.reader

    dump_index = tmp_path / "dump"
    build_index(shared_file("vital-en.xml.bz2"), dump_index, workers=2)
    archive = libzim.reader.Archive(str(vital_zim))
    titles = [archive._get_entry_by_id(i).title for i in range(0, archive.entry_count, 7)]
    firsts = []
    for path in (vital_index, dump_index):
        r = BM25Retriever.open(path)
        firsts.append({t for t in titles if r.search(t, 1)[0].title == t})
    assert firsts[0] == firsts[1]
    assert firsts[0] == set(titles)


def test_zim_build_resumes_after_ctrl_c(vital_zim, vital_index, tmp_path):
    out = tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        build_index(vital_zim, out, workers=2, checkpoint_seconds=0, progress=interrupt_after(3))
    ck = CK.Checkpoint.load(CK.partial_dir(out))
    assert ck is not None and ck.position["kind"] == "entries" and ck.position["entry"] > 0
    build_index(vital_zim, out, workers=2, resume=True)
    assert index_digest(out) == index_digest(vital_index)


# ---- bad ZIM files -------------------------------------------------------------------------


def _cli_error(args: list[str], capsys) -> str:
    assert main(args) == 2
    return one_error_line(capsys.readouterr().err)


def test_wrong_magic_number(tmp_path, capsys):
    bad = tmp_path / "wiki.zim"
    bad.write_bytes(b"PK\x03\x04" + b"\0" * 200)
    line = _cli_error(["build-index", str(bad), "--out", str(tmp_path / "i")], capsys)
    assert "not a ZIM file" in line and "wrong magic number" in line


def test_truncated_zim(small_zim, tmp_path, capsys):
    cut = tmp_path / "cut.zim"
    cut.write_bytes(small_zim.read_bytes()[: small_zim.stat().st_size // 2])
    line = _cli_error(["build-index", str(cut), "--out", str(tmp_path / "i")], capsys)
    assert line.startswith("scim-edge: error: truncated ZIM file")
    assert f"has {cut.stat().st_size} bytes" in line


def test_zim_cut_inside_its_header(small_zim, tmp_path, capsys):
    cut = tmp_path / "head.zim"
    cut.write_bytes(small_zim.read_bytes()[:40])
    line = _cli_error(["build-index", str(cut), "--out", str(tmp_path / "i")], capsys)
    assert "truncated ZIM file" in line and "header" in line


def test_zim_without_articles(tmp_path, capsys):
    empty = write_zim(tmp_path / "empty.zim", {}, {}, css=True)
    line = _cli_error(["build-index", str(empty), "--out", str(tmp_path / "i")], capsys)
    assert "no articles in" in line and "HTML article" in line
    assert not (tmp_path / "i").exists() and not CK.partial_dir(tmp_path / "i").exists()


def test_missing_libzim_names_the_extra(small_zim, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "libzim", None)
    monkeypatch.setitem(sys.modules, "libzim.reader", None)
    line = _cli_error(["build-index", str(small_zim), "--out", str(tmp_path / "i")], capsys)
    assert "needs libzim" in line and "scim-edge[zim]" in line
