"""What kind of thing a name is, from its article's lead: the definition's head nouns, life
dates or pronouns for a person, the exact-title look-up in a real index, and the reader
features and practice questions built on them."""

from __future__ import annotations

import random
import re

import pytest

from scim_edge.generation import reader_features as rf
from scim_edge.lead_types import LeadTypes, lead_type
from scim_edge.practice.questions import make_question, pairs_from_passages
from scim_edge.retrieval import BM25Retriever
from scim_edge.types import Passage


def test_the_head_noun_of_a_definition_is_its_type():
    lead = lead_type("Montana is a landlocked state in the Mountain West subregion.")
    assert lead.heads == ("state",)


def test_each_noun_of_a_coordinated_definition_is_a_type():
    lead = lead_type("Amsterdam is the capital and largest city of the Netherlands.")
    assert lead.heads == ("capital", "city")


def test_a_listed_role_is_read_past_its_adjective():
    lead = lead_type("Rumi, commonly known as Rumi, was a Sufi mystic, poet, and founder of it.")
    assert "poet" in lead.heads


def test_life_dates_in_the_first_parentheses_make_a_person():
    lead = lead_type("Edwin Hubble (November 20, 1889 – September 28, 1953) was an astronomer.")
    assert lead.person


@pytest.mark.parametrize(
    "text",
    [
        "Hawaii is an island state of the United States, in the Pacific Ocean about 2,000 "
        "miles (3,200 km) southwest of the U.S. mainland.",
        "The Salween is a Southeast Asian river, about 3,289 km (2,044 mi) long.",
        "Agra is a city about 230 km (140 mi) south-east of New Delhi.",
        "Rotterdam has an area of 319.4 km2 (123.3 sq mi).",
        "Skyscraper is a tall building of at least 100 metres (328 ft).",
    ],
)
def test_a_measure_in_the_first_parentheses_is_no_life_date(text):
    assert not lead_type(text).person


def test_a_year_of_birth_alone_still_makes_a_person():
    assert lead_type("Ada Smith (born 1950) is a writer.").person


def test_life_dates_after_the_copula_do_not_make_a_thing_a_person():
    # the dates are the poet's, beside his name; the lead calls its subject "it"
    lead = lead_type(
        "Paradise Lost is an epic poem by the English poet John Milton (1608–1674). It was "
        "first published in 1667. It is considered his major work."
    )
    assert not lead.person


def test_life_dates_after_the_copula_still_make_a_person_of_a_lead_without_it():
    lead = lead_type("Wang Xizhi was a Chinese calligrapher of the Jin dynasty (266–420).")
    assert lead.person


def test_a_lead_that_says_he_is_about_a_person():
    lead = lead_type("Edwin Hubble was an American astronomer. He showed that his galaxies moved.")
    assert lead.person


def test_a_lead_that_says_it_is_about_a_thing():
    lead = lead_type("The Taj Mahal is an ivory-white marble mausoleum. It was built in 1631.")
    assert (lead.heads, lead.person, lead.thing) == (("mausoleum",), False, True)


def test_the_pronoun_that_opens_a_later_sentence_outvotes_pronouns_inside_sentences():
    # the Odyssey's lead speaks of Odysseus ("his journey") more often than of the poem
    lead = lead_type(
        "The Odyssey is an epic poem attributed to Homer. It follows the king Odysseus, "
        "his long journey home and his son, while his wife waits for him."
    )
    assert (lead.person, lead.thing) == (False, True)


def test_a_lead_that_opens_a_sentence_with_he_once_is_about_a_person():
    lead = lead_type("Leo Tolstoy was a Russian writer. He is regarded as one of the greatest.")
    assert (lead.person, lead.thing) == (True, False)


def test_a_lead_without_pronouns_is_neither_a_person_nor_a_thing():
    lead = lead_type("Homer was an ancient Greek poet. Homer was highly revered in Greece.")
    assert (lead.heads, lead.person, lead.thing) == (("poet",), False, False)


def test_a_definition_whose_head_takes_who_is_about_a_person():
    lead = lead_type("Homer was an ancient Greek poet who is credited as the author of the Iliad.")
    assert lead.person


def test_who_after_a_name_that_follows_the_head_still_belongs_to_the_head():
    lead = lead_type("Plato was a Greek philosopher of Classical Athens who founded the Academy.")
    assert lead.person


def test_who_of_other_people_in_the_definition_is_not_the_subjects():
    lead = lead_type(
        "Bankruptcy is a legal process through which people who cannot repay debts seek relief."
    )
    assert lead.person is False


def test_the_head_of_one_of_a_number_of_things_is_read_past_the_number():
    lead = lead_type("The Iliad is one of two major ancient Greek epic poems attributed to Homer.")
    assert lead.heads == ("poems",)


def test_a_sentence_that_defines_nothing_has_no_type():
    assert lead_type("In 1725 the concertos were published in Amsterdam.").heads == ()


