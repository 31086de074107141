"""The calibrated confidence every answer carries, and where the loops get it.

`Confidence.for_engine(engine, settings)` finds the trained Critic that fits the engine (see
`trained_critic.find`) once per engine and settings; `round(...)` turns one round of any
loop into P(the answer is right). When no Critic fits — none installed, or one trained for
another generator (a warning names it) — confidence is None and users see Q's tier, as the
paper's heuristic gives it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scim_edge.critic_features import round_features
from scim_edge.errors import ModelError
from scim_edge.generation.support import support_sentence
from scim_edge.trained_critic import (
    OutdatedCritic,
    TrainedCritic,
    confidence_tier,
    default_path,
    find,
    load_file,
    repeat_confidence,
)

__all__ = ["Confidence", "confidence_tier"]


def trained_critic_name(settings: Any) -> str | None:
    """The trained Critic `--critic-model` names; with `--critic model` it names the
    Flan-T5 that judges simrag's rounds instead (a fine-tuned one, say), and the
    confidence comes from the index's or the shipped trained Critic."""
    if getattr(settings, "critic", None) == "model":
        return None
    return getattr(settings, "critic_model", None)


@dataclass
class Confidence:
    critic: TrainedCritic | None
    warning: str | None = None
    notify: bool = False  # the warning is worth showing with every answer
    # why no Critic fits, without what is done instead: the error when one is required
    reason: str | None = None

    @property
    def available(self) -> bool:
        return self.critic is not None

    @property
    def name(self) -> str:
        """How answers and traces name the source of confidence: "none", "trained:default",
        "trained:index" (the index's practice Critic) or "trained:NAME" (a store Critic)."""
        if self.critic is None:
            return "none"
        path = Path(self.critic.source)
        if path == default_path():
            return "trained:default"
        if path.parent.name == "practice":
            return "trained:index"
        return f"trained:{path.parent.name}"

    def round(self, answer: str, *context: Any) -> float | None:
        """P(the round's answer is right); `context` is the rest of `round_features`'
        arguments (scores, reader signals, round, new and all ids, earlier answers,
        passage scores). None when no Critic fits; 0 for an empty answer."""
        if self.critic is None or not answer.strip():
            return None if self.critic is None else 0.0
        return self.critic.probability(round_features(answer, *context))

    @staticmethod
    def as_first_given(
        p: float | None, answer: str, support: Sequence[Any], earlier: Sequence[Any]
    ) -> float | None:
        """`p`, unless an earlier round (`IterationRecord`s, oldest first) gave the same
        answer from the same support sentence: then that round's confidence
        (`trained_critic.repeat_confidence`, which the Critic's fit replays). Keeping the
        first value for repeats separated SCIM's right from wrong answers better (AUROC
        0.786 against 0.759 on vital-en's first question set, 0.795 against 0.785 on
        practice questions)."""
        if p is None:
            return None
        done = [(r.answer, support_sentence(r.support), r.confidence) for r in earlier
                if r.confidence is not None]  # fmt: skip
        return repeat_confidence(p, answer, support_sentence(support), done)

    def across_rounds(self, answers: Sequence[str], confidences: Sequence[float | None],
                      chosen: int) -> float | None:  # fmt: skip
        """P(the answer a run of several rounds returns is right), from every round's
        answer and confidence (`TrainedCritic.across_rounds`); None when no Critic fits."""
        if self.critic is None or confidences[chosen] is None:
            return None
        if not answers[chosen].strip():
            return 0.0
        ps = [0.0 if c is None else float(c) for c in confidences]
        return self.critic.across_rounds(answers, ps, chosen)

    @classmethod
    def for_engine(cls, engine: Any, settings: Any, *, required: bool = False) -> Confidence:
        """The engine's Confidence, cached on it. `required` (`--quality learned`, `--critic
        trained` chosen explicitly) turns "no Critic" into a one-line error."""
        key = ("confidence", trained_critic_name(settings))
        conf: Confidence = engine.cache.get(key, lambda: cls._load(engine, settings))
        if required and conf.critic is None:
            raise ModelError(
                conf.reason or conf.warning or "no trained Critic is available",
                hint="train one with `scim-edge practice`",
            )
        return conf

    @classmethod
    def disable(cls, engine: Any, settings: Any) -> None:
        """No confidence on this engine's answers (self-practice runs before any Critic)."""
        engine.cache.put(
            ("confidence", trained_critic_name(settings)),
            cls(None, "no Critic while practising"),
        )

    @classmethod
    def _load(cls, engine: Any, settings: Any) -> Confidence:
        index_dir = getattr(engine.retriever, "path", None)
        name = trained_critic_name(settings)
        note = None
        try:
            critic = find(index_dir, name)
        except OutdatedCritic as e:
            if name:  # a Critic chosen by name is used or refused, never replaced
                raise OutdatedCritic(
                    str(e),
                    hint="practise its index again (`scim-edge practice --index INDEX`), "
                    f"then `scim-edge critic train --index INDEX --name {name} --force`",
                ) from None
            shipped = default_path()
            critic = load_file(shipped) if shipped.is_file() else None
            note = f"{e}: using the shipped Critic until `scim-edge practice` refits it"
        if critic is None:
            return cls(None, note or "no trained Critic is installed", notify=note is not None)
        generator = str(getattr(engine.generator, "name", ""))
        if critic.generator and critic.generator != generator:
            reason = (f"the trained Critic ({critic.source}) was trained for the "
                      f"'{critic.generator}' generator, not '{generator}'")  # fmt: skip
            return cls(
                None,
                f"{reason}: using the heuristic instead (retrain it with `scim-edge practice`)",
                notify=True,
                reason=reason,
            )
        return cls(critic, note, notify=note is not None)
