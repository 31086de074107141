"""The wikitext cleaner: exact outputs per construct, the fixture dump, and real articles."""

from __future__ import annotations

import bz2
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from index_builder.wikitext import (
    CleanerError,
    clean_article,
    is_disambiguation,
    redirect_target,
)
from tests.conftest import shared_file
from tests.fixtures.make_fixture_dump import PAGES, write_fixture_dump


def lead(wikitext: str) -> str:
    """The text of a page that has no headings ("" when nothing is left)."""
    sections = clean_article(wikitext)
    assert [name for name, _ in sections] in ([], [""])
    return sections[0][1] if sections else ""


# ---- one construct at a time ------------------------------------------------------------

CASES = {
    # templates, nested, multi-line, parser functions, magic words
    "nested templates": ("a {{outer|x={{inner|y}}|z={{a|{{b|{{c}}}}}}}} b", "a b"),
    "infobox": (
        "{{Infobox city\n| name = X\n| pop = {{formatnum:1000}}\n| map = [[File:M.png]]\n}}\n"
        "'''X''' is a city.",
        "X is a city.",
    ),
    "template parameter": ("a {{{1|default}}} b {{{{{x}}}}} c", "a b c"),
    "parser function": ("a {{#if: {{{x|}}} | yes | no }} b", "a b"),
    "magic words": ("__NOTOC__\n{{DEFAULTSORT:X, Y}}\n{{PAGENAME}} text __TOC__", "text"),
    "citation templates": (
        "Fact.{{cite web |url=http://x.org |title=[[T]]}}{{citation needed|date=May 2020}}",
        "Fact.",
    ),
    # references
    "paired ref": ("Fact.<ref>Source {{cite book|title=B}} p. 4</ref> Next.", "Fact. Next."),
    "named refs": ('A<ref name="a">x</ref> B<ref name=a/> C<ref name="b" /> D', "A B C D"),
    "ref with attributes and case": ('A<REF group=n name="z">x</Ref> B', "A B"),
    "references tag": (
        "Text\n<references/>\n<references>\n<ref name=a>x</ref>\n</references>",
        "Text",
    ),
    # tables
    "table": (
        'Before\n{| class="wikitable"\n|+ Cap\n|-\n! H1 !! H2\n|-\n| a || {{x}}\n|}\nAfter',
        "Before\nAfter",
    ),
    "nested table": ("Before\n{|\n| a\n{|\n| inner\n|}\n| b\n|}\nAfter", "Before\nAfter"),
    "indented table": ("Before\n:{|\n| a\n|}\nAfter", "Before\nAfter"),
    # files, images, categories, interlanguage links
    "file with nested link": (
        "[[File:A.jpg|thumb|left|A [[Caption link|caption]] with [[B]]]]Text",
        "Text",
    ),
    "image": ("x [[Image:B.png|200px]] y", "x y"),
    "bulgarian file prefixes": (
        "[[Файл:Sofia.jpg|мини|Изглед от [[София]]]]\n[[Картинка:A.jpg|мини|[[B]]]]Текст",
        "Текст",
    ),
    "categories": ("Text\n[[Category:Cities]]\n[[Категория:Столици в Европа|С]]", "Text"),
    "visible category link": (
        "See [[:Category:Cities|city list]] and [[:File:A.jpg]].",
        "See city list and File:A.jpg.",
    ),
    "interlanguage links": ("Text\n[[de:Warna]]\n[[bg:Варна]]\n[[zh-min-nan:X]]", "Text"),
    # comments and extension tags
    "comment": ("a<!-- hidden [[x]] {{y}} -->b", "ab"),
    "multi-line comment": ("a\n<!--\nhidden\n-->\nb", "a\nb"),
    "gallery": ("a\n<gallery>\nFile:A.jpg|[[Caption]]\n</gallery>\nb", "a\nb"),
    "math dropped": ("The area is <math>\\pi r^2</math> here.", "The area is here."),
    "nowiki keeps text": (
        "<nowiki>[[not a link]] {{x}} ''y''</nowiki>",
        "[[not a link]] {{x}} ''y''",
    ),
    "nowiki self-closing": ("[[A]]<nowiki/>s", "As"),
    "source dropped": ('a <syntaxhighlight lang="python">print(1)</syntaxhighlight> b', "a b"),
    # HTML
    "br": ("a<br>b<br />c<BR/>d", "a b c d"),
    "html tags keep text": (
        'H<sub>2</sub>O, <span style="x">text</span> and <small>s</small>',
        "H2O, text and s",
    ),
    "blockquote and poem": ("<blockquote>Quoted</blockquote>\n<poem>Line</poem>", "Quoted\nLine"),
    # links
    "internal links": ("[[A|b]] [[A]] [[A]]s [[A|b]]c", "b A As bc"),
    "link with section and colon": (
        "[[Star Wars: Episode IV|the film]] [[A#History]]",
        "the film A#History",
    ),
    "pipe trick": ("[[Paris (band)|]] and [[Help:Contents|]]", "Paris and Contents"),
    "unicode link trail": ("[[Варна]]та", "Варната"),
    "external links": (
        "[http://x.org anchor text] and [https://y.org/p ''it''] here",
        "anchor text and it here",
    ),
    "bare and unlabelled urls": ("See [http://x.org] or http://z.org/p?q=1 now", "See or now"),
    # inline markup and entities
    "bold and italic": (
        "'''bold''' and ''italic'' and '''''both''''' it's",
        "bold and italic and both it's",
    ),
    "entities": (
        "a&nbsp;b &amp; c&ndash;d &#169; &#x263A; &quot;q&quot; &lt;tag&gt;",
        'a b & c–d © ☺ "q" <tag>',
    ),
    # lists and whitespace
    "lists": (
        "* one\n** two\n# three\n#: three-b\n; term : definition\n: indented",
        "one\ntwo\nthree\nthree-b\nterm\ndefinition\nindented",
    ),
    "whitespace": ("a   b\t c\n\n\n  d  ", "a b c\nd"),
    "horizontal rule": ("a\n----\nb", "a\nb"),
    # allow-listed templates
    "lang": (
        "{{lang|fr|la vie}} {{Lang|de|[[Welt|die Welt]]}} {{lang-bg|Варна}}",
        "la vie die Welt Варна",
    ),
    "convert": ("{{convert|5|km}} {{convert|3|-|4|mi|km}} {{cvt|10|sqmi}}", "5 km 3–4 mi 10 sq mi"),
    "nowrap": ("{{nowrap|New York}} {{nowrap|{{convert|2|m}} tall}}", "New York 2 m tall"),
    "circa": ("{{circa}} 1900, {{c.|1850}}, {{circa|570 BC}}", "c. 1900, c. 1850, c. 570 BC"),
    "numbered arguments": ("{{math|1=E = mc2}} {{lang|fr|1=a=b}}", "E = mc2 a=b"),
    "more kept templates": (
        "{{frac|1|2}} {{as of|2010}} {{nihongo|Tokyo|東京|Tōkyō}} 1990{{ndash}}91 "
        "{{abbr|NATO|North Atlantic Treaty Organization}} {{sortname|John|Smith}}",
        "1/2 As of 2010 Tokyo (東京) 1990–91 NATO John Smith",
    ),
    "science and ship templates": (
        "{{chem|C|''n''|H|2''n''+2}}, {{val|1.00794|u=u}}, {{keypress|Ctrl|C}}, "
        "{{angbr|a}}, {{USS|Hornet|CV-12|6}} and {{OV|099}}",
        "CnH2n+2, 1.00794 u, Ctrl+C, ⟨a⟩, USS Hornet and OV-099",
    ),
    "pre keeps text literally": ("<pre>{{x}} [[y]]</pre>", "{{x}} [[y]]"),
    "kept inside dropped": ("a {{Infobox|x={{lang|fr|gone}}}} b", "a b"),
    "punctuation left by dropped templates": (
        "Albedo ({{IPAc-en|æ|l}}) is X ({{lang-el|Ἀ}}, {{IPA|x}}), Y {{cn}}.",
        "Albedo is X (Ἀ), Y.",
    ),
    # broken markup never swallows the page
    "unclosed template": ("Before {{cite web|url=x\nAfter", "Before\nAfter"),
    "unclosed link": ("a [[b c\nd", "a b c\nd"),
    "stray closers": ("a]] b}} c|}\nd", "a b c|}\nd"),
    "unclosed ref": ("a<ref>b\nc", "ab\nc"),
    "unclosed comment": ("a <!-- b\nc", "a"),
}


