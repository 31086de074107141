"""How the reader cuts and states its answers: a number's unit is the nouns after it, a
past form stems as its verb, a possessive is
not part of a name, a span the question already says is never a candidate, a surname said
alone counts for the full name, a title is not part of a person's name, and the kind the
question asks for is neither its answer nor its topic."""

from __future__ import annotations

from scim_edge import textutil as tu
from scim_edge.generation import reader_features as rf
from scim_edge.generation.extractive import (
    ExtractiveGenerator,
    _format_span,
    _option_name,
)
from scim_edge.generation.reader import Reader
from scim_edge.generation.spans import sentence_spans
from scim_edge.types import Passage


def _spans(sentence: str) -> dict[str, str]:
    return {s.text: s.unit for s in sentence_spans(sentence)}


def test_a_counted_numbers_unit_is_no_span_of_its_own():
    assert "minutes" not in _spans("An orbit in low Earth orbit takes 128 minutes or less.")


def test_a_counted_number_keeps_its_unit():
    assert _spans("An orbit in low Earth orbit takes 128 minutes or less.")["128"] == "minutes"


def test_a_naming_participle_ends_a_noun_phrase():
    assert "fish sauce" in _spans("The Romans made a fish sauce called garum.")


def test_the_name_after_a_naming_participle_is_a_span_of_its_own():
    assert "garum" in _spans("The Romans made a fish sauce called garum.")


def test_a_verb_after_a_number_is_not_its_unit():
    spans = _spans("His suicide at 37 followed years of mental illness and poverty.")
    assert spans["37"] == ""


def test_a_noun_after_a_number_is_its_unit():
    spans = _spans("Jupiter has 79 moons and a faint ring system.")
    assert spans["79"] == "moons"


def test_a_number_counts_the_last_noun_that_follows_it():
    spans = _spans("As of 2026, 53,680 spider species in 139 families have been recorded.")
    assert spans["53,680"] == "spider species"


def test_a_count_of_another_thing_does_not_match_the_question_unit():
    """ "How many legs does a spider have?": 53,680 counts species, not spiders."""
    ps = [Passage("s-0", "Spider", "", "As of 2026, 53,680 spider species in 139 families "
                  "have been recorded. Spiders have eight legs.")]  # fmt: skip
    feats = {c.text: c.features for c in rf.candidates("How many legs does a spider have?", ps)}
    assert feats["53,680"][rf.FEATURES.index("unit_in_question")] == 0.0


def test_an_irregular_past_form_stems_as_its_verb():
    """ "Who wrote Hamlet?" shares its verb with "a tragedy written by …"."""
    assert tu.stem("wrote") == tu.stem("written") == tu.stem("writes")


def test_a_past_form_that_is_mostly_another_word_keeps_its_stem():
    assert tu.stem("born") != tu.stem("bear")


def _before_noun(question: str, text: str) -> dict[str, float]:
    ps = [Passage("n-0", "The Starry Night", "", text)]
    col = rf.FEATURES.index("before_noun")
    return {c.text: float(c.features[col]) for c in rf.candidates(question, ps)}


_STARRY = "The Starry Night is a painting by the Dutch Post-Impressionist painter Vincent van Gogh."


def test_a_name_before_a_common_noun_is_marked_as_modifying_it():
    assert _before_noun("Who painted The Starry Night?", _STARRY)["Dutch Post-Impressionist"] == 1


def test_a_name_that_ends_its_phrase_is_not_marked():
    assert _before_noun("Who painted The Starry Night?", _STARRY)["Vincent van Gogh"] == 0


def test_a_full_name_in_its_own_article_is_said_by_the_title():
    assert rf.common_name("Neil Alden Armstrong", "Neil Armstrong") == "Neil Armstrong"


def test_a_name_that_is_not_the_title_with_words_left_out_is_kept():
    assert rf.common_name("William Henry Gates III", "Bill Gates") == "William Henry Gates III"


def test_a_title_disambiguation_is_not_part_of_the_common_name():
    assert rf.common_name("John Paul Smith", "John Smith (footballer)") == "John Smith"


def test_a_possessive_is_not_part_of_a_name():
    texts = _spans("Rumi’s poems have been translated into many languages.")
    assert "Rumi" in texts


def test_a_possessive_before_a_kind_of_place_is_inside_the_name():
    texts = _spans("It premiered at the St James's Theatre in London in 1895.")
    assert "St James's Theatre" in texts


def test_a_possessive_before_another_name_splits_the_two():
    texts = _spans("Orwell's Animal Farm was published in 1945.")
    assert "Animal Farm" in texts


