"""The engine: one object that opens an index and a generator and runs any loop.

The CLI (`ask`), the TUI and the eval harness all go through `Engine`, so none of them
re-implements the loop. `Engine.ask()` yields trace events as they happen; its last
event is `Final`, carrying the `Answer`.

Interfaces the loop binds (see DESIGN.md):
- Retriever: `search(query, k, exclude_ids=()) -> list[Passage]`, `get(doc_id)`,
  `passage_count`, `name`.
- Generator: `generate(question, passages, guidance=None, max_new_tokens=None) -> Generation`,
  `name`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from scim_edge.errors import UserError
from scim_edge.settings import Settings
from scim_edge.types import Answer, Event, Final, Generation, Passage

MAX_QUESTION_CHARS = 2000


class Retriever(Protocol):
    name: str
    passage_count: int

    def search(self, query: str, k: int, exclude_ids: Collection[str] = ()) -> list[Passage]: ...

    def get(self, doc_id: str) -> Passage | None: ...


class Generator(Protocol):
    name: str

    def generate(
        self,
        question: str,
        passages: list[Passage],
        guidance: str | None = None,
        max_new_tokens: int | None = None,
    ) -> Generation: ...


class Loop(Protocol):
    def run(self, question: str) -> Iterator[Event]: ...


def check_question(question: str) -> str:
    """Reject what no loop can answer: empty, whitespace-only or over-long questions."""
    if not isinstance(question, str):
        raise UserError("the question must be text")
    from scim_edge.textutil import typed_text

    cleaned = typed_text(question, "question")
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise UserError(
            f"the question is {len(cleaned)} characters long; the limit is {MAX_QUESTION_CHARS}"
        )
    return cleaned


@dataclass
class Slots:
    """Objects bound into the loops in place of the ones Settings would build: tests bind
    fakes, and the eval harness binds its gold-answer oracles (critic, evaluator)."""

    critic: Any | None = None
    evaluator: Any | None = None
    retriever: Any | None = None
    reranker: Any | None = None
    rewriter: Any | None = None
    seq2seq: tuple[Any, str] | None = None  # a Flan-T5 runtime and its name, to share


class SessionCache:
    """What a session builds once and every loop shares: ONNX sessions, the passage-search
    pipelines, the Critic. Keyed by what each was built from (a model name, settings)."""

    def __init__(self) -> None:
        self._items: dict[tuple[Any, ...], Any] = {}

    def get(self, key: tuple[Any, ...], build: Callable[[], Any]) -> Any:
        if key not in self._items:
            self._items[key] = build()
        return self._items[key]

    def put(self, key: tuple[Any, ...], value: Any) -> None:
        self._items[key] = value


@dataclass
class Engine:
    settings: Settings
    retriever: Retriever
    generator: Generator
    index_name: str = ""
    notes: list[str] = field(default_factory=list)  # e.g. "no model installed: extractive"
    slots: Slots = field(default_factory=Slots)
    cache: SessionCache = field(default_factory=SessionCache)

    @classmethod
    def open(cls, settings: Settings) -> Engine:
        """Open the index and generator that `settings` names (or the defaults)."""
        from scim_edge.generation import make_generator
        from scim_edge.retrieval import open_retriever

        retriever, index_name = open_retriever(settings)
        generator, notes = make_generator(settings)
        if hasattr(generator, "attach_index"):  # the reader weights practice fitted for it
            generator.attach_index(getattr(retriever, "path", None))
        return cls(settings, retriever, generator, index_name=index_name, notes=list(notes))

    def ask(self, question: str, settings: Settings | None = None) -> Iterator[Event]:
        """Run the configured loop on `question`, yielding events; the last is `Final`."""
        from scim_edge.loops import make_loop

        question = check_question(question)
        s = settings or self.settings
        loop = make_loop(s, self)
        yield from loop.run(question)

    def answer(self, question: str, settings: Settings | None = None) -> Answer:
        """Run the loop to completion and return the final Answer."""
        final: Answer | None = None
        for event in self.ask(question, settings):
            if isinstance(event, Final):
                final = event.answer
        assert final is not None, "a loop must end with a Final event"
        return final
