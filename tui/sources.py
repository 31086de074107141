"""Sources a reader can follow: `Title › Section` labels, Wikipedia URLs, whole articles.

A passage id (`305-12`) means nothing to a reader; the label names the article and its
section, the URL points at the article for use when online, and the article view rebuilds
the whole article offline from its passages in index order.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from scim_edge.types import Passage
from scim_edge.wording import source_label

MAX_ARTICLE_PASSAGES = 2000  # a guard: no real article has this many 100-word passages
MAX_GAP = 3  # ids a rebuilt article may skip (a passage the builder dropped) before it ends


def wiki_url(title: str, section: str = "", lang: str = "en") -> str:
    """The article's Wikipedia URL (and the section's anchor), for use when online."""
    lang = (lang or "en").split("-")[0].lower() or "en"
    page = quote(title.replace(" ", "_"), safe="_()',-.:!")
    url = f"https://{lang}.wikipedia.org/wiki/{page}"
    if section:
        url += "#" + quote(section.replace(" ", "_"), safe="_()',-.:!")
    return url


def index_lang(engine: Any) -> str:
    """The dump's language code from the open index's manifest ('en' when unknown)."""
    manifest = getattr(getattr(engine, "retriever", None), "manifest", None) or {}
    source = manifest.get("source") if isinstance(manifest, dict) else None
    lang = source.get("lang") if isinstance(source, dict) else None
    return str(lang or "en")


def page_of(doc_id: str) -> tuple[str, int] | None:
    """(page id, passage number) of a passage id `<page_id>-<n>`."""
    page, _, n = doc_id.rpartition("-")
    if not page or not n.isdigit():
        return None
    return page, int(n)


def article_passages(retriever: Any, doc_id: str) -> list[Passage]:
    """Every passage of `doc_id`'s article, in order, read back from the index."""
    where = page_of(doc_id)
    if where is None or retriever is None:
        return []
    page, _ = where
    out: list[Passage] = []
    misses = 0
    for n in range(MAX_ARTICLE_PASSAGES):
        p = retriever.get(f"{page}-{n}")
        if p is None:
            misses += 1
            if misses > MAX_GAP:
                break
            continue
        misses = 0
        out.append(p)
    return out


def citation_line(c: dict[str, str], lang: str = "en") -> str:
    """`Title › Section (URL)` for a citation or support entry."""
    title, section = c.get("title", ""), c.get("section", "")
    return f"{source_label(title, section)} ({wiki_url(title, section, lang)})"
