"""Query rewriters for the critic loop: retrieval aids, never evidence.

A rewriter turns the user's question into extra search queries. Its output is only
ever sent to the retriever; the reranker, the generator and the critic keep seeing the
original question (contract 2), and no rewrite is shown to the generator as context.

- `KeywordRewriter` (model-free): the question's named entities (capitalised spans and
  quoted titles) followed by its other content words, as a keyword query. BM25 rewards
  the rare entity terms without the question's function words diluting them.
- `ModelRewriter`: Flan-T5 writes a short search query when a model is installed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scim_edge.settings import Settings

MAX_QUERY_CHARS = 160

# a quotation opens after a space and closes before a non-letter, so possessives
# ("Vivaldi's Four Seasons … the artist's") are not read as one
_QUOTED = re.compile(r"(?:^|(?<=\s))[\"“‘']([^\"”’']{2,80})[\"”’'](?!\w)")


class Rewriter(Protocol):
    name: str

    def rewrite(self, question: str) -> list[str]: ...


def entities(question: str) -> list[str]:
    """Quoted titles, then the proper-noun phrases textutil finds, without repeats."""
    from scim_edge.textutil import entities as proper_nouns

    found = [m.group(1).strip() for m in _QUOTED.finditer(question)]
    for span in proper_nouns(question):
        if not any(span.lower() in f.lower() for f in found):
            found.append(span)
    return found


class KeywordRewriter:
    name = "keyword"

    def rewrite(self, question: str) -> list[str]:
        from scim_edge.textutil import content_words

        ents = entities(question)
        ent_words = {w.lower() for e in ents for w in re.findall(r"\w+", e)}
        rest = [w for w in content_words(question) if w.lower() not in ent_words]
        seen: set[str] = set()
        terms: list[str] = []
        for term in [*ents, *rest]:
            if term.lower() not in seen:
                seen.add(term.lower())
                terms.append(term)
        query = " ".join(terms)[:MAX_QUERY_CHARS].strip()
        if not query or query.lower() == question.lower():
            return []
        return [query]


REWRITE_PROMPT = "Write a short search query to find the answer to this question: {question}"


class ModelRewriter:
    """Flan-T5 writes a search query; a rewrite equal to the question adds nothing."""

    def __init__(self, model: Any, model_name: str = "flan-t5", max_new_tokens: int = 32) -> None:
        self.model = model
        self.name = f"model:{model_name}"
        self.max_new_tokens = max_new_tokens

    def rewrite(self, question: str) -> list[str]:
        out = self.model.generate_text(
            REWRITE_PROMPT.format(question=question),
            max_input_tokens=256,
            max_new_tokens=self.max_new_tokens,
        )
        text = out[0] if isinstance(out, tuple) else str(out)
        query = " ".join(text.split())[:MAX_QUERY_CHARS].strip()
        if not query or query.lower() == question.lower():
            return []
        return [query]


def make_rewriter(settings: Settings, engine: Any | None = None) -> Rewriter | None:
    """None for `none` (costs nothing); `model` needs an installed Flan-T5 model."""
    if settings.rewriter == "none":
        return None
    if settings.rewriter == "keyword":
        return KeywordRewriter()
    from scim_edge.critic import load_seq2seq
    from scim_edge.errors import ModelError

    model, name = load_seq2seq(settings, engine)
    if model is None:
        raise ModelError(
            "--rewriter model needs an installed Flan-T5 model",
            hint="install one with `scim-edge models import DIR`, or use --rewriter keyword",
        )
    return ModelRewriter(model, name)