def test_a_name_is_looked_up_once():
    calls: list[str] = []

    def find(name: str) -> Passage | None:
        calls.append(name)
        return Passage("1-0", "Mauritania", "", "Mauritania is a country in Northwest Africa.")

    types = LeadTypes(find)
    types.of("Mauritania")
    assert types.of("mauritania").heads == ("country",) and calls == ["Mauritania"]


def test_article_lead_finds_an_article_by_its_exact_title(sample_index):
    lead = BM25Retriever.open(sample_index).article_lead("animal farm")
    assert (lead.title, lead.doc_id) == ("Animal Farm", "620-0") if lead else lead


def test_article_lead_refuses_a_title_that_only_contains_the_name(sample_index):
    # "Farm" is in the title "Animal Farm" but is not that title (nor an alias of it)
    assert BM25Retriever.open(sample_index).article_lead("Farm") is None


def _passages() -> list[Passage]:
    text = (
        "The Banc d'Arguin National Park lies on the west coast of Mauritania, "
        "near the Tamanrasset River and the city of Nouakchott."
    )
    return [Passage("9-0", "Banc d'Arguin National Park", "", text, 10.0)]


def _fake_types() -> LeadTypes:
    leads = {
        "mauritania": "Mauritania is a country in Northwest Africa.",
        "nouakchott": "Nouakchott is the capital and largest city of Mauritania.",
    }

    def find(name: str) -> Passage | None:
        text = leads.get(name.lower())
        return Passage("1-0", name, "", text) if text else None

    return LeadTypes(find)


def _features(question: str, types: LeadTypes | None) -> dict[str, dict[str, float]]:
    cands = rf.candidates(question, _passages(), types)
    return {c.text: dict(zip(rf.FEATURES, c.features.tolist(), strict=True)) for c in cands}


def test_a_name_whose_article_gives_the_asked_type_matches():
    f = _features("Which country is home to the Banc d'Arguin National Park?", _fake_types())
    assert f["Mauritania"]["lead_head_match"] == 1.0


def test_a_name_whose_article_gives_another_type_clashes():
    f = _features("Which country is home to the Banc d'Arguin National Park?", _fake_types())
    assert f["Nouakchott"]["lead_head_clash"] == 1.0


def test_a_name_ending_in_the_asked_type_is_marked():
    f = _features("Which river flows near the Banc d'Arguin National Park?", _fake_types())
    assert f["Tamanrasset River"]["head_ends_span"] == 1.0


def test_without_types_the_lead_features_are_zero():
    f = _features("Which country is home to the Banc d'Arguin National Park?", None)
    assert f["Mauritania"]["lead_known"] == 0.0


def test_practice_asks_for_a_name_by_its_type():
    from scim_edge.generation.spans import sentence_spans

    sent = "The concertos were published in 1725 in Amsterdam by Michel-Charles Le Cène."
    span = next(s for s in sentence_spans(sent) if s.text == "Amsterdam")
    q = make_question(sent, span, "The Four Seasons", random.Random(0), "city")
    assert q is not None and q.startswith("In which city")


def test_practice_with_types_asks_some_questions_by_type(sample_index):
    # fixed passages (a sample's order depends on the index's segments) and a look-up that
    # gives every name an article, so the test does not hang on which names have one
    passages = BM25Retriever.open(sample_index).get_many([f"620-{i}" for i in range(40)])
    types = LeadTypes(lambda name: Passage("1-0", name, "", f"{name} is a city in Europe."))
    pairs = pairs_from_passages(iter(passages), 60, 2, types=types)
    assert any(re.match(r"(?:\w+ )?which city\b", p.question.lower()) for p in pairs)


def _rumi(types: LeadTypes | None) -> dict[str, float]:
    text = "The Divan is a collection of poems written by the Persian poet Rumi."
    cands = rf.candidates("Which poet wrote the Divan?", [Passage("2-0", "Divan", "", text)], types)
    c = next(c for c in cands if c.text == "Rumi")
    return dict(zip(rf.FEATURES, c.features.tolist(), strict=True))


def _rumi_types() -> LeadTypes:
    lead = "Rumi was a Persian poet. He wrote the Divan; his son founded an order."
    return LeadTypes(lambda name: Passage("7-0", "Rumi", "", lead) if name == "Rumi" else None)


def test_a_one_word_name_that_looks_like_a_nationality_is_one_without_its_article():
    assert _rumi(None)["demonym"] == 1.0


def test_a_one_word_name_whose_article_is_about_a_person_is_not_a_nationality():
    assert _rumi(_rumi_types())["demonym"] == 0.0


def test_a_one_word_name_whose_article_is_about_a_person_is_person_like():
    assert _rumi(_rumi_types())["person_like"] == 1.0


def test_the_reader_of_an_index_looks_names_up_in_that_index(sample_index):
    from scim_edge.generation.reader import Reader

    types = Reader.for_index(sample_index).types
    assert types is not None and types.of("Animal Farm") is not None


def test_the_question_head_skips_a_name_before_the_noun():
    assert rf.question_head("In which U.S. state does the Missouri River rise?") == "state"