def test_a_span_written_inside_the_question_is_not_a_candidate():
    ps = [Passage("m-0", "Missouri River", "", "The Missouri River rises in the Rocky Mountains "
                  "of western Montana in the U.S. and flows east.")]  # fmt: skip
    cands = rf.candidates("In which U.S. state does the Missouri River rise?", ps)
    assert "U.S" not in {c.text for c in cands}


def test_a_hyphenated_name_from_the_question_is_not_a_candidate():
    ps = [Passage("d-0", "Rumi", "", "Rumi wrote the Divan-i Shams in Konya.")]
    cands = rf.candidates("Which poet wrote the Divan-i Shams-i Tabrizi?", ps)
    assert "Divan-i Shams" not in {c.text for c in cands}


# Real lead openings (CC BY-SA Wikipedia contributors), shortened.
ACHILLES = Passage("305-0", "Achilles", "", "In Greek mythology, Achilles (Ἀχιλλεύς, "
                   "Akhilleus) was a Greek hero of the Trojan War. His mother was the nymph "
                   "Thetis.")  # fmt: skip
CONNES = Passage("340-0", "Alain Connes", "", "Alain Connes (born 1 April 1947) is a French "
                 "mathematician. He was awarded the Fields Medal in 1982.")  # fmt: skip


def _texts(question: str, passages: Passage | list[Passage]) -> set[str]:
    ps = passages if isinstance(passages, list) else [passages]
    return {c.text for c in rf.candidates(question, ps)}


def test_the_subjects_other_name_in_the_opening_aside_answers_only_a_name_question():
    assert "Akhilleus" not in _texts("Who was the mother of Achilles?", ACHILLES)
    assert "Akhilleus" in _texts("What was Achilles called in Greek?", ACHILLES)


def test_a_life_date_in_the_opening_aside_answers_only_a_life_question():
    assert "1 April 1947" not in _texts("When did Alain Connes win the Fields Medal?", CONNES)
    assert "1 April 1947" in _texts("When was Alain Connes born?", CONNES)


def test_parentheses_later_in_a_lead_or_outside_a_lead_are_no_opening_aside():
    later = Passage("340-1", "Alain Connes", "Career", CONNES.text)
    assert rf.opening_aside(later, CONNES.text) is None
    second = "He was awarded the Fields Medal (in 1982) at the congress."
    assert (
        rf.opening_aside(Passage("340-0", "Alain Connes", "", f"Intro. {second}"), second) is None
    )


ORWELL = [
    Passage("a-0", "Animal Farm", "", "Animal Farm is a novella by George Orwell, first "
            "published in England in 1945."),
    Passage("a-1", "Animal Farm", "Writing", "Orwell wrote the book during the war. Orwell "
            "sent it to several publishers."),
]  # fmt: skip


def test_a_surname_said_alone_agrees_with_the_full_name():
    cands = {c.text: c for c in rf.candidates("Who wrote Animal Farm?", ORWELL)}
    agree = dict(zip(rf.FEATURES, cands["George Orwell"].features.tolist(), strict=True))
    assert agree["agree_passages"] > 0


def test_a_surname_alone_is_read_as_a_person():
    cands = {c.text: c for c in rf.candidates("Who wrote Animal Farm?", ORWELL)}
    f = dict(zip(rf.FEATURES, cands["Orwell"].features.tolist(), strict=True))
    assert f["person_like"] == 1.0


def test_the_surname_mass_goes_to_the_full_name():
    reading = Reader.for_index(None).read("Who wrote Animal Farm?", ORWELL)
    assert "Orwell" not in [c.text for _, c in reading.ranked]


ARMSTRONG = [
    Passage("n-0", "Neil Armstrong", "", "Neil Alden Armstrong was an American astronaut who "
            "became the first person to walk on the Moon."),
    Passage("n-1", "Neil Armstrong", "Career", "Neil Armstrong was also a naval aviator."),
    Passage("m-0", "Moon", "", "The Moon orbits Earth."),
]  # fmt: skip


def test_a_full_name_and_its_articles_title_are_one_answer():
    reading = Reader.for_index(None).read("Who first walked on the Moon?", ARMSTRONG)
    stated = [rf.common_name(c.text, c.passage.title) for _, c in reading.ranked]
    assert stated.count("Neil Armstrong") == 1


def test_a_full_name_and_its_articles_title_pool_their_mass():
    reader = Reader.for_index(None)
    pooled = reader.read("Who first walked on the Moon?", ARMSTRONG).probability
    alone = reader.read("Who first walked on the Moon?", ARMSTRONG[::2]).probability
    assert pooled > alone


def test_a_title_is_not_part_of_a_persons_name():
    ps = [Passage("p-0", "Parody", "", "Literary scholar Professor Simon Dentith defines parody "
                  "as a combative, allusive imitation.")]  # fmt: skip
    answer = ExtractiveGenerator().generate("Which literary scholar defines parody?", ps).text
    assert answer == "Simon Dentith"


