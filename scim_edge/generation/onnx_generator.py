"""Flan-T5 (ONNX Runtime) behind the Generator interface.

The prompt is the shared one (prompting.py), with the model's own tokenizer counting
and cutting tokens; beams and new-token limits come from Settings. `models.seq2seq` is
imported only here, so the extractive path never loads ONNX Runtime.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from scim_edge.generation.prompting import build_prompt_for
from scim_edge.generation.support import best_support
from scim_edge.settings import Settings
from scim_edge.types import Generation, Passage


def display_name(model: Any, path: Path | None = None) -> str:
    """E.g. "flan-t5-base (onnx cpu int8)"."""
    name = getattr(model, "name", None) or (path.name if path else "seq2seq")
    provider = str(getattr(model, "provider", "") or "cpu")
    provider = provider.replace("ExecutionProvider", "").lower() or "cpu"
    variant = str(getattr(model, "variant", "") or "")
    extra = " ".join(x for x in ("onnx", provider, variant) if x)
    return f"{name} ({extra})"


class OnnxGenerator:
    def __init__(self, model: Any, settings: Settings, path: Path | None = None) -> None:
        self.model = model  # shared with a model critic / rewriter (see critic.load_seq2seq)
        self.settings = settings
        self.path = path
        self.name = display_name(model, path)

    @classmethod
    def load(cls, path: Path, settings: Settings) -> OnnxGenerator:
        from models.seq2seq import Seq2SeqModel

        return cls(Seq2SeqModel.load(Path(path), threads=settings.threads), settings, Path(path))

    def generate(
        self,
        question: str,
        passages: list[Passage],
        guidance: str | None = None,
        max_new_tokens: int | None = None,
        exclude: Collection[str] = (),
    ) -> Generation:
        s = self.settings
        t0 = time.perf_counter()
        if exclude:  # the Critic's feedback (SIM-RAG §3.4), in the prompt
            rejected = "; ".join(x for x in exclude if x.strip())
            note = f"These answers were judged wrong: {rejected}."
            guidance = f"{guidance} {note}" if guidance else note
        prompt = build_prompt_for(s, question, passages, guidance, tokenizer=self.model)
        max_new = max_new_tokens or s.max_new_tokens
        text, n_in, n_out = self.model.generate_text(
            prompt.text,
            max_input_tokens=s.input_max_tokens,
            max_new_tokens=max_new,
            min_new_tokens=min(s.min_new_tokens, max_new),
            num_beams=s.num_beams,
        )
        text = " ".join(str(text).split())
        return Generation(
            text=text,
            support=best_support(text, passages),
            input_tokens=int(n_in),
            output_tokens=int(n_out),
            ms=(time.perf_counter() - t0) * 1000.0,
            generator=self.name,
        )