@pytest.mark.parametrize("wikitext, expected", CASES.values(), ids=CASES.keys())
def test_construct(wikitext: str, expected: str) -> None:
    assert lead(wikitext) == expected


def test_headings_become_sections() -> None:
    wikitext = (
        "Lead ''text''.\n== History ==\nOld.\n=== The [[Foo|foo]] ''era'' ===\nMore.\n"
        "==Empty==\n{{Main|X}}\n== References ==\n<references/>\n==See also==\n* [[Bar]]\n"
    )
    assert clean_article(wikitext) == [
        ("", "Lead text."),
        ("History", "Old."),
        ("The foo era", "More."),
        ("See also", "Bar"),
    ]


def test_redirect_pages_have_no_text() -> None:
    assert clean_article("#REDIRECT [[Varna]] {{R from move}}") == []
    assert redirect_target("#REDIRECT [[Varna#History|x]]") == "Varna"
    assert redirect_target("#redirect:[[New_York]]") == "New York"
    assert redirect_target("#ПРЕНАСОЧВАНЕ [[София]]") == "София"
    assert redirect_target("Varna is a city.") is None


@pytest.mark.parametrize(
    "wikitext, title, expected",
    [
        ("* [[A]]\n{{disambiguation}}", "A", True),
        ("* [[A]]\n{{Disambiguation|geo|hndis}}", "A", True),
        ("* [[A]]\n{{disambig}}", "A", True),
        ("* [[A]]\n{{dab}}", "A", True),
        ("* [[A]]\n{{hndis|Smith, John}}", "John Smith", True),
        ("* [[A]]\n{{geodis}}", "Aa River", True),
        ("* [[A]]\n{{set index article}}", "Ships named A", True),
        ("* [[A]]\n{{Human name disambiguation}}", "A", True),
        ("* [[A]]\n{{Letter-NumberCombDisambig}}", "A1", True),
        ("* [[A]]\n{{Surname}}", "Smith", True),
        ("* [[A]]\n{{Пояснение}}", "Меркурий", True),
        ("* [[A]]", "Mercury (disambiguation)", True),
        ("A city.{{disambiguation needed|date=May 2020}}", "Varna", False),
        ("A city. {{About|the city|the film|Varna (film)}}", "Varna", False),
        ("Asia is a continent. {{Asia}}", "Asia", False),
    ],
)
def test_is_disambiguation(wikitext: str, title: str, expected: bool) -> None:
    assert is_disambiguation(wikitext, title) is expected


