"""Article HTML from a Kiwix ZIM (mwoffliner's layout) → (section, plain text) pairs.

The same shape `wikitext.clean_article` gives for a dump, so passages, sections and the index
come out alike whichever source a user has. What it keeps: paragraphs, list items, quotes
and definition lists, under the nearest `<h2>`/`<h3>`/`<h4>` heading (the lead, before any
heading or in mwoffliner's `<section data-mw-section-id="0">`, is the section ""). What it
drops, as the wikitext cleaner drops templates, tables and `<ref>`s: scripts and styles,
navigation (`<nav>`, navboxes, role=navigation), infoboxes and other tables, reference
markers and lists, tables of contents, hatnotes, figures, edit links, and whole "See
also"/"References"/"External links"-style sections. The `<h1>` title is not text.

The tokenizer is one regular expression over tags, comments and text (the standard
library's `html.parser` was 2-3x slower on tag-heavy pages), and it is tolerant: broken
markup (an unclosed `<p>`, a stray end tag, a `<` in text) never raises; an end tag closes
the nearest matching open element; script and style bodies are skipped whole.
"""

from __future__ import annotations

import html
import re

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
_TOKEN = re.compile(
    r"<(/?)([a-zA-Z][a-zA-Z0-9]*)((?:[^>\"']|\"[^\"]*\"|'[^']*')*)>|<!--.*?(?:-->|$)|<[!?][^>]*>",
    re.S,
)
_ATTR = re.compile(r"""\b(class|id|role|style)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""", re.I)
RAW_TEXT = {t: re.compile(rf"</{t}\s*>", re.I) for t in ("script", "style")}  # body skipped
_PUNCT = re.compile(r"\s+([,.;:!?)])")
_OPEN = re.compile(r"([(])\s+")


class _Sections:
    def __init__(self) -> None:
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

    # ---- tokens --------------------------------------------------------------------------

    def feed(self, doc: str) -> None:
        pos = 0
        n = len(doc)
        while pos < n:
            m = _TOKEN.search(doc, pos)
            if m is None:
                self.handle_data(doc[pos:])
                return
            if m.start() > pos:
                self.handle_data(doc[pos : m.start()])
            pos = m.end()
            tag = m.group(2)
            if tag is None:
                continue  # a comment, doctype or processing instruction
            tag = tag.lower()
            attrs = m.group(3)
            if m.group(1):
                self.handle_endtag(tag)
            elif attrs.endswith("/") or tag in VOID:
                self.handle_startendtag(tag)
            elif tag in RAW_TEXT:
                close = RAW_TEXT[tag].search(doc, pos)
                pos = n if close is None else close.end()
            else:
                self.handle_starttag(tag, attrs)

    def handle_starttag(self, tag: str, attrs: str) -> None:
        if tag in BLOCKS:
            self._break()
        skip = tag in SKIP_TAGS or _skipped_by_attrs(attrs)
        self.stack.append((tag, skip))
        if skip:
            self.skip_depth += 1
        elif self.skip_depth == 0 and tag in HEADINGS:
            self.heading = []
            self.heading_level = int(tag[1])
        elif tag == "h1":
            self.in_h1 = True

    def handle_startendtag(self, tag: str) -> None:
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
        if "&" in data:
            data = html.unescape(data)
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
        if self.heading is not None:  # a heading the page never closed
            self._end_heading()
        self._flush_section()
        return self.out


def _skipped_by_attrs(attrs: str) -> bool:
    if not attrs or "=" not in attrs:
        return False
    for m in _ATTR.finditer(attrs):
        name = m.group(1).lower()
        value = m.group(2) or m.group(3) or m.group(4) or ""
        if name == "class" and not SKIP_CLASSES.isdisjoint(value.split()):
            return True
        if name == "id" and value in SKIP_IDS:
            return True
        if name == "role" and value == "navigation":
            return True
        if name == "style" and "display:none" in value.replace(" ", ""):
            return True
    return False


def html_sections(doc: str) -> list[tuple[str, str]]:
    """(section name, plain text) pairs in document order; the lead section is named ""."""
    parser = _Sections()
    parser.feed(doc)
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
