"""The learned extractive reader: rank candidate spans, state the best one.

Candidates and their features come from `reader_features`; a linear model scores them and a
softmax over the question's candidates turns scores into the probability that each span is
the answer. The weights are learned from self-practice only (`scim-edge practice`):
- an index's own weights, `<index>/practice/reader.json`, written by `practice` on that index;
- otherwise the default weights shipped in `scim_edge/data/reader.json`, fitted by the same
  command on self-practice over the vital-articles corpus (no hand-written question).

A damaged weights file is a `ModelError` naming the file and the fix, never a traceback.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from scim_edge import jsonl
from scim_edge.errors import ModelError
from scim_edge.generation import reader_features as rf
from scim_edge.lead_types import LeadTypes
from scim_edge.linear import LinearModel
from scim_edge.types import Passage

WEIGHTS_FILE = "reader.json"
NAMES_KEY = "given_names"  # the weights' meta keeps the given names practice read
PRACTICE_DIR = "practice"
# Which span kinds answer which question kinds: the Critic's "type agreement".
TYPE_FITS = {
    "person": ("entity",),
    "place": ("entity",),
    "date": ("date", "year"),
    "number": ("number",),
    "choice": ("entity",),
    "what": ("entity", "np", "number", "date", "year"),
    "open": ("np", "entity"),
}


@dataclass
class Reading:
    """The reader's pick for one question and the signals behind it."""

    candidate: rf.Candidate | None
    probability: float = 0.0
    margin: float = 0.0  # probability of the pick minus that of the runner-up (other text)
    n_candidates: int = 0
    ranked: list[tuple[float, rf.Candidate]] = field(default_factory=list)
    score: float = 0.0  # the pick's own linear score: how well it fits, whatever competes

    def features(self, question_kind: str) -> dict[str, float]:
        c = self.candidate
        if c is None:
            return {"span_prob": 0.0, "margin": 0.0, "type_fits": 0.0, "n_candidates": 0.0,
                    "span_score": 0.0}  # fmt: skip
        vec = dict(zip(rf.FEATURES, c.features.tolist(), strict=True))
        return {
            "span_prob": round(self.probability, 6),
            "margin": round(self.margin, 6),
            "span_score": round(self.score, 6),
            "type_fits": float(c.span.kind in TYPE_FITS.get(question_kind, ())),
            "n_candidates": float(self.n_candidates),
            **{k: round(vec[k], 6) for k in _SUMMARY},
            # the rest of the pick's features, where not zero (the Critic reads absent as 0)
            **{k: round(v, 6) for k, v in vec.items() if v and k not in _SUMMARY},
        }


# the pick's features `Reading.features` always gives, zero or not
_SUMMARY = ("sent_idf_overlap", "window_overlap", "prox_recip", "agree_passages",
            "rank_recip", "title_overlap")  # fmt: skip


class OutdatedReader(ModelError):
    """Reader weights fitted by another version of scim-edge: their features are not this
    version's. Not damage: `scim-edge practice` refits them, and until then an index's own
    weights give way to the shipped ones (`Reader.for_index`), with a warning."""


class _OtherFeatures(ValueError):
    pass


def _check(model: LinearModel, where: Path | str) -> LinearModel:
    if list(model.features) != list(rf.FEATURES):
        raise _OtherFeatures("its features do not match this version of the reader")
    names = model.meta.get(NAMES_KEY, [])
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ValueError(f"its {NAMES_KEY} are not a list of words")
    return model


@lru_cache(maxsize=8)
def _load(path_text: str, mtime: float) -> LinearModel:
    path = Path(path_text)
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
        return _check(LinearModel.from_dict(data), path)
    except _OtherFeatures as e:
        raise OutdatedReader(
            f"reader weights {path} were fitted by another version of scim-edge ({e})",
            hint=_fix_hint(path),
        ) from None
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise ModelError(
            f"reader weights {path} are damaged ({' '.join(str(e).split())[:120]})",
            hint=_fix_hint(path),
        ) from None


def _fix_hint(path: Path) -> str:
    if path.parent.name == PRACTICE_DIR:
        index = path.parent.parent.name
        return f"re-create them with `scim-edge practice --index {index}`, or delete {path}"
    return "reinstall scim-edge (`pip install --force-reinstall scim-edge`)"


def default_weights_path() -> Path:
    return Path(str(resources.files("scim_edge") / "data" / WEIGHTS_FILE))


def weights_path(index_dir: Path | None) -> Path:
    """The index's own practice weights when present, else the shipped default."""
    if index_dir is not None:
        own = Path(index_dir) / PRACTICE_DIR / WEIGHTS_FILE
        if own.is_file():
            return own
    return default_weights_path()