def test_non_text_page_raises_cleaner_error() -> None:
    with pytest.raises(CleanerError):
        clean_article(None)  # type: ignore[arg-type]
    with pytest.raises(CleanerError):
        clean_article(b"bytes")  # type: ignore[arg-type]


# ---- the fixture dump the project writes ---------------------------------------------------

VARNA_EXPECTED = [
    (
        "",
        "Varna (Варна) is the third-largest city in Bulgaria and the largest city and seaside "
        "resort on the Bulgarian Black Sea Coast. It lies 470 km north-east of Sofia. Known as "
        "Odessos in antiquity, the city was founded c. 570 BC by Greek colonists from Miletus.\n"
        'Varna is called the "sea capital" of Bulgaria – a title it shares with Burgas & its '
        "port.",
    ),
    (
        "History",
        "The Varna Necropolis (c. 4500 BC) holds the world's oldest gold treasure. The Café "
        "Théâtre and the 東京 (Tokyo) sister-city office stand on Knyaz Boris I Boulevards.\n"
        "First Bulgarian Empire, from 681\n"
        "Ottoman rule, 1389–1878\n"
        "The city was renamed Stalin in 1949.\n"
        "Climate\n"
        "humid subtropical with sea breezes",
    ),
    ("Population", "The population is about 335,000, measured in 5 km bands."),
    ("External links", "Official website"),
]


def read_dump(path: Path) -> list[dict]:
    """Pages of a MediaWiki dump (.xml or .xml.bz2), read with the standard library only."""
    opener = bz2.open if path.suffix == ".bz2" else open
    pages = []
    with opener(path, "rb") as f:
        for _, el in ET.iterparse(f):
            if el.tag.rsplit("}", 1)[-1] != "page":
                continue
            revision_text = el.find("{*}revision/{*}text")
            pages.append(
                {
                    "title": el.findtext("{*}title"),
                    "ns": int(el.findtext("{*}ns")),
                    "redirect": el.find("{*}redirect") is not None,
                    "text": (revision_text.text if revision_text is not None else None) or "",
                }
            )
            el.clear()
    return pages


@pytest.fixture(scope="module")
def fixture_pages(tmp_path_factory) -> dict[str, dict]:
    path = write_fixture_dump(tmp_path_factory.mktemp("dump") / "fixture.xml.bz2")
    return {p["title"]: p for p in read_dump(path)}


def test_fixture_dump_roundtrips(fixture_pages, tmp_path) -> None:
    assert set(fixture_pages) == {p.title for p in PAGES}
    for page in PAGES:
        assert fixture_pages[page.title]["text"] == page.text
    utf16 = write_fixture_dump(tmp_path / "fixture16.xml", encoding="utf-16")
    assert utf16.read_bytes()[:2] in (b"\xff\xfe", b"\xfe\xff")
    assert [p["title"] for p in read_dump(utf16)] == [p.title for p in PAGES]


def test_fixture_article(fixture_pages) -> None:
    assert clean_article(fixture_pages["Varna"]["text"]) == VARNA_EXPECTED


