"""Article HTML from a Kiwix ZIM (mwoffliner's layout) → (section, plain text) pairs.

The same shape `wikitext.clean_article` gives for a dump, so passages, sections and the index
come out alike whichever source a user has. What it keeps: paragraphs, list items, quotes
and definition lists, under the nearest `<h2>`/`<h3>`/`<h4>` heading (the lead, before any
heading or in mwoffliner's `<section data-mw-section-id="0">`, is the section ""). What it
drops, as the wikitext cleaner drops templates, tables and `<ref>`s: scripts and styles,
navigation (`<nav>`, navboxes, role=navigation), infoboxes and other tables, reference
markers and lists, tables of contents, hatnotes, figures, edit links, and whole "See
also"/"References"/"External links"-style sections. The `<h1>` title is not text.

`html.parser` is the standard library's tolerant tokenizer: broken markup (an unclosed
`<p>`, a stray end tag) never raises; end tags close the nearest matching open element.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

SKIP_TAGS = frozenset(
    {"script", "style", "nav", "table", "sup", "figure", "noscript", "template", "math",
     "audio", "video", "head", "button", "svg", "title"}
)  # fmt: skip
SKIP_CLASSES = frozenset(
    {"navbox", "vertical-navbox", "infobox", "sidebar", "reflist", "references", "reference",
     "mw-references-wrap", "toc", "hatnote", "thumb", "metadata", "ambox", "mbox-small",
     "noprint", "mw-editsection", "catlinks", "portal", "shortdescription",
     "navigation-not-searchable", "mw-empty-elt", "gallery", "mw-cite-backlink", "refbegin",
     "thumbcaption"}
)  # fmt: skip
SKIP_IDS = frozenset({"toc", "references", "catlinks", "mw-navigation", "footer"})
DROP_SECTIONS = frozenset(
    {"see also", "references", "external links", "further reading", "notes", "bibliography",
     "sources", "citations", "footnotes", "works cited", "notes and references",
     "references and notes", "explanatory notes", "general references", "related pages"}
)  # fmt: skip
HEADINGS = frozenset({"h2", "h3", "h4", "h5", "h6"})
BLOCKS = frozenset(
    {"p", "li", "div", "br", "dd", "dt", "blockquote", "section", "ul", "ol", "dl", "pre",
     "summary", "details", "h1", "h2", "h3", "h4", "h5", "h6", "caption", "tr"}
)  # fmt: skip
VOID = frozenset(
    {"br", "img", "meta", "link", "hr", "input", "wbr", "source", "area", "base", "col",
     "embed", "param", "track"}
)  # fmt: skip
_PUNCT = re.compile(r"\s+([,.;:!?)])")
_OPEN = re.compile(r"([(])\s+")


class _Sections(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []  # (tag, skipping below it)
        self.skip_depth = 0  # open elements whose content is dropped
        self.heading: list[str] | None = None  # text of an open heading
        self.heading_level = 0
        self.section = ""
        self.dropped_level = 0  # >0: inside a dropped section begun by an h<level>
        self.in_h1 = False
        self.lines: list[str] = []
        self.line: list[str] = []
        self.out: list[tuple[str, str]] = []

    # ---- tags ----------------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:
            self._break()
        if tag in VOID:
            return
        skip = tag in SKIP_TAGS or _skipped_by_attrs(attrs)
        self.stack.append((tag, skip))
        if skip:
            self.skip_depth += 1
        elif self.skip_depth == 0 and tag in HEADINGS:
            self.heading = []
            self.heading_level = int(tag[1])
        elif tag == "h1":
            self.in_h1 = True

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in BLOCKS:
            self._break()

    def handle_endtag(self, tag: str) -> None:
        if not any(t == tag for t, _ in self.stack):
            return  # a stray end tag
        while self.stack:
            t, skip = self.stack.pop()
            if skip:
                self.skip_depth -= 1
            if t in HEADINGS and self.heading is not None and not skip:
                self._end_heading()
            if t == "h1":
                self.in_h1 = False
            if t == tag:
                break
        if tag in BLOCKS:
            self._break()

    def handle_data(self, data: str) -> None:
        if self.skip_depth or self.in_h1:
            return
        if self.heading is not None:
            self.heading.append(data)
        elif not self.dropped_level:
            self.line.append(data)

    # ---- structure -------------------------------------------------------------------------

    def _end_heading(self) -> None:
        name = " ".join("".join(self.heading or []).split())
        level = self.heading_level
        self.heading = None
        if self.dropped_level and level > self.dropped_level:
            return  # a subsection of a dropped section
        self._flush_section()
        self.dropped_level = level if name.lower() in DROP_SECTIONS else 0
        self.section = name

    def _break(self) -> None:
        if not self.line:
            return
        text = " ".join("".join(self.line).split())
        self.line = []
        if text:
            text = _OPEN.sub(r"\1", _PUNCT.sub(r"\1", text))
            self.lines.append(text)

    def _flush_section(self) -> None:
        self._break()
        if self.lines and not self.dropped_level:
            self.out.append((self.section, "\n".join(self.lines)))
        self.lines = []

    def result(self) -> list[tuple[str, str]]:
        self.close()
        self._flush_section()
        return self.out


def _skipped_by_attrs(attrs: list[tuple[str, str | None]]) -> bool:
    for name, value in attrs:
        if not value:
            continue
        if name == "class" and not SKIP_CLASSES.isdisjoint(value.split()):
            return True
        if name == "id" and value in SKIP_IDS:
            return True
        if name == "role" and value == "navigation":
            return True
        if name == "style" and "display:none" in value.replace(" ", ""):
            return True
    return False


def html_sections(html: str) -> list[tuple[str, str]]:
    """(section name, plain text) pairs in document order; the lead section is named ""."""
    parser = _Sections()
    parser.feed(html)
    return parser.result()


_DAB_LEAD = re.compile(r"\bmay (?:also )?refer to\b|\bcan (?:also )?refer to\b", re.I)
_DAB_TITLE = re.compile(r"\((?:disambiguation)\)\s*$", re.I)


def is_disambiguation(title: str, sections: list[tuple[str, str]]) -> bool:
    """A disambiguation page, by title or by a lead that is a "may refer to:" line."""
    if _DAB_TITLE.search(title):
        return True
    lead = sections[0][1] if sections and sections[0][0] == "" else ""
    first = lead.split("\n", 1)[0]
    return len(first) < 300 and first.rstrip().endswith(":") and bool(_DAB_LEAD.search(first))
