"""The Critic of the critic loop: approves or rejects an answer against its evidence.

A Critic is separate from the generator, so the loop never trusts an answer just because
it was produced. Two critics share one `judge(question, answer, passages) -> Verdict`:

- `HeuristicCritic` reads the five SCIM dimensions. It approves only when consistency,
  factuality and completeness clear the `critic_min_*` thresholds, and it names what is
  wrong concretely ("no evidence for: …", "unsupported: …") so the loop can search for it.
- `ModelCritic` asks Flan-T5, in the style of SIM-RAG's Critic, whether the answer is
  supported, and parses the reply robustly; a reply it cannot read counts as Reject.

`is_abstention` and `is_form_only` are the two classifiers the loop's contract needs.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from scim_edge.textutil import stem as _stem_lower
from scim_edge.types import INSUFFICIENT_EVIDENCE, Passage, QualityReport, Verdict
from scim_edge.wording import percent

if TYPE_CHECKING:
    from scim_edge.settings import Settings

NO_EVIDENCE = "no evidence for: "
UNSUPPORTED = "unsupported: "
FEEDBACK_CHARS = 160  # every critic-derived query or guidance is cut to this length


class Critic(Protocol):
    name: str

    def judge(self, question: str, answer: str, passages: Sequence[Passage]) -> Verdict: ...


def bound(text: str, limit: int = FEEDBACK_CHARS) -> str:
    """Collapse whitespace and cut to `limit` characters (feedback must stay bounded)."""
    return " ".join(text.split())[:limit].strip()


# ---- abstentions ----------------------------------------------------------------------

# Whole answers that say nothing. Single words are matched only as the entire answer, so
# "Tomb of the Unknown Soldier" is not an abstention but "Unknown." is.
_ABSTAIN_WHOLE = {
    "unknown",
    "unanswerable",
    "n/a",
    "na",
    "no answer",
    "not known",
    "not sure",
    "unsure",
    "no idea",
    "not available",
    "no information",
    "unclear",
    "insufficient evidence",
    "insufficient information",
    "?",
}

# Phrases that abstain wherever they appear in the answer.
_ABSTAIN_PHRASES = re.compile(
    r"""
    \b(?:i|we)\s+(?:do\s*n[o']?t|don't|cannot|can't|am\s+not\s+able\s+to)\s+(?:know|tell|say|answer|determine|find)\b
  | \bdon'?t\s+know\b | \bdo\s+not\s+know\b | \bno\s+one\s+knows\b
  | \b(?:not|insufficient|no)\s+(?:enough\s+)?(?:information|context|evidence|data|details)\b
  | \bcan(?:not|'t|\s+not)\s+(?:be\s+)?
      (?:determined|answered|known|found|inferred|say|tell|answer|determine)\b
  | \b(?:unable|impossible)\s+to\s+(?:determine|answer|tell|say|know|find)\b
  | \b(?:is|are|remains?)\s+(?:unknown|unclear|not\s+known)\b
  | \bthe\s+(?:context|passages?|text|evidence|documents?|sources?|articles?)\s+
      (?:does|do)\s*(?:not|n't)\s+(?:say|mention|state|specify|provide|contain|include|tell|give|answer)\b
  | \b(?:not|never)\s+(?:mentioned|stated|specified|provided|given|said)\s+in\s+the\s+
      (?:context|passages?|text|evidence|documents?|sources?)\b
  | \bno\s+(?:mention|answer)\s+(?:of|in|to|is)\b
  | \binsufficient\s+evidence\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def is_abstention(answer: str | None) -> bool:
    """True when a generated answer declines to answer (or is empty).

    The critic loop never approves such an answer, even if a Critic does (contract 9)."""
    if answer is None:
        return True
    text = " ".join(answer.split())
    if not re.search(r"\w", text):
        return True
    if text == INSUFFICIENT_EVIDENCE:
        return True
    whole = re.sub(r"[\s.!,;:]+$", "", text.lower()).strip(" \"'`")
    if whole in _ABSTAIN_WHOLE:
        return True
    return bool(_ABSTAIN_PHRASES.search(text))


# ---- form-only rejections -------------------------------------------------------------

_FORM_SIGNAL = re.compile(
    r"""
    \b(?:shorter|shorten|concise|brief(?:er|ly)?|succinct|terse)\b
  | \bmore\s+direct(?:ly)?\b | \banswer\s+(?:the\s+question\s+)?directly\b | \bdirect\s+answer\b
  | \btoo\s+(?:long|verbose|wordy|lengthy)\b | \bverbose\b | \bwordy\b | \brambl
  | \bformat(?:ted|ting)?\b | \bbullet | \bnumbered\s+list\b | \bas\s+a\s+list\b
  | \b(?:one|single|few)[\s-]+(?:word|words|sentence|phrase)\b
  | \bjust\s+(?:the|give)\b | \bonly\s+(?:the|give)\s+(?:answer|name|date|number|year|place)\b
  | \brephrase\b | \breword\b | \bcomplete\s+sentence\b | \bfull\s+sentence\b
  | \b(?:capitali[sz]|punctuat|grammar|grammatical|spelling|typo)
  | \b(?:unnecessary|extraneous|irrelevant|extra|redundant)\s+
      (?:detail|details|text|words|information|content)\b
  | \bremove\s+(?:the\s+)?(?:extra|unnecessary|irrelevant|redundant)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)

# Anything that hints the evidence itself is lacking or the answer may be wrong.
_EVIDENCE_SIGNAL = re.compile(
    r"""
    \bevidence\b | \bmissing\b | \bunsupported\b | \bnot\s+supported\b | \bno\s+support
  | \bsupport(?:ed|s|ing)?\b | \bretriev | \bpassages?\b | \bsources?\b | \bcit(?:e|ation)
  | \bnot\s+(?:mentioned|stated|found|present|given|in\s+the)\b
  | \b(?:does|do)\s*(?:not|n't)\s+mention
  | \bno\s+(?:information|mention|data)\b | \binsufficient\b | \black | \bneeds?\s+more\b
  | \bmore\s+(?:information|context|detail|details|facts|data)\b
  | \bincorrect\b | \bwrong\b | \bfalse\b | \bhallucinat | \bfactual | \bverif | \bcontradict
  | \binaccura | \bunclear\b | \bunknown\b | \bcannot\s+be\s+determined\b | \bno\s+answer\b
  | \bwhich\b.*\?
    """,
    re.IGNORECASE | re.VERBOSE,
)


def _feedback_texts(verdict: Verdict) -> list[str]:
    return [t for t in (verdict.reason, *verdict.issues) if t and t.strip()]


def has_evidence_signal(text: str) -> bool:
    return bool(_EVIDENCE_SIGNAL.search(text)) or text.lstrip().lower().startswith(
        (NO_EVIDENCE.strip(), UNSUPPORTED.strip())
    )


UNPARSEABLE = "unparseable critique"  # the reason of a critique no verdict was read from


def is_form_only(verdict: Verdict) -> bool:
    """A rejection that only asks for a shorter, more direct or better formatted answer.

    It must clearly ask for a change of form and carry no missing-evidence signal
    anywhere in its reason or issues; mixed or unrecognised feedback is not form-only,
    so the loop keeps retrieving (contract 7)."""
    if verdict.accept:
        return False
    texts = _feedback_texts(verdict)
    if not texts:
        return False
    if any(has_evidence_signal(t) for t in texts):
        return False
    return any(_FORM_SIGNAL.search(t) for t in texts)


def guidance_for(verdict: Verdict) -> str:
    """The bounded guidance handed to the generator for a form-only regeneration."""
    return bound("; ".join(_feedback_texts(verdict)))


# ---- heuristic critic -----------------------------------------------------------------


def _words(text: str) -> set[str]:
    """Lower-cased words, both whole ("pierre-joseph") and split at inner punctuation
    ("pierre", "joseph"), so answer and passage words meet however they were tokenised."""
    from scim_edge.textutil import word_set

    whole = word_set(text)
    return set(whole) | {w.lower() for w in re.findall(r"\w+", text)}


# Question words that name the answer's slot ("which city", "what year", "the name of"):
# the answer fills them, so no passage needs to contain them.
ANSWER_SLOT_WORDS = frozenset(
    """name names named called call year years date city town country place person people
    one kind type considered known""".split()
)
# One question keyword may be paraphrased in the passages connected to the answer. This
# is on top of `predicate_gaps`: the question's predicate words must be stated by the
# answer's own claim sentence, where evidence elsewhere in the passages does not count.
MAX_EVIDENCE_GAPS = 1
# A direct answer is a phrase or one short sentence; longer, it is a passage excerpt.
DIRECT_MAX_WORDS = 12


def stem(word: str) -> str:
    """The shared Porter stem of the lower-cased word: "assassinated" and "assassination"
    meet, as they do in ranking and quality."""
    return _stem_lower(word.lower())


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _words(text)}


def evidence_gaps(question: str, answer: str, passages: Sequence[Passage]) -> list[str]:
    """Question keywords without evidence connected to the answer.

    The evidence is the passages that state the answer's new words (those not already in
    the question), plus one hop: passages of the same article, passages that mention such
    a passage's title, and passages whose title such a passage mentions. A keyword found
    only in unrelated passages is not evidence for this answer, so a follow-up search
    cannot "cover" a gap with noise."""
    from scim_edge.textutil import content_set, content_words, ordered_unique

    q_set = content_set(question)
    a_new = {w for w in content_set(answer) if w not in q_set} or set(content_set(answer))
    if not a_new:
        return []
    a_stems = {stem(w) for w in a_new}
    p_stems = [_stems(p.text) | _stems(p.title) for p in passages]
    support = [i for i, st in enumerate(p_stems) if st & a_stems]
    if not support:
        return []
    linked = set(support)
    titles = {passages[i].title.lower() for i in support if passages[i].title}
    support_text = " ".join(passages[i].text.lower() for i in support)
    for j, p in enumerate(passages):
        if j in linked:
            continue
        text = p.text.lower()
        title = p.title.lower()
        if (
            title in titles
            or any(t in text for t in titles if t)
            or (title and title in support_text)
        ):
            linked.add(j)
    covered: set[str] = set()
    for j in linked:
        covered |= p_stems[j]
    keys = [w for w in ordered_unique(content_words(question)) if w not in ANSWER_SLOT_WORDS]
    return [w for w in keys if stem(w) not in covered and any(ch.isalnum() for ch in w)]


_DETERMINERS = frozenset("the a an his her its their this that".split())
_WH_TYPE = frozenset("which what whose".split())

# Irregular verb forms Porter stemming cannot join ("wrote" / "written" / "write"): each
# form maps to its base, so a question's verb meets its passage's form.
_IRREGULAR = {
    form: base
    for base, forms in {
        "write": "wrote written writes",
        "begin": "began begun",
        "win": "won",
        "find": "found",
        "bear": "born borne bore",
        "become": "became",
        "take": "took taken",
        "give": "gave given",
        "make": "made",
        "build": "built",
        "buy": "bought",
        "sell": "sold",
        "lead": "led",
        "fight": "fought",
        "teach": "taught",
        "think": "thought",
        "bring": "brought",
        "hold": "held",
        "leave": "left",
        "lose": "lost",
        "meet": "met",
        "run": "ran",
        "sing": "sang sung",
        "speak": "spoke spoken",
        "steal": "stole stolen",
        "choose": "chose chosen",
        "draw": "drew drawn",
        "drive": "drove driven",
        "fly": "flew flown",
        "grow": "grew grown",
        "know": "knew known",
        "rise": "rose risen",
        "see": "saw seen",
        "shoot": "shot",
        "sink": "sank sunk",
        "slay": "slew slain",
        "strike": "struck",
        "swim": "swam swum",
        "throw": "threw thrown",
        "wear": "wore worn",
        "die": "died",
        "go": "went gone",
        "come": "came",
        "eat": "ate eaten",
        "fall": "fell fallen",
        "feel": "felt",
        "get": "got gotten",
        "hide": "hid hidden",
        "keep": "kept",
        "lay": "laid",
        "pay": "paid",
        "say": "said",
        "send": "sent",
        "sit": "sat",
        "spend": "spent",
        "stand": "stood",
        "tell": "told",
        "wake": "woke woken",
    }.items()
    for form in [base, *forms.split()]
}


def base_stem(word: str) -> str:
    """Porter stem after mapping an irregular verb form to its base."""
    low = word.lower()
    return stem(_IRREGULAR.get(low, low))


def predicate_keywords(question: str) -> list[str]:
    """The question's non-entity content words: what is asked about the entities
    ("designed", "flag" in "Who designed the flag of Alaska?").

    Left out, because a search finds them or the answer fills them:
    - entity words (capitalised after the first word) and numbers;
    - answer-slot words ("year", "city") and the answer-type noun right after
      which/what/whose ("Which sculptor …", "Which Swiss psychiatrist …");
    - common nouns that describe a name that follows them after a determiner or an
      adjective ("the Greek hero Achilles", "the film director Allan Dwan")."""
    from scim_edge.textutil import STOPWORDS, ordered_unique

    found = list(re.finditer(r"[^\W_][\w'’-]*", question))
    toks = [m.group(0) for m in found]
    lows = [re.sub(r"['’]s$", "", t.lower().strip("'’")) for t in toks]
    n = len(toks)
    # a clause break (",", ":", ";", brackets) before token i ends any descriptor walk
    brk = [
        i > 0 and bool(re.search(r"[,:;()]", question[found[i - 1].end() : m.start()]))
        for i, m in enumerate(found)
    ]

    def is_name(i: int) -> bool:
        return 0 < i < n and not toks[i][0].islower() and not toks[i][0].isdigit()

    skip: set[int] = set()
    for i, low in enumerate(lows):
        if low in _WH_TYPE:  # the answer-type noun: first lower-case word after it
            j = i + 1
            while j < n and is_name(j):
                j += 1
            if j < n and lows[j] not in STOPWORDS:
                skip.add(j)
        if is_name(i):
            # walk back over the lower-case descriptors of this name
            j = i - 1
            while j > 0 and not brk[j + 1] and toks[j][0].islower() and lows[j] not in STOPWORDS:
                j -= 1
            if j < i - 1 and not brk[j + 1] and (lows[j] in _DETERMINERS or is_name(j)):
                skip.update(range(j + 1, i))
    out: list[str] = []
    for i, (tok, low) in enumerate(zip(toks, lows, strict=True)):
        if i in skip or low in STOPWORDS or low in ANSWER_SLOT_WORDS:
            continue
        if len(low) < 3 or tok[0].isdigit() or is_name(i):
            continue
        out.append(low)
    return ordered_unique(out)


def predicate_gaps(question: str, claim: str | None, answer: str) -> list[str]:
    """Predicate keywords the claim sentence (with its passage title) and the answer
    itself leave unstated, when they are too many for the claim to count as stating the
    question's predicate; else []. Evidence elsewhere in the passages does not count: a
    sentence that merely mentions the answer is not evidence that it answers the question.

    The claim must state more than half of the predicate keywords (all of them when there
    are one or two), so a long question keeps room for a paraphrase while "Who designed
    the flag of Alaska?" needs a sentence that says "designed"."""
    pred = predicate_keywords(question)
    said = _words(answer) | (_words(claim) if claim else set())
    support = {base_stem(w) for w in said}
    unstated = [w for w in pred if base_stem(w) not in support]
    return unstated if 2 * len(unstated) >= len(pred) and unstated else []


# Roles and titles: a who-question answered only with these names nobody.
ROLE_WORDS = frozenset(
    """president vice king queen emperor empress prince princess pope tsar czar sultan
    shah caliph pharaoh duke duchess earl count countess baron lord lady sir dame saint
    governor senator minister chancellor mayor general admiral captain colonel major
    commander officer chief leader ruler monarch bishop archbishop cardinal priest father
    doctor dr professor mr mrs ms judge justice secretary speaker chairman director""".split()
)


# Capitalised words that name a time, not someone.
_CALENDAR_WORDS = frozenset(
    """january february march april may june july august september october november
    december monday tuesday wednesday thursday friday saturday sunday""".split()
)


def is_role_only(answer: str, question: str = "") -> bool:
    """True when an answer holds no new name: only lower-case words, role or title words
    ("President", "the king"), dates and numbers, or names the question already gives
    ("Abraham Lincoln" for "Who assassinated Abraham Lincoln?"). A who-question needs
    the name of someone the question does not already name."""
    from scim_edge.textutil import STOPWORDS

    given = {w.lower() for w in re.findall(r"\w+", question)}
    toks = re.findall(r"[^\W\d_][\w'’.-]*", answer)
    for tok in toks:
        low = tok.lower().rstrip(".")
        if low in STOPWORDS or low in ROLE_WORDS or low in _CALENDAR_WORDS or low in given:
            continue
        first = tok[0]
        if first.isupper() or not first.islower():  # capitalised, or a caseless script
            return False
    return True


_WHO = re.compile(r"^\s*(?:who|whom)\b", re.IGNORECASE)


class HeuristicCritic:
    """Approves when consistency, factuality and completeness clear their thresholds.

    A short extractive answer ("Thetis") says little on its own, so the critic also
    scores the answer together with the passage sentence that states it (its *claim*,
    prefixed with the passage title): completeness and factuality take the better of
    the two, while consistency (the hallucination detector) is always the answer's own.
    The claim may raise the scores only when it states every predicate keyword of the
    question (`predicate_gaps`); a sentence that merely mentions the answer is no claim.

    Further checks make "supported" mean what the loop's contract says:
    - the question's predicate keywords must be stated by the claim sentence itself;
    - every question keyword needs evidence in the passages connected to the answer
      (`evidence_gaps`); a gap is named as "no evidence for: …";
    - a who-question needs a name, not only a role ("President") or a common noun;
    - a supported answer longer than DIRECT_MAX_WORDS words is not yet a direct answer:
      that rejection is about form only, so the loop regenerates instead of retrieving.
    Unsupported answer words are named as "unsupported: …".
    """

    name = "heuristic"

    def __init__(self, settings: Settings, evaluator: Any | None = None) -> None:
        self.settings = settings
        self.min_consistency = settings.critic_min_consistency
        self.min_factuality = settings.critic_min_factuality
        self.min_completeness = settings.critic_min_completeness
        self._evaluator = evaluator
        self.max_gaps = MAX_EVIDENCE_GAPS
        self.direct_max_words = DIRECT_MAX_WORDS
        # set when this critic stands in for a trained one that did not fit (a warning)
        self.fallback_warning: str | None = None

    @property
    def evaluator(self) -> Any:
        if self._evaluator is None:
            from scim_edge.quality import Evaluator

            self._evaluator = Evaluator(self.settings)
        return self._evaluator

    def claim(self, question: str, answer: str, passages: Sequence[Passage]) -> str | None:
        """The passage sentence that states the answer and best covers the question."""
        from scim_edge.textutil import content_words, sentences

        a_words = set(content_words(answer)) or _words(answer)
        if not a_words:
            return None
        q_words = {w.lower() for w in content_words(question)}
        best: tuple[tuple[int, int, int], str] | None = None
        for p in passages:
            title_words = _words(p.title)
            for sent in sentences(p.text):
                s_words = _words(sent)
                if not a_words <= s_words | title_words:
                    continue
                # a sentence that states the question's predicate first: only it is a claim
                states = not predicate_gaps(question, f"{p.title}: {sent}", answer)
                key = (int(states), len(q_words & (s_words | title_words)), -len(sent))
                if best is None or key > best[0]:
                    best = (key, f"{p.title}: {sent}")
        return best[1] if best else None

    def judge(self, question: str, answer: str, passages: Sequence[Passage]) -> Verdict:
        """Accept or reject `answer` against `passages` (the checks are in the class doc);
        the scores and the time taken stay on `last_scores` and `last_ms`."""
        t0 = time.perf_counter()
        passages = list(passages)
        a = self._assess(question, answer, passages)
        issues = self._issues(question, a)
        failed = self._failures(answer, a)
        scores = {
            "completeness": round(a.completeness, 4),
            "consistency": round(a.consistency, 4),
            "factuality": round(a.factuality, 4),
            "confidence": round(a.own.confidence, 4),
            "coherence": round(a.own.coherence, 4),
        }
        verdict = self._verdict(answer, a.claim, failed, issues, scores)
        verdict.form_only = is_form_only(verdict)
        self.last_scores = scores
        self.last_ms = (time.perf_counter() - t0) * 1000.0
        return verdict

    def _assess(self, question: str, answer: str, passages: list[Passage]) -> _Assessment:
        """Score the answer, find its claim sentence and the question keywords that lack
        evidence: everything the verdict is then read from."""
        ev = self.evaluator
        own: QualityReport = ev.score(question, answer, passages)
        claim = self.claim(question, answer, passages) if answer.strip() else None
        abstains = is_abstention(answer)
        # Only a sentence that states the answer can ground it; with none, the answer's
        # own scores decide and its unsupported words are named instead.
        unstated = [] if abstains or claim is None else predicate_gaps(question, claim, answer)
        best = own
        if claim is not None and not unstated:  # the claim may raise scores only now
            grounded: QualityReport = ev.score(question, f"{answer}. {claim}", passages)
            if grounded.completeness > own.completeness:
                best = grounded
        role_only = not abstains and bool(_WHO.match(question)) and is_role_only(answer, question)
        evidence_stems: set[str] = set()
        for p in passages:
            evidence_stems |= _stems(p.title) | _stems(p.text)
        gaps = [] if abstains else evidence_gaps(question, answer, passages)
        return _Assessment(
            own=own,
            best=best,
            claim=claim,
            abstains=abstains,
            unstated=unstated,
            role_only=role_only,
            evidence_stems=evidence_stems,
            gaps=gaps,
            gap_fail=len(gaps) > self.max_gaps,
        )

    def _issues(self, question: str, a: _Assessment) -> list[str]:
        """What the loop should look for next, as "no evidence for: …" / "unsupported: …"."""
        issues: list[str] = []
        if a.role_only:
            asked = re.sub(r"^\s*(?:who|whom)\s+", "", question, flags=re.I).rstrip(" ?")
            issues.append(bound(f"{NO_EVIDENCE}the name of who {asked}"))
        if a.unstated:
            issues.append(_unstated_issue(question, a.unstated))
        if a.gap_fail:
            # Keywords no passage holds at all first: they are what retrieval must find.
            a.gaps.sort(key=lambda w: stem(w) in a.evidence_stems)
            issues.append(bound(NO_EVIDENCE + ", ".join(a.gaps)))
        elif not a.unstated and (
            a.abstains or (a.best.missing_keywords and a.completeness < self.min_completeness)
        ):
            missing = list(a.best.missing_keywords)
            absent = [w for w in missing if stem(w) not in a.evidence_stems] or missing
            if absent:
                issues.append(bound(NO_EVIDENCE + ", ".join(absent)))
        if a.own.unsupported_words and a.consistency < self.min_consistency and not a.abstains:
            issues.append(bound(UNSUPPORTED + ", ".join(a.own.unsupported_words)))
        return issues

    def _failures(self, answer: str, a: _Assessment) -> list[str]:
        """Why the answer is not supported; empty when every check passes."""
        failed = []
        if a.abstains:
            failed.append("the answer abstains")
        if a.role_only:
            failed.append(
                f"'{bound(answer, 40)}' is not a name "
                "(only roles, dates or names the question gives)"
            )
        if a.unstated:
            failed.append("no sentence stating the answer supports: " + ", ".join(a.unstated))
        if a.consistency < self.min_consistency:
            failed.append(f"consistency {a.consistency:.2f} < {self.min_consistency:.2f}")
        if a.factuality < self.min_factuality:
            failed.append(f"factuality {a.factuality:.2f} < {self.min_factuality:.2f}")
        if a.completeness < self.min_completeness:
            failed.append(f"completeness {a.completeness:.2f} < {self.min_completeness:.2f}")
        if a.gap_fail:
            failed.append(f"{len(a.gaps)} question keyword(s) without evidence")
        return failed

    def _verdict(
        self,
        answer: str,
        claim: str | None,
        failed: list[str],
        issues: list[str],
        scores: dict[str, float],
    ) -> Verdict:
        """Reject on any failure; a supported answer that runs past DIRECT_MAX_WORDS is
        rejected for its form only (no issues), so the loop regenerates it."""
        n_words = len(answer.split())
        if not failed and n_words > self.direct_max_words:
            reason = f"the answer runs to {n_words} words; give a shorter, more direct answer"
            return Verdict(accept=False, issues=[], reason=reason, raw=claim or "")
        if not failed:
            reason = "supported: " + ", ".join(f"{k} {v:.2f}" for k, v in scores.items())
            return Verdict(accept=True, issues=[], reason=reason, raw=claim or "")
        return Verdict(accept=False, issues=issues, reason="; ".join(failed), raw=claim or "")


def _unstated_issue(question: str, unstated: list[str]) -> str:
    """What the claim fails to state, with the question's other keywords as context so the
    follow-up search stays on the question's subject."""
    from scim_edge.textutil import content_words, ordered_unique

    context = [
        w
        for w in ordered_unique(content_words(question))
        if w not in unstated and w not in ANSWER_SLOT_WORDS
    ]
    text = ", ".join(unstated) + (f" ({', '.join(context)})" if context else "")
    return bound(NO_EVIDENCE + text)


@dataclass
class _Assessment:
    """What HeuristicCritic.judge reads its verdict from (one answer, one set of passages)."""

    own: QualityReport  # the answer's own scores
    best: QualityReport  # the better of own and claim-grounded scores, by completeness
    claim: str | None  # the passage sentence that states the answer
    abstains: bool
    unstated: list[str]  # predicate keywords of the question the claim does not state
    role_only: bool  # a who-question answered by a role or common noun only
    evidence_stems: set[str]  # stems of every passage's title and text
    gaps: list[str]  # question keywords without evidence near the answer
    gap_fail: bool  # more gaps than the critic tolerates

    @property
    def completeness(self) -> float:
        return max(self.own.completeness, self.best.completeness)

    @property
    def factuality(self) -> float:
        return max(self.own.factuality, self.best.factuality)

    @property
    def consistency(self) -> float:
        """Always the answer's own: the claim must not hide a hallucination."""
        return self.own.consistency


# ---- model critic ---------------------------------------------------------------------

CRITIC_PROMPT = (
    "Question: {question}\nEvidence: {evidence}\nProposed answer: {answer}\n"
    "Is the answer supported by the evidence? Answer Accept or Reject, "
    "then say what evidence is missing."
)

_NEGATED_ACCEPT = re.compile(
    r"\b(?:not|cannot|can't|can\s+not|don't|do\s+not|shouldn't|should\s+not|won't)\s+"
    r"(?:be\s+)?(?:accept(?:ed)?|supported|support)\b",
    re.IGNORECASE,
)
_ACCEPT = re.compile(
    r"\b(?:accept(?:ed|able)?|approve[d]?|yes|supported|correct|true|sufficient)\b", re.IGNORECASE
)
_REJECT = re.compile(
    r"\b(?:reject(?:ed)?|no|not\s+supported|unsupported|incorrect|false|insufficient|"
    r"wrong|unanswerable)\b",
    re.IGNORECASE,
)
_ISSUE_SPLIT = re.compile(r"(?<=[.;!?])\s+|\n+")
_MISSING_CUES = re.compile(
    r"(?:missing|no evidence (?:for|of|about|that)|lacks?"
    r"|need(?:s|ed)? (?:evidence|information) (?:about|on|for|of)"
    r"|does not (?:mention|say|state)|not mentioned|nothing about|no information (?:about|on))"
    r"[:\s]*(.*)",
    re.IGNORECASE,
)


def parse_critique(raw: str) -> Verdict:
    """Turn a model's free-text critique into a Verdict.

    The first decisive word wins (a negated "accept" is a rejection). Text after it is the
    reason; sentences that name missing evidence become issues. Nothing decisive means
    the critique is unparseable: Reject, with the raw text kept for the trace."""
    text = (raw or "").strip()
    body = re.sub(r"^\W+", "", text)
    decisions: list[tuple[int, bool, int]] = []
    for m in _NEGATED_ACCEPT.finditer(body):
        decisions.append((m.start(), False, m.end()))
    for m in _REJECT.finditer(body):
        decisions.append((m.start(), False, m.end()))
    for m in _ACCEPT.finditer(body):
        if any(s <= m.start() < e for s, _, e in decisions):
            continue
        decisions.append((m.start(), True, m.end()))
    if not decisions:
        return Verdict(accept=False, reason=UNPARSEABLE, raw=text)
    start, accept, end = min(decisions)
    if start > 80:  # a verdict word buried deep in prose is not a verdict
        return Verdict(accept=False, reason=UNPARSEABLE, raw=text)
    rest = body[end:].strip(" .,:;-\n\t")
    issues: list[str] = []
    if not accept:
        for sentence in _ISSUE_SPLIT.split(rest):
            m = _MISSING_CUES.search(sentence)
            if m:
                what = m.group(1).strip(" .,:;")
                issue = NO_EVIDENCE + what if what else sentence.strip()
                issues.append(bound(issue))
            if len(issues) == 3:
                break
    verdict = Verdict(accept=accept, issues=issues, reason=bound(rest, 400), raw=text)
    verdict.form_only = is_form_only(verdict)
    return verdict


class ModelCritic:
    """Flan-T5 judges sufficiency. Its generation is capped by `critic_max_tokens`."""

    name = "model"

    def __init__(self, settings: Settings, model: Any, model_name: str = "flan-t5") -> None:
        self.settings = settings
        self.model = model
        self.name = f"model:{model_name}"
        self.max_tokens = settings.critic_max_tokens

    def prompt(self, question: str, answer: str, passages: Sequence[Passage]) -> str:
        """The SIM-RAG-style critique prompt. The evidence is budgeted so the question, the
        proposed answer and the instruction always fit: an input-length cut must never
        remove the very answer being judged."""
        s = self.settings
        encode = getattr(self.model, "encode", None)
        decode = getattr(self.model, "decode", None)
        texts = [f"{p.title}: {p.text}" for p in passages]
        parts: list[str] = []
        if callable(encode) and callable(decode):
            fixed = len(encode(CRITIC_PROMPT.format(question=question, evidence="", answer=answer)))
            budget = s.input_max_tokens - fixed - 2 * len(texts) - 2
            for text in texts:
                if budget <= 8:
                    break
                ids = list(encode(text, min(s.passage_max_tokens, budget)))
                if ids and ids[-1] == getattr(self.model, "eos_id", None):
                    ids = ids[:-1]
                parts.append(decode(ids).strip())
                budget -= len(ids) + 2
        else:  # no tokenizer at hand: count words (~0.75 words per T5 token)
            budget = max(64, int(s.input_max_tokens * 0.7))
            per_passage = max(16, int(s.passage_max_tokens * 0.7))
            for text in texts:
                words = text.split()[: min(per_passage, budget)]
                if not words:
                    break
                parts.append(" ".join(words))
                budget -= len(words)
        return CRITIC_PROMPT.format(
            question=question,
            evidence=" [SEP] ".join(p for p in parts if p) or "(none)",
            answer=answer,
        )

    def judge(self, question: str, answer: str, passages: Sequence[Passage]) -> Verdict:
        prompt = self.prompt(question, answer, passages)
        out = self.model.generate_text(
            prompt,
            max_input_tokens=self.settings.input_max_tokens,
            max_new_tokens=self.max_tokens,
        )
        text = out[0] if isinstance(out, tuple) else str(out)
        return parse_critique(text)


def make_critic(settings: Settings, engine: Any | None = None) -> Critic:
    """The critic Settings name. `model` needs an installed Flan-T5 model."""
    from scim_edge.errors import ModelError

    if settings.critic == "heuristic":
        return HeuristicCritic(settings)
    if settings.critic == "trained":
        from scim_edge.confidence import Confidence

        conf = Confidence.for_engine(engine, settings) if engine is not None else None
        if conf is None or conf.critic is None:
            fallback = HeuristicCritic(settings)
            fallback.fallback_warning = conf.warning if conf is not None and conf.notify else None
            return fallback
        return LearnedCritic(settings, conf)
    if settings.critic == "model" and settings.critic_model:
        # a Flan-T5 fine-tuned as the Critic (`critic train --fine-tune`)
        from models.seq2seq import Seq2SeqModel
        from models.store import resolve_model

        path = resolve_model(settings.critic_model, "seq2seq")
        return ModelCritic(settings, Seq2SeqModel.load(path, threads=settings.threads), path.name)
    if settings.critic == "model":
        model, name = load_seq2seq(settings, engine)
        if model is None:
            raise ModelError(
                "--critic model needs an installed Flan-T5 model",
                hint="install one with `scim-edge models import DIR`, or use --critic heuristic",
            )
        return ModelCritic(settings, model, name)
    raise ModelError(f"unknown critic '{settings.critic}' (choose trained, heuristic or model)")


def load_seq2seq(settings: Settings, engine: Any | None = None) -> tuple[Any | None, str]:
    """The Flan-T5 runtime to reuse: the generator's own when it has one, else the
    installed default: one bound in `engine.slots.seq2seq`, else the session's cached one,
    so a session loads it once."""
    slots = getattr(engine, "slots", None)
    if slots is not None and slots.seq2seq is not None:
        return slots.seq2seq

    def build() -> tuple[Any | None, str]:
        gen = getattr(engine, "generator", None)
        model = getattr(gen, "model", None)
        if model is not None and hasattr(model, "generate_text"):
            return model, getattr(gen, "name", "flan-t5")
        return _load_installed_seq2seq(settings)

    cache = getattr(engine, "cache", None)
    return build() if cache is None else cache.get(("seq2seq",), build)


def _load_installed_seq2seq(settings: Settings) -> tuple[Any | None, str]:
    try:
        from models.seq2seq import Seq2SeqModel
        from models.store import default_model, resolve_model
    except ImportError:
        return None, ""
    name = settings.model if settings.model not in (None, "extractive") else None
    try:
        path = resolve_model(name, "seq2seq") if name else default_model("seq2seq")
    except Exception:  # noqa: BLE001 - a missing model simply means "no model critic"
        return None, ""
    if path is None:
        return None, ""
    from pathlib import Path

    path = Path(getattr(path, "path", path))
    return Seq2SeqModel.load(path, threads=settings.threads), path.name


_SCORE_REASON = re.compile(r"^confidence \d+% [<≥] \d+%$")


def score_reason(probability: float, threshold: float) -> str:
    """The trained Critic's reason for its verdict: its confidence against the threshold."""
    sign = "≥" if probability >= threshold else "<"
    return f"confidence {percent(probability)}% {sign} {percent(threshold)}%"


def is_score_reason(reason: str) -> bool:
    """The reason is only a confidence against a threshold (`score_reason`): it names
    nothing to search for."""
    return bool(_SCORE_REASON.match(reason.strip()))


def searchable_reason(reason: str) -> str:
    """A rejection's reason as a follow-up search may use it: "" when it names nothing to
    search for (an unparseable critique, feedback about the answer's form only such as
    "give a shorter answer", or the trained Critic's score "confidence 12% < 50%"); sent
    to BM25 those would only match passages about brevity, or about confidence."""
    if reason == UNPARSEABLE or is_score_reason(reason):
        return ""
    if reason and is_form_only(Verdict(accept=False, reason=reason)):
        return ""
    return reason


class LearnedCritic:
    """SIM-RAG's trained Critic as the simrag loop's judge (§3.3): accept when the
    calibrated confidence that the answer is right reaches `threshold`. A rejection names
    the evidence still missing (found as the heuristic critic finds it), which becomes the
    next round's query; the rejected answer itself is excluded from the next reading (§3.4).
    """

    name = "trained"

    def __init__(self, settings: Settings, confidence: Any, threshold: float | None = None):
        from scim_edge.trained_critic import ACCEPT_THRESHOLD

        self.settings = settings
        self.confidence = confidence
        self.threshold = ACCEPT_THRESHOLD if threshold is None else threshold
        self.heuristic = HeuristicCritic(settings)

    def verdict(
        self, question: str, answer: str, passages: Sequence[Passage], probability: float
    ) -> Verdict:
        if probability >= self.threshold:
            return Verdict(True, [], reason=score_reason(probability, self.threshold))
        found = self.heuristic.judge(question, answer, passages)
        issues = [i for i in found.issues if not i.lower().startswith("unsupported")]
        return Verdict(
            False,
            issues[:3],
            form_only=False,
            reason=score_reason(probability, self.threshold),
        )

    def judge(self, question: str, answer: str, passages: Sequence[Passage]) -> Verdict:
        """Without a round's context (reader signals, history), judge it as a first round."""
        from scim_edge.quality import Evaluator

        report = Evaluator(self.settings).score(question, answer, passages)
        p = self.confidence.round(answer, report.scores(), {}, 1, [x.doc_id for x in passages],
                                  [x.doc_id for x in passages], [],
                                  {x.doc_id: x.score for x in passages})  # fmt: skip
        return self.verdict(question, answer, passages, p or 0.0)
