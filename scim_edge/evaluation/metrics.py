"""Answer-accuracy metrics: SQuAD Exact Match and token F1, abstention, recall@k.

The normalisation is the official SQuAD v1.1 evaluation script's: lower-case, drop
punctuation, drop the articles a/an/the, collapse whitespace. EM and F1 take the best
score over the gold aliases, as that script does.

Unanswerable questions (an empty gold list) follow the SQuAD v2 convention: the only
correct prediction is an abstention, which scores EM = F1 = 1; anything else scores 0.
An abstention on an answerable question scores 0 (it is treated as the empty string).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Iterable, Sequence

from scim_edge.types import INSUFFICIENT_EVIDENCE

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCT = set(string.punctuation)

# Generated answers that say "I cannot answer" in other words (the critic-loop contract
# counts these as abstentions too).
_ABSTAIN_PATTERNS = re.compile(
    r"^\s*(unknown|n/?a|none|no answer|i (do not|don't) know|not enough (information|evidence)"
    r"|cannot be determined|can ?not be answered|the (context|passages?|evidence) "
    r"(does|do) not (say|mention|contain|state)|insufficient evidence.*)\s*[.!]?\s*$",
    re.IGNORECASE,
)


def normalize_answer(text: str) -> str:
    """SQuAD normalisation: lower, no punctuation, no articles, single spaces."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in _PUNCT)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def is_abstention(answer: str, status: str | None = None) -> bool:
    """True when the system declined to answer (empty, the abstention sentence, or a
    status of `insufficient_evidence`)."""
    if status == "insufficient_evidence":
        return True
    if not answer or not answer.strip():
        return True
    if answer.strip() == INSUFFICIENT_EVIDENCE:
        return True
    return bool(_ABSTAIN_PATTERNS.match(answer))


def exact_match_single(prediction: str, gold: str) -> float:
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1_single(prediction: str, gold: str) -> float:
    """Token-level F1 between one prediction and one gold answer (SQuAD v1.1)."""
    pred_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    if not pred_tokens or not gold_tokens:
        # SQuAD v2 script: both empty = 1, exactly one empty = 0.
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision = same / len(pred_tokens)
    recall = same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def exact_match(prediction: str, golds: Sequence[str], *, abstained: bool = False) -> float:
    """Best EM over the gold aliases; empty `golds` = unanswerable (abstention is right)."""
    if not golds:
        return float(abstained)
    if abstained:
        prediction = ""
    return max(exact_match_single(prediction, g) for g in golds)


def f1_score(prediction: str, golds: Sequence[str], *, abstained: bool = False) -> float:
    """Best token F1 over the gold aliases; empty `golds` = unanswerable."""
    if not golds:
        return float(abstained)
    if abstained:
        prediction = ""
    return max(f1_single(prediction, g) for g in golds)


def recall_at_k(
    retrieved_titles: Sequence[str], gold_titles: Iterable[str], k: int
) -> float | None:
    """Share of the gold titles found among the titles of the first `k` retrieved passages
    (case-insensitive). None when there are no gold titles to find."""
    gold = {t.strip().lower() for t in gold_titles if t and t.strip()}
    if not gold:
        return None
    top = {t.strip().lower() for t in retrieved_titles[:k]}
    return len(gold & top) / len(gold)


def answer_in_passages(golds: Sequence[str], texts: Iterable[str]) -> bool | None:
    """Does a gold alias occur, as whole words after SQuAD normalisation, in any of the
    passage texts? The reader can state only what its passages hold, so this splits a
    wrong answer into a retrieval miss and a reader miss. None for an unanswerable
    question (no gold string to look for)."""
    wanted = [f" {g} " for g in (normalize_answer(a) for a in golds) if g]
    if not wanted:
        return None
    for text in texts:
        hay = f" {normalize_answer(text)} "
        if any(w in hay for w in wanted):
            return True
    return False
