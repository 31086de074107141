"""The evaluation harness: every system on the same questions, index, generator and settings.

A *run* is one system (a loop name) with one Settings; sensitivity sweeps add runs of
`scim` with one setting changed (keys like ``scim@theta=0.6``). Each finished question is
appended to `per_question.jsonl` and flushed at once, so an interrupted evaluation loses
at most the question in flight and `--resume` skips every (run, id) pair already there.

Figures are computed from those records alone (`summarize`, `iteration_costs`,
`statistics`, `sensitivity`), so a resumed run and an uninterrupted one report the same.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from scim_edge import jsonl
from scim_edge import textutil as tu
from scim_edge.errors import UserError
from scim_edge.evaluation import metrics
from scim_edge.evaluation.oracle import ORACLE_SYSTEMS, is_correct
from scim_edge.evaluation.qa_io import QAItem
from scim_edge.evaluation.stats import compare_paired, percentiles
from scim_edge.evaluation.trust import trust_figures
from scim_edge.jsonl import jsonl_lines
from scim_edge.settings import LOOPS, WEIGHT_SETS, Settings
from scim_edge.types import Answer

# The order of the study's comparison, and the default `--systems`.
DEFAULT_SYSTEMS = (
    "standard",
    "iter-retgen",
    "scim",
    "fixed-1",
    "fixed-2",
    "fixed-3",
    "single-dim",
    "simrag",
)
SWEEP_KEYS = ("theta", "delta", "weights")
DELTA_OFF = "off"  # the no-decline reference run of a delta sweep
HIGH, MEDIUM = 0.7, 0.5  # tier thresholds of the quality score
CONVERGED_Q = 0.75  # "converged in 1-2 iterations with Q >= 0.75"
RECALL_K = 5
PER_QUESTION = "per_question.jsonl"
RUN_FILE = "run.json"
# what a run writes into --out (run.json first, before any of these)
OUTPUTS = ("report.md", "results.json", PER_QUESTION, "plots")
WARMUPS = ("full", "first", "none")


@dataclass(frozen=True)
class Run:
    key: str  # "scim", "scim@theta=0.6", ...
    system: str  # loop name
    settings: Settings
    sweep_key: str | None = None
    sweep_value: str | None = None
    oracle: str | None = None  # the engine.slots field an oracle fills ("critic", ...)


# ---- planning -------------------------------------------------------------------------


def parse_systems(text: str | None) -> list[str]:
    """`a,b,c` to a list of loop names; an unknown name is a one-line UserError."""
    if text is None:
        return list(DEFAULT_SYSTEMS)
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise UserError("--systems is empty")
    unknown = [n for n in names if n not in LOOPS and n not in ORACLE_SYSTEMS]
    if unknown:
        known = ", ".join([*DEFAULT_SYSTEMS, *ORACLE_SYSTEMS])
        raise UserError(f"unknown system '{unknown[0]}' (choose from {known})")
    return list(dict.fromkeys(names))


def parse_sweep(text: str) -> tuple[str, list[str]]:
    """`theta=0.55,0.6` to ("theta", ["0.55", "0.6"]), checked against Settings."""
    key, sep, values = text.partition("=")
    key = key.strip().replace("-", "_")
    if not sep or not values.strip():
        raise UserError(f"--sweep needs KEY=V1,V2,... (got {text!r})")
    if key not in SWEEP_KEYS:
        raise UserError(f"unknown sweep key '{key}' (choose from {', '.join(SWEEP_KEYS)})")
    vals = [v.strip() for v in values.split(",") if v.strip()]
    if not vals:
        raise UserError(f"--sweep {key} has no values")
    if key == "weights":
        bad = [v for v in vals if v not in WEIGHT_SETS]
        if bad:
            raise UserError(f"unknown weight set '{bad[0]}' (choose from {', '.join(WEIGHT_SETS)})")
    else:
        for v in vals:
            try:
                x = float(v)
            except ValueError:
                raise UserError(f"--sweep {key}: '{v}' is not a number") from None
            if not 0.0 <= x <= 1.0:
                raise UserError(f"--sweep {key}: {v} is outside [0, 1]")
    return key, list(dict.fromkeys(vals))


def plan_runs(
    settings: Settings, systems: Sequence[str], sweeps: Sequence[tuple[str, list[str]]]
) -> list[Run]:
    # The efficiency profile's answer cache is keyed without theta/delta/weights and would
    # turn timings into cache look-ups, so evaluation always measures the loop itself.
    settings = settings.replace(cache_answers=False)
    runs = []
    for name in systems:
        loop, slot = ORACLE_SYSTEMS.get(name, (name, None))
        runs.append(Run(name, loop, settings.replace(loop=loop), oracle=slot))
    for key, values in sweeps:
        for v in values:
            value: Any = WEIGHT_SETS[v] if key == "weights" else float(v)
            runs.append(
                Run(
                    f"scim@{key}={v}", "scim", settings.replace(loop="scim", **{key: value}), key, v
                )
            )
        if key == "delta":
            # Same loop with the decline rule unable to fire (Q lies in [0, 1]): the
            # counterfactual that tells a caught degradation from a premature stop.
            runs.append(
                Run(
                    f"scim@delta={DELTA_OFF}",
                    "scim",
                    settings.replace(loop="scim", delta=1.0),
                    "delta",
                    DELTA_OFF,
                )
            )
    return runs


# ---- one question -----------------------------------------------------------------------


def _tier(q: float) -> str:
    return "high" if q >= HIGH else "medium" if q >= MEDIUM else "low"


def declined(answer_dict: dict[str, Any], delta: float) -> bool:
    """Did the loop stop because quality fell by at least delta (Algorithm 1, rule 3)?

    Read from the stop reason (the SCIM loop says `quality_declined`); only a loop that
    gives no stop reason is judged from its trace: a force-accept after a drop of at least
    delta between the last two iterations."""
    reason = (answer_dict.get("stop_reason") or "").lower()
    if reason:
        return "declin" in reason or "degrad" in reason
    its = answer_dict.get("iterations") or []
    if len(its) < 2 or its[-1].get("decision") != "force_accept":
        return False
    q_last = its[-1].get("scores", {}).get("quality")
    q_prev = its[-2].get("scores", {}).get("quality")
    if q_last is None or q_prev is None:
        return False
    return q_last <= q_prev - delta + 1e-12


# Loops whose own score is not the five-dimension Q; their answers are re-scored.
RESCORED_SYSTEMS = ("single-dim",)


def five_dim_quality(run: Run, item: QAItem, answer: Answer, abstained: bool) -> tuple[float, str]:
    """The five-dimension Q of the returned answer, so the Quality column compares like
    with like: the loop's own Q where it is that score, else the answer re-scored with the
    run's weights against the passages of the iteration that produced it."""
    # An oracle evaluator's Q is correctness itself, so its answers are re-scored too.
    if (run.system not in RESCORED_SYSTEMS and run.oracle != "evaluator") or abstained:
        return float(answer.quality), "loop"
    from scim_edge.quality import Evaluator

    doc_ids: set[str] = set()
    for it in reversed(answer.iterations):
        if it.answer == answer.answer:
            doc_ids = set(it.doc_ids)
            break
    used = [p for p in answer.passages if p.doc_id in doc_ids] or list(answer.passages)
    report = Evaluator(run.settings).score(item.question, answer.answer, used)
    return float(report.quality), "rescored"


