"""SCIM (Self-Correcting Iterative Mechanism) and its baselines on one retriever,
generator and prompt.

Loops (`make_scim_family_loop(name, settings, engine)`):
- `scim`: iteration 1 retrieves k1 passages for the question; each later iteration adds
  k2 passages found by *augment* (completeness < 0.7: the missing question keywords) or
  *refine* (consistency < 0.6 or factuality < 0.6: alternative sources for the answer's
  unsupported words), augment when neither applies. After every generation the answer is
  scored on the five dimensions and Algorithm 1 decides.
- `single-dim`: the same, with one question–answer relevance score for every dimension.
- `fixed-1`, `fixed-2`, `fixed-3`: SCIM's adaptive retrieval for exactly N iterations.
- `standard`: one pass with k1 passages.
- `iter-retgen`: t_max iterations, no quality stop; each later iteration retrieves k2 new
  passages with the question plus the previous answer and regenerates from all of them.

Algorithm 1 (θ = settings.theta, T_max = settings.t_max, δ = settings.delta):
1. Q ≥ θ → ACCEPT;
2. else t > 1 and Q_t ≤ Q_{t−1} − δ → FORCE-ACCEPT (decline), returning the previous
   iteration's answer (checked before the budget, so a decline in the last iteration
   still returns the better answer);
3. else t ≥ T_max → FORCE-ACCEPT (budget), returning the best iteration's answer;
4. else CONTINUE.
Q is the paper's five-dimension score (`settings.quality = "paper"`) or the calibrated
confidence of the trained Critic (`"learned"`, θ is then a probability); the default
`"auto"` is learned when a trained Critic fits the generator, paper otherwise. Every iteration
records its confidence when a trained Critic fits the generator (an answer an earlier
iteration already gave from the same sentence keeps that iteration's:
`Confidence.as_first_given`); the answer
carries the returned iteration's, and its tier is read from it.
With `settings.fast_path`, Q₁ ≥ settings.fast_path_threshold returns at once.

stop_reason values:
- `accepted`: Q ≥ θ (status accepted);
- `fast_path`: Q₁ ≥ the fast-path threshold (status accepted);
- `budget`: t reached T_max below θ (status force_accepted);
- `quality_declined`: Q fell by at least δ; the previous answer is returned
  (status force_accepted);
- `no_new_evidence`: a later retrieval found no passage not already used (for augment, none
  that names the question's topic: `query_formulation.topic_anchors`), so another
  generation could not change the answer (status force_accepted; scim and single-dim);
- `no_evidence`: no passage shares a word with the question, or the question has no content
  words at all (status insufficient_evidence, answer INSUFFICIENT_EVIDENCE);
- `single_pass`: `standard` after its one pass (status accepted);
- `fixed_iterations`: `fixed-N` and `iter-retgen` after their iteration count
  (status accepted);

An answer served from the efficiency profile's cache keeps its stored status and
stop_reason and says `bindings["cache"] == "hit"`.

Force-accepted answers carry a note: why the loop stopped, and what it had compared with θ
(the confidence tier stays the one trust label). Profiles add: a hallucination
warning when the final answer's consistency is below `settings.hallucination_warning`
(high-stakes), `needs_review` on force-accept (high-stakes), and an answer cache keyed by
(question, index, model) under `paths.cache_dir()` (efficiency).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scim_edge import jsonl, paths
from scim_edge import query_formulation as qf
from scim_edge import textutil as tu
from scim_edge.atomic import write_text
from scim_edge.confidence import Confidence, confidence_tier
from scim_edge.errors import UserError
from scim_edge.loops.base import (
    NO_EVIDENCE_DISCLAIMER,
    REVIEW_NOTE,
    Run,
    as_read,
    force_accept_disclaimer,
    hallucination_warning,
    make_bindings,
    ms_since,
    retrieve_formulated,
)
from scim_edge.quality import Evaluator, RelevanceEvaluator, tier
from scim_edge.scim_policy import Decision, algorithm1, returned
from scim_edge.settings import LEARNED_QUALITY_LOOPS, THETA_LOOPS, Settings
from scim_edge.types import (
    Answer,
    Bindings,
    Decided,
    Event,
    Final,
    Generated,
    IterationRecord,
    IterationStarted,
    Passage,
    QualityReport,
    Retrieved,
    Scored,
    StepStarted,
)

if TYPE_CHECKING:
    from scim_edge.engine import Engine

SCIM_FAMILY = ("scim", "standard", "iter-retgen", "fixed-1", "fixed-2", "fixed-3", "single-dim")


def next_mode(report: QualityReport, settings: Settings) -> str:
    """augment when the answer misses question keywords, refine when it is unsupported or
    thin on facts, augment otherwise."""
    if report.completeness < settings.augment_threshold:
        return "augment"
    refine_below = settings.refine_threshold
    if report.consistency < refine_below or report.factuality < refine_below:
        return "refine"
    return "augment"


@dataclass
class _Iteration:
    t: int
    answer: str
    report: QualityReport
    passages: list[Passage]
    support: list[dict[str, str]] = field(default_factory=list)
    confidence: float | None = None

    def q(self, learned: bool) -> float:
        if learned:
            return self.confidence if self.confidence is not None else 0.0
        return self.report.quality


class ScimFamilyLoop:
    def __init__(self, name: str, settings: Settings, engine: Engine) -> None:
        if name not in SCIM_FAMILY:
            raise UserError(f"unknown loop '{name}' (choose from {', '.join(SCIM_FAMILY)})")
        self.name = name
        self.settings = settings
        self.engine = engine
        self.single_dim = name == "single-dim"
        # A bound evaluator wins (the eval harness's oracle binds one there).
        self.evaluator: Any = engine.slots.evaluator or (
            RelevanceEvaluator(settings) if self.single_dim else Evaluator(settings)
        )
        self.five_dims = Evaluator(settings)
        if name == "standard":
            self.iterations = 1
        elif name.startswith("fixed-"):
            self.iterations = int(name.split("-")[1])
        else:
            self.iterations = settings.t_max
        self.quality_stop = name in THETA_LOOPS
        # set per run: "auto" means the calibrated confidence when a trained Critic fits
        self.learned = settings.quality == "learned" and self.quality_stop
        self.adaptive = name not in ("standard", "iter-retgen")
        from scim_edge.passage_search import make_passage_search

        self.search = make_passage_search(settings, engine)  # retriever, reranker, HyDE

    # -- bindings -------------------------------------------------------------------
    def bindings(self) -> dict[str, str]:
        rewriter = {
            "standard": "none",
            "iter-retgen": "question+previous answer",
        }.get(self.name, "scim augment/refine")
        return make_bindings(
            self.engine,
            self.settings,
            evaluator=self.evaluator.name,
            critic="none",
            rewriter=rewriter,
            # with no reranker bound, the formulation's own lexical scorer orders candidates
            **{"reranker": "hybrid lexical", **self.search.bindings()},
        )

    # -- the loop -------------------------------------------------------------------
    def run(self, question: str) -> Iterator[Event]:
        s = self.settings
        cache_path = self._cache_path(question) if s.cache_answers else None
        if cache_path is not None:
            cached = _read_cached(cache_path)
            if cached is not None:
                yield Final(cached)
                return
        run = Run(question, self.name, s, self.engine, bindings=self.bindings())
        confidence = self._confidence(run)
        yield from run.out(Bindings(bindings=dict(run.bindings)))
        history: list[_Iteration] = []
        search = self.search
        generator = self.engine.generator
        formulation = qf.initial(question)
        prev: _Iteration | None = None
        for t in range(1, self.iterations + 1):
            run.begin_iteration()
            k = s.k1 if t == 1 else s.k2
            yield from run.out(IterationStarted(t, formulation.mode, list(formulation.queries)))
            yield from run.out(StepStarted(t, "retrieve"))
            t0 = time.perf_counter()
            with run.step("retrieve"):
                found = retrieve_formulated(search, formulation, question, k, run.seen_ids,
                                            s.candidates)  # fmt: skip
                added = run.add(found)
            yield from run.out(
                Retrieved(t, formulation.mode, list(formulation.queries), added, run.doc_ids,
                          ms_since(t0))
            )  # fmt: skip
            if search.last_hypothesis:  # HyDE: a query vector only, never evidence
                run.trace.append({"kind": "hyde", "t": t, "hypothesis": search.last_hypothesis})
            if not run.passages or not tu.content_words(question):
                # nothing retrieved, or a question of stopwords only: no passage can support it
                rec = run.record(t, formulation.mode, formulation.queries, added, "",
                                 _zero_scores(), "force_accept")  # fmt: skip
                yield from run.out(Decided(t, "force_accept", "no_evidence", rec))
                run.disclaimers.append(NO_EVIDENCE_DISCLAIMER)
                yield run.finish(answer="", status="insufficient_evidence",
                                 stop_reason="no_evidence", quality=0.0, tier="low")  # fmt: skip
                return
            if prev is not None and not added and self.quality_stop:
                rec = run.record(t, formulation.mode, formulation.queries, added, prev.answer,
                                 prev.report.scores(), "force_accept")  # fmt: skip
                yield from run.out(Decided(t, "force_accept", "no_new_evidence", rec))
                yield self._finish(run, history, len(history) - 1, "force_accept",
                                   "no_new_evidence", question, confidence)  # fmt: skip
                return

            current, gen = yield from self._answer_and_score(run, t, generator, confidence, added)
            answer, report, p = current.answer, current.report, current.confidence
            history.append(current)
            decision = self._decide(t, current, prev)
            rec = run.record(t, formulation.mode, formulation.queries, added, answer,
                             report.scores(), decision.decision, support=gen.support,
                             features=gen.features)  # fmt: skip
            rec.confidence = None if p is None else round(p, 4)
            yield from run.out(Decided(t, decision.decision, decision.reason, rec))
            if decision.decision != "continue":
                at = returned(decision, [it.q(self.learned) for it in history])
                yield self._finish(run, history, at, decision.decision, decision.reason,
                                   question, confidence)  # fmt: skip
                return
            formulation = self._next_formulation(question, answer, report, run)
            prev = current
        raise AssertionError("the loop ends with a decision")  # pragma: no cover

    def _confidence(self, run: Run) -> Confidence:
        """The engine's calibrated confidence; its warning when a Critic does not fit."""
        s = self.settings
        confidence = Confidence.for_engine(self.engine, s, required=s.quality == "learned")
        run.bindings["confidence"] = confidence.name
        # an evaluator that decides acceptance itself (the eval's oracle) keeps its Q
        self.learned = (
            self.name in LEARNED_QUALITY_LOOPS  # single-dim, the paper's ablation, keeps Q
            and not getattr(self.evaluator, "decides_acceptance", False)
            and (s.quality == "learned" or (s.quality == "auto" and confidence.available))
        )
        if self.quality_stop:
            run.bindings["quality"] = "learned" if self.learned else "paper"
        if confidence.notify and confidence.warning:
            run.warnings.append(confidence.warning)
        return confidence

    def _answer_and_score(
        self, run: Run, t: int, generator: Any, confidence: Confidence, added: list[Passage]
    ) -> Generator[Event, None, tuple[_Iteration, Any]]:
        """Generate this iteration's answer, score it on the five dimensions as the user
        reads it (short answer and support sentence), and estimate its confidence."""
        question = run.question
        yield from run.out(StepStarted(t, "generate"))
        with run.step("generate"):
            gen = generator.generate(question, list(run.passages))
        answer = gen.text.strip()
        yield from run.out(Generated(t, answer, gen.ms, gen.input_tokens, gen.output_tokens))
        yield from run.out(StepStarted(t, "evaluate"))
        t0 = time.perf_counter()
        with run.step("evaluate"):
            shown = (
                answer
                if getattr(self.evaluator, "scores_short_answer", False)
                else (as_read(answer, gen.support))
            )
            report = self.evaluator.score(question, shown, run.passages)
            # the Critic reads the five dimensions; single-dim's one score is not them
            dims = (
                self.five_dims.score(question, shown, run.passages) if self.single_dim else report
            )
            p = confidence.round(
                answer, dims.scores(), gen.features, t, [x.doc_id for x in added],
                run.doc_ids, [r.answer for r in run.records],
                {x.doc_id: x.score for x in run.passages},
            )  # fmt: skip
            p = confidence.as_first_given(p, answer, gen.support, run.records)
        yield from run.out(Scored(t, report, ms_since(t0)))
        return _Iteration(t, answer, report, list(run.passages), list(gen.support), p), gen

    def _decide(self, t: int, current: _Iteration, prev: _Iteration | None) -> Decision:
        s = self.settings
        if self.quality_stop:
            return algorithm1(
                t,
                current.q(self.learned),
                prev.q(self.learned) if prev else None,
                theta=s.theta,
                t_max=s.t_max,
                delta=s.delta,
                fast_path=s.fast_path_threshold if s.fast_path else None,
            )
        if t >= self.iterations:
            reason = "single_pass" if self.name == "standard" else "fixed_iterations"
            return Decision("accept", reason)
        return Decision("continue", "continue")

    def _next_formulation(
        self, question: str, answer: str, report: QualityReport, run: Run
    ) -> qf.Formulation:
        if not self.adaptive:
            return qf.with_answer(question, answer, run.passages)
        if next_mode(report, self.settings) == "refine":
            return qf.refine(question, answer, run.passages)
        return qf.augment(question, answer, run.passages)

    def _finish(
        self,
        run: Run,
        history: list[_Iteration],
        at: int,
        decision: str,
        reason: str,
        question: str,
        confidence: Confidence,
    ) -> Final:
        """Answer with `history[at]`, the iteration the decision returns."""
        s = self.settings
        chosen = history[at]
        p = chosen.confidence
        if self.iterations > 1:  # one of several rounds returned: how they agreed counts
            p = confidence.across_rounds(
                [it.answer for it in history], [it.confidence for it in history], at
            )
        status = "force_accepted" if decision == "force_accept" else "accepted"
        needs_review = False
        if status == "force_accepted":
            run.disclaimers.append(force_accept_disclaimer(reason, s.theta, self.learned))
            if s.review_force_accepted:
                needs_review = True
                run.disclaimers.append(REVIEW_NOTE.format(profile=s.profile))
        if (
            s.hallucination_warning is not None
            and not self.single_dim
            and chosen.report.consistency < s.hallucination_warning
        ):
            run.warnings.append(
                hallucination_warning(
                    chosen.report.consistency, s.hallucination_warning,
                    chosen.report.unsupported_words,
                )
            )  # fmt: skip
        final = run.finish(
            answer=chosen.answer,
            status=status,
            stop_reason=reason,
            quality=chosen.report.quality,
            tier=(
                confidence_tier(p)
                if p is not None
                else chosen.report.tier or tier(chosen.report.quality)
            ),
            cited=chosen.passages,
            needs_review=needs_review,
            support=chosen.support,
            confidence=None if p is None else round(p, 4),
        )
        if s.cache_answers:
            path = self._cache_path(question)
            if path is not None:
                _write_cached(path, final.answer)
        return final

    # -- efficiency profile: answer cache ---------------------------------------------
    def _cache_path(self, question: str):
        key_parts = [
            question,
            str(getattr(self.engine, "index_name", "")),
            str(getattr(self.engine.retriever, "passage_count", "")),
            str(getattr(self.engine.generator, "name", "")),
            self.name,
            json.dumps(self.settings.to_dict(), sort_keys=True),  # θ, δ, weights, ...
        ]
        key = hashlib.sha256("\x1f".join(key_parts).encode("utf-8")).hexdigest()
        return paths.cache_dir() / "answers" / f"{key}.json"


