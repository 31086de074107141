"""The Tantivy schema of a passage index, shared by the builder and the retriever.

One document per passage. `title`, `aliases` (redirect titles that point at the article),
`section` and `text` are BM25-searchable with a stemming analyzer chosen from the dump's
language; the retriever boosts them at query time (FIELD_BOOSTS), so boosts can be tuned
without a rebuild. `doc_id` is indexed raw so a passage can be fetched, excluded or replaced
by id.

The analyzer is registered on the index under a name of our own rather than relying on a
built-in one, because the retriever must tokenize queries itself (user text never goes to
the query parser) and so needs the very same pipeline. Registered analyzers are not stored
in the index, so every opener calls `register_analyzer`.
"""

from __future__ import annotations

import tantivy

SCHEMA_VERSION = 1

# field names, read by scim_edge.retrieval
DOC_ID = "doc_id"
PAGE_ID = "page_id"
PASSAGE_NO = "n"
TITLE = "title"
ALIASES = "aliases"
SECTION = "section"
TEXT = "text"
DISAMBIGUATION = "disambiguation"

SEARCH_FIELDS = (TITLE, ALIASES, SECTION, TEXT)
# Query-time boosts (BM25 scores per field are summed with these weights).
FIELD_BOOSTS = {TITLE: 2.0, ALIASES: 1.5, SECTION: 0.5, TEXT: 1.0}

MAX_TOKEN_CHARS = 40

# ISO 639-1 code of the dump's xml:lang -> Snowball stemmer that Tantivy ships.
STEMMERS = {
    "ar": "arabic", "da": "danish", "nl": "dutch", "en": "english", "fi": "finnish",
    "fr": "french", "de": "german", "el": "greek", "hu": "hungarian", "it": "italian",
    "no": "norwegian", "nb": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish",
}  # fmt: skip


def analyzer_name(lang: str | None) -> str:
    """`stem_<language>` when Tantivy has a stemmer for the dump's language, else `plain`."""
    stemmer = STEMMERS.get((lang or "en").split("-")[0].lower())
    return f"stem_{stemmer}" if stemmer else "plain"


def text_analyzer(name: str) -> tantivy.TextAnalyzer:
    """The analyzer called `name`: Unicode word split, drop over-long tokens, lowercase,
    then the language's stemmer (none for `plain`)."""
    b = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS))
        .filter(tantivy.Filter.lowercase())
    )
    if name.startswith("stem_"):
        b = b.filter(tantivy.Filter.stemmer(name[len("stem_") :]))
    elif name != "plain":
        raise ValueError(f"unknown analyzer {name!r}")
    return b.build()


def register_analyzer(index: tantivy.Index, name: str) -> None:
    index.register_tokenizer(name, text_analyzer(name))


def build_schema(analyzer: str) -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field(DOC_ID, stored=True, tokenizer_name="raw", index_option="basic")
    b.add_integer_field(PAGE_ID, stored=True, indexed=True, fast=True)
    b.add_integer_field(PASSAGE_NO, stored=True)
    b.add_text_field(TITLE, stored=True, tokenizer_name=analyzer, index_option="position")
    b.add_text_field(ALIASES, stored=True, tokenizer_name=analyzer, index_option="position")
    b.add_text_field(SECTION, stored=True, tokenizer_name=analyzer, index_option="freq")
    b.add_text_field(TEXT, stored=True, tokenizer_name=analyzer, index_option="position")
    b.add_integer_field(DISAMBIGUATION, stored=True, indexed=True, fast=True)
    return b.build()
