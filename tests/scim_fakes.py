"""Small in-memory stand-ins for the SCIM tests: a retriever over a list of passages
and a scripted evaluator. The loop code under test is the real one."""

from __future__ import annotations

from collections.abc import Collection

from scim_edge import textutil as tu
from scim_edge.engine import Engine
from scim_edge.generation.extractive import ExtractiveGenerator
from scim_edge.quality import tier
from scim_edge.settings import Settings
from scim_edge.types import Passage, QualityReport


class MemoryRetriever:
    """Ranks passages by shared content-word stems with the query (a BM25 stand-in)."""

    name = "memory"

    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages
        self.passage_count = len(passages)
        self.queries: list[tuple[str, int, frozenset[str]]] = []

    def search(self, query: str, k: int, exclude_ids: Collection[str] = ()) -> list[Passage]:
        self.queries.append((query, k, frozenset(exclude_ids)))
        q = tu.stem_set(query)
        hits = []
        for i, p in enumerate(self.passages):
            if p.doc_id in exclude_ids:
                continue
            overlap = len(q & (tu.stem_set(p.text) | tu.stem_set(p.title)))
            if overlap:
                hits.append((-overlap, i, p))
        return [p for _, _, p in sorted(hits, key=lambda h: (h[0], h[1]))][:k]

    def get(self, doc_id: str) -> Passage | None:
        return next((p for p in self.passages if p.doc_id == doc_id), None)


def report(q: float, **dims: float) -> QualityReport:
    values = {
        d: dims.get(d, q)
        for d in ("completeness", "consistency", "confidence", "factuality", "coherence")
    }
    return QualityReport(**values, quality=q, tier=tier(q))


class ScriptedEvaluator:
    """Returns the given reports in order (the last one repeats)."""

    name = "scripted"

    def __init__(self, reports: list[QualityReport]) -> None:
        self.reports = reports
        self.calls: list[str] = []

    def score(self, question, answer, passages) -> QualityReport:
        self.calls.append(answer)
        return self.reports[min(len(self.calls) - 1, len(self.reports) - 1)]


class CountingGenerator:
    """Answers "answer N" for the N-th call, so a test can see which one was returned."""

    name = "counting"

    def __init__(self) -> None:
        self.calls = 0

    def generate(self, question, passages, guidance=None, max_new_tokens=None):
        from scim_edge.types import Generation

        self.calls += 1
        return Generation(text=f"answer {self.calls}", generator=self.name)


PASSAGES = [
    Passage(
        "1-0",
        "Abraham Lincoln",
        "",
        "Abraham Lincoln was the 16th president of the United "
        "States. He led the nation through the American Civil War.",
    ),
    Passage(
        "1-1",
        "Abraham Lincoln",
        "Assassination",
        "Lincoln was shot by John Wilkes Booth at "
        "Ford's Theatre in Washington on April 14, 1865. He died the next morning.",
    ),
    Passage(
        "2-0",
        "John Wilkes Booth",
        "",
        "John Wilkes Booth was an American stage actor who "
        "assassinated President Abraham Lincoln in 1865.",
    ),
    Passage(
        "3-0",
        "Theatre",
        "",
        "A theatre is a building where plays are performed for an "
        "audience. Lincoln was shot at Ford's Theatre, a famous theatre.",
    ),
    Passage(
        "4-0",
        "Washington, D.C.",
        "",
        "Washington is the capital city of the United States, "
        "founded in 1790 on the Potomac River. Lincoln lived there as president.",
    ),
    Passage(
        "5-0",
        "American Civil War",
        "",
        "The American Civil War was fought from 1861 to 1865 "
        "between the Union, led by Abraham Lincoln, and the Confederacy because of slavery.",
    ),
    Passage(
        "6-0",
        "Mary Todd Lincoln",
        "",
        "Mary Todd Lincoln was the wife of Abraham Lincoln and sat beside him when he was shot.",
    ),
    Passage(
        "1-9",
        "Abraham Lincoln",
        "External links",
        "Abraham Lincoln Presidential Library Abraham Lincoln Association Abraham Lincoln papers",
    ),
]


def make_engine(settings: Settings | None = None, passages=None, generator=None) -> Engine:
    s = settings or Settings(model="extractive")
    return Engine(
        s,
        MemoryRetriever(list(passages or PASSAGES)),
        generator or ExtractiveGenerator(s),
        index_name="memory",
    )