def test_fixture_bulgarian_article(fixture_pages) -> None:
    assert clean_article(fixture_pages["София"]["text"]) == [
        (
            "",
            "София е столицата на България. Градът е разположен в Софийската котловина, в "
            "подножието на Витоша.",
        ),
        ("История", "Древното име на града е Сердика – по името на тракийското племе серди."),
    ]


def test_fixture_redirect_and_disambiguation(fixture_pages) -> None:
    redirect = fixture_pages["Sea capital"]
    assert redirect["redirect"]
    assert redirect_target(redirect["text"]) == "Varna"
    assert clean_article(redirect["text"]) == []
    dab = fixture_pages["Mercury (disambiguation)"]
    assert is_disambiguation(dab["text"], "Mercury")
    assert not is_disambiguation(fixture_pages["Varna"]["text"], "Varna")
    assert clean_article(dab["text"])[0][1].splitlines()[1] == (
        "Mercury (planet), the planet nearest the Sun"
    )


# ---- real articles --------------------------------------------------------------------------

LEFTOVERS = re.compile(r"\{\{|\}\}|\[\[|\]\]|\{\||\|\}|<ref|</ref|&amp;|&nbsp;|&[a-z]+;|'''")


def real_articles(name: str) -> list[dict]:
    pages = read_dump(shared_file(name))
    return [p for p in pages if p["ns"] == 0 and not p["redirect"]]


@pytest.fixture(scope="module")
def enwiki() -> dict[str, list[tuple[str, str]]]:
    return {p["title"]: clean_article(p["text"]) for p in real_articles("enwiki-sample.xml.bz2")}


def assert_clean(title: str, sections: list[tuple[str, str]]) -> None:
    assert sections, f"{title}: no text"
    for name, text in sections:
        assert text, f"{title}: empty section {name!r}"
        for part in (name, text):
            leftover = LEFTOVERS.search(part)
            context = part[max(0, leftover.start() - 60) : leftover.end() + 60] if leftover else ""
            assert leftover is None, f"{title} / {name!r}: markup left: {context!r}"


def test_enwiki_sample_is_clean(enwiki) -> None:
    assert len(enwiki) == 106
    for title, sections in enwiki.items():
        assert_clean(title, sections)


def test_enwiki_sample_sections(enwiki) -> None:
    names = [name for name, _ in enwiki["Anarchism"]]
    assert names[0] == ""
    assert {"Origins", "Anarchist schools of thought", "Criticisms"} <= set(names)
    assert "History" not in names  # only a {{Main}} hatnote under it: omitted
    assert [name for name, _ in enwiki["Albedo"]][:3] == [
        "",
        "Terrestrial albedo",
        "White-sky and black-sky albedo",
    ]
    lead_text = enwiki["Albedo"][0][1]
    assert lead_text.startswith("Albedo or reflection coefficient, derived from Latin albedo")
    # the infobox of "Alabama" is gone, its first prose sentence opens the article
    assert enwiki["Alabama"][0][1].startswith("Alabama is a state located in the southeastern")


def test_enwiki_sample_keeps_the_evidence_of_qa_dev(enwiki, qa_dev) -> None:
    """Every verbatim evidence snippet of qa-dev survives cleaning in its gold article."""
    checked = 0
    for q in qa_dev:
        if not q["evidence"]:
            continue
        text = " ".join(
            " ".join(t for _, t in enwiki[title]).replace("\n", " ")
            for title in q["titles"]
            if title in enwiki
        )
        assert " ".join(q["evidence"].split()) in text, (q["id"], q["evidence"])
        checked += 1
    assert checked >= 30


def test_enwiki_tables_are_dropped() -> None:
    pages = real_articles("enwiki-tables.xml.bz2")
    assert len(pages) == 5
    for page in pages:
        assert "{|" in page["text"]
        sections = clean_article(page["text"])
        assert_clean(page["title"], sections)
        text = "\n".join(t for _, t in sections)
        assert "wikitable" not in text and "colspan" not in text and "rowspan" not in text


def test_bgwiki_sample_utf16() -> None:
    raw = bz2.open(shared_file("bgwiki-sample.xml.bz2")).read(2)
    assert raw in (b"\xff\xfe", b"\xfe\xff")  # the sample really is UTF-16
    pages = read_dump(shared_file("bgwiki-sample.xml.bz2"))
    articles = [p for p in pages if p["ns"] == 0 and not p["redirect"]]
    assert [p["title"] for p in articles] == ["Григориански календар"]
    sections = clean_article(articles[0]["text"])
    assert_clean(articles[0]["title"], sections)
    assert sections[0][1].startswith("Григорианският календар")
    assert "Описание" in [name for name, _ in sections]
    for page in pages:  # messy project pages (signatures, <nowiki> examples) clean too
        sections = clean_article(page["text"])
        assert sections and all(text for _, text in sections)
        assert not any(LEFTOVERS.search(name) for name, _ in sections)
