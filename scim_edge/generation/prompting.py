"""The generation prompt shared by every generator and loop.

    question: {q} context: {d1} [SEP] {d2} … [guidance: {g}] answer:

Passages come in hybrid-score order (best first), each cut to `passage_max_tokens`
tokens, and the whole prompt is capped at `input_max_tokens`: the passages that do not
fit are dropped (the last one that partly fits is cut), never the question, the guidance
or the `answer:` cue. Critic guidance, when given, sits in its own `guidance:` field after
the context so the model never mistakes it for evidence.

Token counts come from the model's tokenizer when one is given (`Tokenizer` protocol);
without one, whitespace words stand in (the extractive generator has no tokenizer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from scim_edge import ranking
from scim_edge.types import Passage

SEP = " [SEP] "


class Tokenizer(Protocol):
    def encode(self, text: str, max_tokens: int | None = None) -> list[int]: ...

    def decode(self, ids: list[int]) -> str: ...


class WordTokenizer:
    """Whitespace words as tokens: a stand-in when no model tokenizer exists."""

    def encode(self, text: str, max_tokens: int | None = None) -> list[int]:
        n = len(text.split())
        return list(range(n if max_tokens is None else min(n, max_tokens)))

    def truncate(self, text: str, max_tokens: int) -> str:
        parts = text.split()
        return text if len(parts) <= max_tokens else " ".join(parts[:max_tokens])


@dataclass
class Prompt:
    text: str
    passages: list[Passage]  # the passages that made it into the prompt, in order
    tokens: int


def order_passages(question: str, passages: Sequence[Passage]) -> list[Passage]:
    """Passages in hybrid-score order against the question (stable for ties)."""
    return ranking.rank_hybrid(list(passages), question)


def _count(tok: Tokenizer | WordTokenizer, text: str) -> int:
    return len(tok.encode(text))


def _truncate(tok: Tokenizer | WordTokenizer, text: str, max_tokens: int) -> str:
    if max_tokens <= 0:
        return ""
    if isinstance(tok, WordTokenizer):
        return tok.truncate(text, max_tokens)
    ids = tok.encode(text)
    if len(ids) <= max_tokens:
        return text
    # Drop the special end token the tokenizer may append before decoding the cut.
    return tok.decode(ids[:max_tokens]).strip()


def build_prompt(
    question: str,
    passages: Sequence[Passage],
    *,
    passage_max_tokens: int = 512,
    input_max_tokens: int = 1024,
    guidance: str | None = None,
    tokenizer: Tokenizer | None = None,
    ordered: bool = False,
) -> Prompt:
    tok: Tokenizer | WordTokenizer = tokenizer or WordTokenizer()
    head = f"question: {question} context: "
    tail = (f" guidance: {' '.join(guidance.split())}" if guidance else "") + " answer:"
    budget = input_max_tokens - _count(tok, head) - _count(tok, tail)
    parts: list[str] = []
    used: list[Passage] = []
    for p in passages if ordered else order_passages(question, passages):
        if budget <= 0:
            break
        sep_cost = _count(tok, SEP) if parts else 0
        text = _truncate(tok, " ".join(p.text.split()), min(passage_max_tokens, budget - sep_cost))
        if not text:
            break
        parts.append(text)
        used.append(p)
        budget -= sep_cost + _count(tok, text)
    prompt = head + SEP.join(parts) + tail
    return Prompt(prompt, used, _count(tok, prompt))


def build_prompt_for(
    settings,
    question: str,
    passages: Sequence[Passage],
    guidance=None,
    tokenizer: Tokenizer | None = None,
) -> Prompt:
    """`build_prompt` with the limits in Settings."""
    return build_prompt(
        question,
        passages,
        passage_max_tokens=settings.passage_max_tokens,
        input_max_tokens=settings.input_max_tokens,
        guidance=guidance,
        tokenizer=tokenizer,
    )
