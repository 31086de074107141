"""Each SCIM quality formula against values computed by hand."""

from __future__ import annotations

import math

import pytest

from scim_edge import textutil as tu
from scim_edge.quality import (
    Evaluator,
    Evidence,
    RelevanceEvaluator,
    coherence,
    completeness,
    confidence,
    consistency,
    factuality,
    relevance,
    tier,
    weighted,
)
from scim_edge.settings import WEIGHT_SETS, Settings, load_settings
from scim_edge.types import Passage

Q = "Who painted the Mona Lisa?"
P = [Passage("1-0", "Mona Lisa", "", "Leonardo da Vinci painted the Mona Lisa in Florence.")]


@pytest.fixture(autouse=True)
def fallback_nlp():
    """Pin the data-free fallbacks, so the hand-computed values hold whatever NLTK data
    a machine has installed."""
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer

    tu.reset_caches()
    params = PunktParameters()
    tu._resources["sent"] = (PunktSentenceTokenizer(params), "fallback (test)")
    tu._resources["tagger"] = (None, "fallback (test)")
    yield
    tu.reset_caches()


def test_content_words_drop_stopwords_and_punctuation():
    assert tu.content_words("Who painted the Mona Lisa?") == ["painted", "mona", "lisa"]
    assert tu.content_words("What does 'aardvark' mean?") == ["aardvark", "mean"]


def test_nltk_status_names_what_is_in_use():
    status = tu.nltk_status()
    assert set(status) >= {"words", "sentences", "pos_tags", "stopwords"}
    assert "fallback" in status["pos_tags"]


def test_completeness_full_coverage_short_answer():
    # Q = {painted, mona, lisa}; A covers all 3; |A_words| = 5
    score, missing = completeness(Q, "Leonardo painted the Mona Lisa.")
    assert score == pytest.approx(0.6 * 1 + 0.4 * 5 / 30)
    assert missing == []


def test_completeness_no_coverage_and_length_cap():
    score, missing = completeness(Q, "Leonardo")
    assert score == pytest.approx(0.4 * 1 / 30)
    assert missing == ["painted", "mona", "lisa"]
    long = "Leonardo painted the Mona Lisa " + "word " * 40
    assert completeness(Q, long)[0] == pytest.approx(1.0)


def test_completeness_alpha_and_target_from_settings():
    score, _ = completeness(Q, "Leonardo painted it.", alpha=0.5, l_target=6)
    # coverage 1/3, |A_words| = 3
    assert score == pytest.approx(0.5 * (1 / 3) + 0.5 * 3 / 6)


def test_consistency_counts_long_words_found_in_passages():
    ev = Evidence.of(P)
    score, unsupported = consistency("Leonardo painted the Mona Lisa in Paris around 1503.", ev)
    # words > 3 chars: Leonardo painted Mona Lisa Paris around 1503 -> 4 of 7 in D
    assert score == pytest.approx(4 / 7)
    assert unsupported == ["paris", "around", "1503"]
    assert consistency("", ev) == (0.0, [])


def test_confidence_cues():
    assert confidence("it was painted on wood.") == (0.5, [])
    assert confidence("Leonardo painted it in 1503.")[0] == pytest.approx(0.9)
    assert confidence("it took 16 years. it hangs in a museum.")[0] == pytest.approx(0.9)
    assert confidence("- oil paint\n- poplar panel")[0] == pytest.approx(0.6)


def test_factuality_counts_patterns():
    score, patterns = factuality("Booth shot Lincoln.")
    assert score == pytest.approx(1 / 3)
    assert patterns == ["triple: Booth / shot / Lincoln"]
    score, patterns = factuality("The war ended in 1945 because the army surrendered.")
    assert score == pytest.approx(2 / 3)
    assert patterns == ["temporal: in 1945", "causal: because"]
    score, patterns = factuality("The bridge is 1,280 metres long and cost 35 million dollars.")
    assert [p.split(":")[0] for p in patterns] == ["numerical", "numerical"]
    assert score == pytest.approx(2 / 3)
    assert factuality("Booth shot Lincoln on April 14, 1865, which led to mourning.")[0] == 1.0


def test_coherence_counts_well_formed_sentences():
    score, good = coherence("Booth shot Lincoln. Lincoln died the next day. a fragment")
    assert score == pytest.approx(2 / 3)
    assert good == ["Booth shot Lincoln.", "Lincoln died the next day."]
    assert coherence("no capital here. Nor a verb here.")[0] == 0.0
    assert coherence("A. B was here. C is there. D was too. E is four.")[0] == 1.0


def test_weighted_quality_and_tiers():
    dims = (1.0, 0.5, 0.9, 1 / 3, 2 / 3)
    assert weighted(dims) == pytest.approx(0.25 + 0.125 + 0.135 + 0.25 / 3 + 0.2 / 3)
    assert tier(0.7) == "high"
    assert tier(0.6999) == "medium"
    assert tier(0.5) == "medium"
    assert tier(0.4999) == "low"


def test_evaluator_combines_the_five_dimensions():
    a = "Leonardo painted the Mona Lisa in Paris around 1503."
    r = Evaluator(Settings()).score(Q, a, P)
    comp = 0.6 + 0.4 * 9 / 30  # all of Q, 9 words
    cons = 4 / 7
    conf = 0.9  # number + proper noun, one sentence
    fact = 2 / 3  # triple Leonardo/painted/Mona Lisa + temporal 1503
    coh = 1 / 3
    assert (r.completeness, r.consistency, r.confidence, r.factuality, r.coherence) == (
        pytest.approx(comp), pytest.approx(cons), pytest.approx(conf), pytest.approx(fact),
        pytest.approx(coh),
    )  # fmt: skip
    expected = 0.25 * comp + 0.25 * cons + 0.15 * conf + 0.25 * fact + 0.10 * coh
    assert r.quality == pytest.approx(expected)
    assert r.tier == tier(expected)
    assert r.unsupported_words == ["paris", "around", "1503"]
    assert r.missing_keywords == []
    assert len(r.patterns) == 2


def test_profile_weights_change_q():
    a = "Leonardo painted the Mona Lisa in Paris around 1503."
    base = Evaluator(Settings()).score(Q, a, P)
    hs = Evaluator(load_settings({"profile": "high-stakes"})).score(Q, a, P)
    dims = (base.completeness, base.consistency, base.confidence, base.factuality, base.coherence)
    assert hs.quality == pytest.approx(weighted(dims, WEIGHT_SETS["high-stakes"]))
    assert WEIGHT_SETS["high-stakes"] == (0.15, 0.35, 0.10, 0.30, 0.10)
    edu = Evaluator(load_settings({"profile": "education"})).score(Q, a, P)
    assert edu.quality == pytest.approx(weighted(dims, (0.35, 0.15, 0.15, 0.15, 0.20)))


def test_empty_answer_scores_zero():
    r = Evaluator().score(Q, "", P)
    assert r.quality == 0.0
    assert r.missing_keywords == ["painted", "mona", "lisa"]


def test_single_dim_relevance_is_cosine_of_content_sets():
    score, missing = relevance(Q, "Leonardo painted the Mona Lisa.")
    assert score == pytest.approx(3 / math.sqrt(3 * 4))
    assert missing == []
    r = RelevanceEvaluator().score(Q, "Leonardo painted the Mona Lisa.", P)
    assert r.quality == r.completeness == r.coherence == pytest.approx(3 / math.sqrt(12))
    assert relevance(Q, "")[0] == 0.0


def test_evidence_is_built_once_per_passage_set():
    assert Evidence.of(P) is Evidence.of(list(P))
    assert "florence" in Evidence.of(P).words
