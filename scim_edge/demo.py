"""The embedded demo: a small dump the project ships, so `scim-edge demo` runs with
nothing supplied by the user.

`data/demo-wiki.xml` is a MediaWiki export of ten short articles written for the project
in Wikipedia style (a person, a machine, a city, an animal, an invention, an event, ...),
with infoboxes, references, tables, file links, categories and interlanguage links, plus
two redirects and a disambiguation page, so it exercises the same cleaning paths as a real
dump.
"""

from __future__ import annotations

from pathlib import Path

DEMO_INDEX_NAME = "demo"
DEMO_QUERY = "first crewed Moon landing"
DEMO_QUESTION = "Who invented the movable-type printing press in Europe?"


def demo_dump_path() -> Path:
    """The demo dump shipped inside the package."""
    return Path(__file__).resolve().parent / "data" / "demo-wiki.xml"
