"""Plain-words rendering of engine results, shared by the widgets.

Kept free of widget code so the wording (stop reasons, timings, tiers) is one function
each and the same in every card, panel and export.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from textual.content import Content

from scim_edge.types import DIMENSIONS
from scim_edge.wording import (  # noqa: F401 - one wording for the CLI and the TUI
    answer_words,
    confidence_words,
    fmt_ms,
    generator_words,
    one_line,
    stop_reason_words,
    tier_of,
)

TIER_STYLES = {"high": "bold $success", "medium": "bold $warning", "low": "bold $error"}
TIER_CLASSES = {"high": "-tier-high", "medium": "-tier-medium", "low": "-tier-low"}
TIMING_KEYS = ("retrieval", "generation", "evaluation", "coordination")

# Enough to keep "the", "what", "did" out of the highlights; the quality module owns the
# real stopword list, this is only for display.
_STOP = frozenset(
    """a an the of in on at to for from by with and or not is are was were be been being do
    does did what which who whom whose when where why how that this these those it its as
    into than then there their they he she his her him you your we our i me my many much
    about after before did has have had can could would should will shall may might""".split()
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\-]*")


def score_bar(value: float, width: int = 10) -> str:
    value = min(1.0, max(0.0, value))
    full = round(value * width)
    return "█" * full + "░" * (width - full)


def score_items(scores: dict[str, float], theta: float | None, width: int = 10) -> list[Content]:
    """Five dimension bars with values (equal widths, so packed rows align), then Q vs θ."""
    items: list[Content] = []
    for dim in DIMENSIONS:
        if dim not in scores:
            continue
        v = float(scores[dim])
        style = "$success" if v >= 0.7 else "$warning" if v >= 0.5 else "$error"
        items.append(Content.assemble(f"{dim:<12} ", (score_bar(v, width), style), f" {v:.2f}"))
    if "quality" in scores:
        q = float(scores["quality"])
        if theta is None:
            items.append(Content.assemble(("Q", "bold"), f" {q:.2f}"))
        else:
            ok = q >= theta
            items.append(
                Content.assemble(
                    ("Q", "bold"),
                    f" {q:.2f} {'≥' if ok else '<'} θ {theta:.2f} ",
                    ("✓" if ok else "✗", "bold $success" if ok else "bold $warning"),
                )
            )
    return items


def timing_items(timing_ms: dict[str, float]) -> list[Content]:
    """`retrieval 12 ms`, `generation 3.1 ms`, … (and `total`), one item each."""
    keys = [k for k in TIMING_KEYS if k in timing_ms]
    if "total" in timing_ms:
        keys.append("total")
    return [Content.assemble((f"{k} ", "dim"), (fmt_ms(timing_ms[k]), "bold")) for k in keys]


def question_words(question: str) -> list[str]:
    words = {w.lower().strip("'-") for w in _WORD.findall(question)}
    return sorted((w for w in words if len(w) > 1 and w not in _STOP), key=len, reverse=True)


def highlight(text: str, words: Iterable[str], style: str = "bold reverse $accent") -> Content:
    """`text` with every whole-word occurrence of `words` (any case) highlighted."""
    content = Content(text)
    words = [w for w in words if w]
    if not words:
        return content
    pattern = re.compile(r"\b(" + "|".join(re.escape(w) for w in words) + r")\b", re.IGNORECASE)
    return content.highlight_regex(pattern, style=style)
