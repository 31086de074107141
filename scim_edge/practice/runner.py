"""`scim-edge practice`: make pairs, fit the reader, run the loop, label every round.

Three passes over the pairs, each resumable chunk by chunk (see `store`):
1. **Reader examples.** Each question is retrieved as the loops retrieve it (the first k1
   passages, and the k1 + 2·k2 a three-round run ends with), and once more without the
   passage the question was made from; every candidate span of those passages gets its
   feature vector and a label (it equals the pair's answer).
2. **Fit the reader** on the train split's questions whose answer is among the candidates;
   measure it on the held-out split.
3. **Traces.** The practice loop (default `fixed-3`, so every question has three rounds) runs
   over every pair with the fitted reader; each round is stored with its labels (is the answer
   right; is the evidence present) and the Critic's features. For half of the pairs the loop
   cannot see the source passage. Comparison pairs ("Which was founded first, A or B?") are
   only traced: the loops answer them by comparing two stated facts, not with the reader.
A question made from a sentence shares that sentence's words, which questions people write
do not: a reader and a Critic that only ever see the source learn that word overlap is
everything. Hiding the source makes them find the answer stated in other words, or learn
what a round without it looks like (Fabbri et al. 2020 retrieve another sentence for the
same reason).
Then the Critic is fitted on the traces (`trained_critic.train_from_rows`), and the set is
published. Passes 1 and 3 run their chunks in worker processes when `workers` > 1 (`_Pool`):
each chunk depends only on its pairs, the index and the published reader weights, so the set
is the same on any number of workers.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import time
import zlib
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from scim_edge import query_formulation as qf
from scim_edge.confidence import Confidence
from scim_edge.critic_features import FEATURES as CRITIC_FEATURES
from scim_edge.critic_features import record_features
from scim_edge.errors import UserError
from scim_edge.evaluation.metrics import exact_match, f1_score, normalize_answer
from scim_edge.generation import reader_features as rf
from scim_edge.generation.prompting import order_passages
from scim_edge.generation.reader import NAMES_KEY, Reader, default_weights_path, load_weights
from scim_edge.generation.support import support_sentence
from scim_edge.given_names import given_names
from scim_edge.lead_types import LeadTypes
from scim_edge.linear import LinearModel, fit_grouped_softmax, group_softmax
from scim_edge.practice import store
from scim_edge.practice.questions import (
    COMPARISON_SHARE,
    PracticePair,
    comparison_pairs,
    pairs_from_passages,
)
from scim_edge.refit_choice import better_beyond_chance
from scim_edge.sentence_similarity import SentenceSimilarity
from scim_edge.settings import Settings

MIN_PAIRS = 50
MIN_TRAIN_GROUPS = 30
CHUNK = 100
PRACTICE_LOOP = "fixed-3"
HIDE_SOURCE_SHARE = 0.5  # traces whose loop cannot see the passage the question came from

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass
class PracticeOptions:
    questions: int = 6000
    seed: int = 0
    loop: str = PRACTICE_LOOP
    train_critic: bool = True
    workers: int = 1  # processes for the reader-example and trace passes (see `_Pool`)


@dataclass
class PracticeResult:
    path: Path
    manifest: dict[str, Any]
    timings: dict[str, float] = field(default_factory=dict)


def _params(
    opts: PracticeOptions, retriever: Any, settings: Settings, similarity: Any = None
) -> dict[str, Any]:
    return {
        "format": store.FORMAT_VERSION,
        "questions": opts.questions,
        "seed": opts.seed,
        "loop": opts.loop,
        "index_passages": int(retriever.passage_count),
        "index_built": str(
            retriever.manifest.get("built_at", retriever.manifest.get("created", ""))
        ),
        # the reader's and the Critic's: traces made for other features are not resumed
        "features": features_key(),
        # the reader's sentence similarity: vectors added since make other features
        "sentence_similarity": similarity_name(similarity),
        "k1": settings.k1,
        "k2": settings.k2,
        "candidates": settings.candidates,
        "hide_source": HIDE_SOURCE_SHARE,
        "comparisons": COMPARISON_SHARE,
    }


def similarity_name(similarity: Any) -> str:
    """The model behind the reader's sentence similarity, "" without one; "NAME, static"
    for the static variant, whose cosines are another measure than the model's own (int8
    and fp32 agree to ~0.995, so they are one)."""
    if similarity is None:
        return ""
    name = str(getattr(similarity, "name", ""))
    variant = getattr(getattr(similarity, "model", None), "variant", None)
    return f"{name}, static" if variant == "static" else name


def similarity_label(stored: str) -> str:
    """`similarity_name`'s "NAME, static" as the vector slot says it: "NAME (static)"."""
    name, _, variant = stored.partition(", ")
    return f"{name} ({variant})" if variant else name