def _zero_scores() -> dict[str, float]:
    return {"completeness": 0.0, "consistency": 0.0, "confidence": 0.0, "factuality": 0.0,
            "coherence": 0.0, "quality": 0.0}  # fmt: skip


def _write_cached(path, answer: Answer) -> None:
    try:
        write_text(path, json.dumps(answer.to_dict(with_passages=True), ensure_ascii=False))
    except OSError:
        pass  # a cache that cannot be written only costs speed


def _read_cached(path) -> Answer | None:
    t0 = time.perf_counter()
    try:
        d = jsonl.loads(path.read_text(encoding="utf-8"))
        iterations = [IterationRecord(**it) for it in d["iterations"]]
        passages = [Passage(**p) for p in d.get("passages", [])]
        bindings = dict(d.get("bindings", {}))
        bindings["cache"] = "hit"
        return Answer(
            question=d["question"],
            answer=d["answer"],
            status=d["status"],
            stop_reason=d["stop_reason"],
            tier=d["tier"],
            quality=float(d["quality"]),
            citations=list(d["citations"]),
            generator=d["generator"],
            index=d["index"],
            iterations=iterations,
            timing_ms={"total": round(ms_since(t0), 3), "cached_total": d["timing_ms"]["total"]},
            loop=d.get("loop", "scim"),
            profile=d.get("profile", "efficiency"),
            disclaimers=list(d.get("disclaimers", [])),
            warnings=list(d.get("warnings", [])),
            needs_review=bool(d.get("needs_review", False)),
            bindings=bindings,
            passages=passages,
            trace=list(d.get("trace", [])),
            support=list(d.get("support", [])),
            confidence=d.get("confidence"),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def make_scim_family_loop(name: str, settings: Settings, engine: Engine) -> ScimFamilyLoop:
    return ScimFamilyLoop(name, settings, engine)
