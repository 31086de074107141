"""`scim-edge score`: the five SCIM dimensions and Q for a (question, answer, passages)
triple, with the words behind each score, so a user can see why."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from scim_edge import jsonl
from scim_edge.commands._args import nonempty
from scim_edge.commands._output import print_json
from scim_edge.errors import UserError
from scim_edge.jsonl import jsonl_lines
from scim_edge.types import DIMENSIONS, Passage

MAX_FILE_BYTES = 64 << 20


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("score", help="score an answer on the five quality dimensions")
    p.add_argument("--question", required=True, help="the question")
    p.add_argument("--answer", required=True, help="the answer to score")
    p.add_argument(
        "--passages",
        type=nonempty,
        required=True,
        metavar="FILE.jsonl",
        help='one passage per line: {"text": ..., "title"?: ..., "doc_id"?: ...}',
    )
    p.add_argument("--profile", metavar="P", help="weights of this profile (default general)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def read_passages(path: Path) -> list[Passage]:
    """Passages from a JSONL file; a bad line is a one-line error naming its number."""
    if path.is_dir():
        raise UserError(f"--passages names a folder, not a JSONL file: {path}")
    if not path.exists():
        raise UserError(f"passages file not found: {path}")
    if not path.is_file():  # /dev/null, a pipe, a socket
        raise UserError(f"--passages names no regular file: {path}")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise UserError(f"passages file is larger than {MAX_FILE_BYTES >> 20} MB: {path}")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path}: not UTF-8 text") from None
    out: list[Passage] = []
    for n, line in jsonl_lines(text):
        try:
            obj = jsonl.loads(line)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{n}: not valid JSON ({e.msg})") from None
        if isinstance(obj, str):
            obj = {"text": obj}
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise UserError(f"{path}:{n}: expected a JSON object with a string 'text' field")
        out.append(
            Passage(
                doc_id=str(obj.get("doc_id", f"line-{n}")),
                title=str(obj.get("title", "")),
                section=str(obj.get("section", "")),
                text=obj["text"],
            )
        )
    if not out:
        raise UserError(f"{path}: no passages")
    return out


def run(args: argparse.Namespace) -> int:
    from scim_edge.quality import Evaluator, confidence
    from scim_edge.settings import load_settings
    from scim_edge.textutil import typed_text

    question = typed_text(args.question, "question")
    answer = typed_text(args.answer, "answer", why_empty=": there is nothing to score")
    passages = read_passages(Path(args.passages))
    settings = load_settings({"profile": args.profile})
    report = Evaluator(settings).score(question, answer, passages)
    if args.json:
        print_json(
            {
                "question": question,
                "answer": answer,
                "scores": report.scores(),
                "tier": report.tier,
                "weights": dict(zip(DIMENSIONS, settings.weights, strict=True)),
                "missing_keywords": report.missing_keywords,
                "unsupported_words": report.unsupported_words,
                "patterns": report.patterns,
                "confidence_cues": confidence(answer)[1],
                "well_formed_sentences": report.sentences,
                "passages": len(passages),
            }
        )
        return 0
    why = {
        "completeness": "missing keywords: " + (", ".join(report.missing_keywords) or "none"),
        "consistency": "unsupported words: " + (", ".join(report.unsupported_words) or "none"),
        "confidence": "cues: " + (", ".join(confidence(answer)[1]) or "none"),
        "factuality": f"{len(report.patterns)} pattern(s): "
        + ("; ".join(report.patterns) or "none"),
        "coherence": f"{len(report.sentences)} well-formed sentence(s)",
    }
    for dim, w in zip(DIMENSIONS, settings.weights, strict=True):
        value = getattr(report, dim)
        note = f"  {why[dim]}" if why[dim] else ""
        print(f"{dim:<13} {value:5.2f}  (weight {w:.2f}){note}")
    print(f"{'Q':<13} {report.quality:5.2f}  tier {report.tier}")
    return 0
