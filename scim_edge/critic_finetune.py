"""`critic train --fine-tune MODEL_DIR`: Flan-T5 fine-tuned as the Critic, as SIM-RAG does.

SIM-RAG (§3.3) trains a small language model to read (question, evidence, answer) and say
"Accept" or "Reject". Here the examples are the practice traces: the answer of each round,
the sentence that supports it, and whether it was right. The model is fine-tuned with torch
for a fixed number of steps, then exported through the usual ONNX export into the model
store (kind seq2seq, marked `role: critic`), and the zero-shot model critic's code runs it:
`scim-edge ask … --loop simrag --critic model --critic-model NAME`.

This needs the `[export]` extra (torch, transformers, optimum) and a connected machine's
Flan-T5 weights; the run-time path never imports torch.
"""

from __future__ import annotations

import json
import random
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scim_edge import jsonl
from scim_edge.atomic import write_text
from scim_edge.critic import CRITIC_PROMPT
from scim_edge.errors import ModelError, UserError

# The model critic's own prompt, so the fine-tuned model is asked as it was taught; the
# evidence in training is the sentence the reader said supports the answer.
PROMPT = CRITIC_PROMPT


def examples(
    rows: Sequence[Mapping[str, Any]], questions: Mapping[str, str]
) -> list[tuple[str, str]]:
    """(prompt, "Accept" | "Reject") for every train-split round with an answer."""
    out = []
    for r in rows:
        if r.get("split") != "train" or not str(r.get("answer", "")).strip():
            continue
        prompt = PROMPT.format(
            question=questions.get(str(r["pair_id"]), ""),
            evidence=r.get("support", "") or "(none)",
            answer=r["answer"],
        )
        out.append((prompt, "Accept" if r.get("correct") else "Reject"))
    return out


def fine_tune(
    model_dir: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    name: str,
    questions: Mapping[str, str],
    steps: int = 200,
    batch: int = 8,
    lr: float = 3e-4,
    seed: int = 0,
    force: bool = False,
) -> Path:
    """Fine-tune the T5 in `model_dir` on the traces; export it into the store as `name`."""
    try:
        import torch
        from transformers import AutoTokenizer, T5ForConditionalGeneration
    except ImportError:
        raise ModelError(
            "--fine-tune needs torch and transformers",
            hint='install the export extra: pip install "scim-edge[export]"',
        ) from None
    from models.export import export_model

    src = Path(model_dir).expanduser()
    if not (src / "config.json").is_file():
        raise UserError(f"{src} is not a Hugging Face model directory (no config.json)")
    data = examples(rows, questions)
    if len(data) < 10:
        raise UserError(f"only {len(data)} practice rounds to fine-tune on; run a larger practice")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    tok = AutoTokenizer.from_pretrained(src)
    model = T5ForConditionalGeneration.from_pretrained(src)
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    for _ in range(steps):
        batch_rows = [data[rng.randrange(len(data))] for _ in range(batch)]
        enc = tok([p for p, _ in batch_rows], return_tensors="pt", padding=True,
                  truncation=True, max_length=512)  # fmt: skip
        labels = tok([t for _, t in batch_rows], return_tensors="pt", padding=True).input_ids
        labels[labels == tok.pad_token_id] = -100
        loss = model(input_ids=enc.input_ids, attention_mask=enc.attention_mask,
                     labels=labels).loss  # fmt: skip
        loss.backward()
        opt.step()
        opt.zero_grad()
    tmp = Path(tempfile.mkdtemp(prefix="scim-edge-critic-"))
    try:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        for extra in ("generation_config.json",):
            if (src / extra).is_file() and not (tmp / extra).is_file():
                shutil.copy2(src / extra, tmp / extra)
        path = export_model(str(tmp), name=name, kind="seq2seq", force=force)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    manifest_path = path / "manifest.json"
    manifest = jsonl.loads(manifest_path.read_text(encoding="utf-8"))
    # the export read the temporary folder, gone now: the source is the model fine-tuned
    manifest.update({"role": "critic", "source": str(src), "fine_tuned_from": str(src),
                     "steps": steps, "examples": len(data)})  # fmt: skip
    write_text(manifest_path, json.dumps(manifest, indent=2) + "\n")
    return path
