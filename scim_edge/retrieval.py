"""BM25 passage retrieval over an index built by `index_builder`.

User text never reaches Tantivy's query parser: the query is run through the index's own
analyzer (the one the builder registered, see `index_builder.schema`), stopwords are dropped,
and a boolean query of term queries is built field by field with the schema's boosts, with
a sloppy phrase query for each pair of neighbouring content words (`proximity`). So
`Who wrote "Animal Farm"?` or `AND OR ( ) : ^ *` are just words.

An index is opened by path once; its segment files stay mapped, so a reader keeps working
while a rebuild swaps a new index in under the same name (the old directory is renamed away
only after the new one is in place). An open that a swap overlaps is redone, so a reader
never gets the manifest of one index with the segments of another.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tantivy

from index_builder import schema as S
from scim_edge import jsonl, lead_names, paths, proximity
from scim_edge.atomic import is_hidden_temp
from scim_edge.errors import IndexError_, UserError
from scim_edge.textutil import STOPWORDS
from scim_edge.types import Passage
from scim_edge.wording import one_line

DEFAULT_NAME = "default"
MANIFEST = "manifest.json"
MAX_QUERY_TERMS = 64
DISAMBIGUATION_WEIGHT = 0.5
DISAMBIGUATION_SLACK = 5
TITLE_POOL = 20  # hits looked at for an exact title match
LEAD_NAME_POOL = 50  # passages with a name looked at for a lead that gives it
LEAD_NAME_CACHE = 4096  # names whose look-up an open retriever remembers
TIE_POOL_GROWTH = 4  # at most this many times the hits, to take in a tie at the cut
# a phrase query of slop s finds the second word up to s + 1 words after the first (and,
# Tantivy's slop being an edit distance, the two swapped up to s - 1 words apart)
PHRASE_SLOP = proximity.WINDOW - 1


def _content_terms(words: list[str], stems: list[str]) -> list[str]:
    """A query's terms from its analyzed words: content words first; all words when the
    query is only stopwords ("The Who")."""
    content = [t for w, t in zip(words, stems, strict=False) if w not in STOPWORDS] or stems
    return list(dict.fromkeys(content))[:MAX_QUERY_TERMS]


def tantivy_failure(e: BaseException) -> BaseException:
    """`e` when it is how Tantivy reports a damaged index: ValueError, OSError or
    RuntimeError for a missing or cut-short file, or a Rust panic (pyo3's PanicException,
    a BaseException) for garbled bytes ("index out of bounds"); anything else (Ctrl+C, an
    error of ours) is raised again as it was."""
    if isinstance(e, UserError):  # ours, already one line (a ConfigError is a ValueError)
        raise e
    if isinstance(e, (ValueError, OSError, RuntimeError)) or type(e).__name__ == "PanicException":
        return e
    raise e


_FILEPATH = re.compile(r'filepath: "([^"]+)"')
_DAMAGE = ("corrupt", "invaliddata", "unexpectedeof", "magic byte")


def _in_words(failure: str) -> str:
    """Tantivy's failure as a person reads it: a file it names and calls damaged or short
    ('IoError { io_error: Custom { kind: InvalidData, … }, filepath: "….store" }') is
    that file, damaged; anything else, its own words on one line."""
    named = _FILEPATH.search(failure)
    low = failure.lower()
    if named and any(word in low for word in _DAMAGE):
        return f"its file {named.group(1)} is damaged or cut short"
    return one_line(failure, 200, at_word=True)


def _weight(doc: tantivy.Document) -> float:
    """Disambiguation pages are lists of links, rarely evidence: their scores count half."""
    return DISAMBIGUATION_WEIGHT if doc.get_first(S.DISAMBIGUATION) else 1.0


def _key(addr: Any) -> tuple[int, int]:
    """A hit's address as a dictionary key (Tantivy's own is not hashable)."""
    return addr.segment_ord, addr.doc


def _passage_order(doc: tantivy.Document) -> tuple[int, int]:
    """(page id, passage number): the order ties are given in, the same for every build."""
    return int(doc.get_first(S.PAGE_ID) or 0), int(doc.get_first(S.PASSAGE_NO) or 0)


def _title_key(text: str) -> str:
    """Lower-cased words only: how a query is compared with a title for an exact match."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


