"""What the trained Critic reads about one round of a loop (SIM-RAG §3.3's inputs, as
numbers): the answer's five SCIM dimensions and Q, the reader's own signals (its pick's
probability and margin over the others, its raw score, which says how well it fits
whatever competes with it, and the rest of the pick's features: its kind against the
question's, what its own article says it is, where it stands in its sentence), the round
and the evidence it brought, agreement with earlier rounds, and retrieval scores. The
pick's full features lifted held-out AUROC on vital-en practice from 0.836 to 0.840, and
on the sample's 600 self-made questions from 0.763/0.777 to 0.776/0.789 (standard/SCIM).

The same function makes the features for practice traces (training) and for live rounds
(inference), so the Critic never sees a feature computed two ways. `rounds_features` does
the same for the second look a multi-round loop's returned answer gets: how its rounds
agreed.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from scim_edge.evaluation.metrics import normalize_answer
from scim_edge.generation import reader_features as rf

SCORE_KEYS = ("completeness", "consistency", "confidence", "factuality", "coherence", "quality")
READER_KEYS = (
    "span_prob",
    "margin",
    "span_score",
    "type_fits",
    "n_candidates",
    "sent_idf_overlap",
    "window_overlap",
    "prox_recip",
    "agree_passages",
    "rank_recip",
    "title_overlap",
    "comparison",  # the answer was decided by comparing two stated facts
)
# the reader's other features of its pick: its kind against the question's, what the
# answer's own article says it is, where it stands in its sentence
PICK_KEYS: tuple[str, ...] = tuple(k for k in rf.FEATURES if k not in READER_KEYS)
FEATURES: tuple[str, ...] = (
    *(f"q:{k}" for k in SCORE_KEYS),
    *(f"r:{k}" for k in READER_KEYS),
    *(f"r:{k}" for k in PICK_KEYS),
    "has_reader",
    "round",
    "first_round",
    "new_passages",
    "no_new_passages",
    "agrees_prev",
    "agree_share",
    "answer_words",
    "answer_empty",
    "top_score",
    "new_top_score",
)


def round_features(
    answer: str,
    scores: Mapping[str, float],
    reader: Mapping[str, float],
    t: int,
    new_ids: Sequence[str],
    doc_ids: Sequence[str],
    previous_answers: Sequence[str],
    passage_scores: Mapping[str, float],
) -> dict[str, float]:
    """The Critic's features of one round; every value finite."""
    f: dict[str, float] = {}
    for k in SCORE_KEYS:
        f[f"q:{k}"] = float(scores.get(k, 0.0))
    for k in (*READER_KEYS, *PICK_KEYS):
        v = float(reader.get(k, 0.0))
        f[f"r:{k}"] = math.log1p(v) if k == "n_candidates" else v
    f["has_reader"] = float(bool(reader))
    f["round"] = float(t)
    f["first_round"] = float(t == 1)
    f["new_passages"] = float(len(new_ids))
    f["no_new_passages"] = float(not new_ids)
    norm = normalize_answer(answer)
    prev = [normalize_answer(a) for a in previous_answers]
    f["agrees_prev"] = float(bool(prev) and prev[-1] == norm)
    f["agree_share"] = sum(p == norm for p in prev) / len(prev) if prev else 0.0
    f["answer_words"] = min(len(answer.split()), 40) / 40.0
    f["answer_empty"] = float(not norm)
    f["top_score"] = math.log1p(max((passage_scores.get(d, 0.0) for d in doc_ids), default=0.0))
    f["new_top_score"] = math.log1p(max((passage_scores.get(d, 0.0) for d in new_ids), default=0.0))
    return f


def record_features(
    record: Any, previous: Sequence[Any], passage_scores: Mapping[str, float]
) -> dict[str, float]:
    """`round_features` of an `IterationRecord`, given the records before it."""
    return round_features(
        record.answer,
        record.scores,
        record.features,
        record.t,
        record.new_doc_ids,
        record.doc_ids,
        [r.answer for r in previous],
        passage_scores,
    )


def vector(features: Mapping[str, float]) -> list[float]:
    return [float(features.get(k, 0.0)) for k in FEATURES]


ROUNDS_FEATURES: tuple[str, ...] = ("logit", "changed", "distinct", "rival")


def rounds_features(
    answers: Sequence[str], confidences: Sequence[float], chosen: int
) -> list[float]:
    """What the rounds of one run say about the answer it returns (`answers[chosen]`): its
    own confidence (as a logit), whether it differs from the first round's answer, how many
    different answers the rounds gave, and the highest confidence of a different one."""
    norm = [normalize_answer(a) for a in answers]
    p = min(max(float(confidences[chosen]), 1e-4), 1.0 - 1e-4)
    rivals = [float(c) for a, c in zip(norm, confidences, strict=True) if a != norm[chosen]]
    return [
        math.log(p / (1.0 - p)),
        float(norm[chosen] != norm[0]),
        float(len(set(norm))),
        max(rivals, default=0.0),
    ]
