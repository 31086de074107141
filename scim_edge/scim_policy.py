"""SCIM's decision policy (the paper's Algorithm 1) and which iteration's answer it returns.

Pure functions of the quality scores, with no retrieval or generation, so that the loop
that runs them live and the Critic fit that replays them on practice traces
(`trained_critic.fit_across_rounds`) decide exactly alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

_EPS = 1e-9


@dataclass(frozen=True)
class Decision:
    decision: str  # accept | continue | force_accept
    reason: str  # a stop_reason, or "continue"
    revert: bool = False  # return the previous iteration's answer


def algorithm1(
    t: int,
    q: float,
    q_prev: float | None,
    *,
    theta: float,
    t_max: int,
    delta: float,
    fast_path: float | None = None,
) -> Decision:
    """SCIM's decision policy; `fast_path` is the Q₁ threshold of the two-tier fast path."""
    if fast_path is not None and t == 1 and q >= fast_path:
        return Decision("accept", "fast_path")
    if q >= theta:
        return Decision("accept", "accepted")
    if t > 1 and q_prev is not None and q <= q_prev - delta + _EPS:
        return Decision("force_accept", "quality_declined", revert=True)
    if t >= t_max:
        return Decision("force_accept", "budget")
    return Decision("continue", "continue")


def returned(decision: Decision, qs: Sequence[float]) -> int:
    """Which iteration (an index into `qs`, the scores so far, oldest first) a final
    decision returns: the previous one after a decline, the best one (the later on a tie)
    when the budget ran out, else the last."""
    last = len(qs) - 1
    if decision.reason == "budget":
        return max(range(len(qs)), key=lambda i: (qs[i], i))
    if decision.revert and last > 0:
        return last - 1
    return last