def load_weights(path: Path) -> LinearModel:
    try:
        mtime = path.stat().st_mtime
    except OSError:
        raise ModelError(f"reader weights {path} are missing", hint=_fix_hint(path)) from None
    return _load(str(path), mtime)


class Reader:
    """Scores candidate spans with a linear model; `read()` returns the ranked pick."""

    def __init__(
        self,
        model: LinearModel,
        source: str = "",
        types: LeadTypes | None = None,
        warning: str | None = None,
        similarity: rf.Similarity | None = None,
    ) -> None:
        self.model = model
        self.source = source
        self.types = types  # what names are, from their articles in the index
        self.warning = warning  # said with every answer: the weights stand in for others
        self.similarity = similarity  # sentence-to-question meaning, where vectors exist
        # given names of the people of the index the weights were fitted on (`given_names`)
        self.names = frozenset(str(n) for n in model.meta.get(NAMES_KEY, ()))

    @classmethod
    def for_index(cls, index_dir: Path | None) -> Reader:
        """The index's own weights; the shipped ones, with a warning, while the index's
        were fitted by another version (an upgrade must not stop every question)."""
        from scim_edge.sentence_similarity import SentenceSimilarity

        path = weights_path(index_dir)
        types = LeadTypes.for_index(index_dir) if index_dir is not None else None
        shipped = default_weights_path()
        try:
            model, source, note = load_weights(path), str(path), None
        except OutdatedReader as e:
            if path == shipped:
                raise
            note = f"{e}: using the shipped reader until `scim-edge practice` refits it"
            model, source = load_weights(shipped), str(shipped)
        return cls(model, source, types, note, SentenceSimilarity.for_index(index_dir))

    def read(
        self,
        question: str | rf.QuestionInfo,
        passages: Sequence[Passage],
        exclude: Collection[str] = (),
    ) -> Reading:
        """The best candidate; spans whose normalised text is in `exclude` (answers a
        Critic rejected) are never picked."""
        q = question if isinstance(question, rf.QuestionInfo) else rf.analyse(question)
        cands = rf.candidates(q, passages, self.types, self.similarity, self.names)
        banned = {rf.normalise(x) for x in exclude}
        # one answer per stated text: "Neil Alden Armstrong" in the lead of "Neil Armstrong"
        # and a later "Neil Armstrong" are one answer, not two that split its mass
        keyed = [(rf.normalise(rf.stated(c.span, c.passage.title)), c) for c in cands]
        keyed = [(key, c) for key, c in keyed if key not in banned]
        cands = [c for _, c in keyed]
        if not cands:
            return Reading(None)
        X = np.stack([c.features for c in cands])
        s = self.model.score(X)
        p = np.exp(s - s.max())
        p /= p.sum()
        # The same text found in several sentences is one answer: pool its mass.
        mass: dict[str, float] = {}
        best: dict[str, tuple[float, rf.Candidate]] = {}
        for pi, (key, c) in zip(p.tolist(), keyed, strict=True):
            mass[key] = mass.get(key, 0.0) + pi
            if key not in best or pi > best[key][0]:
                best[key] = (pi, c)
        _merge_surnames(mass, best)
        order = sorted(mass, key=lambda k: -mass[k])
        top = order[0]
        runner = mass[order[1]] if len(order) > 1 else 0.0
        ranked = [(mass[k], best[k][1]) for k in order]
        pick = best[top][1]
        score = float(s[next(i for i, c in enumerate(cands) if c is pick)])
        return Reading(pick, mass[top], mass[top] - runner, len(order), ranked, score)


def _merge_surnames(mass: dict[str, float], best: dict[str, tuple[float, rf.Candidate]]) -> None:
    """A surname said alone ("Orwell") is the same answer as the one full name among the
    candidates that ends with it ("George Orwell"): its mass moves to the full name, which
    is how the answer is stated. Two full names sharing it ("Julian/Aldous Huxley") keep
    theirs apart."""
    full: dict[str, list[str]] = {}
    for key, (_, c) in best.items():
        last = rf.surname(c.span)
        if last and len(c.text.split()) > 1 and rf.person_like(c.span):
            full.setdefault(last, []).append(key)
    for key, (_, c) in list(best.items()):
        owners = full.get(rf.surname(c.span), [])
        if len(c.text.split()) == 1 and len(owners) == 1 and owners[0] != key:
            mass[owners[0]] += mass.pop(key)
            del best[key]
