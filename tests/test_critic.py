"""The critic loop's critics: abstention and form-only classifiers, the heuristic critic on
the five SCIM dimensions, and robust parsing of a model critic's free text."""

from __future__ import annotations

import pytest

from scim_edge.critic import (
    CRITIC_PROMPT,
    HeuristicCritic,
    ModelCritic,
    guidance_for,
    is_abstention,
    is_form_only,
    is_role_only,
    make_critic,
    parse_critique,
    predicate_gaps,
    predicate_keywords,
)
from scim_edge.errors import ModelError, UserError
from scim_edge.settings import Settings
from scim_edge.types import INSUFFICIENT_EVIDENCE, Passage, Verdict

ACHILLES = [
    Passage(
        "305-0",
        "Achilles",
        "",
        "In Greek mythology, Achilles was a Greek hero of the Trojan War and the central "
        "character and greatest warrior of Homer's Iliad. His mother was the nymph Thetis, "
        "and his father, Peleus, was the king of the Myrmidons.",
    ),
    Passage(
        "305-1",
        "Achilles",
        "Death",
        "Achilles was killed by Paris in 1184 BC, when an arrow struck his heel.",
    ),
]
QUESTION = "Who was the mother of the Greek hero Achilles?"


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   ",
        "unknown",
        "Unknown.",
        "I don't know.",
        "I do not know",
        "There is not enough information to say.",
        "It cannot be determined from the context.",
        "The context does not say.",
        "The passages do not mention who it was.",
        INSUFFICIENT_EVIDENCE,
        "N/A",
        "...",
    ],
)
def test_abstentions_are_recognised(answer):
    assert is_abstention(answer)


@pytest.mark.parametrize(
    "answer",
    ["Thetis", "1729", "Tomb of the Unknown Soldier", "No", "None of the five", "Booth"],
)
def test_direct_answers_are_not_abstentions(answer):
    assert not is_abstention(answer)


@pytest.mark.parametrize(
    "reason, issues, expected",
    [
        ("The answer should be shorter and more direct.", [], True),
        ("Too verbose; give only the name.", [], True),
        ("Please format the answer as a list.", [], True),
        ("", ["Answer in one word."], True),
        # missing-evidence signals anywhere make it mixed, so not form-only
        ("Shorter please.", ["no evidence for: birth year"], False),
        ("Too long, and the passages do not mention the date.", [], False),
        ("The answer is not supported by the evidence.", [], False),
        # unrecognised feedback is not form-only either
        ("Hmm.", [], False),
        ("", [], False),
    ],
)
def test_form_only_classifier(reason, issues, expected):
    assert is_form_only(Verdict(accept=False, issues=issues, reason=reason)) is expected


def test_an_approval_is_never_form_only():
    assert not is_form_only(Verdict(accept=True, reason="shorter would be nicer"))


def test_guidance_is_bounded_to_160_chars():
    v = Verdict(accept=False, reason="Be shorter. " * 40)
    g = guidance_for(v)
    assert 0 < len(g) <= 160
    assert g.startswith("Be shorter.")


# ---- heuristic critic -------------------------------------------------------------------


def test_heuristic_critic_approves_a_supported_short_answer():
    v = HeuristicCritic(Settings()).judge(QUESTION, "Thetis", ACHILLES)
    assert v.accept, v
    assert v.issues == []
    # the claim that grounds the short answer is the passage sentence stating it
    assert "nymph Thetis" in v.raw


def test_heuristic_critic_names_unsupported_words_and_missing_keywords():
    v = HeuristicCritic(Settings()).judge(QUESTION, "Hera of Olympus", ACHILLES)
    assert not v.accept
    assert "unsupported: hera, olympus" in v.issues
    assert any(i.startswith("no evidence for: ") and "mother" in i for i in v.issues)
    assert "consistency 0.00 < 0.60" in v.reason
    assert not v.form_only


def test_heuristic_critic_lists_keywords_no_passage_covers_first():
    q = "Who was the mother of the Greek hero Achilles in the Aeneid?"
    v = HeuristicCritic(Settings()).judge(q, "Zeus", ACHILLES)
    no_ev = [i for i in v.issues if i.startswith("no evidence for: ")]
    assert no_ev == ["no evidence for: aeneid"]