def test_a_role_title_before_a_full_name_is_left_out_of_the_span():
    spans = _spans("The crew were Commander Frank Borman and Command Module Pilot James Lovell.")
    assert "James Lovell" in spans


def test_the_title_left_out_is_not_kept_with_the_name():
    spans = _spans("The crew were Commander Frank Borman and Command Module Pilot James Lovell.")
    assert "Commander Frank Borman" not in spans


def test_a_title_word_inside_an_organisations_name_stays():
    assert "General Motors Company" in _spans("He worked for General Motors Company in Detroit.")


def test_a_title_word_inside_a_documents_name_stays():
    spans = _spans("It passed United Nations General Assembly Resolution 181 in 1947.")
    assert "United Nations General Assembly Resolution 181" in spans


def test_an_option_keeps_its_whole_name():
    assert _option_name("Animal Farm") == "Animal Farm"


def test_an_option_drops_its_description():
    assert _option_name("Alberta as a Canadian province") == "Alberta"


def test_the_reading_carries_its_picks_own_score():
    reader = Reader.for_index(None)
    reading = reader.read("Who wrote Animal Farm?", ORWELL)
    assert reading.features("person")["span_score"] == round(
        float(reader.model.score(reading.candidate.features)[0]), 6
    )


def test_the_critic_reads_the_span_score():
    from scim_edge.critic_features import FEATURES

    assert "r:span_score" in FEATURES


LINCOLN = [
    Passage("l-0", "Abraham Lincoln", "", "Abraham Lincoln was the 16th President of the "
            "United States. Vice President Andrew Johnson succeeded him. Lincoln was "
            "assassinated by John Wilkes Booth in 1865."),
]  # fmt: skip


def _feature(question: str, passages: list[Passage], text: str, name: str) -> float:
    cands = {c.text: c for c in rf.candidates(question, passages)}
    return float(cands[text].features[rf.FEATURES.index(name)])


def test_a_role_alone_is_not_a_persons_name():
    ps = [Passage("l-2", "Abraham Lincoln", "", "After the war the Vice President took "
                  "office.")]  # fmt: skip
    assert _feature("Who took office after the war?", ps, "Vice President", "person_like") == 0.0


def test_a_role_alone_is_not_read_as_the_surname_of_one_who_held_it():
    # "Railroad President" may be a name; "President" said alone is still a role
    ps = [Passage("l-1", "Abraham Lincoln", "", "Lincoln was the 16th President. The "
                  "Railroad President met him in 1861.")]  # fmt: skip
    f = _feature("Who met Abraham Lincoln?", ps, "President", "person_q_not_person")
    assert f == 1.0


def test_the_relation_asked_is_read_apart_from_the_topic():
    f = _feature("Who assassinated Abraham Lincoln?", LINCOLN, "John Wilkes Booth",
                 "relation_overlap")  # fmt: skip
    assert f == 1.0


def test_a_sentence_that_only_names_the_topic_states_no_relation():
    f = _feature("Who assassinated Abraham Lincoln?", LINCOLN, "United States",
                 "relation_overlap")  # fmt: skip
    assert f == 0.0


def test_a_letter_alone_is_not_a_name():
    spans = _spans("Only two are in clinical use: penicillin G and penicillin V.")
    assert "V" not in spans


def test_an_abbreviation_before_a_number_is_not_a_name():
    assert "Op" not in _spans("The Symphony No. 5 in C minor, Op. 67, is by Beethoven.")


def _number_span(sentence: str):
    return next(s for s in sentence_spans(sentence) if s.kind == "number")


def test_a_count_asked_for_anywhere_in_the_question_is_its_number_alone():
    span = _number_span("The bassoon is made of six pieces of wood.")
    assert _format_span(span, "A bassoon is assembled from how many parts?", "number") == "six"


def test_a_measure_keeps_its_unit_when_the_question_does_not_name_it():
    span = _number_span("The reign lasted 36 years in all.")
    assert _format_span(span, "How long did the reign last?", "number") == "36 years"


# Real lead sentences (CC BY-SA Wikipedia contributors), shortened.
YEN = Passage("47-0", "Japanese yen", "", "The yen is the official currency of Japan.")
CURRENCY = Passage("21-0", "Currency", "", "A currency is a standardized form of money.")
PACIFIC = Passage("9-0", "Pacific Ocean", "", "The Pacific Ocean is the largest and deepest "
                  "of Earth's five oceanic divisions.")  # fmt: skip
PORTUGUESE = Passage("8-0", "Portuguese language", "", "Portuguese is the official language "
                     "of eight countries, among them Brazil.")  # fmt: skip