def features_key() -> str:
    """A short hash of the reader's and the Critic's feature names: a practice set made for
    other features can be neither resumed nor fitted on."""
    return hashlib.sha256("\n".join((*rf.FEATURES, *CRITIC_FEATURES)).encode()).hexdigest()[:16]


class SourceHidden:
    """An index without some passages: searches never return them and `get` does not find
    them; everything else is the index's own."""

    def __init__(self, inner: Any, hidden: Collection[str]) -> None:
        self.inner = inner
        self.hidden = frozenset(hidden)

    def search(self, query: str, k: int, exclude_ids: Collection[str] = ()) -> list[Any]:
        return self.inner.search(query, k, self.hidden | set(exclude_ids))

    def get(self, doc_id: str) -> Any:
        return None if doc_id in self.hidden else self.inner.get(doc_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def hides_source(pair: PracticePair) -> bool:
    """Whether the pair's trace runs without its source passage (fixed per pair id); a
    comparison needs both of its facts, so it never does."""
    if pair.kind == "choice":
        return False
    return zlib.crc32(pair.id.encode()) % 1000 < HIDE_SOURCE_SHARE * 1000


def _label(cands: Sequence[rf.Candidate], answer: str) -> np.ndarray:
    """Which candidates are the answer: the span, or the span with its unit ("8,848.86"
    of "8,848.86 m", the answer to "how high"), as the reader states it."""
    gold = normalize_answer(answer)
    return np.array(
        [normalize_answer(c.text) == gold
         or (bool(c.span.unit) and normalize_answer(f"{c.text} {c.span.unit}") == gold)
         for c in cands],
        dtype=np.float32,
    )  # fmt: skip


def _present(passages: Sequence[Any], answer: str) -> bool:
    gold = normalize_answer(answer)
    return bool(gold) and any(gold in normalize_answer(p.text) for p in passages)


def reader_examples(
    retriever: Any,
    pairs: Sequence[PracticePair],
    settings: Settings,
    types: LeadTypes | None = None,
    similarity: rf.Similarity | None = None,
    names: frozenset[str] = frozenset(),
) -> dict[str, np.ndarray]:
    """Feature rows, labels and group sizes for `pairs` (pass 1): the first k1 and k_max
    passages, and k_max without the source passage when the search found it; `types`,
    `similarity` and `names` as the reader will have them when it answers."""
    rows: list[np.ndarray] = []
    labels: list[np.ndarray] = []
    sizes: list[int] = []
    pair_index: list[int] = []
    present: list[bool] = []
    k_max = settings.k1 + 2 * settings.k2
    for i, pair in enumerate(pairs):
        if pair.kind == "choice":  # answered by comparing two facts, not by the reader
            continue
        found = qf.retrieve(retriever, qf.initial(pair.question), k_max + 1, set(),
                            settings.candidates, pair.question)  # fmt: skip
        groups = [found[: settings.k1], found[:k_max]]
        if any(p.doc_id == pair.doc_id for p in found[:k_max]):
            groups.append([p for p in found if p.doc_id != pair.doc_id][:k_max])
        for group in groups:
            passages = order_passages(pair.question, group)
            cands = rf.candidates(pair.question, passages, types, similarity, names)
            y = _label(cands, pair.answer)
            sizes.append(len(cands))
            pair_index.append(i)
            present.append(_present(passages, pair.answer))
            if cands:
                rows.append(np.stack([c.features for c in cands]))
                labels.append(y)
    width = len(rf.FEATURES)
    return {
        "X": np.concatenate(rows) if rows else np.zeros((0, width), np.float32),
        "y": np.concatenate(labels) if labels else np.zeros(0, np.float32),
        "sizes": np.array(sizes, dtype=np.int64),
        "pair": np.array(pair_index, dtype=np.int64),
        "present": np.array(present, dtype=bool),
    }


def _concat(chunks: list[dict[str, np.ndarray]], offsets: list[int]) -> dict[str, np.ndarray]:
    out = {k: np.concatenate([c[k] for c in chunks]) for k in chunks[0]}
    out["pair"] = np.concatenate([c["pair"] + off for c, off in zip(chunks, offsets, strict=True)])
    return out


def _groups(data: dict[str, np.ndarray], keep: np.ndarray) -> tuple[np.ndarray, ...]:
    """Rows of the groups selected by `keep` (a mask over groups), with their starts."""
    sizes = data["sizes"]
    ends = np.cumsum(sizes)
    starts_all = ends - sizes
    idx = [np.arange(s, e) for s, e, k in zip(starts_all, ends, keep, strict=True) if k and e > s]
    if not idx:
        return np.zeros((0, data["X"].shape[1])), np.zeros(0), np.zeros(0, np.int64)
    rows = np.concatenate(idx)
    kept_sizes = np.array([len(i) for i in idx])
    starts = np.concatenate([[0], np.cumsum(kept_sizes)[:-1]])
    return data["X"][rows], data["y"][rows], starts


def _has_positive(data: dict[str, np.ndarray]) -> np.ndarray:
    sizes = data["sizes"]
    ends = np.cumsum(sizes)
    out = np.zeros(len(sizes), dtype=bool)
    for g, (s, e) in enumerate(zip(ends - sizes, ends, strict=True)):
        out[g] = e > s and data["y"][s:e].max() > 0
    return out


def fit_reader(data: dict[str, np.ndarray], pairs: Sequence[PracticePair]) -> tuple[Any, dict]:
    """Fit on train groups with a positive; measure top-1 accuracy on held-out groups."""
    split = np.array([pairs[i].split for i in data["pair"]])
    pos = _has_positive(data)
    train = pos & (split == "train")
    if train.sum() < MIN_TRAIN_GROUPS:
        raise UserError(
            f"too few practice questions have their answer among the retrieved candidates "
            f"({int(train.sum())}; at least {MIN_TRAIN_GROUPS} are needed)",
            hint="the index is too small for self-practice; build it from a larger dump",
        )
    X, y, starts = _groups(data, train)
    model = fit_grouped_softmax(X, y, starts, list(rf.FEATURES))
    figures: dict[str, Any] = {"train_groups": int(train.sum())}
    for name, mask in (("heldout", split == "heldout"), ("train", split == "train")):
        top1 = _top1(model, data, mask & pos)
        if top1 is not None:
            figures[f"{name}_top1_given_present"] = top1
        figures[f"{name}_answer_in_candidates"] = (
            round(float(pos[mask].mean()), 4) if mask.any() else 0.0
        )
    return model, figures


def _hits(model: LinearModel, data: dict[str, np.ndarray], keep: np.ndarray) -> np.ndarray:
    """For each kept group, 1.0 when its top-scored candidate is a right answer, else 0.0."""
    X, y, starts = _groups(data, keep)
    if not len(starts):
        return np.zeros(0)
    p = group_softmax(model.score(X), starts)
    ends = np.append(starts[1:], len(y))
    return np.array([float(y[s + int(np.argmax(p[s:e]))] > 0)
                     for s, e in zip(starts, ends, strict=True)])  # fmt: skip


def _top1(model: LinearModel, data: dict[str, np.ndarray], keep: np.ndarray) -> float | None:
    """The share of the kept groups whose top-scored candidate is a right answer."""
    hits = _hits(model, data, keep)
    return round(float(hits.mean()), 4) if len(hits) else None


def shipped_reads_as_well(
    fitted: LinearModel, data: dict[str, np.ndarray], pairs: Sequence[PracticePair]
) -> float | None:
    """The shipped weights' held-out top-1 unless the weights just fitted read this index's
    own held-out practice questions better beyond chance (`refit_choice`); else None.

    Practice re-fits the reader for the user's index, but a fit on a few thousand made-up
    questions varies with the draw: on an index where the shipped weights read its held-out
    questions as well, they stay, as the shipped Critic does (`shipped_instead`)."""
    split = np.array([pairs[i].split for i in data["pair"]])
    keep = _has_positive(data) & (split == "heldout")
    own = _hits(fitted, data, keep)
    shipped = _hits(load_weights(default_weights_path()), data, keep)
    if not len(own) or better_beyond_chance(own - shipped):
        return None
    return round(float(shipped.mean()), 4)


def trace_rows(engine: Any, pair: PracticePair, settings: Settings) -> list[dict[str, Any]]:
    """Every round of the practice loop on one pair, labelled, with Critic features; the
    loop does not see the source passage when `hides_source(pair)`."""
    slots = engine.slots
    bound = slots.retriever
    hidden = hides_source(pair)
    if hidden:
        slots.retriever = SourceHidden(bound or engine.retriever, {pair.doc_id})
    try:
        answer = engine.answer(pair.question, settings)
    finally:
        slots.retriever = bound
    scores = {p.doc_id: p.score for p in answer.passages}
    by_id = {p.doc_id: p for p in answer.passages}
    rows = []
    for i, rec in enumerate(answer.iterations):
        passages = [by_id[d] for d in rec.doc_ids if d in by_id]
        rows.append({
            "pair_id": pair.id,
            "split": pair.split,
            "loop": answer.loop,
            "round": rec.t,
            "answer": rec.answer,
            "correct": exact_match(rec.answer, [pair.answer]),
            "f1": round(f1_score(rec.answer, [pair.answer]), 4),
            "evidence_present": _present(passages, pair.answer),
            "source_hidden": hidden,
            "support": support_sentence(rec.support),
            "features": {k: round(v, 6) for k, v in
                         record_features(rec, answer.iterations[:i], scores).items()},
        })  # fmt: skip
    return rows


def _chunks(n: int) -> list[tuple[int, int]]:
    return [(s, min(n, s + CHUNK)) for s in range(0, n, CHUNK)]


def _make_pairs(
    part: Path,
    retriever: Any,
    opts: PracticeOptions,
    report: Progress,
    types: LeadTypes,
    names: frozenset[str],
):
    pairs_file = part / "pairs.jsonl"
    saved = store.finished(
        pairs_file, lambda p: [PracticePair(**d) for d in store.read_partial_jsonl(p)]
    )
    if saved is not None:
        return saved, pairs_file
    report("questions", 0, opts.questions)
    pairs = pairs_from_passages(retriever.sample(opts.seed), opts.questions, opts.seed,
                                types=types, names=names)  # fmt: skip
    if len(pairs) < MIN_PAIRS:
        raise UserError(
            f"the index yields only {len(pairs)} practice questions; at least {MIN_PAIRS} "
            "are needed",
            hint="build the index from a larger dump",
        )
    n_comparisons = int(COMPARISON_SHARE * opts.questions)
    pairs += comparison_pairs(retriever.sample(opts.seed), n_comparisons, opts.seed)
    store.write_partial_jsonl(pairs_file, [p.to_dict() for p in pairs])
    return pairs, pairs_file


def _reader_pass(
    part: Path,
    retriever: Any,
    pairs: list[PracticePair],
    settings: Settings,
    report: Progress,
    types: LeadTypes,
    pool: _Pool | None = None,
    similarity: rf.Similarity | None = None,
    names: frozenset[str] = frozenset(),
) -> dict[str, np.ndarray]:
    """Pass 1, chunk by chunk (a finished chunk is never redone)."""
    paths = [part / f"reader-{n:04d}.npz" for n in range(len(_chunks(len(pairs))))]

    def make(path: Path, a: int, b: int) -> None:
        data = reader_examples(retriever, pairs[a:b], settings, types, similarity, names)
        _save_arrays(path, data)

    chunks = _run_chunks(paths, pairs, _load_arrays, make, "reader examples", report, pool,
                         _pool_reader_chunk, settings)  # fmt: skip
    return _concat(chunks, [a for a, _ in _chunks(len(pairs))])


def _save_arrays(path: Path, data: dict[str, np.ndarray]) -> None:
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, **data)
    tmp.replace(path)