LINCOLN = [
    Passage(
        "9-0",
        "Abraham Lincoln",
        "",
        "Abraham Lincoln was the 16th President of the United States, serving from March "
        "1861 until his assassination in April 1865.",
    ),
]


@pytest.mark.parametrize("answer", ["President", "the President", "president", "King"])
def test_who_question_answered_with_a_role_is_rejected(answer):
    v = HeuristicCritic(Settings()).judge("Who assassinated Abraham Lincoln?", answer, LINCOLN)
    assert not v.accept
    assert "not a name" in v.reason
    assert "no evidence for: the name of who assassinated Abraham Lincoln" in v.issues
    assert not v.form_only


@pytest.mark.parametrize(
    "answer, role_only",
    [
        ("President", True),
        ("the king", True),
        ("nymph", True),
        ("President Lincoln", False),
        ("John Wilkes Booth", False),
        ("King Henry VIII", False),
        ("Ἀχιλλεύς", False),
    ],
)
def test_role_only_answers(answer, role_only):
    assert is_role_only(answer) is role_only


def test_a_who_answer_must_name_someone_the_question_does_not():
    q = "Who assassinated Abraham Lincoln?"
    assert is_role_only("Abraham Lincoln (February 12, 1809.", q)
    assert not is_role_only("John Wilkes Booth", q)
    v = HeuristicCritic(Settings()).judge(q, "Abraham Lincoln (February 12, 1809.", LINCOLN)
    assert not v.accept
    assert "not a name" in v.reason


def test_a_role_is_fine_for_a_non_who_question():
    q = "What office did Abraham Lincoln hold?"
    v = HeuristicCritic(Settings()).judge(q, "President", LINCOLN)
    assert "not a name" not in v.reason


@pytest.mark.parametrize(
    "question, expected",
    [
        ("Who designed the flag of Alaska?", ["designed", "flag"]),
        ("Who assassinated Abraham Lincoln?", ["assassinated"]),
        # descriptors of a name and the answer-type noun are not the predicate
        ("Who was the mother of the Greek hero Achilles?", ["mother"]),
        ("In which city was the film director Allan Dwan born?", ["born"]),
        ("Which sculptor turned the design into a statuette?", ["turned", "design", "statuette"]),
    ],
)
def test_predicate_keywords(question, expected):
    assert predicate_keywords(question) == expected


ALASKA = [
    Passage(
        "1-0",
        "Alaska",
        "",
        "For most of Alaska's first decade under the United States flag, Sitka was the only "
        "community inhabited by American settlers. The flag of Alaska shows the Big Dipper.",
    ),
    Passage("1-1", "Alaska", "Flag", "The flag was designed in 1926 for a territory contest."),
]


def test_a_sentence_that_only_mentions_the_answer_grounds_nothing():
    critic = HeuristicCritic(Settings())
    q = "Who designed the flag of Alaska?"
    # every keyword occurs somewhere in the passages, but not in the sentence naming Sitka
    assert predicate_gaps(q, critic.claim(q, "Sitka", ALASKA), "Sitka") == ["designed"]
    v = critic.judge(q, "Sitka", ALASKA)
    assert not v.accept
    assert "no sentence stating the answer supports: designed" in v.reason
    assert any(i.startswith("no evidence for: designed") for i in v.issues)
    # the claim did not lift the scores: they are the bare answer's own
    own = critic.evaluator.score(q, "Sitka", ALASKA)
    assert critic.last_scores["completeness"] == round(own.completeness, 4)
    assert critic.last_scores["factuality"] == round(own.factuality, 4)


def test_irregular_verb_forms_count_as_stated():
    q = "Who wrote the lyrics of the song America the Beautiful?"
    claim = "America the Beautiful: The lyrics were written by Katharine Lee Bates."
    assert predicate_gaps(q, claim, "Bates") == []


def test_heuristic_thresholds_come_from_settings():
    strict = Settings(critic_min_completeness=0.99)
    assert HeuristicCritic(Settings()).judge(QUESTION, "Thetis", ACHILLES).accept
    v = HeuristicCritic(strict).judge(QUESTION, "Thetis", ACHILLES)
    assert not v.accept
    assert "completeness" in v.reason
    assert "< 0.99" in v.reason
    lax_facts = Settings(critic_min_factuality=0.0, critic_min_completeness=0.0)
    assert not HeuristicCritic(lax_facts).judge(QUESTION, "Hera", ACHILLES).accept  # consistency