def test_a_phrase_that_restates_the_kind_asked_after_a_copula_is_not_a_candidate():
    assert "official currency" not in _texts("What is the currency of Japan?", YEN)


def test_a_phrase_that_says_there_is_a_name_is_not_the_name():
    ps = Passage("5-0", "Little Richard", "", "Richard Wayne Penniman, better known by his "
                 "stage name Little Richard, was an American singer.")  # fmt: skip
    assert "stage name" not in _texts("What was Little Richard's real name?", ps)


def test_a_phrase_headed_by_the_kind_asked_said_elsewhere_stays_a_candidate():
    ps = Passage("3-0", "Flatfish", "", "Adult flatfish lie on their left side on the sea floor.")
    assert "left side" in _texts("On which side do flatfish lie?", ps)


def test_an_article_titled_only_with_the_kind_asked_is_not_named_by_the_question():
    f = _feature("What is the currency of Japan?", [CURRENCY], "standardized form",
                 "title_in_question")  # fmt: skip
    assert f == 0.0


def test_an_article_the_question_names_as_its_topic_stays_named():
    ps = [Passage("4-0", "Japan", "", "The yen is the currency of Japan.")]
    assert _feature("What is the currency of Japan?", ps, "yen", "title_in_question") == 1.0


def test_a_demonym_answering_a_question_about_a_language_is_not_marked_as_one():
    f = _feature("What language is spoken in Brazil?", [PORTUGUESE], "Portuguese", "demonym")
    assert f == 0.0


def test_a_demonym_answering_another_question_is_marked():
    f = _feature("Who rules Brazil?", [PORTUGUESE], "Portuguese", "demonym")
    assert f == 1.0


def test_a_name_ending_with_a_kind_of_thing_is_no_demonym():
    f = _feature("What is the largest ocean on Earth?", [PACIFIC], "Pacific Ocean", "demonym")
    assert f == 0.0


HRE = Passage("6-0", "Holy Roman Empire", "", "By the 15th century, imperial governance was "
              "concentrated in Germany. The empire lasted until 1806.")  # fmt: skip


def test_a_century_is_not_an_answer_to_which_year():
    assert "15th century" not in _texts("In which year did the Holy Roman Empire end?", HRE)


def test_a_century_answers_a_question_that_asks_when():
    assert "15th century" in _texts("When did the Holy Roman Empire end?", HRE)


EINSTEIN = [
    Passage("7-0", "Albert Einstein", "", "Albert Einstein (14 March 1879 – 18 April 1955) "
            "was a German-born theoretical physicist."),
    Passage("7-9", "Albert Einstein", "Legacy", "His stepdaughter asked that the letters not "
            "be published until twenty years after her death (she died in 1986)."),
]  # fmt: skip


def test_the_death_asked_of_a_named_person_is_the_last_date_of_the_opening_aside():
    assert _texts("When did Albert Einstein die?", EINSTEIN) == {"18 April 1955"}


def test_the_birth_asked_of_a_named_person_is_the_first_date_of_the_opening_aside():
    assert _texts("When was Albert Einstein born?", EINSTEIN) == {"14 March 1879"}


def test_a_date_alone_after_born_is_no_death_date():
    assert "1 April 1947" not in _texts("When did Alain Connes die?", CONNES)


def test_the_aside_of_an_article_the_question_does_not_name_does_not_decide():
    assert "1986" in _texts("When did Margot die?", EINSTEIN)


def test_a_number_that_ends_a_name_is_part_of_it():
    assert "Apollo 11" in _spans("He commanded the 1969 Apollo 11 mission to the Moon.")


def test_an_abbreviation_with_its_number_is_not_a_name():
    assert "Op. 67" not in _spans("The Symphony No. 5 in C minor, Op. 67, is by Beethoven.")


def test_a_name_before_a_year_stays_a_name_alone():
    assert "Athens" in _spans("In Athens 1896 the first modern games began.")


ROGERS = Passage("2-0", "Fred Rogers", "", "Fred Rogers hosted Mister Rogers' Neighborhood, "
                 "which ran from 1968 to 2001.")  # fmt: skip


def test_the_start_of_a_range_does_not_answer_when_something_ended():
    assert "1968" not in _texts("When did Mister Rogers' Neighborhood end its run?", ROGERS)


def test_the_end_of_a_range_does_not_answer_when_something_began():
    assert "2001" not in _texts("When did Mister Rogers' Neighborhood start?", ROGERS)


def test_both_ends_of_a_range_stay_for_a_question_that_asks_neither():
    assert {"1968", "2001"} <= _texts("When was Mister Rogers' Neighborhood broadcast?", ROGERS)