def _load_arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def _trace_pass(
    part: Path,
    engine: Any,
    pairs: list[PracticePair],
    settings: Settings,
    report: Progress,
    pool: _Pool | None = None,
) -> list[dict[str, Any]]:
    """Pass 3, chunk by chunk."""
    paths = [part / f"traces-{n:04d}.jsonl" for n in range(len(_chunks(len(pairs))))]

    def make(path: Path, a: int, b: int) -> None:
        store.write_partial_jsonl(
            path, [r for p in pairs[a:b] for r in trace_rows(engine, p, settings)]
        )

    chunks = _run_chunks(paths, pairs, store.read_partial_jsonl, make, "loop traces", report, pool,
                         _pool_trace_chunk, settings)  # fmt: skip
    return [row for chunk in chunks for row in chunk]


def _run_chunks(
    paths: list[Path],
    pairs: list[PracticePair],
    load: Callable[[Path], Any],
    make: Callable[[Path, int, int], None],
    stage: str,
    report: Progress,
    pool: _Pool | None,
    remote: Callable[..., None],
    settings: Settings,
) -> list[Any]:
    """Each chunk's result, loaded from its file; the missing ones are made first, here
    or by `pool` (each file is written whole, so an interrupted pass leaves only finished
    chunks). Progress counts pairs of finished chunks."""
    bounds = _chunks(len(pairs))
    loaded: dict[int, Any] = {}
    for n, path in enumerate(paths):
        data = store.finished(path, load)
        if data is not None:
            loaded[n] = data
    done = sum(b - a for n, (a, b) in enumerate(bounds) if n in loaded)
    todo = [n for n in range(len(paths)) if n not in loaded]
    if pool is not None and len(todo) > 1:
        jobs = [(paths[n], pairs[bounds[n][0] : bounds[n][1]], settings) for n in todo]
        for size in pool.map(remote, jobs, [bounds[n][1] - bounds[n][0] for n in todo]):
            done += size
            report(stage, done, len(pairs))
    else:
        for n in todo:
            make(paths[n], *bounds[n])
            done += bounds[n][1] - bounds[n][0]
            report(stage, done, len(pairs))
    if not todo:
        report(stage, len(pairs), len(pairs))
    out = []
    for n, path in enumerate(paths):
        data = loaded.get(n)
        if data is None:
            data = load(path)
        out.append(data)
    return out