PASSAGE_KEYS = ("doc_id", "title", "section", "score")


def _slim_event(event: Any) -> Any:
    """A trace event without passage texts (they are in the index; keeping them would make
    per_question.jsonl a copy of every passage retrieved, ~2 KB per retrieval step) and
    without the iteration record a `decided` event repeats."""
    if not isinstance(event, dict):
        return event
    out = {}
    for key, value in event.items():
        if key == "record" and event.get("kind") == "decided":
            continue  # the same IterationRecord is stored under trace.iterations
        if (
            isinstance(value, list)
            and value
            and all(isinstance(v, dict) and "doc_id" in v and "text" in v for v in value)
        ):
            out[key] = [{k: v[k] for k in PASSAGE_KEYS if k in v} for v in value]
        elif isinstance(value, dict) and "doc_id" in value and "text" in value:
            out[key] = {k: value[k] for k in PASSAGE_KEYS if k in value}
        else:
            out[key] = value
    return out


def judged_rounds(item: QAItem, answer: Answer) -> list[dict[str, Any]]:
    """Each round a Critic judged: its number, the verdict and whether the round's answer
    was right. A round that ended for want of new passages repeats the last verdict
    without a new judgement, so only rounds with a `critiqued` event count (a trace
    without such events counts every scored round that carries a verdict)."""
    critiqued = {
        e.get("t") for e in answer.trace if isinstance(e, dict) and e.get("kind") == "critiqued"
    }
    out = []
    for it in answer.iterations:
        if it.verdict is None or "accept" not in it.verdict:
            continue
        if (it.t not in critiqued) if critiqued else not it.scores:
            continue
        out.append(
            {
                "t": it.t,
                "accept": bool(it.verdict["accept"]),
                "correct": is_correct(it.answer, item.answers),
            }
        )
    return out