def test_a_phrase_after_a_copula_answers_what_kind_the_questions_own_subject_is():
    ps = Passage("11-0", "Cape of Good Hope", "", "The Cape of Good Hope is a rocky headland "
                 "on the Atlantic coast.")  # fmt: skip
    assert "rocky headland" in _texts("Which headland is the Cape of Good Hope?", ps)


GREENLAND = Passage("13-0", "Greenland", "", "Greenland is an autonomous territory of the "
                    "Kingdom of Denmark. Greenland is not part of the EU.")  # fmt: skip


def test_a_span_the_sentence_denies_the_asked_relation_of_is_not_a_candidate():
    assert "EU" not in _texts("Which country is Greenland part of?", GREENLAND)


def test_a_negation_beyond_the_clause_denies_nothing():
    ps = Passage("14-0", "Tuvalu", "", "Tuvalu has no official language; English is used.")
    assert "English" in _texts("What is the official language of Tuvalu?", ps)


def test_a_negation_the_question_shares_denies_nothing():
    assert "EU" in _texts("Which union is Greenland not part of?", GREENLAND)


# Real sentences (enwiki sample, "Astronaut"; CC BY-SA Wikipedia contributors).
JEMISON = Passage("A-1", "Astronaut", "Women in space", "In 1992 Mae Jemison became the "
                  "first African American woman to travel in space aboard STS-47.")  # fmt: skip
TERESHKOVA = Passage("A-2", "Astronaut", "Women in space", "The first woman in space was "
                     "Soviet Valentina Tereshkova, who launched on June 16, 1963.")  # fmt: skip
FIRST_WOMAN = "Who was the first woman to travel into space?"


def test_a_first_qualified_by_words_the_question_lacks_yields_to_one_stated_as_asked():
    assert "Mae Jemison" not in _texts(FIRST_WOMAN, [JEMISON, TERESHKOVA])


def test_a_qualified_first_stays_when_no_sentence_states_it_as_asked():
    assert "Mae Jemison" in _texts(FIRST_WOMAN, JEMISON)


def test_a_qualified_first_stays_when_the_question_says_the_qualifier_elsewhere():
    # made up, after the sentences above
    soviet = Passage("A-3", "Astronaut", "", "In 1963 Tereshkova became the first Soviet "
                     "woman in orbit. She was the first woman in orbit, in Vostok 6.")  # fmt: skip
    q = "Who was the first woman in orbit from the Soviet Union?"
    assert "Tereshkova" in _texts(q, soviet)


# made up: a superlative, which the tagger tags JJ as it does any adjective
LAKES = [
    Passage("L-1", "Lake Tanganyika", "", "Lake Tanganyika is the largest rift lake in Africa."),
    Passage("L-2", "Lake Victoria", "", "Lake Victoria is the largest lake in Africa."),
]


def test_a_superlative_qualified_by_words_the_question_lacks_yields_to_one_stated_as_asked():
    assert "Lake Tanganyika" not in _texts("Which is the largest lake in Africa?", LAKES)


def test_a_superlative_after_most_is_read_with_its_adjective():
    assert rf.ranked_kinds("Which is the most populous city of Africa?") == (("popul", "citi"),)


def test_an_adjective_that_only_ends_like_a_superlative_is_none():
    assert rf.ranked_kinds("Who was the honest man?") == ()


def test_a_superlative_with_no_article_or_possessive_ranks_nothing():
    """A kind of album ("greatest hits"), where "the greatest" would rank."""
    assert rf.ranked_kinds("How many greatest hits albums did Queen release?") == ()


def test_a_noun_that_ends_like_a_superlative_is_none_after_an_article():
    assert rf.ranked_kinds("When is the harvest festival held?") == ()


def test_least_is_no_most():
    assert rf.ranked_kinds("Which is the least populous country?") == ()


# Real sentences (vital-en, "Düsseldorf" and "Cologne"; CC BY-SA Wikipedia contributors).
DUSSELDORF = Passage("D-1", "Düsseldorf", "", "Düsseldorf is the capital city of North "
                     "Rhine-Westphalia, the most populous state of Germany. It is the "
                     "second-largest city in the state after Cologne.")  # fmt: skip
COLOGNE = Passage("C-1", "Cologne", "", "Cologne is the fourth-most populous city of "
                  "Germany and the largest city of the German state of North "
                  "Rhine-Westphalia.")  # fmt: skip
BIGGEST_CITY = "Which is the biggest city in North Rhine-Westphalia?"


def test_a_sentence_that_states_the_asked_rank_leaves_out_the_spans_of_others():
    assert "Düsseldorf" not in _texts(BIGGEST_CITY, [DUSSELDORF, COLOGNE])