def test_heuristic_critic_never_approves_an_abstention():
    lax = Settings(
        critic_min_consistency=0.0, critic_min_factuality=0.0, critic_min_completeness=0.0
    )
    v = HeuristicCritic(lax).judge(QUESTION, "I don't know.", ACHILLES)
    assert not v.accept
    assert v.reason.startswith("the answer abstains")


# ---- model critic output parsing ----------------------------------------------------------


@pytest.mark.parametrize(
    "raw, accept, issues",
    [
        ("Accept", True, []),
        ("accept.", True, []),
        ("Yes", True, []),
        ("Accept. Nothing is missing.", True, []),
        ("Reject", False, []),
        (
            "Reject. Missing: the year of publication.",
            False,
            ["no evidence for: the year of publication"],
        ),
        (
            "reject - no evidence for the birth date of Huxley",
            False,
            ["no evidence for: the birth date of Huxley"],
        ),
        (
            "No. The evidence lacks the name of the sculptor.",
            False,
            ["no evidence for: the name of the sculptor"],
        ),
        (
            "The answer is not supported. Evidence about the crew is missing.",
            False,
            ["Evidence about the crew is missing"],
        ),
        ("I would not accept this answer", False, []),
        ("  **REJECT**: missing the capital", False, ["no evidence for: the capital"]),
    ],
)
def test_parse_critique(raw, accept, issues):
    v = parse_critique(raw)
    assert v.accept is accept
    assert v.issues == issues
    assert v.raw == raw.strip()


@pytest.mark.parametrize("raw", ["", "   ", "Paris is a city in France", "?!"])
def test_unparseable_critique_is_a_reject_that_keeps_the_raw_text(raw):
    v = parse_critique(raw)
    assert not v.accept
    assert v.reason == "unparseable critique"
    assert v.raw == raw.strip()


def test_parse_critique_issue_cut_to_160_and_at_most_three():
    raw = "Reject. " + " ".join(f"Missing: fact number {i} " + "x" * 200 + "." for i in range(5))
    v = parse_critique(raw)
    assert len(v.issues) == 3
    assert all(len(i) <= 160 for i in v.issues)


def test_form_only_model_critique():
    v = parse_critique("Reject. The answer should be shorter and more direct.")
    assert not v.accept
    assert v.form_only


