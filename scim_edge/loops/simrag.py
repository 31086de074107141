"""The SIM-RAG-style critic loop: retrieve → generate → critique, with safe stopping.

A Critic separate from the generator decides whether the answer is supported. The loop
follows the contract of its issue exactly:

1. It binds one retriever, one generator and one critic, and optionally one rewriter and
   one reranker. The bindings come from Settings and appear in `Answer.bindings` and as
   the first trace event.
2. The reranker, generator and critic see only the user's original question. Rewritten
   queries (and HyDE passages) only fetch candidates: never evidence, never context.
3. An answer is returned only when the critic approves a direct, non-abstaining answer.
4. `max_iterations`, `max_new_tokens` (answer generation only) and `critic_max_tokens`
   must be positive integers: ValueError in the API, exit 2 on the CLI.
5. Follow-up queries are at most three concrete missing-evidence issues, each cut to 160
   characters; with none usable, the question plus the critic's reason, cut the same way
   (just the question when the reason is about the answer's form only, or is only the
   trained Critic's confidence against its threshold). A round's record
   keeps the queries it searched with; the follow-ups apply from the next round.
6. Every round's `Retrieved` event and record list the accumulated and the new ids.
7. A form-only rejection is answered by one regeneration in the same iteration (same
   question, same passages, bounded guidance), critiqued again and traced as
   `regeneration`; an approved revision stops with `critic_approved_after_regeneration`.
8. At the iteration limit, or when a rejected round brings no new passage, the answer is
   exactly `Insufficient evidence to answer reliably.` (status `insufficient_evidence`).
9. Abstentions count as rejections even when the critic approves them.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scim_edge import query_formulation as qf
from scim_edge.confidence import Confidence, confidence_tier
from scim_edge.critic import (
    FEEDBACK_CHARS,
    NO_EVIDENCE,
    UNSUPPORTED,
    HeuristicCritic,
    LearnedCritic,
    bound,
    guidance_for,
    has_evidence_signal,
    is_abstention,
    is_form_only,
    make_critic,
    searchable_reason,
)
from scim_edge.errors import ConfigError
from scim_edge.loops.base import Run, as_read, make_bindings, ms_since, retrieve_formulated
from scim_edge.quality import tier as tier_of
from scim_edge.types import (
    DIMENSIONS,
    INSUFFICIENT_EVIDENCE,
    Bindings,
    Critiqued,
    Decided,
    Event,
    Final,
    Generated,
    IterationRecord,
    IterationStarted,
    Passage,
    QualityReport,
    Regenerated,
    Retrieved,
    Scored,
    StepStarted,
    Verdict,
)

if TYPE_CHECKING:
    from scim_edge.engine import Engine
    from scim_edge.settings import Settings

MAX_FOLLOWUPS = 3

STOP_APPROVED = "critic_approved"
STOP_APPROVED_REGEN = "critic_approved_after_regeneration"
STOP_LIMIT = "max_iterations_reached"
STOP_NO_NEW = "no_new_evidence"
STOP_NO_EVIDENCE = "no_evidence"


class LoopOptionError(ConfigError, ValueError):
    """A bad request option: a ValueError for API callers, a UserError (exit 2) for the CLI."""


def check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LoopOptionError(f"{name} must be a positive integer (got {value!r})")
    if value <= 0:
        raise LoopOptionError(f"{name} must be a positive integer (got {value!r})")
    return value


def validate_options(settings: Settings) -> None:
    """Contract 4: every request option the loop reads is a positive integer."""
    check_positive_int("max_iterations", settings.max_iterations)
    check_positive_int("max_tokens", settings.max_new_tokens)
    check_positive_int("critic_max_tokens", settings.critic_max_tokens)


_LABEL = re.compile(
    rf"^\s*(?:{re.escape(NO_EVIDENCE.strip())}|{re.escape(UNSUPPORTED.strip())})\s*", re.I
)


def search_text(query: str) -> str:
    """What the retriever is sent for a follow-up query: the issue without its label
    ("no evidence for: Thetis" searches for "Thetis")."""
    return _LABEL.sub("", query).strip() or query


def followup_queries(question: str, verdict: Verdict) -> tuple[list[str], str]:
    """Contract 5: up to three concrete missing-evidence issues, each cut to 160 chars;
    otherwise the question plus the critic's reason, cut the same way.
    Returns the queries and which rule produced them ("issues" | "generic")."""
    concrete: list[str] = []
    for issue in verdict.issues:
        text = bound(issue, FEEDBACK_CHARS)
        if not text or not has_evidence_signal(text) or not search_text(text).strip(" .,:;"):
            continue
        if text not in concrete:
            concrete.append(text)
        if len(concrete) == MAX_FOLLOWUPS:
            break
    if concrete:
        return concrete, "issues"
    reason = searchable_reason(verdict.reason)
    return [bound(f"{question} {reason}", FEEDBACK_CHARS)], "generic"


def binding_name(obj: Any, default: str = "none") -> str:
    if obj is None:
        return default
    return str(getattr(obj, "name", None) or type(obj).__name__)


@dataclass(frozen=True)
class _First:
    """How the first round searches, and how many passages it takes."""

    formulation: qf.Formulation
    k: int


@dataclass
class _Round:
    """One round's answer after critique (and any regeneration) and scoring."""

    answer: str
    verdict: Verdict
    verdict_d: dict[str, Any]
    gen: Any
    report: QualityReport
    p: float | None
    regenerated: bool