@dataclass(frozen=True)
class IndexInfo:
    name: str
    path: Path
    manifest: dict[str, Any] | None  # None when missing or unreadable

    @property
    def ok(self) -> bool:
        return self.manifest is not None


_OPEN_TRIES = 5  # swaps in a row during one open: only a build loop would do that


def _identity(path: Path) -> tuple[int, int] | None:
    """Which directory `path` names now (device, inode); None when nothing is there."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def read_index_manifest(path: Path) -> dict[str, Any] | None:
    """The folder's manifest.json as a JSON object, or None when it is missing, unreadable
    or no object."""
    return jsonl.read_object(path / MANIFEST)


def manifest_problem(manifest: dict[str, Any] | None) -> str | None:
    """Why a manifest (None: unreadable) is no index's this version reads, in words that
    name no folder; None when it is one."""
    if manifest is None:
        return f"no readable {MANIFEST}"
    version = manifest.get("schema_version")
    if version is None:  # another manifest: a practice set's, a model's
        return f"its {MANIFEST} names no index schema"
    if version != S.SCHEMA_VERSION:
        return f"schema version {version!r}; this scim-edge reads {S.SCHEMA_VERSION}"
    return None


def index_manifest(path: Path) -> dict[str, Any]:
    """The manifest of the index at `path`, or the IndexError_ that says why it is none:
    unreadable, another folder's manifest (a practice set's), or another schema. Opening
    an index and bundling one both ask this."""
    manifest = read_index_manifest(path)
    problem = manifest_problem(manifest)
    if manifest is None:
        raise IndexError_(
            f"index at {path} is incomplete or corrupt ({problem})", hint=rebuild_hint(path)
        )
    if manifest.get("schema_version") is None:
        raise IndexError_(
            f"{path} is not a scim-edge index ({problem})",
            hint="give --index an index's name or folder; `scim-edge doctor` lists them",
        )
    if problem:
        raise IndexError_(f"index at {path} has {problem}", hint=rebuild_hint(path))
    return manifest


def list_indexes() -> list[IndexInfo]:
    """The indexes installed under `paths.indexes_dir()`, by name (temp dirs of builds
    in progress are not indexes)."""
    base = paths.indexes_dir()
    if not base.is_dir():
        return []
    out = []
    for child in sorted(base.iterdir()):
        if child.is_dir() and not is_hidden_temp(child.name) and not child.name.startswith("."):
            out.append(IndexInfo(child.name, child, read_index_manifest(child)))
    return out


def rebuild_hint(path: Path) -> str:
    """How to build the index again where it is: by name under the indexes directory, by
    `--out` anywhere else (a `--name` would build under the indexes directory instead)."""
    if path.parent.resolve() != paths.indexes_dir().resolve():
        return f"rebuild it: scim-edge build-index DUMP --out {path} --force"
    target = f"--name {path.name} " if path.name != DEFAULT_NAME else ""
    return f"rebuild it: scim-edge build-index DUMP {target}--force"


def resolve_index_dir(name_or_dir: Any = None) -> Path:
    """The index directory a user means.

    A path (absolute, relative with a separator, or an existing directory) is taken as is;
    a bare name is looked up under the indexes directory. None means the index named
    "default" if present, else the only one installed. Settings objects are accepted too
    (their `.index` is used)."""
    if name_or_dir is not None and not isinstance(name_or_dir, str | Path):
        name_or_dir = getattr(name_or_dir, "index", None)
    if name_or_dir is None or str(name_or_dir) == "":
        installed = list_indexes()
        for info in installed:
            if info.name == DEFAULT_NAME:
                return info.path
        if len(installed) == 1:
            return installed[0].path
        if not installed:
            raise IndexError_(
                f"no index installed in {paths.indexes_dir()}",
                hint="build one with `scim-edge build-index DUMP` or try `scim-edge demo`",
            )
        names = ", ".join(i.name for i in installed)
        raise IndexError_(
            f"several indexes are installed ({names}) and none is named '{DEFAULT_NAME}'",
            hint="choose one with --index NAME",
        )
    text = str(name_or_dir)
    candidate = Path(text).expanduser()
    if isinstance(name_or_dir, Path) or not paths.is_plain_name(text):
        bare = paths.plain_name(text)  # "sample/", as a shell completes an index's name
        if not candidate.is_dir() and bare != text and (paths.indexes_dir() / bare).is_dir():
            return paths.indexes_dir() / bare
        if not candidate.is_dir():
            raise IndexError_(
                f"no index at {candidate}",
                hint="build one with `scim-edge build-index DUMP --out DIR`",
            )
        return candidate.resolve()
    named = paths.indexes_dir() / text
    if named.is_dir():
        return named
    if candidate.is_dir():
        return candidate.resolve()
    installed = ", ".join(i.name for i in list_indexes()) or "none"
    raise IndexError_(
        f"no index named '{text}' (installed: {installed})",
        hint=f"build it with `scim-edge build-index DUMP --name {text}`",
    )


class BM25Retriever:
    """Search one passage index. Thread-safe for concurrent searches."""

    def __init__(self, path: Path, index: tantivy.Index, manifest: dict[str, Any]) -> None:
        self.path = path
        self.index_dir = path
        self.index = index
        self.manifest = manifest
        self.name = path.name
        self.schema = index.schema
        self.analyzer_name = str(manifest.get("analyzer") or "stem_english")
        self._stem = S.text_analyzer(self.analyzer_name)
        self._plain = S.text_analyzer("plain")
        self.searcher = index.searcher()
        self.passage_count = int(self.searcher.num_docs)
        self.boosts = dict(S.FIELD_BOOSTS)
        # name -> `lead_naming`'s answer: every round of a loop looks the question's names
        # up again, and the index does not change under an open retriever
        self._lead_named: dict[str, Passage | None] = {}

    @classmethod
    def open(cls, path: str | Path) -> BM25Retriever:
        """Open the index at `path`. A build may swap a new index in under the same name
        while this runs; then the manifest, Tantivy's meta file and the segment files could
        come from different directories. So the directory's identity is checked before and
        after, and the open is redone when it changed."""
        path = Path(path).expanduser()
        for _ in range(_OPEN_TRIES):
            before = _identity(path)
            try:
                opened = cls._open_once(path)
            except IndexError_:
                if _identity(path) != before:
                    continue  # swapped mid-open: the files read came from two indexes
                raise
            if _identity(path) == before:
                return opened
        raise IndexError_(
            f"index at {path} kept changing while it was opened (a build is swapping it in)",
            hint="wait for the build to finish, then ask again",
        )

    @classmethod
    def _open_once(cls, path: Path) -> BM25Retriever:
        if not path.is_dir():
            raise IndexError_(f"no index at {path}", hint=rebuild_hint(path))
        manifest = index_manifest(path)
        try:
            index = tantivy.Index.open(str(path))
            analyzer = str(manifest.get("analyzer") or "stem_english")
            S.register_analyzer(index, analyzer)
            index.reload()
        except BaseException as e:  # noqa: BLE001 - pyo3's PanicException is no Exception
            failure = str(tantivy_failure(e))
            if "Lockfile" in failure and not os.access(path, os.W_OK):
                raise IndexError_(  # a read-only share: nothing is wrong with the index
                    f"cannot open index at {path}: its folder is read-only, and the search "
                    "library writes a lock file beside the index to read it",
                    hint="copy the index folder to a writable disk and give --index that "
                    "copy; nothing needs rebuilding",
                ) from None
            raise IndexError_(
                f"cannot open index at {path}: {_in_words(failure)}", hint=rebuild_hint(path)
            ) from None
        return cls(path, index, manifest)

    # ---- queries -----------------------------------------------------------------------

    def _analyzed(self, query: str) -> tuple[list[str], list[str]]:
        """The query's words (lower-cased) and their stems, aligned word for word."""
        words = self._plain.analyze(query)
        stems = self._stem.analyze(query)
        if len(stems) != len(words):  # not aligned word for word: stem each word alone
            stems = [t for w in words for t in self._stem.analyze(w)[:1]]
        # Both analyzers read the query once, as the index read its text: a lower-cased
        # word analysed again can split ("İzmir" lower-cases to "i̇zmir", whose dot is a break).
        return words, stems

    def query_terms(self, query: str) -> list[str]:
        """The analyzed terms of a user query: content words first; all words when the
        query is only stopwords ("The Who")."""
        return _content_terms(*self._analyzed(query))

    def query_pairs(self, query: str) -> list[tuple[str, str]]:
        """The query's neighbouring content words as stem pairs (`proximity`), both words
        among `query_terms` (a query of more terms than are read pairs none past them, so
        no passage is found by a pair alone)."""
        return self._terms_and_pairs(query)[1]

    def _terms_and_pairs(self, query: str) -> tuple[list[str], list[tuple[str, str]]]:
        """`query_terms` and `query_pairs` from one reading of the query."""
        words, stems = self._analyzed(query)
        terms = _content_terms(words, stems)
        if len(stems) != len(words):  # a word with no stem of its own: no alignment
            return terms, []
        read = set(terms)
        pairs = proximity.adjacent_pairs(words, stems, STOPWORDS.__contains__)
        return terms, [(a, b) for a, b in pairs if a in read and b in read]

    def _query(
        self,
        terms: Iterable[str],
        exclude_ids: Collection[str],
        pairs: Iterable[tuple[str, str]] = (),
    ) -> tantivy.Query:
        """Each term in every field, with the schema's boosts; each pair as a sloppy phrase
        of the text field, which counts a passage's near pair once more (`proximity`)."""
        Q, Occur = tantivy.Query, tantivy.Occur
        should = []
        for t in terms:
            for f, boost in self.boosts.items():
                q = Q.term_query(self.schema, f, t)
                should.append((Occur.Should, Q.boost_query(q, boost) if boost != 1.0 else q))
        if pairs:
            # A disambiguation page restates other articles' subjects line by line ("Apollo
            # 11, the first crewed Moon landing"): its phrases match by construction, so
            # they order nothing.
            listing = Q.term_query(self.schema, S.DISAMBIGUATION, 1)
            for a, b in pairs:
                phrase = Q.phrase_query(self.schema, S.TEXT, [a, b], PHRASE_SLOP)
                should.append(
                    (
                        Occur.Should,
                        Q.boolean_query([(Occur.Must, phrase), (Occur.MustNot, listing)]),
                    )
                )
        query = Q.boolean_query(should)
        if exclude_ids:
            nots = [(Occur.MustNot, Q.term_query(self.schema, S.DOC_ID, d)) for d in exclude_ids]
            query = Q.boolean_query([(Occur.Must, query), *nots])
        return query

    def _corrupt(self, e: BaseException) -> IndexError_:
        msg = one_line(str(e), 200, at_word=True) or type(e).__name__
        return IndexError_(
            f"index at {self.path} is corrupt or was removed: {msg}", hint=rebuild_hint(self.path)
        )

    @contextmanager
    def _reads(self) -> Iterator[None]:
        """A read of the index: Tantivy's failures on a damaged one (`tantivy_failure`)
        become the one-line error that says to rebuild it."""
        try:
            yield
        except BaseException as e:  # noqa: BLE001 - pyo3's PanicException is no Exception
            raise self._corrupt(tantivy_failure(e)) from None

    def search(self, query: str, k: int, exclude_ids: Collection[str] = ()) -> list[Passage]:
        """Top-`k` passages for plain-text `query`, never any in `exclude_ids`."""
        # Tantivy notices a missing or damaged segment file only when a query reads it.
        with self._reads():
            return self._search(query, k, exclude_ids)

    def _search(self, query: str, k: int, exclude_ids: Collection[str]) -> list[Passage]:
        if k <= 0:
            return []
        # The query's near pairs order the passages (`proximity`); the score each passage
        # carries is its words' BM25 alone, the scale the reader and the Critic were
        # fitted on, as `score_of` gives it.
        terms, pairs = self._terms_and_pairs(query)
        if not terms:
            return []
        q = self._query(terms, exclude_ids, pairs)
        # Disambiguation pages are lists of links, rarely evidence: fetch a few extra hits
        # and scale their scores down before cutting to k.
        hits = self._hits(q, k, max(k, TITLE_POOL) + DISAMBIGUATION_SLACK)
        wanted = _title_key(query)
        scored = []
        for score, addr in hits:
            doc = self.searcher.doc(addr)
            score *= _weight(doc)
            # A query that is exactly an article's title finds that article first, even when
            # stemming makes other titles collide with it ("Animal" and "Anime" → "anim").
            title = str(doc.get_first(S.TITLE) or "")
            # The title as written beats one equal only in its words: "Cell (biology)"
            # finds that article before "Cell biology".
            exact = (
                2 if _same_text(title, query) else int(bool(wanted) and _title_key(title) == wanted)
            )
            scored.append((exact, score, _passage_order(doc), doc, addr))
        scored.sort(key=lambda sd: (-sd[0], -sd[1], sd[2]))
        top = scored[:k]
        if not pairs:
            return [self._passage(doc, score) for _, score, _, doc, _ in top]
        ids = [str(doc.get_first(S.DOC_ID)) for *_, doc, _ in top]
        words_only = {_key(a): s for s, a in self._word_hits(terms, ids)}
        return [
            self._passage(doc, words_only.get(_key(addr), 0.0) * _weight(doc))
            for *_, doc, addr in top
        ]

    def _word_hits(self, terms: list[str], doc_ids: list[str]) -> list[tuple[float, Any]]:
        """Tantivy's words-only BM25 hits (score, address) for `terms` among the passages
        `doc_ids`, in one search restricted to them (a passage that does not match is
        absent); unscaled for disambiguation pages."""
        if not doc_ids:  # Tantivy panics on a search for no hits
            return []
        Q, Occur = tantivy.Query, tantivy.Occur
        only = Q.boolean_query(
            [
                (Occur.Should, Q.const_score_query(Q.term_query(self.schema, S.DOC_ID, d), 0.0))
                for d in doc_ids
            ]
        )
        q = Q.boolean_query([(Occur.Must, self._query(terms, ())), (Occur.Must, only)])
        return [(float(score), addr) for score, addr in self.searcher.search(q, len(doc_ids)).hits]

    def _hits(self, q: tantivy.Query, k: int, limit: int) -> list[tuple[float, Any]]:
        """Tantivy's top hits, with every hit that ties the k-th one's score: Tantivy
        breaks ties by where a build put each passage, which two builds of one dump do
        differently, so the cut is made after ordering ties by the passages' own ids."""
        cap = limit * TIE_POOL_GROWTH
        while True:
            hits = self.searcher.search(q, limit).hits
            kth = hits[min(k, len(hits)) - 1][0] if hits else 0.0
            if len(hits) < limit or hits[-1][0] < kth or limit >= cap:
                return hits
            limit *= 2

    def get(self, doc_id: str) -> Passage | None:
        with self._reads():
            q = tantivy.Query.term_query(self.schema, S.DOC_ID, doc_id)
            hits = self.searcher.search(q, 1).hits
            if not hits:
                return None
            return self._passage(self.searcher.doc(hits[0][1]), 0.0)

    def get_many(self, ids: Iterable[str]) -> list[Passage]:
        """Passages for `ids`, in the order given; unknown ids are left out."""
        out = []
        for d in ids:
            p = self.get(d)
            if p is not None:
                out.append(p)
        return out

    def sample(self, seed: int) -> Iterator[Passage]:
        """Every passage once, in an order fixed by `seed` and the index's content alone.

        Two builds of one dump place passages in segments differently (the writer's
        threads, its merges), so an order by address would make `practice --seed S` give
        other pairs after a rebuild. Slots (page id, k-th passage of the page) are what is
        shuffled; a page's passages are put in their own order (passage number) when one
        of its slots is first drawn."""
        import random

        with self._reads():
            hits = self.searcher.search(
                tantivy.Query.all_query(), self.passage_count, order_by_field=S.PAGE_ID
            ).hits
        pages: dict[int, list[tantivy.DocAddress]] = {}
        for page, addr in hits:
            pages.setdefault(int(page), []).append(addr)
        slots = sorted((page, k) for page, addrs in pages.items() for k in range(len(addrs)))
        random.Random(seed).shuffle(slots)
        in_order: set[int] = set()
        for page, k in slots:
            addrs = pages[page]
            with self._reads():  # not around the yield: the consumer's errors are its own
                if page not in in_order and len(addrs) > 1:
                    docs = [self.searcher.doc(a).to_dict() for a in addrs]
                    keys = [(d.get(S.PASSAGE_NO, [0])[0], d.get(S.DOC_ID, [""])[0]) for d in docs]
                    order = sorted(range(len(addrs)), key=keys.__getitem__)
                    pages[page] = [addrs[i] for i in order]
                    in_order.add(page)
                doc = self.searcher.doc(pages[page][k])
            yield self._passage(doc, 0.0)

    def score_of(self, query: str, doc_id: str) -> float:
        """The BM25 score `search(query)` gives the passage `doc_id` (0.0 when it does not
        match): a passage fetched by id is scored as if the search had found it."""
        terms = self.query_terms(query)
        if not terms:
            return 0.0
        with self._reads():
            for score, addr in self._word_hits(terms, [doc_id]):
                return score * _weight(self.searcher.doc(addr))
            return 0.0

    def article_lead(self, name: str) -> Passage | None:
        """The lead passage of the article titled `name` (its words, any case), or of the
        one article that has `name` as a redirect alias; None when there is none."""
        wanted = _title_key(name)
        terms = self.query_terms(name)
        if not wanted or not terms:
            return None
        Q, Occur = tantivy.Query, tantivy.Occur
        by_alias: list[Passage] = []
        with self._reads():
            for field in (S.TITLE, S.ALIASES):
                must = [(Occur.Must, Q.term_query(self.schema, field, t)) for t in terms]
                for _, addr in self.searcher.search(Q.boolean_query(must), TITLE_POOL).hits:
                    doc = self.searcher.doc(addr)
                    if doc.get_first(S.DISAMBIGUATION):
                        continue
                    if field == S.TITLE and _title_key(str(doc.get_first(S.TITLE))) == wanted:
                        # any passage of the article names its lead: all share its title
                        return self.get(f"{doc.get_first(S.PAGE_ID)}-0")
                    keys = {_title_key(str(a)) for a in doc.to_dict().get(S.ALIASES, [])}
                    if field == S.ALIASES and wanted in keys:  # aliases live on leads
                        by_alias.append(self._passage(doc, 0.0))
        return by_alias[0] if len(by_alias) == 1 else None

    def lead_naming(self, name: str) -> Passage | None:
        """The lead of the one article whose first sentence gives `name` as its
        subject's other name (`lead_names`: "also referred to as the University of
        Munich"); None when none does, or more than one. Only the leads among the
        `LEAD_NAME_POOL` best passages that hold the name are read: enough for a dump
        without redirects, while on a full dump the redirects (`article_lead`) name most
        articles first."""
        if name not in self._lead_named:
            if len(self._lead_named) >= LEAD_NAME_CACHE:
                self._lead_named.clear()
            self._lead_named[name] = self._lead_naming(name)
        return self._lead_named[name]

    def _lead_naming(self, name: str) -> Passage | None:
        terms = self._stem.analyze(name)
        if not terms:
            return None
        Q = tantivy.Query
        if len(terms) > 1:
            query = Q.phrase_query(self.schema, S.TEXT, terms, 0)
        else:
            query = Q.term_query(self.schema, S.TEXT, terms[0])
        found: dict[int, Passage] = {}
        with self._reads():
            for _, addr in self.searcher.search(query, LEAD_NAME_POOL).hits:
                doc = self.searcher.doc(addr)
                if doc.get_first(S.DISAMBIGUATION) or doc.get_first(S.PASSAGE_NO):
                    continue
                lead = self._passage(doc, 0.0)
                if lead_names.gives_name(lead.text, name):
                    found[lead.page_id] = lead
        return next(iter(found.values())) if len(found) == 1 else None

    def aliases(self, page_id: int) -> list[str]:
        """Redirect titles that point at the article (stored on its lead passage)."""
        q = tantivy.Query.term_query(self.schema, S.DOC_ID, f"{page_id}-0")
        with self._reads():
            hits = self.searcher.search(q, 1).hits
            if not hits:
                return []
            lead = self.searcher.doc(hits[0][1])
        return [str(a) for a in lead.to_dict().get(S.ALIASES, [])]

    @staticmethod
    def _passage(doc: tantivy.Document, score: float) -> Passage:
        d = doc.to_dict()

        def first(name: str, default: Any = "") -> Any:
            v = d.get(name)
            return v[0] if v else default

        return Passage(
            doc_id=str(first(S.DOC_ID)),
            title=str(first(S.TITLE)),
            section=str(first(S.SECTION)),
            text=str(first(S.TEXT)),
            score=float(score),
            page_id=int(first(S.PAGE_ID, 0)),
        )

    # ---- display -----------------------------------------------------------------------

    def snippet(
        self, passage: Passage, query: str, *, words: int = 40, mark: tuple[str, str] = ("[", "]")
    ) -> str:
        """The `words`-word window of the passage with the most query-term hits, hits
        wrapped in `mark` (ANSI bold codes on a terminal, brackets otherwise)."""
        terms = set(self.query_terms(query))
        toks = passage.text.split()
        if not toks:
            return ""
        hit = [bool(terms.intersection(self._stem.analyze(t))) for t in toks]
        best, best_n = 0, -1
        n = sum(hit[:words])
        for start in range(0, max(1, len(toks) - words + 1)):
            if start:
                n += (hit[start + words - 1] if start + words - 1 < len(toks) else 0) - hit[
                    start - 1
                ]
            if n > best_n:
                best, best_n = start, n
        window = range(best, min(len(toks), best + words))
        parts = [f"{mark[0]}{toks[i]}{mark[1]}" if hit[i] else toks[i] for i in window]
        prefix = "… " if best > 0 else ""
        suffix = " …" if best + words < len(toks) else ""
        return prefix + " ".join(parts) + suffix


def open_retriever(settings: Any) -> tuple[BM25Retriever, str]:
    """The BM25 retriever of the index `settings.index` names (None: the default)."""
    path = resolve_index_dir(getattr(settings, "index", None))
    retriever = BM25Retriever.open(path)
    return retriever, retriever.name


__all__ = [
    "BM25Retriever",
    "IndexInfo",
    "list_indexes",
    "open_retriever",
    "resolve_index_dir",
    "UserError",
]