class FakeSeq2Seq:
    """Stands in for the Flan-T5 runtime: records what it is asked, returns a script."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.calls: list[dict] = []

    def generate_text(self, prompt, max_input_tokens=None, max_new_tokens=None, **kw):
        self.calls.append(
            {
                "prompt": prompt,
                "max_input_tokens": max_input_tokens,
                "max_new_tokens": max_new_tokens,
            }
        )
        return self.reply, len(prompt.split()), len(self.reply.split())


def test_model_critic_prompt_and_token_limit():
    model = FakeSeq2Seq("Reject. Missing: the name of his mother.")
    critic = ModelCritic(Settings(critic_max_tokens=77), model)
    v = critic.judge(QUESTION, "Peleus", ACHILLES)
    assert not v.accept
    assert v.issues == ["no evidence for: the name of his mother"]
    call = model.calls[0]
    assert call["max_new_tokens"] == 77
    prompt = call["prompt"]
    assert prompt.startswith(f"Question: {QUESTION}\nEvidence: Achilles: In Greek mythology")
    assert "\nProposed answer: Peleus\n" in prompt
    assert prompt.endswith(
        "Is the answer supported by the evidence? Answer Accept or Reject, "
        "then say what evidence is missing."
    )
    assert CRITIC_PROMPT.split("{")[0] == "Question: "


def test_model_critic_evidence_is_budgeted_so_the_answer_survives():
    long = [Passage(f"1-{i}", "T", "", "word " * 2000) for i in range(5)]
    model = FakeSeq2Seq("Accept")
    critic = ModelCritic(Settings(input_max_tokens=200, passage_max_tokens=100), model)
    assert critic.judge("Q?", "the answer", long).accept
    prompt = model.calls[0]["prompt"]
    assert len(prompt.split()) < 200
    assert "Proposed answer: the answer" in prompt


def test_model_critic_unparseable_output_rejects_with_raw_text():
    model = FakeSeq2Seq("the the the")
    v = ModelCritic(Settings(), model).judge(QUESTION, "Thetis", ACHILLES)
    assert not v.accept
    assert v.raw == "the the the"


def test_model_critic_without_an_installed_model_is_a_one_line_user_error():
    with pytest.raises(ModelError) as e:
        make_critic(Settings(critic="model", model="extractive"))
    assert isinstance(e.value, UserError)
    assert "\n" not in e.value.one_line()


def test_make_critic_heuristic():
    assert make_critic(Settings()).name == "heuristic"


# ---- the model critic on a real ONNX seq2seq model -------------------------------------------


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory):
    from test_offline import exported_tiny_t5

    return exported_tiny_t5(tmp_path_factory)


class Counting:
    """The real model, with the token counts of each generate_text call written down."""

    def __init__(self, model) -> None:
        self.model = model
        self.eos_id = model.eos_id
        self.counts: list[tuple[int, int]] = []

    def encode(self, text, max_tokens=None):
        return self.model.encode(text, max_tokens)

    def decode(self, ids):
        return self.model.decode(ids)

    def generate_text(self, prompt, **kw):
        text, n_in, n_out = self.model.generate_text(prompt, **kw)
        self.counts.append((n_in, n_out))
        return text, n_in, n_out


def test_model_critic_on_a_real_onnx_model_keeps_prompt_and_critique_bounded(tiny_t5):
    from models.seq2seq import Seq2SeqModel

    model = Counting(Seq2SeqModel.load(tiny_t5))
    s = Settings(critic_max_tokens=3, input_max_tokens=256, passage_max_tokens=40)
    critic = ModelCritic(s, model, "tiny-t5")
    long = [
        Passage(f"9-{i}", "Danube", "", "The Danube flows through Vienna. " * 60) for i in range(4)
    ]
    prompt = critic.prompt("Where does the Danube flow?", "Vienna", long)
    assert len(model.encode(prompt)) <= 256
    assert "\nProposed answer: Vienna\nIs the answer supported by the evidence?" in prompt
    assert prompt.count("The Danube flows through Vienna.") > 3  # evidence fills the budget
    v = critic.judge("Where does the Danube flow?", "Vienna", long)
    ((n_in, n_out),) = model.counts
    assert n_in <= 256  # critic_max_tokens bounds the critique
    assert 0 < n_out <= 3
    assert v.raw == v.raw.strip()
    if v.reason == "unparseable critique":
        assert not v.accept


def test_ask_simrag_with_the_model_critic(tiny_t5, sample_index, isolated_home, capsys):
    import json
    import shutil

    from scim_edge.cli import main

    shutil.copytree(tiny_t5, isolated_home / "models" / tiny_t5.name)
    rc = main(
        [
            "ask",
            QUESTION,
            "--loop",
            "simrag",
            "--critic",
            "model",
            "--model",
            "extractive",
            "--critic-max-tokens",
            "4",
            "--max-iterations",
            "2",
            "--index",
            str(sample_index),
            "--json",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["bindings"]["critic"] == "model:tiny-t5"
    critiques = [t for t in out["trace"] if t["kind"] == "critiqued"]
    assert critiques
    for c in critiques:
        v = c["verdict"]
        assert isinstance(v["raw"], str)  # the raw critique is always in the trace
        if v["reason"] == "unparseable critique":
            assert v["accept"] is False
    if out["status"] != "accepted":
        assert out["answer"] == INSUFFICIENT_EVIDENCE


# The first verdict word counts only within the first 80 characters of the critique.
_FILLER = "the passage about the general and his campaign in the west says much about it ok"


def test_verdict_word_at_character_80_counts():
    text = _FILLER[:79] + " Accept."
    assert text.index("Accept") == 80
    verdict = parse_critique(text)
    assert verdict.accept is True
    assert verdict.reason != "unparseable critique"


def test_verdict_word_past_character_80_is_not_a_verdict():
    text = _FILLER[:80] + " Accept."
    assert text.index("Accept") == 81
    verdict = parse_critique(text)
    assert verdict.accept is False
    assert verdict.reason == "unparseable critique"
