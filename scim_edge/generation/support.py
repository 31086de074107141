"""The sentence that supports a short answer (Natural Questions' long answer).

Every generator returns, beside its short answer, the passage sentence that backs it: the
extractive reader knows the sentence it took the span from; for generated text (Flan-T5)
and for clause answers it is the passage sentence that contains the answer, or else shares
most of its words (ties go to the better-ranked passage).
"""

from __future__ import annotations

from collections.abc import Sequence

from scim_edge import textutil as tu
from scim_edge.evaluation.metrics import normalize_answer
from scim_edge.types import Passage


def support_of(sentence: str, passage: Passage) -> dict[str, str]:
    """An `Answer.support` entry: {sentence, doc_id, title, section}."""
    return {
        "sentence": " ".join(sentence.split()),
        "doc_id": passage.doc_id,
        "title": passage.title,
        "section": passage.section,
    }


def support_sentence(support: Sequence[dict[str, str]]) -> str:
    """The sentence of an `Answer.support` list ("" for none): what a user reads beside the
    answer, what practice traces record, and what tells a repeated answer's second
    witness from a re-reading (`trained_critic.repeat_confidence`)."""
    return str(support[0].get("sentence", "")) if support else ""


def best_support(answer: str, passages: Sequence[Passage]) -> list[dict[str, str]]:
    """[the passage sentence that best backs `answer`], or [] when none shares a word."""
    if not answer.strip():
        return []
    key = normalize_answer(answer)
    a_stems = tu.stem_set(answer)
    best: tuple[tuple[int, int, int], str, Passage] | None = None
    for rank, p in enumerate(passages):
        for sent in tu.sentences(p.text):
            contains = int(bool(key) and f" {key} " in f" {normalize_answer(sent)} ")
            shared = len(a_stems & tu.stem_set(sent))
            score = (contains, shared, -rank)
            if (contains or shared) and (best is None or score > best[0]):
                best = (score, sent, p)
    return [support_of(best[1], best[2])] if best else []