class SimRagLoop:
    """The critic loop. Optional slots that stay empty cost nothing: no object is built."""

    loop_name = "simrag"

    def __init__(
        self,
        settings: Settings,
        engine: Engine,
        *,
        critic: Any | None = None,
        rewriter: Any | None = None,
        reranker: Any | None = None,
        retriever: Any | None = None,
    ) -> None:
        validate_options(settings)
        self.settings = settings
        self.engine = engine
        bound = engine.slots
        from scim_edge.passage_search import make_passage_search

        slots: dict[str, Any] = {"retriever": retriever or bound.retriever}
        if reranker is not None or bound.reranker is not None:
            slots["reranker"] = reranker if reranker is not None else bound.reranker
        self.search = make_passage_search(settings, engine, **slots)
        self.retriever = self.search.retriever
        self.reranker = self.search.reranker
        self.generator = engine.generator
        self.critic = critic or bound.critic or make_critic(settings, engine)
        # every answer carries a confidence, whichever critic judges it
        self.confidence = Confidence.for_engine(engine, settings)
        if rewriter is None and bound.rewriter is None:
            from scim_edge.rewriter import make_rewriter

            rewriter = engine.cache.get(
                ("rewriter", settings.rewriter, settings.model),
                lambda: make_rewriter(settings, engine),
            )
        self.rewriter = rewriter if rewriter is not None else bound.rewriter
        from scim_edge.quality import Evaluator

        self.evaluator = Evaluator(settings)
        self.bindings = make_bindings(
            engine,
            settings,
            critic=binding_name(self.critic),
            rewriter=binding_name(self.rewriter),
        )
        self.bindings.update({"reranker": "none", **self.search.bindings()})
        self.bindings["confidence"] = self.confidence.name

    # ---- steps --------------------------------------------------------------------------

    def _first_formulation(self, queries: list[str]) -> qf.Formulation:
        """The first round searches as the SCIM family's first round does (the question,
        or for a comparison each option's query and the question; the leads of the
        articles it names; the lexical order: `query_formulation.initial`), so that every
        loop starts from the same passages. A rewriter's queries (contract 2) only fetch
        candidates, ordered by the question's scorer: pooled with the question's, or for a
        comparison as lists of their own taken in turn with the options'."""
        f = qf.initial(self._question)
        extra = [q for q in queries if q != self._question]
        if not extra:
            return f
        scorers = None if f.query_scorers is None else [*f.query_scorers, *[f.scorer] * len(extra)]
        return dataclasses.replace(f, queries=[*f.queries, *extra], query_scorers=scorers)

    def _retrieve(self, queries: list[str], k: int, seen: set[str]) -> list[Passage]:
        """Up to k new passages per query through the shared pipeline; a bound reranker
        orders candidates by their fit to the ORIGINAL question (contract 2)."""
        return self.search.retrieve(self._question, [search_text(q) for q in queries], k, seen)

    def _generate(
        self, question: str, passages: list[Passage], guidance: str | None, rejected: list[str]
    ) -> Any:
        """Generate with the Critic's feedback (SIM-RAG §3.4): answers it rejected are
        excluded from the reading (the extractive reader) or named in the prompt (Flan-T5)."""
        kwargs: dict[str, Any] = {
            "guidance": guidance,
            "max_new_tokens": self.settings.max_new_tokens,
        }
        if rejected and _takes_exclude(self.generator):
            kwargs["exclude"] = list(rejected)
        return self.generator.generate(question, passages, **kwargs)

    def _record(self, run: Run, t: int, mode: str, queries: list[str], new: list[Passage],
                r: _Round, decision: str) -> IterationRecord:  # fmt: skip
        rec = run.record(t, mode, queries, new, r.answer, r.report.scores(), decision,
                         r.verdict_d, support=r.gen.support, features=r.gen.features)  # fmt: skip
        rec.confidence = None if r.p is None else round(r.p, 4)
        return rec

    def _judge(self, answer: str, passages: list[Passage], p: float | None = None) -> Verdict:
        """The critic's verdict, with contract 9 enforced on top: an abstention is never
        approved, whatever the critic says. The trained Critic judges by `p`, the round's
        calibrated confidence."""
        if isinstance(self.critic, LearnedCritic) and p is not None:
            verdict = self.critic.verdict(self._question, answer, list(passages), p)
        else:
            verdict = self.critic.judge(self._question, answer, list(passages))
        if not isinstance(verdict, Verdict):
            raise TypeError(f"critic {self.bindings['critic']} returned {type(verdict).__name__}")
        if is_abstention(answer):
            if verdict.accept:
                verdict = dataclasses.replace(
                    verdict,
                    accept=False,
                    form_only=False,
                    reason=(
                        "the answer abstains; the critic's approval is overridden"
                        + (f" ({verdict.reason})" if verdict.reason else "")
                    ),
                )
            else:
                verdict = dataclasses.replace(verdict, form_only=False)
        else:
            verdict = dataclasses.replace(verdict, form_only=is_form_only(verdict))
        return verdict

    def _grounded(self, report: QualityReport) -> QualityReport:
        """The five SCIM scores as the heuristic critic judged them (a short answer scored
        with the sentence that states it), so the shown Q matches the decision; other
        critics leave the Evaluator's plain scores."""
        seen = getattr(self.critic, "last_scores", None)
        if not isinstance(self.critic, HeuristicCritic) or not seen:
            return report
        dims = {d: float(seen.get(d, getattr(report, d))) for d in DIMENSIONS}
        q = sum(w * dims[d] for w, d in zip(self.settings.weights, DIMENSIONS, strict=True))
        return dataclasses.replace(report, **dims, quality=q, tier=tier_of(q))

    # ---- the loop -----------------------------------------------------------------------

    def _start(self, question: str) -> Run:
        self._question = question
        run = Run(
            question=question,
            loop=self.loop_name,
            settings=self.settings,
            engine=self.engine,
            bindings=dict(self.bindings),
        )
        fallback = getattr(self.critic, "fallback_warning", None)
        if fallback:
            run.warnings.append(fallback)
        elif self.confidence.notify and self.confidence.warning:
            run.warnings.append(self.confidence.warning)  # the shipped Critic stands in
        return run

    def _initial_queries(self, question: str) -> list[str]:
        queries = [question]
        if self.rewriter is not None:
            rewrites = [bound(r) for r in self.rewriter.rewrite(question) if r and r.strip()]
            queries += [r for r in rewrites if r.lower() != question.lower()]
        return queries

    def _retrieve_step(
        self, run: Run, t: int, mode: str, queries: list[str], first: _First | None = None
    ) -> Generator[Event, None, list[Passage]]:
        """Retrieve this round's passages (the first round's by `first`, whose queries are
        `queries`); returns those not seen before."""
        s = self.settings
        yield from run.out(StepStarted(t=t, step="retrieve"))
        t0 = time.perf_counter()
        with run.step("retrieve"):
            if first is not None:
                found = retrieve_formulated(self.search, first.formulation, self._question,
                                            first.k, run.seen_ids, s.candidates)  # fmt: skip
            else:
                found = self._retrieve(queries, s.k2, run.seen_ids)
            new = run.add(found)
        yield from run.out(
            Retrieved(t=t, mode=mode, queries=list(queries), new_passages=new,
                      doc_ids=run.doc_ids, ms=ms_since(t0))
        )  # fmt: skip
        hypothesis = self.search.last_hypothesis
        if hypothesis:
            run.trace.append({"kind": "hyde", "t": t, "hypothesis": hypothesis,
                              "note": "query vector only; never evidence"})  # fmt: skip
        return new

    def _answer_step(
        self, run: Run, t: int, new: list[Passage], rejected: list[str]
    ) -> Generator[Event, None, _Round]:
        """Generate, critique (one form-only regeneration, contract 7) and score."""
        question = self._question
        passages = list(run.passages)
        yield from run.out(StepStarted(t=t, step="generate"))
        with run.step("generate"):
            gen = self._generate(question, passages, None, rejected)
        answer = gen.text.strip()
        yield from run.out(Generated(t=t, answer=answer, ms=gen.ms, input_tokens=gen.input_tokens,
                                     output_tokens=gen.output_tokens))  # fmt: skip
        yield from run.out(StepStarted(t=t, step="critique"))
        t0 = time.perf_counter()
        with run.step("critique"):
            report = self.evaluator.score(question, as_read(answer, gen.support), passages)
            p = self.confidence.round(
                answer, report.scores(), gen.features, t, [x.doc_id for x in new],
                run.doc_ids, [r.answer for r in run.records],
                {x.doc_id: x.score for x in passages},
            )  # fmt: skip
            verdict = self._judge(answer, passages, p)
        yield from run.out(Critiqued(t=t, verdict=verdict, ms=ms_since(t0)))
        regeneration: dict[str, Any] | None = None
        if not verdict.accept and verdict.form_only:
            guidance = guidance_for(verdict)
            yield from run.out(StepStarted(t=t, step="regenerate"))
            with run.step("regenerate"):
                gen2 = self._generate(question, passages, guidance, rejected)
            revised = gen2.text.strip()
            with run.step("critique"):
                verdict2 = self._judge(revised, passages, p)
            yield from run.out(Regenerated(t=t, original=answer, guidance=guidance,
                                           revised=revised, verdict=verdict2))  # fmt: skip
            regeneration = {"original": answer, "guidance": guidance, "revised": revised,
                            "verdict": verdict2.to_dict(),
                            "first_verdict": verdict.to_dict()}  # fmt: skip
            answer, verdict, gen = revised, verdict2, gen2
        t0 = time.perf_counter()
        with run.step("evaluate"):
            if regeneration is not None:
                report = self.evaluator.score(question, as_read(answer, gen.support), passages)
            report = self._grounded(report)
        yield from run.out(Scored(t=t, report=report, ms=ms_since(t0)))
        verdict_d = verdict.to_dict()
        if regeneration is not None:
            verdict_d["regeneration"] = regeneration
        return _Round(answer, verdict, verdict_d, gen, report, p, regeneration is not None)

    def run(self, question: str) -> Iterator[Event]:
        s = self.settings
        run = self._start(question)
        yield from run.out(Bindings(bindings=dict(self.bindings)))
        asked = self._initial_queries(question)
        # k1 for the question and k1 for each rewrite, as each later round takes k2 for
        # each follow-up query; the round's record shows every query the search ran
        first = _First(self._first_formulation(asked), s.k1 * len(asked))
        queries = list(first.formulation.queries)
        last: _Round | None = None
        rejected: list[str] = []  # answers the critic rejected: never offered again (§3.4)

        for t in range(1, s.max_iterations + 1):
            mode = f"critic-{t}"
            run.begin_iteration()
            yield from run.out(IterationStarted(t=t, mode=mode, queries=list(queries)))
            new = yield from self._retrieve_step(run, t, mode, queries, first if t == 1 else None)
            if not new:
                # Nothing new to read: the same question over the same passages cannot
                # earn a different verdict, so the round ends here (contract 8).
                why = (
                    "the question matches no passage"
                    if t == 1
                    else "the follow-up retrieval after a rejection added no new passage"
                )
                rec = run.record(t, mode, queries, new, last.answer if last else "", {}, "stop",
                                 last.verdict.to_dict() if last else None)  # fmt: skip
                yield from run.out(Decided(t=t, decision="stop", reason=why, record=rec))
                yield self._stop(run, STOP_NO_EVIDENCE if t == 1 else STOP_NO_NEW)
                return
            r = yield from self._answer_step(run, t, new, rejected)
            last = r
            if r.verdict.accept:
                stop = STOP_APPROVED_REGEN if r.regenerated else STOP_APPROVED
                rec = self._record(run, t, mode, queries, new, r, "accept")
                reason = _accept_reason(r.verdict, stop)
                yield from run.out(Decided(t=t, decision="accept", reason=reason, record=rec))
                yield run.finish(
                    answer=r.answer, status="accepted", stop_reason=stop,
                    quality=r.report.quality,
                    tier=confidence_tier(r.p) if r.p is not None else r.report.tier,
                    support=r.gen.support, confidence=r.p,
                )  # fmt: skip
                return
            if t >= s.max_iterations:
                rec = self._record(run, t, mode, queries, new, r, "stop")
                reason = (f"rejected at the iteration limit ({s.max_iterations}); "
                          + _reject_reason(r.verdict))  # fmt: skip
                yield from run.out(Decided(t=t, decision="stop", reason=reason, record=rec))
                yield self._stop(run, STOP_LIMIT)
                return
            # The record keeps the queries this round used; the follow-ups it chose are
            # noted in its verdict and take effect only from the next round.
            next_queries, rule = followup_queries(question, r.verdict)
            r.verdict_d["followup"] = {"rule": rule, "queries": list(next_queries)}
            rec = self._record(run, t, mode, queries, new, r, "reject")
            if r.answer and not is_abstention(r.answer):
                rejected.append(r.answer)
            reason = _reject_reason(r.verdict) + f"; next: {rule} queries"
            yield from run.out(Decided(t=t, decision="reject", reason=reason, record=rec))
            queries = next_queries
        raise AssertionError("unreachable: the loop always ends inside its iterations")

    @staticmethod
    def _stop(run: Run, stop_reason: str) -> Final:
        """Contract 8: the safe stop, with exactly the insufficient-evidence sentence."""
        return run.finish(
            answer=INSUFFICIENT_EVIDENCE,
            status="insufficient_evidence",
            stop_reason=stop_reason,
            quality=0.0,
            tier="low",
        )


# ---- helpers ------------------------------------------------------------------------


def _accept_reason(verdict: Verdict, stop: str) -> str:
    base = "the critic approves" + (" the revised answer" if stop == STOP_APPROVED_REGEN else "")
    return f"{base}: {verdict.reason}" if verdict.reason else base


def _reject_reason(verdict: Verdict) -> str:
    parts = [verdict.reason] if verdict.reason else []
    parts += [i for i in verdict.issues if i not in parts]
    return "the critic rejects" + (": " + "; ".join(parts) if parts else "")


def _takes_exclude(generator: Any) -> bool:
    """Whether the generator accepts the Critic's rejected answers (`exclude=`)."""
    import inspect

    try:
        return "exclude" in inspect.signature(generator.generate).parameters
    except (TypeError, ValueError):
        return False