def test_a_lower_rank_does_not_state_the_asked_one():
    assert "Düsseldorf" in _texts(BIGGEST_CITY, DUSSELDORF)


def test_an_ordinal_before_most_is_a_lower_rank():
    q = rf.analyse("Which is the most populous city of Germany?")
    stated = rf._states_rank(q, ["Cologne is the fourth most populous city of Germany."])
    assert stated.stating == set()


def test_a_superlative_whose_noun_went_before_it_states_the_rank():
    # real sentences (vital-en, "Jupiter" and "Planet"; CC BY-SA Wikipedia contributors)
    ps = [Passage("P-1", "Planet", "", "The Solar System has eight planets: the terrestrial "
                  "planets Mercury, Venus, Earth, and Mars, and the giant planets Jupiter, "
                  "Saturn, Uranus, and Neptune."),
          Passage("J-1", "Jupiter", "", "Jupiter is the fifth planet from the Sun and the "
                  "largest in the Solar System.")]  # fmt: skip
    assert "Earth" not in _texts("What is the largest planet in the Solar System?", ps)


def test_a_superlative_whose_noun_the_question_said_before_ranks_that_noun():
    q = "Which hot desert is the largest on Earth?"
    assert rf.ranked_kinds(q) == (("largest", "desert"),)


# Real sentences (vital-en, "Chihuahuan Desert" and "Sahara"; CC BY-SA Wikipedia
# contributors), shortened, their pronoun replaced by the name it stands for.
CHIHUAHUAN = Passage("H-1", "Chihuahuan Desert", "", "With an area of about 501,896 "
                     "km2, the Chihuahuan Desert is the largest hot desert in North "
                     "America.")  # fmt: skip
SAHARA = Passage("S-1", "Sahara", "", "With an area of 9,200,000 square kilometres, the "
                 "Sahara is the largest hot desert in the world.")  # fmt: skip
HOTTEST_DESERT = "Which hot desert is the largest on Earth?"


def test_a_rank_within_a_scope_the_question_does_not_name_yields_to_one_in_its_scope():
    assert "Chihuahuan Desert" not in _texts(HOTTEST_DESERT, [CHIHUAHUAN, SAHARA])


def test_the_world_is_the_scope_earth_names():
    assert "Sahara" in _texts(HOTTEST_DESERT, [CHIHUAHUAN, SAHARA])


def test_a_rank_within_another_scope_is_left_out_when_other_sentences_have_spans():
    other = Passage("D-2", "Desert", "", "Polar deserts cover much of Antarctica.")
    assert "Chihuahuan Desert" not in _texts(HOTTEST_DESERT, [CHIHUAHUAN, other])


def test_the_world_in_lower_case_is_a_scope_too():
    q = "Which is the largest hot desert in the world?"
    assert "Chihuahuan Desert" not in _texts(q, [CHIHUAHUAN, SAHARA])


def test_a_rank_in_a_question_with_no_scope_is_stated_in_any():
    assert "Chihuahuan Desert" in _texts("Which is the largest hot desert?", [CHIHUAHUAN])


# real sentence (vital-en, "Nile"; CC BY-SA Wikipedia contributors), its pronoun resolved
NILE = Passage("N-1", "Nile", "", "At 7,088 kilometers (4,404 mi) long, the Nile is the "
               "longest river in the world.")  # fmt: skip


def test_the_worlds_rank_holds_in_the_scope_the_question_gives():
    assert "Nile" in _texts("What is the longest river in Africa?", NILE)


def test_the_scope_of_the_rank_is_not_the_ranked_thing():
    assert "world" not in _texts("What is the longest river in Africa?", NILE)


def test_the_scope_answers_a_question_that_asks_for_it():
    ps = Passage("N-2", "Nile", "", "The longest river in Africa is the Nile.")  # made up
    assert "Africa" in _texts("Which continent has the longest river?", ps)


def test_a_rank_within_part_of_the_asked_scope_is_narrower():
    # real sentence (vital-en, "Orange River"; CC BY-SA Wikipedia contributors), its
    # pronoun resolved
    orange = Passage("O-1", "Orange River", "", "The Orange River is the longest river in "
                     "South Africa.")  # fmt: skip
    assert "Orange River" not in _texts("What is the longest river in Africa?", [orange, NILE])


def test_the_scope_ends_where_its_clause_does():
    sahara = Passage("S-2", "Sahara", "", "The Sahara is the largest hot desert in the world "
                     "and the third-largest desert after Antarctica.")  # fmt: skip
    assert "Chihuahuan Desert" not in _texts(HOTTEST_DESERT, [CHIHUAHUAN, sahara])


def test_the_scope_ends_with_its_sentence():
    q = rf.analyse(HOTTEST_DESERT)
    text = "The Sahara is the largest hot desert in the world. Antarctica is colder."
    assert rf.states_asked_rank(q, text)