def make_record(run: Run, item: QAItem, answer: Answer, wall_ms: float) -> dict[str, Any]:
    """The per_question.jsonl line for one (run, question)."""
    d = answer.to_dict()
    abstained = metrics.is_abstention(answer.answer, answer.status)
    passages: list[str] = []
    titles: dict[str, str] = {p.doc_id: p.title for p in answer.passages}
    iters = []
    for it in answer.iterations:
        for doc_id in [*it.doc_ids, *it.new_doc_ids]:
            if doc_id not in passages:
                passages.append(doc_id)
        titles.update(it.new_titles)
        tm = it.timing_ms or {}
        iters.append(
            {
                "t": it.t,
                "mode": it.mode,
                "quality": it.scores.get("quality"),
                "decision": it.decision,
                "new": len(it.new_doc_ids),
                **{
                    k: float(tm.get(k, 0.0))
                    for k in ("retrieval", "generation", "evaluation", "coordination", "total")
                },
            }
        )
    retrieved_titles = [titles.get(p, "") for p in passages]
    q, source = five_dim_quality(run, item, answer, abstained)
    return {
        **_record_head(run, item),
        "answer": answer.answer,
        "status": answer.status,
        "stop_reason": answer.stop_reason,
        "tier": answer.tier,  # as the user was shown it: from the confidence when there is one
        "quality_tier": _tier(q),  # the paper's tier of Q, which the report's counts are of
        "quality": q,
        "confidence": None if answer.confidence is None else float(answer.confidence),
        "loop_quality": float(answer.quality),
        "quality_source": source,
        "abstained": abstained,
        "em": metrics.exact_match(answer.answer, item.answers, abstained=abstained),
        "f1": metrics.f1_score(answer.answer, item.answers, abstained=abstained),
        "recall_at_5": metrics.recall_at_k(retrieved_titles, item.titles, RECALL_K),
        "answer_in_passages": metrics.answer_in_passages(
            item.answers, (p.text for p in answer.passages)
        ),
        "rounds": judged_rounds(item, answer),
        "iterations": len(answer.iterations),
        "passages": len(passages),
        "declined": declined(d, run.settings.delta) if run.system == "scim" else False,
        "ms": wall_ms,
        "timing_ms": answer.timing_ms,
        "iteration_costs": iters,
        "generator": answer.generator,
        "index": answer.index,
        "trace": {
            "iterations": d["iterations"],
            "events": [_slim_event(e) for e in d["trace"]],
            "bindings": d["bindings"],
            "warnings": d["warnings"],
        },
    }


def _record_head(run: Run, item: QAItem) -> dict[str, Any]:
    """The fields that identify a per-question record (the resume key among them)."""
    return {
        "run": run.key,
        "system": run.system,
        "sweep_key": run.sweep_key,
        "sweep_value": run.sweep_value,
        "id": item.id,
        "type": item.type,
        "question": item.question,
        "gold": list(item.answers),
        "answerable": item.answerable,
    }


def error_record(run: Run, item: QAItem, err: BaseException, wall_ms: float) -> dict[str, Any]:
    """A question the loop crashed on counts as a wrong, low-quality answer."""
    return {
        **_record_head(run, item),
        "answer": "",
        "status": "error",
        "stop_reason": "error",
        "tier": "low",
        "quality_tier": "low",
        "quality": 0.0,
        "confidence": None,
        "abstained": False,
        "em": 0.0,
        "f1": 0.0,
        "recall_at_5": None,
        "answer_in_passages": None,
        "rounds": [],
        "iterations": 0,
        "passages": 0,
        "declined": False,
        "ms": wall_ms,
        "timing_ms": {},
        "iteration_costs": [],
        "error": f"{type(err).__name__}: {err}",
    }


# ---- progress ---------------------------------------------------------------------------