class _Pool:
    """Worker processes for practice's two long passes: each opens the index (and, for
    the trace pass, the fitted reader) itself, so the chunks run on every core and give
    the same files as one process would; a chunk's file is written by its worker."""

    def __init__(
        self, workers: int, settings: Settings, index_dir: Path, names: frozenset[str]
    ) -> None:
        self.workers = workers
        self.settings = settings
        self.index_dir = index_dir
        self.names = names
        self._executor: ProcessPoolExecutor | None = None
        self._reader: dict[str, Any] | None = None

    def use_reader(self, reader: dict[str, Any]) -> None:
        """Later chunks run the loop with this fitted reader (in fresh workers)."""
        self.close()
        self._reader = reader

    def map(self, fn: Callable[..., None], jobs: list[tuple], sizes: list[int]) -> Iterator[int]:
        """Run `fn(*job)` for every job; yield each finished job's size."""
        if self._executor is None:
            init = (self.settings, self.index_dir, self._reader, self.names)
            spawn = multiprocessing.get_context("spawn")  # no forked index handles
            self._executor = ProcessPoolExecutor(self.workers, mp_context=spawn,
                                                 initializer=_pool_init, initargs=init)  # fmt: skip
        futures = {self._executor.submit(fn, *job): size for job, size in
                   zip(jobs, sizes, strict=True)}  # fmt: skip
        for f in as_completed(futures):
            f.result()
            yield futures[f]

    def close(self, cancel: bool = False) -> None:
        """Wait for the workers to finish; with `cancel` (an interrupt), stop them at once:
        a chunk's file is written whole or not at all, and one not finished is redone by
        --resume."""
        if self._executor is None:
            return
        if cancel:
            # the pool's processes (ProcessPoolExecutor has no terminate() before 3.14)
            processes = getattr(self._executor, "_processes", None) or {}
            for process in list(processes.values()):
                process.terminate()
        self._executor.shutdown(wait=True, cancel_futures=cancel)
        self._executor = None