def test_the_question_head_is_the_noun_after_its_adjective():
    assert rf.question_head("Which religious order was Duns Scotus a member of?") == "order"


def test_the_question_head_is_the_last_noun_of_a_compound():
    assert rf.question_head("To which bird family do bulbuls belong?") == "family"


@pytest.mark.parametrize(
    ("question", "head"),
    [
        ("What name is usually given to a mushroom that is poisonous?", "name"),
        ("Which word means a fear of spiders?", "word"),
        ("What is the name of the river that flows through Paris?", "river"),
    ],
)
def test_a_label_word_before_the_verb_is_the_head(question, head):
    """ "What name is given to…" asks for a name (so the article "Name" is not its topic);
    "What is the name of the river…" still asks for a river."""
    assert rf.question_head(question) == head


def test_the_question_head_follows_a_possessor():
    assert rf.question_head("What is germanium's atomic number?") == "number"


def test_the_question_head_stops_at_the_verb():
    assert rf.question_head("What sea borders the Gulf of Carpentaria to the north?") == "sea"


def test_a_question_with_a_verb_after_what_has_no_head():
    assert rf.question_head("What does the Spanish name El Dorado mean?") == ""


def test_a_measure_word_after_which_asks_for_a_thing():
    assert rf.question_kind("Which age followed the Stone Age?")[0] == "what"


def test_a_measure_word_after_what_asks_for_a_quantity():
    assert rf.question_kind("At what age did Schubert die?")[0] == "number"


def test_the_head_of_a_span_of_the_form_x_of_y_is_before_of():
    from scim_edge.generation.spans import span_head

    assert span_head("Battle of Segesvár") == "Battle"


def test_the_head_of_a_noun_phrase_is_its_last_word():
    from scim_edge.generation.spans import span_head

    assert span_head("left side") == "side"


def test_a_span_named_by_the_asked_kind_is_marked_without_types():
    text = "Petőfi is thought to have been killed in the Battle of Segesvár in 1849."
    cands = rf.candidates(
        "In which battle was Sándor Petőfi killed?", [Passage("9-0", "Sándor Petőfi", "", text)]
    )
    f = {c.text: dict(zip(rf.FEATURES, c.features.tolist(), strict=True)) for c in cands}
    assert f["Battle of Segesvár"]["head_ends_span"] == 1.0


def _span(sent: str, text: str):
    from scim_edge.generation.spans import sentence_spans

    return next(s for s in sentence_spans(sent) if s.text == text)


_SEA = "The Gulf of Carpentaria is bordered on the north by the Arafura Sea, a shallow sea."


def test_practice_asks_for_a_name_by_its_own_kind_word():
    from collections import Counter

    from scim_edge.practice.questions import _own_head

    assert _own_head(_span(_SEA, "Arafura Sea"), Counter({"sea": 3})) == "sea"


def test_a_capitalised_head_the_index_never_writes_in_lower_case_is_no_kind_word():
    from collections import Counter

    from scim_edge.practice.questions import _own_head

    assert _own_head(_span(_SEA, "Arafura Sea"), Counter()) == ""


def test_a_typed_practice_question_keeps_its_head_detectable():
    sent = "Tasmania is separated from the mainland by Bass Strait, a shallow strait."
    # this seed keeps "separated" first, which would otherwise read as the head
    q = make_question(sent, _span(sent, "Bass Strait"), "Tasmania", random.Random(1), "strait")
    assert q is not None and rf.question_head(q) == "strait"


def _who_wrote(lead_text: str) -> dict[str, float]:
    text = "Like the Odyssey, the Iliad was composed in dactylic hexameter by Homer."
    types = LeadTypes(lambda name: Passage("3-0", name, "", lead_text))
    cands = rf.candidates("Who wrote the Iliad?", [Passage("4-0", "Iliad", "", text)], types)
    return {c.text: dict(zip(rf.FEATURES, c.features.tolist(), strict=True)) for c in cands}


def test_a_name_whose_lead_calls_it_it_is_marked_for_a_who_question():
    f = _who_wrote("The Odyssey is an epic poem. It follows Odysseus and his journey home.")
    assert f["Odyssey"]["person_q_lead_says_it"] == 1.0


def test_a_name_whose_lead_has_no_pronouns_is_not_marked_as_a_thing():
    f = _who_wrote("Homer was an ancient Greek poet. Homer was revered.")
    assert f["Homer"]["person_q_lead_says_it"] == 0.0


@pytest.mark.parametrize(
    ("question", "head"),
    [
        ("What is the mechanical woman called?", "woman"),
        ("What was the old harbour named in Latin?", "harbour"),
        # a participle inside the phrase is no end of it
        ("What is the largest known prime number?", "number"),
    ],
)
def test_a_naming_participle_after_the_phrase_is_not_its_head(question, head):
    """ "What is X called?" asks for the name of an X: the head is X's noun, not "called"."""
    assert rf.question_head(question) == head
