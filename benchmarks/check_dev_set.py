"""Check a vital-en development set (benchmarks/dev_vital.jsonl, dev_vital_b.jsonl,
dev_vital_c.jsonl, dev_vital_who.jsonl, dev_vital_measures.jsonl, dev_vital_d.jsonl,
dev_vital_e.jsonl, dev_vital_f.jsonl), or one over the enwiki sample (dev_sample.jsonl,
dev_sample_b.jsonl, dev_sample_c.jsonl), against the corpus it was written over.

A development question is only useful if its gold answer is really in the text the system
searches: a typo in an evidence snippet or an answer alias that the snippet does not contain
would silently turn a right answer into a "wrong" one. So for every line this checks that

* the line is a JSON object with exactly the keys of qa-dev.jsonl (`id`, `question`,
  `answers`, `type`, `titles`, `evidence`) and `id` is `vdev-NNN` (`vdevb-NNN` in the
  second set, `vdevc-NNN` in the third, `vdevw-NNN` in the "who" set, `vdevm-NNN` in the
  measures set, `vdevd-NNN`, `vdeve-NNN` and `vdevf-NNN` in the held-out sets; `sdev-NNN`,
  `sdevb-NNN` and `sdevc-NNN` in the held-out sets over the enwiki sample, checked with `--corpus
  ../shared/data/enwiki-sample.xml.bz2`), unique;
* every title names an article of the corpus;
* an answerable question's `evidence` occurs verbatim (case and spacing aside) in one of
  its named articles and
  contains one of its `answers` (case-insensitive, any whitespace matching any whitespace);
* an unanswerable question has no answers and empty evidence;
* multihop and comparison questions name at least two articles;
* the question does not copy a long run of words from its articles (paraphrase check; the
  words of the titles do not count, since a person names the subject the way it is called).

It prints one line per problem and exits 1 when any line is bad, 2 (one line) when the set or
the corpus cannot be read, 0 otherwise, with a summary: questions per type and how many
answerable ones take their evidence from beyond the article's first sentence.

    python benchmarks/check_dev_set.py [--set benchmarks/dev_vital.jsonl]
                                       [--corpus ../shared/data/vital-en.xml.bz2]
"""

from __future__ import annotations