def test_a_passage_states_a_rank_only_within_one_sentence():
    q = rf.analyse("What is the largest country by area?")
    text = "Iraq is a country in West Asia. Its capital is the largest in the region."  # made up
    assert not rf.states_asked_rank(q, text)


def test_a_rank_of_a_noun_the_ranked_one_modifies_is_another_rank():
    # real sentence (vital-en, "Sinking of the Titanic"; CC BY-SA Wikipedia contributors)
    q = rf.analyse("What is the largest ocean on Earth?")
    text = "The largest ocean liner in service at the time, Titanic was four days into her voyage."
    assert not rf.states_asked_rank(q, text)


def test_a_participle_after_the_ranked_noun_keeps_the_rank():
    q = rf.analyse("Who was the first woman elected to the Senate?")
    assert rf.states_asked_rank(q, "Jane Doe was the first woman elected to the Senate.")


def test_a_first_that_is_not_to_do_what_the_question_asks_states_another_first():
    # real sentence (vital-en, "Adam and Eve"; CC BY-SA Wikipedia contributors)
    q = rf.analyse("Who was the first man to walk on the Moon?")
    text = "Adam and Eve, according to the creation myth, were the first man and woman."
    assert not rf.states_asked_rank(q, text)


def test_a_measure_a_rank_goes_by_is_not_what_is_asked():
    assert rf.question_kind("What is the largest country by area?") == ("what", ())


# real sentences (vital-en, "Russia", "Brazil" and "Myanmar"; CC BY-SA Wikipedia
# contributors), their pronouns resolved
RUSSIA = Passage("R-1", "Russia", "", "Russia is the largest country in the world, spanning "
                 "eleven time zones.")  # fmt: skip
LARGEST_COUNTRY = "What is the largest country by area?"


def test_a_rank_the_question_does_not_scope_is_the_worlds_when_a_sentence_says_so():
    brazil = Passage("B-1", "Brazil", "", "Brazil is the largest country in South America.")
    assert "Brazil" not in _texts(LARGEST_COUNTRY, [brazil, RUSSIA])


def test_the_measure_a_rank_goes_by_does_not_hide_its_scope():
    myanmar = Passage("M-1", "Myanmar", "", "Myanmar is the largest country by area in "
                      "Mainland Southeast Asia.")  # fmt: skip
    assert "Myanmar" not in _texts(LARGEST_COUNTRY, [myanmar, RUSSIA])


def test_the_nationality_of_the_place_the_question_names_states_its_rank():
    # real sentences (vital-en, "Tiberius" and "Emperor Gaozu of Han"; CC BY-SA Wikipedia
    # contributors)
    ps = [Passage("T-1", "Tiberius", "", "He succeeded his stepfather Augustus, the first "
                  "Roman emperor."),
          Passage("G-1", "Emperor Gaozu of Han", "", "Emperor Gaozu of Han was the founder "
                  "and first emperor of the Han dynasty.")]  # fmt: skip
    assert "Emperor Gaozu of Han" not in _texts("Who was the first emperor of Rome?", ps)


def test_a_nationality_before_a_persons_name_is_not_part_of_the_name():
    cands = rf.candidates(FIRST_WOMAN, [TERESHKOVA], names=frozenset({"valentina"}))
    assert "Valentina Tereshkova" in {c.text for c in cands}


def test_a_nationality_stays_before_a_name_that_is_no_persons():
    ps = Passage("5-0", "Ireland", "", "The Irish Free State was established in 1922.")
    names = frozenset({"valentina"})  # given names; "Free" is none
    cands = rf.candidates("Which state was established in 1922?", [ps], names=names)
    assert "Irish Free State" in {c.text for c in cands}


# Real sentence (vital-en, "Summer Olympic Games"; CC BY-SA Wikipedia contributors).
OLYMPICS = Passage("9-0", "Summer Olympic Games", "", "The inaugural Games took place in "
                   "1896 in Athens, and the most recent was held in 2024 in Paris.")  # fmt: skip


def test_a_span_after_the_last_does_not_answer_a_question_about_the_first():
    assert "Paris" not in _texts("In which city were the first Summer Olympics held?", OLYMPICS)


def test_a_span_after_the_first_does_not_answer_a_question_about_the_last():
    assert "Athens" not in _texts("In which city were the latest Summer Olympics held?", OLYMPICS)


def test_both_stay_for_a_question_that_asks_neither_first_nor_last():
    assert {"Athens", "Paris"} <= _texts("In which cities were Summer Olympics held?", OLYMPICS)


