"""Generation speed of the ONNX Runtime generator on a Flan-T5-base-shaped model.

A random-initialised model with Flan-T5-base's exact configuration (compute per token
equals the real model's) is exported through the project's own export (fp32 + int8), then
with 1024 input tokens, 32 new tokens (forced with min_new_tokens), CPU, 2 threads,
medians of 5 runs after a warm-up:

  (a) our generator (models.seq2seq), int8, greedy and beam 3;
  (b) transformers PyTorch fp32 `generate`, greedy and beam 3;
  (c) a bare ONNX Runtime loop over the same int8 graphs (encoder once, then with-past
      decoder steps, argmax): the floor.

The machine is shared, so (a)+(c) (one process, no torch) and (b) (its own process) load
once and are then timed in lockstep rounds (c, a greedy, a beam 3, b greedy, b beam 3),
after two warm-up rounds: load from other processes hits every contender alike. Peak RSS
is measured in a fresh process that loads the int8 model and generates (greedy and beam
3, twice). Also recorded: export and quantisation times, on-disk size of both variants.

    python benchmarks/bench_generate.py [--work DIR] [--runs 5] [--threads 2] [--only timing|rss]

With --work DIR the exported model is kept there and reused by the next run (only the
timings are redone); --only reruns one part and merges it into the results file. Writes
benchmarks/results/generate.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_output import fail, workdir, write_json

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "generate.json"
INPUT_TOKENS = 1024
NEW_TOKENS = 32
NAME = "flan-shape"
TARGETS = {
    "greedy_a_over_c_max": 1.10,
    "greedy_b_over_a_min": 3.0,
    "beam3_over_greedy_a_max": 1.6,
    "peak_rss_mb_max": 1024,
}


def input_ids(vocab_hi: int = 32000) -> list[int]:
    import numpy as np

    rng = np.random.default_rng(0)
    return rng.integers(3, vocab_hi, size=INPUT_TOKENS - 1).tolist() + [1]


# ---- child processes -------------------------------------------------------------------


def serve_ours(model_dir: str, threads: int) -> None:
    """(a) and (c) in one process (no torch here); runs one op per line read from stdin."""
    import numpy as np
    import onnxruntime as ort

    from models.seq2seq import Seq2SeqModel, session_options

    ids = input_ids()
    model = Seq2SeqModel.load(model_dir, provider="cpu", variant="int8", threads=threads)
    d = Path(model_dir) / "int8"
    opts = session_options(threads)
    cpu = ["CPUExecutionProvider"]
    enc = ort.InferenceSession(str(d / "encoder_model.onnx"), opts, providers=cpu)
    dec = ort.InferenceSession(str(d / "decoder_model.onnx"), opts, providers=cpu)
    dwp = ort.InferenceSession(str(d / "decoder_with_past_model.onnx"), opts, providers=cpu)
    dec_names = [o.name for o in dec.get_outputs()]
    dwp_names = [o.name for o in dwp.get_outputs()]

    def bare() -> list[int]:
        x = np.asarray([ids], dtype=np.int64)
        mask = np.ones_like(x)
        hidden = enc.run(None, {"input_ids": x, "attention_mask": mask})[0]
        start = np.array([[0]], dtype=np.int64)
        feeds = {
            "input_ids": start,
            "encoder_attention_mask": mask,
            "encoder_hidden_states": hidden,
        }
        outs = dec.run(None, feeds)
        past = {
            n.replace("present.", "past_key_values."): v
            for n, v in zip(dec_names[1:], outs[1:], strict=True)
        }
        logits = outs[0]
        out = []
        for step in range(NEW_TOKENS):
            row = logits[0, -1].copy()
            row[1] = -np.inf  # new tokens forced, as min_new_tokens does
            tok = int(row.argmax())
            out.append(tok)
            if step == NEW_TOKENS - 1:
                break
            tokens = np.array([[tok]], dtype=np.int64)
            outs = dwp.run(None, {"input_ids": tokens, "encoder_attention_mask": mask, **past})
            logits = outs[0]
            for n, v in zip(dwp_names[1:], outs[1:], strict=True):
                past[n.replace("present.", "past_key_values.")] = v
        return out

    kw = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS)
    print(json.dumps({"provider": model.provider, "variant": model.variant}), flush=True)
    for line in sys.stdin:
        op = line.strip()
        t = time.perf_counter()
        if op == "bare":
            res: dict = {"tokens": bare()}
        elif op == "greedy":
            r = model.generate_timed(ids, **kw)
            res = {"tokens": r.ids, "encoder_s": r.encoder_s, "decoder_s": r.decoder_s}
        elif op == "beam3":
            res = {"tokens": model.generate(ids, num_beams=3, **kw)}
        else:
            raise SystemExit(f"unknown op {op}")
        res["s"] = time.perf_counter() - t
        res["torch_imported"] = "torch" in sys.modules
        print(json.dumps(res), flush=True)


def serve_pytorch(src_dir: str, threads: int) -> None:
    """(b): transformers fp32 generate; runs one op per line read from stdin."""
    import torch
    from transformers import T5ForConditionalGeneration

    torch.set_num_threads(threads)
    model = T5ForConditionalGeneration.from_pretrained(src_dir).eval()
    x = torch.tensor([input_ids()])
    print(json.dumps({"torch": torch.__version__}), flush=True)
    for line in sys.stdin:
        beams = {"greedy": 1, "beam3": 3}[line.strip()]
        kw = dict(max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, num_beams=beams)
        t = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(x, do_sample=False, **kw)[0].tolist()[1:]
        print(json.dumps({"s": time.perf_counter() - t, "tokens": out}), flush=True)


class Server:
    """A child process that loads once, then times one op per request."""

    def __init__(self, which: str, *args: str) -> None:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", which, *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        self.info = self._read()

    def _read(self) -> dict:
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"benchmark child failed (exit {self.proc.wait()})")
        return json.loads(line)

    def call(self, op: str) -> dict:
        self.proc.stdin.write(op + "\n")
        self.proc.stdin.flush()
        res = self._read()
        time.sleep(0.5)  # let the other process's idle threads stop spinning
        return res

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait()


def time_all(model_dir: Path, src: Path, threads: int, runs: int, warmup: int = 2) -> dict:
    """(a), (b), (c) in lockstep rounds, so machine load hits all of them alike."""
    ours = Server("ours", str(model_dir), str(threads))
    torch_ = Server("pytorch", str(src), str(threads))
    plan = [(ours, "bare"), (ours, "greedy"), (ours, "beam3"), (torch_, "greedy"),
            (torch_, "beam3")]  # fmt: skip
    keys = ["c_greedy", "a_greedy", "a_beam3", "b_greedy", "b_beam3"]
    runs_s: dict[str, list[float]] = {k: [] for k in keys}
    enc, dec, tokens = [], [], {}
    try:
        for i in range(warmup + runs):
            print(f"round {i + 1}/{warmup + runs}", file=sys.stderr)
            for (server, op), key in zip(plan, keys, strict=True):
                res = server.call(op)
                tokens[key] = res["tokens"]
                if i < warmup:
                    continue
                runs_s[key].append(res["s"])
                if key == "a_greedy":
                    enc.append(res["encoder_s"])
                    dec.append(res["decoder_s"])
    finally:
        ours.close()
        torch_.close()
    return {
        **{f"{k}_runs_s": v for k, v in runs_s.items()},
        "a_greedy_encoder_s": statistics.median(enc),
        "a_greedy_decoder_s": statistics.median(dec),
        "same_tokens_a_vs_c": tokens["a_greedy"] == tokens["c_greedy"],
        "same_tokens_a_vs_b_greedy": tokens["a_greedy"] == tokens["b_greedy"],
        "same_tokens_a_vs_b_beam3": tokens["a_beam3"] == tokens["b_beam3"],
        "provider": ours.info["provider"],
        "variant": ours.info["variant"],
    }


def peak_rss_mb() -> float:
    """This process's own RSS high-water mark (VmHWM).

    Not getrusage's ru_maxrss: Linux carries that across fork/exec, so a child of the
    exporting parent would report the parent's multi-GB export peak.
    """
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_rss(model_dir: str, threads: int) -> dict:
    """Peak RSS of a process that loads the int8 model and generates (greedy, beam 3)."""
    from models.seq2seq import Seq2SeqModel

    ids = input_ids()
    model = Seq2SeqModel.load(model_dir, provider="cpu", variant="int8", threads=threads)
    after_load = peak_rss_mb()
    for beams in (1, 3, 1, 3):
        model.generate(ids, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, num_beams=beams)
    peak = peak_rss_mb()
    return {
        "peak_rss_after_load_mb": round(after_load, 1),
        "peak_rss_mb": round(peak, 1),
        "torch_imported": "torch" in sys.modules,
        "transformers_imported": "transformers" in sys.modules,
    }


def run_child(which: str, *args: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, __file__, "--child", which, *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{which} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---- driver ----------------------------------------------------------------------------


def prepare(work: Path) -> tuple[Path, Path, dict]:
    """Make the Flan-T5-base-shaped model and export it (reused when already there)."""
    src = work / "flan-shape-hf"
    home = work / "home"
    model_dir = home / "models" / NAME
    os.environ["SCIM_EDGE_HOME"] = str(home)
    if not (src / "config.json").is_file():
        sys.path.insert(0, str(ROOT / "tests" / "fixtures"))
        from make_flan_shape import make_flan_shape

        print("making the Flan-T5-base-shaped random model...", file=sys.stderr)
        make_flan_shape(src)
    if not (model_dir / "manifest.json").is_file():
        from models.export import export_model

        t = time.perf_counter()
        export_model(str(src), name=NAME, log=lambda s: print(s, file=sys.stderr))
        print(f"export + quantise: {time.perf_counter() - t:.1f} s", file=sys.stderr)
    from models.store import read_manifest

    return src, model_dir, read_manifest(model_dir)


def med(xs: list[float]) -> float:
    return round(statistics.median(xs), 4)


def parse_args() -> argparse.Namespace:
    """The command line; a bad value is one line on stderr and exit 2."""
    from scim_edge.cli import OneLineParser
    from scim_edge.commands._args import nonempty, positive_int

    ap = OneLineParser(prog="bench_generate", description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=nonempty, help="keep/reuse the exported model here")
    ap.add_argument("--runs", type=positive_int, default=5)
    ap.add_argument("--threads", type=positive_int, default=2)
    ap.add_argument(
        "--only",
        choices=("timing", "rss"),
        help="rerun just that part and merge it into the existing results file "
        "(for a noisy shared machine)",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rest and not (args.serve or args.child):  # only the child processes take these
        ap.error(f"unrecognized arguments: {' '.join(args.rest)}")
    return args


def earlier_raw(only: str | None) -> dict:
    """The raw figures of the results file that `--only` merges its part into ({} without
    --only). UserError when there is none to merge into: no file, not JSON, or without the
    part that is not rerun."""
    if only is None:
        return {}
    from scim_edge.errors import UserError

    other = "rss" if only == "timing" else "timing"
    try:
        raw = json.loads(OUT.read_text(encoding="utf-8")).get("raw", {})
    except OSError as e:
        raise UserError(f"--only {only} merges into {OUT}: {e.strerror or e}") from None
    except (ValueError, AttributeError):
        raise UserError(f"--only {only} merges into {OUT}, which is not a result") from None
    if other not in raw:
        raise UserError(f"--only {only} merges into {OUT}, which has no {other} figures "
                        "(run without --only first)")  # fmt: skip
    return raw


def main() -> int:
    from scim_edge.errors import UserError

    args = parse_args()
    conv = [int(a) if a.isdigit() else a for a in args.rest]
    if args.serve:
        {"ours": serve_ours, "pytorch": serve_pytorch}[args.serve](*conv)
        return 0
    if args.child:
        print(json.dumps({"rss": child_rss}[args.child](*conv)))
        return 0

    try:
        raw = earlier_raw(args.only)
        work = None if args.work is None else workdir(args.work, "--work", "bench-generate-")
    except UserError as e:
        return fail(e.one_line(), e.exit_code)
    tmp = None
    if work is None:
        tmp = tempfile.TemporaryDirectory(prefix="bench-generate-")
        work = Path(tmp.name)
    src, model_dir, manifest = prepare(work)
    if args.only in (None, "timing"):
        print("timing (a), (b), (c) in lockstep rounds...", file=sys.stderr)
        raw["timing"] = time_all(model_dir, src, args.threads, args.runs)
    if args.only in (None, "rss"):
        print("measuring peak RSS...", file=sys.stderr)
        raw["rss"] = run_child("rss", str(model_dir), str(args.threads))
    ac = b = raw["timing"]
    rss = raw["rss"]

    sizes = {
        v: sum(e["size"] for e in spec["files"].values())
        for v, spec in manifest["variants"].items()
    }
    a_greedy, a_beam, c_greedy = (
        med(ac["a_greedy_runs_s"]),
        med(ac["a_beam3_runs_s"]),
        med(ac["c_greedy_runs_s"]),
    )
    result: dict = {
        "model": "random-initialised, Flan-T5-base configuration",
        "input_tokens": INPUT_TOKENS,
        "new_tokens": NEW_TOKENS,
        "threads": args.threads,
        "runs": args.runs,
        "provider": ac["provider"],
        "variant": ac["variant"],
        "a_ours_int8_greedy_s": a_greedy,
        "a_ours_int8_greedy_encoder_s": round(ac["a_greedy_encoder_s"], 4),
        "a_ours_int8_greedy_decoder_s": round(ac["a_greedy_decoder_s"], 4),
        "a_ours_int8_beam3_s": a_beam,
        "c_bare_ort_int8_greedy_s": c_greedy,
        "a_and_c_same_tokens": ac["same_tokens_a_vs_c"],
        "a_and_b_same_tokens": {
            "greedy": ac["same_tokens_a_vs_b_greedy"],
            "beam3": ac["same_tokens_a_vs_b_beam3"],
        },
        "ratio_greedy_a_over_c": round(a_greedy / c_greedy, 3),
        "ratio_beam3_over_greedy_a": round(a_beam / a_greedy, 3),
        "peak_rss_mb": rss["peak_rss_mb"],
        "peak_rss_after_load_mb": rss["peak_rss_after_load_mb"],
        "rss_process_imported_torch": rss["torch_imported"] or rss["transformers_imported"],
        "export_s": manifest.get("timings_s", {}).get("export"),
        "quantize_s": manifest.get("timings_s", {}).get("quantize"),
        "size_mb": {v: round(s / 1e6, 1) for v, s in sizes.items()},
        "runs_s": {k: [round(x, 4) for x in v] for k, v in ac.items() if k.endswith("_runs_s")},
        "targets": TARGETS,
        "machine": {
            "cpus": os.cpu_count(),
            "loadavg_1m": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
        },
        "exporter": manifest.get("exporter", {}),
        "raw": raw,
    }
    if b:
        b_greedy, b_beam = med(b["b_greedy_runs_s"]), med(b["b_beam3_runs_s"])
        result.update(
            {
                "b_pytorch_fp32_greedy_s": b_greedy,
                "b_pytorch_fp32_beam3_s": b_beam,
                "ratio_greedy_b_over_a": round(b_greedy / a_greedy, 3),
                "ratio_beam3_b_over_a": round(b_beam / a_beam, 3),
            }
        )
    result["meets"] = {
        "greedy_a_within_1.10x_of_c": result["ratio_greedy_a_over_c"] <= 1.10,
        "greedy_a_3x_faster_than_b": result.get("ratio_greedy_b_over_a", 0) >= 3.0,
        "beam3_a_within_1.6x_of_greedy_a": result["ratio_beam3_over_greedy_a"] <= 1.6,
        "peak_rss_under_1gb": result["peak_rss_mb"] < 1024,
    }
    if rc := write_json(OUT, result):
        return rc
    print(
        json.dumps(
            {k: v for k, v in result.items() if k not in ("runs_s", "exporter", "raw")}, indent=2
        )
    )
    if tmp is not None:
        tmp.cleanup()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