class Progress:
    """Progress of each run on stderr: system, count, rate and ETA. On a terminal a bar per
    run, drawn by the project's one reporter (`index_builder.progress`, rich); otherwise a
    line every `every_s` seconds."""

    def __init__(self, stream: TextIO | None = None, every_s: float = 2.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every_s = every_s
        self._last = 0.0
        self._bars: dict[str, Any] = {}
        self._active: Any = None

    def update(
        self,
        key: str,
        done: int,
        total: int,
        started: float,
        skipped: int,
        final: bool = False,
        force: bool = False,
    ) -> None:
        now = time.monotonic()
        if not (final or force) and not self.tty and now - self._last < self.every_s:
            return
        self._last = now
        fresh = done - skipped
        elapsed = max(now - started, 1e-9)
        rate = fresh / elapsed if fresh else 0.0
        eta = (total - done) / rate if rate else math.nan
        eta_s = "--" if math.isnan(eta) else _fmt_secs(eta)
        line = f"[{key}] {done}/{total} questions  {rate:.2f} q/s  ETA {eta_s}"
        if skipped:
            line += f"  ({skipped} resumed)"
        if self.tty:
            self._bar(key).draw(done, max(total, 1), line, final=final)
            if final:
                self._bar(key).stop()
                self._active = None
            return
        self.stream.write(line + "\n")
        self.stream.flush()

    def _bar(self, key: str) -> Any:
        from index_builder.progress import Bar

        if key not in self._bars:
            if self._active is not None:
                self._active.stop()
            self._bars[key] = Bar(self.stream, key)
        self._active = self._bars[key]
        return self._active

    def note(self, text: str) -> None:
        if self._active is not None:
            self._active.note(text)
            return
        self.stream.write(text + "\n")
        self.stream.flush()


def _fmt_secs(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


# ---- running ----------------------------------------------------------------------------


def read_records(path: Path) -> list[dict[str, Any]]:
    """Records of per_question.jsonl; a torn last line (a crash mid-write) is dropped."""
    if not path.exists():
        return []
    out: list[dict[str, Any]] = []
    text = path.read_text(encoding="utf-8")
    last = text.count("\n") + 1
    for line_no, line in jsonl_lines(text):
        try:
            out.append(jsonl.loads(line))
        except json.JSONDecodeError:
            if line_no == last:  # torn last line
                continue
            raise UserError(f"{path}: line {line_no} is not valid JSON; cannot resume") from None
    return out


def _repair_tail(path: Path) -> None:
    """Cut a torn last line so appended records start on a line of their own."""
    if not path.exists() or path.stat().st_size == 0:
        return
    data = path.read_bytes()
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    with path.open("r+b") as f:
        f.truncate(cut)


def fingerprint(
    settings: Settings,
    index: str,
    generator: str,
    qa_bytes: bytes,
    index_built: str = "",
    runs: Sequence[str] = (),
) -> dict[str, Any]:
    """What must not change between an interrupted run and its resumption: among it the
    index by name and by when it was built, so that an index rebuilt in between (or
    another folder of the same name) is not taken for the one the first half read, and
    the runs (systems and sweeps), since the report covers the runs of the resuming
    command: others would keep their rows in per_question.jsonl but leave the report."""
    s = settings.to_dict()
    s.pop("loop", None)
    s.pop("index", None)  # as typed ("sample" or its folder): `index` names it
    return {
        "settings": s,
        "index": index,
        "index_built": index_built,
        "generator": generator,
        "qa_sha256": hashlib.sha256(qa_bytes).hexdigest(),
        "text_tools": tu.text_tools(),
        "runs": list(runs),
    }


def prepare_out(out: Path, fp: dict[str, Any], resume: bool) -> list[dict[str, Any]]:
    """Create `out`, check it against `--resume`, and return the records already there."""
    from scim_edge.atomic import write_text

    if resume and not (out / RUN_FILE).is_file():  # every run writes it before a question
        raise UserError(
            f"nothing to resume in {out}: no run was started there",
            hint="check the --out folder, or run without --resume",
        )
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create {out}: {e.strerror or e}") from None
    pq = out / PER_QUESTION
    run_file = out / RUN_FILE
    # with no run.json, the folder is the user's own: its report.md is not ours to replace
    theirs = [] if run_file.exists() else [n for n in OUTPUTS if (out / n).exists()]
    if theirs:
        raise UserError(
            f"{out} holds {' and '.join(theirs)}, which no eval run wrote there",
            hint="choose another --out; eval writes its report into a folder of its own",
        )
    has_results = pq.exists() and pq.stat().st_size > 0
    if has_results and not resume:
        raise UserError(
            f"{out} already holds results of an earlier run",
            hint="pass --resume to continue it, or choose another --out",
        )
    if resume and run_file.exists():
        try:
            old = jsonl.loads(run_file.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            old = None
        if not isinstance(old, dict):
            old = None  # a damaged run.json: no fingerprint to hold the resumption to
        if old is not None:
            old.setdefault("runs", fp["runs"])  # a run file written before runs were kept
            if isinstance(old["runs"], list) and sorted(map(str, old["runs"])) == sorted(
                fp["runs"]
            ):
                old["runs"] = fp["runs"]  # the same runs in another order: the same run
            for key in ("qa_sha256", "index", "index_built", "generator", "settings", "runs"):
                if old.get(key) != fp[key]:
                    raise UserError(
                        f"cannot resume {out}: {_what_differs(key, old.get(key), fp[key])}"
                    )
    records = read_records(pq) if resume else []
    _repair_tail(pq)
    write_text(run_file, json.dumps(fp, indent=2) + "\n")
    return records


def _what_differs(key: str, then: Any, now: Any) -> str:
    """One clause naming what keeps a run from being resumed, with both values."""
    if key == "qa_sha256":
        return "the QA file differs from the interrupted run's"
    if key == "index_built":
        return f"its index was built at {then or 'an unknown time'} and now at {now}"
    if key == "runs" and isinstance(then, list):
        return f"it ran {', '.join(map(str, then)) or 'nothing'} and would run {', '.join(now)} now"
    if key == "settings" and isinstance(then, dict) and isinstance(now, dict):
        for k in sorted(set(then) | set(now)):
            if then.get(k) != now.get(k):
                return f"its setting {k} was {then.get(k)!r} and is {now.get(k)!r} now"
    return f"its {key} was {then!r} and is {now!r} now"


Binder = Callable[[Run, QAItem], AbstractContextManager[Any]]


def _warm_up(
    answer_fn: Callable[[str, Settings], Answer],
    run: Run,
    warm: Sequence[QAItem],
    progress: Progress,
    binder: Binder,
) -> None:
    """Answer `warm` untimed and unrecorded (a failure here is recorded by the timed call)."""
    started = time.monotonic()
    for n, item in enumerate(warm, start=1):
        try:
            with binder(run, item):
                answer_fn(item.question, run.settings)
        except (KeyboardInterrupt, UserError):
            raise
        except Exception:  # noqa: BLE001 - the timed call that follows records this failure
            pass
        if len(warm) > 1:
            progress.update(f"{run.key} warm-up", n, len(warm), started, 0)


def answer_one(
    answer_fn: Callable[[str, Settings], Answer],
    run: Run,
    item: QAItem,
    binder: Binder,
    progress: Progress,
) -> dict[str, Any]:
    """One timed answer as its per-question record (an error record when the loop fails)."""
    t0 = time.perf_counter()
    try:
        with binder(run, item):
            ans = answer_fn(item.question, run.settings)
        return make_record(run, item, ans, (time.perf_counter() - t0) * 1000)
    except (KeyboardInterrupt, UserError):
        raise
    except Exception as e:  # noqa: BLE001 - a loop bug on one question must not lose the run
        rec = error_record(run, item, e, (time.perf_counter() - t0) * 1000)
        progress.note(f"[{run.key}] {item.id}: error: {rec['error']}")
        return rec


def run_all(
    answer_fn: Callable[[str, Settings], Answer],
    runs: Sequence[Run],
    items: Sequence[QAItem],
    out: Path,
    done_records: Iterable[dict[str, Any]] = (),
    progress: Progress | None = None,
    warmup: str = "full",
    bind: Binder | None = None,
) -> list[dict[str, Any]]:
    """Answer every item with every run, appending each record to per_question.jsonl.

    `bind(run, item)`, when given, is entered around each call (the oracle runs use it to
    put the item's gold answers in the engine's critic or evaluator slot).

    Warm-up, untimed and unrecorded, before each run's timed pass:
    - "full": the run first answers every question it is about to answer. The text
      processing of passages is memoised process-wide, so without this whichever system
      touches a passage first pays for it and the first system looks slowest; after a
      full pass every system is timed in the same warm state (answers are deterministic,
      so the timed pass repeats the same work). Doubles the run time.
    - "first": only the first question, which pays one-time loads (index, tokenizer,
      model, NLTK data) but not the memoised passage work.
    - "none": nothing.

    Returns all records (resumed and new), the latest one per (run, id)."""
    if warmup not in WARMUPS:
        raise UserError(f"unknown warm-up '{warmup}' (choose from {', '.join(WARMUPS)})")
    progress = progress or Progress()
    binder = bind or (lambda run, item: nullcontext())
    latest: dict[tuple[str, str], dict[str, Any]] = {}
    for rec in done_records:
        latest[(rec["run"], rec["id"])] = rec
    wanted_ids = {it.id for it in items}
    pq = out / PER_QUESTION
    with pq.open("a", encoding="utf-8") as f:
        for run in runs:
            todo = [
                it
                for it in items
                if (run.key, it.id) not in latest or "error" in latest[(run.key, it.id)]
            ]
            skipped = len(items) - len(todo)
            warm = todo if warmup == "full" else todo[:1] if warmup == "first" else []
            _warm_up(answer_fn, run, warm, progress, binder)
            started = time.monotonic()
            progress.update(run.key, skipped, len(items), started, skipped, force=True)
            for n, item in enumerate(todo, start=skipped + 1):
                rec = answer_one(answer_fn, run, item, binder, progress)
                f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
                latest[(run.key, item.id)] = rec
                progress.update(run.key, n, len(items), started, skipped)
            progress.update(run.key, len(items), len(items), started, skipped, final=True)
    run_keys = {r.key for r in runs}
    return [r for (k, i), r in latest.items() if k in run_keys and i in wanted_ids]


# ---- figures ----------------------------------------------------------------------------


def _mean(xs: Sequence[float]) -> float | None:
    return float(sum(xs) / len(xs)) if xs else None


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every per-system figure over `records` (one run's records, or a subset)."""
    n = len(records)
    if n == 0:
        return {"n": 0}
    qs = [r["quality"] for r in records]
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    times = [r["ms"] for r in records]
    tiers = Counter(_tier(q) for q in qs)
    iters = Counter(r["iterations"] for r in records)
    recalls = [r["recall_at_5"] for r in records if r.get("recall_at_5") is not None]
    return {
        **reader_figures(answerable),
        "n": n,
        "n_answerable": len(answerable),
        "n_unanswerable": len(unanswerable),
        "errors": sum(1 for r in records if r.get("status") == "error"),
        "quality": _mean(qs),
        "high": tiers["high"] / n,
        "medium": tiers["medium"] / n,
        "low": tiers["low"] / n,
        "em": _mean([r["em"] for r in answerable]),
        "f1": _mean([r["f1"] for r in answerable]),
        "em_all": _mean([r["em"] for r in records]),
        "f1_all": _mean([r["f1"] for r in records]),
        "avg_iterations": _mean([r["iterations"] for r in records]),
        "avg_passages": _mean([r["passages"] for r in records]),
        "time_mean_ms": _mean(times),
        **{f"{k}_ms": v for k, v in percentiles(times).items()},
        "converged_1_2": sum(
            1 for r in records if 1 <= r["iterations"] <= 2 and r["quality"] >= CONVERGED_Q
        )
        / n,
        "iteration_distribution": {str(k): iters[k] for k in sorted(iters)},
        "stop_reasons": dict(Counter(r["stop_reason"] for r in records).most_common()),
        "abstention_unanswerable": _mean([float(r["abstained"]) for r in unanswerable]),
        "over_abstention": _mean([float(r["abstained"]) for r in answerable]),
        "recall_at_5": _mean(recalls),
    }


def reader_figures(answerable: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Retrieval against reading: the share of answerable questions whose final passages
    hold a gold answer, and the EM on those (what the reader made of evidence it had)."""
    known = [r for r in answerable if r.get("answer_in_passages") is not None]
    held = [r for r in known if r["answer_in_passages"]]
    return {
        "answer_in_passages": _mean([float(r["answer_in_passages"]) for r in known]),
        "n_answer_in_passages": len(held),
        "em_given_in_passages": _mean([r["em"] for r in held]),
        "f1_given_in_passages": _mean([r["f1"] for r in held]),
    }


def summarize_run(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out = summarize(records)
    types = sorted({r["type"] for r in records if r.get("type")})
    if types:
        out["by_type"] = {t: summarize([r for r in records if r.get("type") == t]) for t in types}
    return out


def iteration_costs(records: Sequence[dict[str, Any]], max_t: int = 3) -> list[dict[str, Any]]:
    """For t = 1..max_t: questions that reached iteration t and its mean step times."""
    rows = []
    top = max([max_t, *(r["iterations"] for r in records)]) if records else max_t
    for t in range(1, top + 1):
        reached = [c for r in records for c in r["iteration_costs"] if c["t"] == t]
        if not reached and t > max_t:
            break
        row: dict[str, Any] = {"t": t, "reached": len(reached)}
        for k in ("retrieval", "generation", "evaluation", "coordination", "total"):
            row[f"{k}_ms"] = _mean([c[k] for c in reached])
        row["mean_quality"] = _mean([c["quality"] for c in reached if c["quality"] is not None])
        rows.append(row)
    return rows


def _paired(
    a: Sequence[dict[str, Any]], b: Sequence[dict[str, Any]], field: str, answerable_only: bool
) -> tuple[list[float], list[float]]:
    bmap = {r["id"]: r for r in b}
    xs, ys = [], []
    for r in a:
        other = bmap.get(r["id"])
        if other is None or (answerable_only and not r["answerable"]):
            continue
        xs.append(float(r[field]))
        ys.append(float(other[field]))
    return xs, ys


def statistics(by_run: dict[str, list[dict[str, Any]]], seed: int) -> list[dict[str, Any]]:
    """Paired tests on Q (all questions) and F1 (answerable ones): each system against
    `standard`, and `scim` against `iter-retgen`."""
    pairs = [
        (s, "standard")
        for s in by_run
        if s != "standard" and "@" not in s and s not in ORACLE_SYSTEMS and "standard" in by_run
    ]
    if "scim" in by_run and "iter-retgen" in by_run:
        pairs.append(("scim", "iter-retgen"))
    out = []
    for a, b in pairs:
        for metric, answerable_only in (("quality", False), ("f1", True)):
            xs, ys = _paired(by_run[a], by_run[b], metric, answerable_only)
            if len(xs) < 2:
                continue
            out.append({"a": a, "b": b, "metric": metric, **compare_paired(xs, ys, seed=seed)})
    return out


def sensitivity(by_run: dict[str, list[dict[str, Any]]], runs: Sequence[Run]) -> dict[str, Any]:
    """The study's sensitivity tables: per sweep value, Quality, High%, Avg Iter and F1;
    for delta also the decline stops split into caught degradations and premature stops.

    A decline stop fired when the loop force-accepted because Q fell by at least delta
    and returned the previous answer. It is a *premature stop* when the same loop with the
    decline rule disabled (`scim@delta=off`) went on to accept an answer (Q >= theta) at a
    later iteration; otherwise it is a *degradation caught* (continuing did not recover).
    """
    tables: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        if run.sweep_key is None or run.sweep_value == DELTA_OFF:
            continue
        recs = by_run.get(run.key, [])
        s = summarize(recs)
        row: dict[str, Any] = {
            "value": run.sweep_value,
            "n": s["n"],
            "quality": s.get("quality"),
            "high": s.get("high"),
            "avg_iterations": s.get("avg_iterations"),
            "f1": s.get("f1"),
        }
        if run.sweep_key == "delta":
            ref = {r["id"]: r for r in by_run.get(f"scim@delta={DELTA_OFF}", [])}
            theta = run.settings.theta
            fired = [r for r in recs if r.get("declined")]
            premature = 0
            for r in fired:
                other = ref.get(r["id"])
                later = [
                    c
                    for c in (other or {}).get("iteration_costs", [])
                    if c["t"] > r["iterations"] and (c["quality"] or 0) >= theta
                ]
                if later:
                    premature += 1
            row.update(
                {
                    "decline_stops": len(fired),
                    "degradations_caught": len(fired) - premature,
                    "premature_stops": premature,
                }
            )
        tables.setdefault(run.sweep_key, []).append(row)
    return tables


def compute_results(
    records: Sequence[dict[str, Any]], runs: Sequence[Run], *, seed: int, meta: dict[str, Any]
) -> dict[str, Any]:
    by_run: dict[str, list[dict[str, Any]]] = {r.key: [] for r in runs}
    for rec in records:
        by_run.setdefault(rec["run"], []).append(rec)
    systems = {r.key: summarize_run(by_run[r.key]) for r in runs if r.sweep_key is None}
    costs = {
        r.key: iteration_costs(by_run[r.key], r.settings.t_max) for r in runs if r.sweep_key is None
    }
    return {
        "meta": meta,
        "systems": systems,
        "iteration_costs": costs,
        "statistics": statistics({k: v for k, v in by_run.items() if "@" not in k}, seed),
        "trust": {r.key: trust_figures(by_run[r.key]) for r in runs if r.sweep_key is None},
        "sensitivity": sensitivity(by_run, runs),
        "sweep_runs": {r.key: summarize(by_run[r.key]) for r in runs if r.sweep_key},
    }


# ---- the whole evaluation ---------------------------------------------------------------


def check_loops(runs: Sequence[Run], engine: Any) -> None:
    """Build each system's loop once so a missing one fails before any question runs."""
    from scim_edge.loops import make_loop

    for run in runs:
        try:
            make_loop(run.settings, engine)
        except ImportError as e:
            raise UserError(
                f"system '{run.system}' is not available in this installation: {e}"
            ) from None


def oracle_binder(engine: Any) -> Callable[[Run, QAItem], AbstractContextManager[Any]]:
    """For an oracle run, bind its oracle (one per run) with the item's gold answers."""
    from scim_edge.evaluation.oracle import bound, make_oracle

    oracles: dict[str, Any] = {}

    def bind(run: Run, item: QAItem) -> AbstractContextManager[Any]:
        if run.oracle is None:
            return nullcontext()
        if run.key not in oracles:
            oracles[run.key] = make_oracle(run.oracle, run.settings)
        return bound(engine, run.oracle, oracles[run.key], item.question, item.answers)

    return bind


def evaluate(
    engine: Any,
    items: Sequence[QAItem],
    runs: Sequence[Run],
    out: Path,
    *,
    qa_file: str,
    qa_bytes: bytes,
    seed: int = 0,
    resume: bool = False,
    progress: Progress | None = None,
    make_plots: bool = True,
    warmup: str = "full",
    notes: Sequence[str] = (),
) -> dict[str, Any]:
    """Run, aggregate and write every output; return results (as in results.json).
    `notes` go to the progress once `out` is found fit to write to, so that a refused
    --out is the only line said."""
    from datetime import UTC, datetime

    from scim_edge.evaluation.report import write_outputs

    progress = progress or Progress()
    started = datetime.now(UTC).isoformat(timespec="seconds")
    settings: Settings = engine.settings
    generator = getattr(engine.generator, "name", str(engine.generator))
    manifest = getattr(getattr(engine, "retriever", None), "manifest", None) or {}
    built = str(manifest.get("built_at", "")) if isinstance(manifest, dict) else ""
    fp = fingerprint(settings, engine.index_name, generator, qa_bytes, built, [r.key for r in runs])
    done = prepare_out(out, fp, resume)
    for note in notes:
        progress.note(note)
    records = run_all(
        engine.answer, runs, items, out, done, progress, warmup=warmup, bind=oracle_binder(engine)
    )
    meta = {
        "qa_file": qa_file,
        "questions": len(items),
        "unanswerable": sum(1 for it in items if not it.answerable),
        "types": dict(Counter(it.type for it in items if it.type)),
        "index": engine.index_name,
        "generator": generator,
        "engine_notes": list(getattr(engine, "notes", [])),
        "profile": settings.profile,
        "theta": settings.theta,
        "t_max": settings.t_max,
        "delta": settings.delta,
        "weights": list(settings.weights),
        "seed": seed,
        "bootstrap_resamples": 10_000,
        "warmup": warmup,
        "answer_cache": "disabled during evaluation",
        "runs": [r.key for r in runs],
        "oracle_runs": [r.key for r in runs if r.oracle],
        "resumed_records": sum(1 for r in done),
        "started": started,
        "finished": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    results = compute_results(records, runs, seed=seed, meta=meta)
    plots: list[str] = []
    note: str | None = None
    if make_plots:
        from scim_edge.evaluation.plots import make_plots as draw

        plots, note = draw(results, records, out)
        if note:
            progress.note(note)
    write_outputs(out, results, plots, note)
    results["plots"] = plots
    return results
