"""Run-time seq2seq generation (Flan-T5) with ONNX Runtime, tokenizers and numpy only.

No torch and no transformers: an air-gapped box needs only the exported graphs. The
decoding follows `transformers.generate` exactly (greedy and beam search, its
length-penalty and early-stopping rules, EOS handling, `min_new_tokens` by masking EOS,
`no_repeat_ngram_size`), so answers match the reference implementation token for token.

Speed comes from the graphs, not Python: the encoder runs once; the first decoder step
also yields the cross-attention keys/values, which are computed once and then bound
unchanged to every later step (batch 1 even in beam search: the graph broadcasts them over
the beams, which saves num_beams copies of the largest tensors); later steps feed the
previous step's self-attention cache back through an I/O binding, so no step copies the
cache through numpy except when beam search reorders it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from models import ort_probe, store
from scim_edge import jsonl
from scim_edge.errors import ModelError

log = logging.getLogger("scim_edge.models")

NEG_INF = np.float32(-np.inf)
BIG_NEG = np.float32(-1.0e9)


def cuda_available() -> bool:
    """CUDA may be requested: the provider is built in and its driver, GPU and libraries
    load (probed quietly first, so a CPU-only machine never sees ORT's load errors)."""
    return ort_probe.cuda_usable()


# CUDA sessions compute in full fp32. With TF32 (ONNX Runtime's default on Ampere and
# later) matrix products round their inputs to 10 bits of mantissa, and a beam search on an
# H200 parted from `transformers.generate` on a near tie (1 of 144 tiny-T5 generations);
# without it all 144 match, for 6% more time per Flan-T5-base-shaped answer
# (benchmarks/results/cuda.json).
CUDA_OPTIONS = {"device_id": 0, "use_tf32": 0}


def session_options(threads: int | None) -> ort.SessionOptions:
    # ONNX Runtime's process-wide logger prints warnings straight to stderr (on a GPU
    # machine, one per CUDA session about plugin EP devices, and one about ScatterND),
    # which would land in the middle of the terminal UI; errors still print.
    ort.set_default_logger_severity(3)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    opts.inter_op_num_threads = 1
    # Without the arena, the large one-off buffers of a 1024-token encoder pass are given
    # back to the OS instead of being kept (and grown in powers of two) for the process'
    # lifetime: about 300 MB less peak RSS for Flan-T5-base, at no measurable speed cost.
    opts.enable_cpu_mem_arena = False
    if threads:
        opts.intra_op_num_threads = int(threads)
    opts.log_severity_level = 3
    return opts


def open_session(
    path: Path, *, model_name: str, provider: str, threads: int | None
) -> ort.InferenceSession:
    """An InferenceSession, or a one-line ModelError naming the file (never a traceback)."""
    providers: list[Any] = ["CPUExecutionProvider"]
    if provider == "cuda":
        providers = [("CUDAExecutionProvider", dict(CUDA_OPTIONS)), "CPUExecutionProvider"]
    try:
        return ort.InferenceSession(str(path), session_options(threads), providers=providers)
    except Exception as e:  # noqa: BLE001 - ORT raises its own types for corrupt protobufs
        first = " ".join(str(e).split())[:160]
        rel = f"{path.parent.name}/{path.name}"
        raise ModelError(
            f"cannot load model file {rel} of '{model_name}': {first}",
            hint=f"run `scim-edge models verify {model_name}`, then re-import or re-export it",
        ) from None


def load_tokenizer(model_dir: Path, model_name: str) -> Tokenizer:
    try:
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    except Exception as e:  # noqa: BLE001
        raise ModelError(
            f"cannot read tokenizer.json of '{model_name}': {' '.join(str(e).split())[:160]}",
            hint=f"run `scim-edge models verify {model_name}`",
        ) from None
    tok.no_padding()
    tok.no_truncation()
    return tok


def read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = jsonl.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelError(f"cannot read {path}: {e}") from None
    return data if isinstance(data, dict) else {}


def _load_trim():
    """glibc's malloc_trim, or None elsewhere."""
    try:
        import ctypes

        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


_malloc_trim = _load_trim()


def trim_heap() -> None:
    """Give freed heap pages back to the OS after a generation.

    Without the ONNX Runtime arena, a 1024-token encoder pass frees hundreds of MB that
    glibc would otherwise keep (fragmented over its per-thread arenas) and grow call after
    call; trimming keeps a long-running process at its post-load size (~600 MB for
    Flan-T5-base int8) for a few milliseconds per answer.
    """
    if _malloc_trim is not None:
        _malloc_trim(0)


def log_softmax(x: np.ndarray) -> np.ndarray:
    """float32 log-softmax over the last axis, computed as torch does (max-shifted)."""
    z = x - x.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def topk(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values, largest first (ties: lower index first)."""
    if k >= values.shape[0]:
        return np.argsort(-values, kind="stable")
    part = np.argpartition(-values, k - 1)[:k]
    order = np.lexsort((part, -values[part]))
    return part[order]


def banned_ngram_tokens(seq: list[int], n: int) -> list[int]:
    """Tokens that would repeat an n-gram of `seq` (HF's NoRepeatNGramLogitsProcessor)."""
    cur = len(seq)
    if n <= 0 or cur + 1 < n:
        return []
    prefix = tuple(seq[cur + 1 - n :])
    banned = []
    for i in range(cur - n + 1):
        if tuple(seq[i : i + n - 1]) == prefix:
            banned.append(seq[i + n - 1])
    return banned


@dataclass
class Timed:
    """Generated ids (new tokens, ending with EOS when one was produced) and the time split."""

    ids: list[int]
    encoder_s: float
    decoder_s: float
    steps: int


@dataclass
class _BeamState:
    """The arrays of one beam search (batch 1), as transformers' `_beam_search` keeps them."""

    k: int
    max_len: int  # decoder prompt (start token) + new tokens
    vocab: int
    keep: int  # candidates scored per step: enough that k survive any EOS hits
    eos_arr: np.ndarray
    top_k_mask: np.ndarray
    running: np.ndarray
    running_scores: np.ndarray
    finished: np.ndarray
    finished_scores: np.ndarray
    finished_len: np.ndarray
    is_finished: np.ndarray
    improvable: bool = True
    rows: int = 1  # the first step runs on one row: every beam starts identical
    cur_len: int = 1
    mask_k: Any = None

    @classmethod
    def start(
        cls, k: int, max_len: int, vocab: int, start_id: int, eos_id: int, eos_ids: list[int]
    ) -> _BeamState:
        keep = max(2, 1 + len(eos_ids)) * k
        running = np.full((k, max_len), eos_id, dtype=np.int64)
        running[:, 0] = start_id
        running_scores = np.zeros(k, dtype=np.float32)
        running_scores[1:] = BIG_NEG
        return cls(
            k=k,
            max_len=max_len,
            vocab=vocab,
            keep=keep,
            eos_arr=np.asarray(eos_ids, dtype=np.int64),
            top_k_mask=np.arange(keep) < k,
            running=running,
            running_scores=running_scores,
            finished=running.copy(),
            finished_scores=np.full(k, BIG_NEG, dtype=np.float32),
            finished_len=np.zeros(k, dtype=np.int64),
            is_finished=np.zeros(k, dtype=bool),
        )

    def select(self, logp: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """e. Score the continuations; the best `k` unfinished ones keep running.

        Returns the candidates, their scores, which of them ended, and the source beam of
        each running beam (to reorder the caches)."""
        acc = (logp + self.running_scores[: self.rows, None]).reshape(-1)
        top = topk(acc, self.keep)
        top_scores = acc[top]
        src_beam = top // self.vocab
        top_tok = top % self.vocab
        cand = self.running[src_beam]
        cand[:, self.cur_len] = top_tok
        hits = np.isin(top_tok, self.eos_arr) | (self.cur_len + 1 >= self.max_len)
        run_scores = top_scores + hits.astype(np.float32) * BIG_NEG
        nxt = topk(run_scores, self.k)
        self.running = cand[nxt]
        self.running_scores = run_scores[nxt]
        return cand, top_scores, hits, src_beam[nxt]

    def finish(
        self,
        cand: np.ndarray,
        top_scores: np.ndarray,
        hits: np.ndarray,
        length_penalty: float,
        early_stopping: bool | str,
    ) -> None:
        """f. Finished hypotheses (only those among the top `k`) join the finished set."""
        just_done = hits & self.top_k_mask
        fin = top_scores / np.float32((self.cur_len + 1 - 1) ** length_penalty)
        if early_stopping is True and self.is_finished.all():
            fin = fin + BIG_NEG
        if not self.improvable:
            fin = fin + BIG_NEG
        fin = fin + (~just_done).astype(np.float32) * BIG_NEG
        merged_scores = np.concatenate([self.finished_scores, fin.astype(np.float32)])
        pick = topk(merged_scores, self.k)
        merged_len = np.concatenate(
            [self.finished_len, np.full(self.keep, self.cur_len, dtype=np.int64)]
        )
        self.finished = np.concatenate([self.finished, cand])[pick]
        self.finished_scores = merged_scores[pick]
        self.finished_len = merged_len[pick]
        self.is_finished = np.concatenate([self.is_finished, just_done])[pick]

    def done(self, hits: np.ndarray, length_penalty: float, early_stopping: bool | str) -> bool:
        """Advance one position; the early-stop heuristic and stopping rule of transformers."""
        self.cur_len += 1
        if early_stopping == "never" and length_penalty > 0.0:
            best_len = self.max_len - 1
        else:
            best_len = self.cur_len - 1
        best_possible = self.running_scores[0] / np.float32(best_len**length_penalty)
        worst = np.where(self.is_finished, self.finished_scores.min(), BIG_NEG)
        self.improvable = self.improvable and bool((best_possible > worst).any())
        open_beam = not (bool(self.is_finished.all()) and early_stopping is True)
        return not (self.improvable and open_beam and not bool(hits.all()))


class Seq2SeqModel:
    """An exported T5-family model ready to generate. Build it with `Seq2SeqModel.load`."""

    def __init__(
        self,
        *,
        path: Path,
        name: str,
        provider: str,
        variant: str,
        threads: int | None,
        tokenizer: Tokenizer,
        sessions: dict[str, ort.InferenceSession],
        config: dict[str, Any],
        generation: dict[str, Any],
    ) -> None:
        self.path = path
        self.name = name
        self.provider = provider
        self.variant = variant
        self.threads = threads
        self.tokenizer = tokenizer
        self._enc = sessions["encoder_model"]
        self._dec = sessions["decoder_model"]
        self._dwp = sessions["decoder_with_past_model"]
        self._device = "cuda" if provider == "cuda" else "cpu"
        eos = generation.get("eos_token_id", config.get("eos_token_id", 1))
        self.eos_ids: list[int] = list(eos) if isinstance(eos, list) else [int(eos)]
        self.eos_id = self.eos_ids[0]
        self.pad_id = int(generation.get("pad_token_id", config.get("pad_token_id", 0)) or 0)
        start = generation.get("decoder_start_token_id", config.get("decoder_start_token_id"))
        self.decoder_start_id = int(self.pad_id if start is None else start)
        self._dec_out = [o.name for o in self._dec.get_outputs()]
        self._dwp_out = [o.name for o in self._dwp.get_outputs()]
        self._self_kv = [n for n in self._dwp_out if n.startswith("present.")]
        self._cross_kv = [n for n in self._dec_out if ".encoder." in n]
        dwp_inputs = {i.name for i in self._dwp.get_inputs()}
        expected = {
            n.replace("present.", "past_key_values.") for n in self._self_kv + self._cross_kv
        }
        missing = expected - dwp_inputs
        if "logits" not in self._dwp_out or missing or not self._self_kv:
            raise ModelError(
                f"model '{name}' is not a T5 export with past key values "
                f"(decoder_with_past_model.onnx lacks {sorted(missing)[:1] or ['logits']})"
            )
        self._broadcast_cross = True  # set False if a graph refuses batch-1 cross KV
        self._logits_at = self._dwp_out.index("logits")
        self._lock = threading.Lock()  # the I/O bindings below are per model, not per call
        self._enc_io = self._enc.io_binding()
        self._dec_io = self._dec.io_binding()
        self._dwp_io = self._dwp.io_binding()

    # ---- loading --------------------------------------------------------------------

    @classmethod
    def load(
        cls,
        path: Path | str,
        *,
        provider: str | None = None,
        threads: int | None = None,
        verify_hashes: bool = False,
        variant: str | None = None,
    ) -> Seq2SeqModel:
        """Open an exported model (a directory or an installed model's name).

        provider: "cpu", "cuda" or None (CUDA when onnxruntime-gpu sees a GPU, else CPU).
        variant: "int8" or "fp32"; default int8 on CPU (fp32 if absent), fp32 on CUDA.
        Sizes are always checked against the manifest; hashes too with verify_hashes.
        """
        model_dir = Path(path)
        if not (model_dir / store.MANIFEST).is_file():
            model_dir = store.resolve_model(str(path), kind="seq2seq")
        manifest = store.read_manifest(model_dir)
        name = str(manifest.get("name") or model_dir.name)
        if manifest["kind"] != "seq2seq":
            raise ModelError(f"model '{name}' is a {manifest['kind']} model, not seq2seq")
        if provider not in (None, "cpu", "cuda"):
            raise ModelError(f"unknown provider {provider!r} (use cpu or cuda)")
        if provider == "cuda" and not cuda_available():
            raise ModelError(
                f"the CUDA provider is not available: {ort_probe.cuda_probe().reason}",
                hint="pip install 'scim-edge[gpu]' where a GPU is visible",
            )
        have = manifest["variants"]
        if provider is None:
            provider = "cuda" if cuda_available() and "fp32" in have else "cpu"
        if variant is None:
            variant = "fp32" if provider == "cuda" or "int8" not in have else "int8"
        if variant not in have:
            raise ModelError(
                f"model '{name}' has no {variant} variant",
                hint=f"it has: {', '.join(sorted(have))}",
            )
        if provider == "cuda" and variant == "int8":
            raise ModelError("the int8 variant runs on the CPU provider only; use fp32 on CUDA")
        store.check_sizes(model_dir, variant)
        if verify_hashes:
            problems = store.verify(model_dir)
            if problems:
                raise ModelError(
                    f"model '{name}' failed verification: {problems[0]}",
                    hint="re-import or re-export it",
                )
        files = store.variant_files(model_dir, manifest, variant)
        sessions = {}
        for stem in ("encoder_model", "decoder_model", "decoder_with_past_model"):
            if stem not in files:
                raise ModelError(f"model '{name}' ({variant}) lacks {stem}.onnx")
            sessions[stem] = open_session(
                files[stem], model_name=name, provider=provider, threads=threads
            )
        if (
            provider == "cuda"
            and "CUDAExecutionProvider" not in sessions["decoder_model"].get_providers()
        ):
            provider = "cpu"  # ORT fell back (e.g. CUDA libraries missing)
        model = cls(
            path=model_dir,
            name=name,
            provider=provider,
            variant=variant,
            threads=threads,
            tokenizer=load_tokenizer(model_dir, name),
            sessions=sessions,
            config=read_json(model_dir / "config.json"),
            generation=read_json(model_dir / "generation_config.json"),
        )
        log.info("loaded model '%s': %s", name, model.describe())
        return model

    def describe(self) -> str:
        threads = f", {self.threads} threads" if self.threads else ""
        return f"{self.variant} on {self.provider}{threads}"

    # ---- text ---------------------------------------------------------------------------

    def encode(self, text: str, max_tokens: int | None = None) -> list[int]:
        """Token ids of `text` (ending with EOS), cut to `max_tokens` keeping the final EOS."""
        ids = self.tokenizer.encode(text).ids
        if max_tokens is not None and len(ids) > max_tokens:
            ends_eos = bool(ids) and ids[-1] == self.eos_id
            ids = ids[: max_tokens - 1] + [self.eos_id] if ends_eos else ids[:max_tokens]
        return ids

    def decode(self, ids: list[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True).strip()

    def generate_text(
        self, prompt: str, *, max_input_tokens: int = 1024, **kw: Any
    ) -> tuple[str, int, int]:
        """(answer text, input token count, generated token count)."""
        ids = self.encode(prompt, max_input_tokens)
        kw.setdefault("max_new_tokens", 200)
        out = self.generate(ids, **kw)
        return self.decode(out), len(ids), len(out)

    # ---- generation ---------------------------------------------------------------------

    def generate(self, input_ids: list[int], **kw: Any) -> list[int]:
        """New token ids (with the final EOS when produced), as `transformers.generate`."""
        return self.generate_timed(input_ids, **kw).ids

    def generate_timed(
        self,
        input_ids: list[int],
        *,
        max_new_tokens: int,
        min_new_tokens: int = 0,
        num_beams: int = 1,
        length_penalty: float = 1.0,
        early_stopping: bool | str = False,
        no_repeat_ngram_size: int = 0,
    ) -> Timed:
        if not input_ids:
            raise ValueError("input_ids is empty")
        if max_new_tokens < 1:
            return Timed([], 0.0, 0.0, 0)
        if early_stopping not in (True, False, "never"):
            raise ValueError("early_stopping must be True, False or 'never'")
        kw = (max_new_tokens, min_new_tokens, num_beams, length_penalty, early_stopping,
              no_repeat_ngram_size)  # fmt: skip
        with self._lock:
            try:
                return self._generate(input_ids, *kw)
            except Exception as e:
                if not type(e).__module__.startswith("onnxruntime"):
                    raise
                raise ModelError(
                    f"generation with model '{self.name}' failed in ONNX Runtime: "
                    f"{' '.join(str(e).split())[:200]}",
                    hint=f"run `scim-edge models verify {self.name}`",
                ) from None

    def _generate(
        self,
        input_ids: list[int],
        max_new_tokens: int,
        min_new_tokens: int,
        num_beams: int,
        length_penalty: float,
        early_stopping: bool | str,
        no_repeat_ngram_size: int,
    ) -> Timed:
        t0 = time.perf_counter()
        ids = np.asarray([input_ids], dtype=np.int64)
        mask = np.ones_like(ids)
        io = self._enc_io
        io.clear_binding_inputs()
        io.clear_binding_outputs()
        io.bind_cpu_input("input_ids", ids)
        io.bind_cpu_input("attention_mask", mask)
        io.bind_output("last_hidden_state", self._device)
        self._enc.run_with_iobinding(io)
        hidden = io.get_outputs()[0]
        t1 = time.perf_counter()
        mask_ov = ort.OrtValue.ortvalue_from_numpy(mask, self._device, 0)
        if num_beams <= 1:
            out, steps = self._greedy(
                hidden, mask_ov, max_new_tokens, min_new_tokens, no_repeat_ngram_size
            )
        else:
            out, steps = self._beam(
                hidden,
                mask_ov,
                max_new_tokens,
                min_new_tokens,
                no_repeat_ngram_size,
                num_beams,
                float(length_penalty),
                early_stopping,
            )
        for binding in (self._enc_io, self._dec_io, self._dwp_io):
            binding.clear_binding_inputs()  # drop the cache (~75 MB at 1024 tokens) now,
            binding.clear_binding_outputs()  # not at the next call
        trim_heap()
        t2 = time.perf_counter()
        return Timed(out, t1 - t0, t2 - t1, steps)

    def _first_step(self, hidden: ort.OrtValue, mask_ov: ort.OrtValue):
        """Decoder step 0: logits (1, V), self-attention cache, cross-attention cache."""
        io = self._dec_io
        io.clear_binding_inputs()
        io.clear_binding_outputs()
        io.bind_cpu_input("input_ids", np.array([[self.decoder_start_id]], dtype=np.int64))
        io.bind_ortvalue_input("encoder_attention_mask", mask_ov)
        io.bind_ortvalue_input("encoder_hidden_states", hidden)
        for n in self._dec_out:
            io.bind_output(n, "cpu" if n == "logits" else self._device)
        self._dec.run_with_iobinding(io)
        outs = dict(zip(self._dec_out, io.get_outputs(), strict=True))
        logits = outs["logits"].numpy()[:, -1, :]
        self_kv = {n.replace("present.", "past_key_values."): outs[n] for n in self._self_kv}
        cross = {n.replace("present.", "past_key_values."): outs[n] for n in self._cross_kv}
        return logits, self_kv, cross

    def _step(
        self,
        tokens: np.ndarray,
        mask_ov: ort.OrtValue,
        self_kv: dict[str, ort.OrtValue],
        cross: dict[str, ort.OrtValue],
    ) -> tuple[np.ndarray, dict[str, ort.OrtValue]]:
        """One with-past decoder step: logits (B, V) and the grown self-attention cache."""
        io = self._dwp_io
        io.clear_binding_inputs()
        io.clear_binding_outputs()
        io.bind_cpu_input("input_ids", tokens)
        io.bind_ortvalue_input("encoder_attention_mask", mask_ov)
        for n, v in cross.items():
            io.bind_ortvalue_input(n, v)
        for n, v in self_kv.items():
            io.bind_ortvalue_input(n, v)
        for n in self._dwp_out:
            io.bind_output(n, "cpu" if n == "logits" else self._device)
        self._dwp.run_with_iobinding(io)
        outs = io.get_outputs()
        logits = outs[self._logits_at].numpy()[:, -1, :]
        new_kv = {
            n.replace("present.", "past_key_values."): v
            for n, v in zip(self._dwp_out, outs, strict=True)
            if n != "logits"
        }
        return logits, new_kv

    def _mask(
        self, logits: np.ndarray, seqs: list[list[int]], generated: int, min_new: int, ngram: int
    ) -> None:
        """HF logits processors, in place: EOS banned before min_new_tokens; no-repeat n-grams."""
        if generated < min_new:
            logits[:, self.eos_ids] = NEG_INF
        if ngram > 0:
            for row, seq in enumerate(seqs):
                banned = banned_ngram_tokens(seq, ngram)
                if banned:
                    logits[row, banned] = NEG_INF

    def _greedy(self, hidden, mask_ov, max_new: int, min_new: int, ngram: int):
        logits, self_kv, cross = self._first_step(hidden, mask_ov)
        seq = [self.decoder_start_id]
        eos = set(self.eos_ids)
        tokens = np.empty((1, 1), dtype=np.int64)
        steps = 1
        while True:
            logits = np.array(logits, dtype=np.float32, copy=True)
            self._mask(logits, [seq], len(seq) - 1, min_new, ngram)
            tok = int(logits[0].argmax())
            seq.append(tok)
            if tok in eos or len(seq) - 1 >= max_new:
                return seq[1:], steps
            tokens[0, 0] = tok
            logits, self_kv = self._step(tokens, mask_ov, self_kv, cross)
            steps += 1

    def _reorder(
        self, kv: dict[str, ort.OrtValue], beam_idx: np.ndarray
    ) -> dict[str, ort.OrtValue]:
        out = {}
        for n, v in kv.items():
            arr = np.ascontiguousarray(np.take(v.numpy(), beam_idx, axis=0))
            out[n] = ort.OrtValue.ortvalue_from_numpy(arr, self._device, 0)
        return out

    def _tile_cross(self, cross: dict[str, ort.OrtValue], k: int) -> dict[str, ort.OrtValue]:
        return self._reorder(cross, np.zeros(k, dtype=np.int64))

    def _beam(
        self,
        hidden,
        mask_ov,
        max_new: int,
        min_new: int,
        ngram: int,
        k: int,
        length_penalty: float,
        early_stopping: bool | str,
    ):
        """Beam search, a transcription of transformers' vectorised `_beam_search` (batch 1).

        Each step: score every continuation of the running beams, keep the best `k`
        unfinished ones running (`_beam_select`), merge those that ended into the finished
        set (`_beam_finish`), test the stopping rule (`_beam_done`), then reorder the caches
        and run the decoder once more (`_beam_next`)."""
        logits, self_kv, cross = self._first_step(hidden, mask_ov)
        b = _BeamState.start(
            k, 1 + max_new, logits.shape[-1], self.decoder_start_id, self.eos_id, self.eos_ids
        )
        b.mask_k = mask_ov
        steps = 1
        while True:
            logp = log_softmax(logits.astype(np.float32, copy=False))
            seqs = [b.running[r, : b.cur_len].tolist() for r in range(b.rows)]
            self._mask(logp, seqs, b.cur_len - 1, min_new, ngram)
            cand, top_scores, hits, beam_idx = b.select(logp)
            b.finish(cand, top_scores, hits, length_penalty, early_stopping)
            if b.done(hits, length_penalty, early_stopping):
                break
            logits, self_kv, cross = self._beam_next(b, beam_idx, self_kv, cross, mask_ov)
            steps += 1
        n = int(b.finished_len[0])
        return b.finished[0, 1 : 1 + n].tolist(), steps

    def _beam_next(
        self,
        b: _BeamState,
        beam_idx: np.ndarray,
        self_kv: dict[str, ort.OrtValue],
        cross: dict[str, ort.OrtValue],
        mask_ov: ort.OrtValue,
    ) -> tuple[np.ndarray, dict[str, ort.OrtValue], dict[str, ort.OrtValue]]:
        """g. Reorder the self-attention cache to the surviving beams and run the next step.

        The cross-attention cache stays batch 1 while the graph broadcasts it over the beams;
        a graph that cannot is detected on its first failure and gets a tiled copy once."""
        k = b.k
        if b.rows != k or not np.array_equal(beam_idx, np.arange(k)):
            self_kv = self._reorder(self_kv, beam_idx)
        if b.rows != k and not self._broadcast_cross:
            cross = self._tile_cross(cross, k)
        b.rows = k
        tokens = np.ascontiguousarray(b.running[:, b.cur_len - 1 : b.cur_len])
        if not self._broadcast_cross and b.mask_k is mask_ov:
            b.mask_k = self._tiled_mask(mask_ov, k)
        try:
            logits, self_kv = self._step(tokens, b.mask_k, self_kv, cross)
        except Exception:  # a graph without batch broadcast: tile once (re-raised otherwise)
            if not self._broadcast_cross:
                raise
            self._broadcast_cross = False
            cross = self._tile_cross(cross, k)
            b.mask_k = self._tiled_mask(mask_ov, k)
            logits, self_kv = self._step(tokens, b.mask_k, self_kv, cross)
        return logits, self_kv, cross

    def _tiled_mask(self, mask_ov: ort.OrtValue, k: int) -> ort.OrtValue:
        return ort.OrtValue.ortvalue_from_numpy(
            np.repeat(mask_ov.numpy(), k, axis=0), self._device, 0
        )
