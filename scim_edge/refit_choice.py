"""Whether a model `practice` fits on an index replaces the shipped one.

Practice fits a reader and a Critic on a few thousand questions it made from the index, and
compares each with the shipped model on the same held-out practice questions. Picking the
better of two by such a sample favours the one the draw happens to suit: on vital-en,
refits that read its held-out practice questions within half a point of the shipped reader
read people's questions 1.7 to 3 points worse (docs/findings.md). So a refit replaces the
shipped model only when its lead on the held-out questions is more than one standard error
of the paired difference: more than the draw alone gives.
"""

from __future__ import annotations

import numpy as np


def better_beyond_chance(gain: np.ndarray) -> bool:
    """The refit's gain over the shipped model on each held-out question (1, 0 or −1 for
    picking the right answer; the drop in squared error for a probability) is positive on
    average by more than one standard error of its mean."""
    if len(gain) < 2:
        return bool(len(gain)) and float(np.mean(gain)) > 0
    return float(np.mean(gain)) > float(np.std(gain, ddof=1)) / np.sqrt(len(gain))