import bz2
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from bench_output import fail

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("SCIM_EDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
DEFAULT_SET = ROOT / "benchmarks" / "dev_vital.jsonl"
DEFAULT_CORPUS = DATA / "vital-en.xml.bz2"

KEYS = {"id", "question", "answers", "type", "titles", "evidence"}
TYPES = {"factoid", "unanswerable", "multihop", "comparison"}
ID_RE = re.compile(r"vdev[bcdefwm]?-\d{3}|sdev[bc]?-\d{3}")
# A question sharing more consecutive words than this with its articles (title words aside)
# copies a phrase instead of paraphrasing it.
MAX_COPIED_WORDS = 5
# Function words of a title ("W and Z bosons") stay in the copy check; the names go.
TITLE_FILLER = {"a", "an", "and", "in", "of", "the"}
# End of a sentence: terminal punctuation (maybe closing quote), space, then a capital letter;
# a single capital before the dot is an initial ("A. J. P. Taylor"), not a sentence end.
SENTENCE_END = re.compile(r"(?<![A-Z])(?<!\b[A-Z][a-z])[.!?][\"')]?\s+(?=[A-Z\"])")


class InputError(Exception):
    """The set or the corpus cannot be read at all (as opposed to a bad line in the set)."""


def local(tag: str) -> str:
    """Tag name without the MediaWiki export namespace."""
    return tag.rsplit("}", 1)[-1]


def load_corpus(path: Path) -> dict[str, str]:
    """Title -> article text of a MediaWiki XML export (bz2), read with a streaming parser."""
    if not path.is_file():
        raise InputError(f"corpus not found: {path}")
    docs: dict[str, str] = {}
    title = ""
    try:
        with bz2.open(path) as f:
            for _, el in ET.iterparse(f):
                tag = local(el.tag)
                if tag == "title":
                    title = el.text or ""
                elif tag == "text":
                    docs[title] = el.text or ""
                elif tag == "page":
                    el.clear()
    except (OSError, EOFError, ET.ParseError) as exc:
        raise InputError(f"cannot read corpus {path}: {exc}") from None
    return docs


def squash(text: str) -> str:
    """Lower-case and collapse every run of whitespace (the corpus uses no-break spaces
    inside quantities such as "780\u00a0nm") so that a typed answer "780 nm" can match."""
    return " ".join(text.lower().split())


def words(text: str) -> list[str]:
    """Lower-cased word tokens, for the copied-phrase check."""
    return re.findall(r"\w+", text.lower())


def longest_shared_run(a: str, b: str, ignore: frozenset[str] = frozenset()) -> int:
    """Length in words of the longest run of consecutive words that `a` and `b` share, after
    dropping the words in `ignore` from both."""
    wa = [w for w in words(a) if w not in ignore]
    wb = [w for w in words(b) if w not in ignore]
    best = 0
    prev = [0] * (len(wb) + 1)
    for x in wa:
        cur = [0] * (len(wb) + 1)
        for j, y in enumerate(wb, 1):
            if x == y:
                cur[j] = prev[j - 1] + 1
                best = max(best, cur[j])
        prev = cur
    return best


def _find(evidence: str, text: str) -> int | None:
    """Where `evidence` occurs in `text`, case aside and any whitespace matching any
    whitespace (the corpus writes quantities with no-break spaces, "8,848.86\u00a0m")."""
    m = re.search(r"\s+".join(map(re.escape, evidence.split())), text, re.IGNORECASE)
    return m.start() if m else None


def first_sentence_end(text: str) -> int:
    """Character offset where the article's first sentence ends."""
    m = SENTENCE_END.search(text)
    return m.end() if m else len(text)


def _id_problems(qid: object, seen: set[str]) -> list[str]:
    """Problems with the line's `id`; a well-formed new id joins `seen`."""
    if not isinstance(qid, str) or not ID_RE.fullmatch(qid):
        return [
            f"id {qid!r} is not vdev-NNN (or vdevb-, vdevc-, vdevd-, vdeve-, vdevf-, vdevw-, "
            "vdevm-, sdev-, sdevb-, sdevc-NNN)"
        ]
    if qid in seen:
        return [f"id {qid} repeated"]
    seen.add(qid)
    return []


def _field_problems(item: dict, seen: set[str]) -> tuple[list[str], list[str], str]:
    """Problems with the fields that are checked on their own (id, question, type, answers,
    evidence), and the answers and evidence to check further (empty when malformed, so that
    one bad field is reported once rather than again by every check that reads it)."""
    bad = _id_problems(item["id"], seen)
    question, kind = item["question"], item["type"]
    answers, evidence = item["answers"], item["evidence"]
    if not isinstance(question, str) or not question.strip().endswith("?"):
        bad.append("question must be a non-empty string ending in '?'")
    if kind not in TYPES:
        bad.append(f"type {kind!r} not one of {sorted(TYPES)}")
    if not isinstance(answers, list) or not all(isinstance(a, str) and a for a in answers):
        bad.append("answers must be a list of non-empty strings")
        answers = []
    if not isinstance(evidence, str):
        bad.append("evidence must be a string")
        evidence = ""
    return bad, answers, evidence


def _titles_are_valid(titles: object) -> bool:
    """Whether `titles` is a non-empty list of strings (every later check reads it)."""
    return isinstance(titles, list) and bool(titles) and all(isinstance(t, str) for t in titles)


def _title_problems(
    question: object, kind: object, titles: list[str], docs: dict[str, str]
) -> list[str]:
    """Problems with the named articles: absent from the corpus, too few for the question's
    type, or a question that copies a phrase from them instead of paraphrasing it."""
    bad: list[str] = []
    missing = [t for t in titles if t not in docs]
    if missing:
        bad.append(f"titles not in the corpus: {missing}")
    if kind in ("multihop", "comparison") and len(titles) < 2:
        bad.append(f"a {kind} question needs at least two titles")
    if isinstance(question, str) and not missing:
        names = frozenset(w for t in titles for w in words(t)) - TITLE_FILLER
        copied = max(longest_shared_run(question, docs[t], names) for t in titles)
        if copied > MAX_COPIED_WORDS:
            bad.append(f"question copies {copied} consecutive words of its article")
    return bad


def _answer_problems(
    kind: object, answers: list[str], evidence: str, titles: list[str], docs: dict[str, str]
) -> tuple[list[str], bool]:
    """Problems with the gold answers and their evidence, and whether the evidence lies past
    the first sentence of the article that holds it."""
    if kind == "unanswerable":
        if answers or evidence:
            return ["an unanswerable question has answers [] and evidence ''"], False
        return [], False
    bad: list[str] = []
    if not answers:
        bad.append("an answerable question needs at least one answer")
    if not evidence.strip():
        return [*bad, "an answerable question needs evidence"], False
    found = {t: _find(evidence, docs[t]) for t in titles if t in docs}
    holders = [t for t, at in found.items() if at is not None]
    if not holders:
        bad.append("evidence does not occur in any of the named articles, case and spacing aside")
    if answers and not any(squash(a) in squash(evidence) for a in answers):
        bad.append("no answer alias occurs in the evidence")
    late = bool(holders) and found[holders[0]] >= first_sentence_end(docs[holders[0]])
    return bad, late


def check_item(item: object, docs: dict[str, str], seen: set[str]) -> tuple[list[str], bool]:
    """Problems with one parsed line, and whether its evidence lies past the first sentence."""
    if not isinstance(item, dict):
        return ["not a JSON object"], False
    if set(item) != KEYS:
        return [f"keys must be exactly {sorted(KEYS)}, got {sorted(item)}"], False
    bad, answers, evidence = _field_problems(item, seen)
    titles = item["titles"]
    if not _titles_are_valid(titles):
        return [*bad, "titles must be a non-empty list of strings"], False
    bad += _title_problems(item["question"], item["type"], titles, docs)
    more, late = _answer_problems(item["type"], answers, evidence, titles, docs)
    return [*bad, *more], late


def _path(text: str) -> Path:
    """An argparse type: a path, never the empty string (which Path would read as ".")."""
    from scim_edge.commands._args import nonempty

    return Path(nonempty(text))


def main(argv: list[str] | None = None) -> int:
    from scim_edge.cli import OneLineParser

    ap = OneLineParser(prog="check_dev_set", description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", type=_path, default=DEFAULT_SET, help="questions (JSON lines)")
    ap.add_argument("--corpus", type=_path, default=DEFAULT_CORPUS, help="MediaWiki XML (bz2)")
    args = ap.parse_args(argv)
    try:
        docs = load_corpus(args.corpus)
        try:
            lines = args.set.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise InputError(f"cannot read question set {args.set}: {exc}") from None
    except InputError as exc:
        return fail(" ".join(str(exc).split()))
    seen: set[str] = set()
    kinds: Counter[str] = Counter()
    n_bad = n_late = 0
    for no, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            problems, late = [f"not JSON: {exc.msg}"], False
        else:
            problems, late = check_item(item, docs, seen)
        for p in problems:
            print(f"{args.set}:{no}: {p}")
        if problems:
            n_bad += 1
            continue
        kinds[item["type"]] += 1
        n_late += late
    total = sum(kinds.values()) + n_bad
    by_type = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
    print(f"{total} questions over {len(docs)} articles: {by_type}; "
          f"evidence past the first sentence: {n_late}; bad lines: {n_bad}")  # fmt: skip
    return 1 if n_bad or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