_WORKER: dict[str, Any] = {}


def _pool_init(
    settings: Settings, index_dir: Path, reader: dict[str, Any] | None, names: frozenset[str]
) -> None:
    from index_builder.dump_reader import worker_init
    from scim_edge.engine import Engine

    worker_init()  # Ctrl+C is the parent's to handle: it stops the workers

    engine = Engine.open(settings)
    types = LeadTypes.for_index(index_dir)
    similarity = SentenceSimilarity.for_index(index_dir, threads=1)  # one core per worker
    if reader is not None and hasattr(engine.generator, "use_reader"):
        model = LinearModel.from_dict(reader)
        engine.generator.use_reader(Reader(model, "practice", types, similarity=similarity))
    _WORKER.update(engine=engine, types=types, similarity=similarity, names=names)


def _pool_reader_chunk(path: Path, pairs: list[PracticePair], settings: Settings) -> None:
    engine = _WORKER["engine"]
    _save_arrays(path, reader_examples(engine.retriever, pairs, settings, _WORKER["types"],
                                       _WORKER["similarity"], _WORKER["names"]))  # fmt: skip


def _pool_trace_chunk(path: Path, pairs: list[PracticePair], settings: Settings) -> None:
    engine = _WORKER["engine"]
    Confidence.disable(engine, settings)
    store.write_partial_jsonl(path, [r for p in pairs for r in trace_rows(engine, p, settings)])


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    first = [r for r in rows if r["split"] == "heldout" and r["round"] == 1]
    if not first:
        return {"em": None, "answer_in_passages": None}
    return {
        "em": round(float(np.mean([r["correct"] for r in first])), 4),
        "answer_in_passages": round(float(np.mean([r["evidence_present"] for r in first])), 4),
    }