def test_another_ordinal_between_ends_the_reach_of_a_first():
    # real (enwiki sample, "Articles of Confederation"; CC BY-SA Wikipedia contributors)
    ps = Passage("10-0", "Articles of Confederation", "", "The first state to ratify was "
                 "Virginia on December 16, 1777; the thirteenth state to ratify was "
                 "Maryland on February 2, 1781.")  # fmt: skip
    q = "Which was the last of the thirteen states to ratify the Articles of Confederation?"
    assert "Maryland" in _texts(q, ps)


def test_a_span_after_since_is_the_one_before_the_first():
    # real (vital-en, "Pope John Paul II"; CC BY-SA Wikipedia contributors)
    ps = Passage("12-0", "Pope John Paul II", "", "He was the first non-Italian pope since "
                 "Adrian VI in the 16th century.")  # fmt: skip
    q = "Before John Paul II, who was the last pope who was not Italian?"
    assert "Adrian VI" in _texts(q, ps)


# Real sentence (vital-en, "Electric battery"; CC BY-SA Wikipedia contributors).
BATTERY = Passage("15-0", "Electric battery", "", "When a battery is supplying power, its "
                  "positive terminal is the cathode and its negative terminal is the "
                  "anode.")  # fmt: skip


def test_of_two_paired_subjects_only_the_one_said_to_be_the_asked_thing_stays():
    got = _texts("Which terminal of a battery acts as the anode?", BATTERY)
    assert ("positive terminal" in got, "negative terminal" in got) == (False, True)


def test_both_paired_subjects_stay_when_the_question_names_neither_thing():
    got = _texts("Which terminals does a battery have?", BATTERY)
    assert {"positive terminal", "negative terminal"} <= got


def test_a_subject_said_to_be_no_thing_is_paired_with_nothing():
    # real (vital-en, "Optical illusion"; CC BY-SA Wikipedia contributors): "is often" and
    # "is useful" say no thing, so neither pairs with the other
    ps = Passage("16-0", "Optical illusion", "", "Their categorization is difficult because "
                 "the underlying cause is often not clear but a classification proposed by "
                 "Richard Gregory is useful as an orientation.")  # fmt: skip
    q = "Whose classification of illusions guides, though the cause is often unclear?"
    assert "Richard Gregory" in _texts(q, ps)


# Real sentence (vital-en, "Missouri River"; CC BY-SA Wikipedia contributors), shortened.
MISSOURI = Passage("17-0", "Missouri River", "", "The Missouri River is a river in the "
                   "Central and Mountain West regions of the United States. It rises in the "
                   "Rocky Mountains of southwestern Montana.")  # fmt: skip


def test_the_full_name_of_an_abbreviation_the_question_writes_is_not_a_candidate():
    q = "In which U.S. state does the Missouri River have its source?"
    assert "United States" not in _texts(q, MISSOURI)


def test_the_full_name_stays_when_the_abbreviation_stands_alone():
    ps = Passage("18-0", "Federal Aviation Administration", "", "The Federal Aviation "
                 "Administration (FAA) is the largest transportation agency of the U.S. "
                 "government.")  # fmt: skip
    assert "Federal Aviation Administration" in _texts("What is the FAA?", ps)


def test_another_form_of_the_questions_verb_reads_as_the_verb():
    # "discovery" states what "discovered" asks: the sentence overlaps the relation asked
    ps = Passage("19-0", "Alexander Fleming", "", "Fleming shared the Nobel Prize with "
                 "Howard Florey for the discovery of penicillin.")  # fmt: skip
    (c,) = [
        c for c in rf.candidates("Who discovered penicillin?", [ps]) if c.text == "Howard Florey"
    ]
    assert dict(zip(rf.FEATURES, c.features.tolist(), strict=True))["relation_overlap"] == 1.0


def test_a_death_states_when_someone_died():
    # "until her death in 1780" answers "In what year did Empress Maria Theresa die?"
    assert rf.related_stems("In what year did Empress Maria Theresa die?") == {"death": "die"}


def test_a_noun_of_the_question_gives_no_other_forms():
    # "the film director" describes the person asked about; "directed" is not the relation
    assert "direct" not in rf.related_stems("In which city was the film director Allan Dwan born?")


# Real lead (vital-en, "Pride and Prejudice"; CC BY-SA Wikipedia contributors), shortened.
PRIDE = Passage("20-0", "Pride and Prejudice", "", "Pride and Prejudice is a novel by English "
                "author Jane Austen. A novel of manners, it follows the character development "
                "of Elizabeth Bennet, the protagonist.")  # fmt: skip


def test_the_author_answers_who_wrote():
    reading = Reader.for_index(None).read("Who wrote Pride and Prejudice?", [PRIDE])
    assert getattr(reading.candidate, "text", None) == "Jane Austen"