def _passes(
    engine: Any,
    part: Path,
    pairs: list[PracticePair],
    opts: PracticeOptions,
    report: Progress,
    types: LeadTypes,
    pool: _Pool | None,
    timings: dict[str, float],
    similarity: rf.Similarity | None = None,
    names: frozenset[str] = frozenset(),
) -> tuple[Any, dict[str, Any], list[dict[str, Any]]]:
    """Reader examples, the reader's fit, and the loop traces with the fitted reader."""
    settings = engine.settings
    retriever = engine.retriever
    t1 = time.perf_counter()
    data = _reader_pass(part, retriever, pairs, settings, report, types, pool, similarity,
                        names)  # fmt: skip
    timings["reader_examples_s"] = round(time.perf_counter() - t1, 2)

    t2 = time.perf_counter()
    fitted, reader_figures = fit_reader(data, pairs)
    reader_figures["used"] = "own"
    kept = shipped_reads_as_well(fitted, data, pairs)
    if kept is not None:  # the shipped weights, with this index's names
        own_top1 = reader_figures.get("heldout_top1_given_present")
        fitted = replace(load_weights(default_weights_path()), meta={})
        reader_figures.update(used="shipped", own_heldout_top1=own_top1,
                              heldout_top1_given_present=kept)  # fmt: skip
    trained_on = "self-practice" if kept is None else "shipped; kept by self-practice"
    fitted.meta = {"trained_on": trained_on, "index": retriever.name,
                   "pairs": len(pairs), "seed": opts.seed,
                   "sentence_similarity": similarity_name(similarity),
                   **reader_figures, NAMES_KEY: sorted(names)}  # fmt: skip
    # the traces are run with the weights as published (rounded), here and in any worker
    model = LinearModel.from_dict(fitted.to_dict())
    timings["reader_fit_s"] = round(time.perf_counter() - t2, 2)

    t3 = time.perf_counter()
    if hasattr(engine.generator, "use_reader"):
        engine.generator.use_reader(Reader(model, "practice", types, similarity=similarity))
    loop_settings = _loop_settings(settings, opts)
    # The traces are what a Critic learns from: no Critic may judge them, so a stale or
    # missing one cannot change or stop them.
    Confidence.disable(engine, loop_settings)
    if pool is not None:
        pool.use_reader(model.to_dict())
    rows = _trace_pass(part, engine, pairs, loop_settings, report, pool)
    timings["traces_s"] = round(time.perf_counter() - t3, 2)
    return model, reader_figures, rows


def _loop_settings(settings: Settings, opts: PracticeOptions) -> Settings:
    return settings.replace(loop=opts.loop, cache_answers=False, critic="heuristic")


def practice_names(retriever: Any, types: LeadTypes, seed: int) -> frozenset[str]:
    """The given names practice asks "who" of and fits the reader with: the index's people's
    and those the shipped reader knows (`given_names`)."""
    shipped = load_weights(default_weights_path()).meta.get(NAMES_KEY, ())
    return given_names(retriever.sample(seed), types, known=shipped)


def run_practice(
    engine: Any,
    index_dir: Path,
    opts: PracticeOptions,
    progress: Progress | None = None,
) -> PracticeResult:
    """Make, run and label a practice set for the engine's index; publish it atomically."""
    report = progress or (lambda stage, done, total: None)
    settings = engine.settings
    retriever = engine.retriever
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if retriever.passage_count == 0:
        raise UserError("the index has no passages to practise on", hint="rebuild it from a dump")
    types = LeadTypes.for_index(index_dir)  # one cache for the questions and the reader
    similarity = SentenceSimilarity.for_index(index_dir)
    params = _params(opts, retriever, settings, similarity)
    part = store.open_partial(index_dir, params)
    names = practice_names(retriever, types, opts.seed)
    pairs, pairs_file = _make_pairs(part, retriever, opts, report, types, names)
    timings["questions_s"] = round(time.perf_counter() - t0, 2)
    pool = _Pool(opts.workers, settings, Path(index_dir), names) if opts.workers > 1 else None
    try:
        model, reader_figures, rows = _passes(engine, part, pairs, opts, report, types, pool,
                                              timings, similarity, names)  # fmt: skip
    except BaseException:
        if pool is not None:
            pool.close(cancel=True)  # running chunks finish their own files; no new ones
        raise
    if pool is not None:
        pool.close()

    files = {
        "pairs.jsonl": pairs_file.read_text(encoding="utf-8"),
        "traces.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
        "reader.json": json.dumps(model.to_dict(), indent=1) + "\n",
    }
    critic_figures: dict[str, Any] = {}
    if opts.train_critic:
        from scim_edge.trained_critic import shipped_instead, train_from_rows

        t4 = time.perf_counter()
        critic = train_from_rows(
            rows, generator=engine.generator.name, settings=_loop_settings(settings, opts)
        )
        shipped = shipped_instead(critic, rows)
        if shipped is None:
            files["critic.json"] = json.dumps(critic.to_dict(), indent=1) + "\n"
            critic_figures = {**critic.heldout, "used": "own"}
        else:  # no critic.json: the index's loops use the shipped Critic
            critic_figures = {**shipped, "used": "shipped",
                              "own_brier": critic.heldout.get("brier")}  # fmt: skip
        timings["critic_fit_s"] = round(time.perf_counter() - t4, 2)

    manifest = {
        "format": store.FORMAT_VERSION,
        "params": params,
        "index": retriever.name,
        "generator": engine.generator.name,
        "pairs": {
            "total": len(pairs),
            "train": sum(p.split == "train" for p in pairs),
            "heldout": sum(p.split == "heldout" for p in pairs),
        },  # fmt: skip
        "rounds": len(rows),
        "reader": {
            **reader_figures,
            "sentence_similarity": params["sentence_similarity"],
            "given_names": len(names),
        },  # fmt: skip
        "heldout_round1": _summary(rows),
        "critic": critic_figures,
        "timings": timings,
    }
    files["manifest.json"] = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    path = store.publish(index_dir, files)
    timings["total_s"] = round(time.perf_counter() - t0, 2)
    return PracticeResult(path, manifest, timings)
