"""`scim-edge models`: export, import, list, verify, remove and bench ONNX models."""

from __future__ import annotations

import argparse
import statistics
import sys

from scim_edge.commands._args import (
    bounded_int,
    missing_command,
    nonempty,
    positive_int,
    thread_count,
)
from scim_edge.commands._output import is_tty, print_json
from scim_edge.errors import ModelError

# Longer inputs than this only measure the allocator (T5 models are trained on 512).
MAX_BENCH_INPUT_TOKENS = 4096


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="install and inspect ONNX models (generator, embeddings)")
    msub = p.add_subparsers(dest="models_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: missing_command(p))

    e = msub.add_parser("export", help="export a Hugging Face model to ONNX (needs [export])")
    e.add_argument(
        "--from",
        dest="source",
        required=True,
        metavar="HF_ID_OR_DIR",
        help="a hub id (uses the network) or a local model directory (offline)",
    )
    e.add_argument("--name", help="name in the store (default: from the source)")
    e.add_argument(
        "--kind",
        choices=("seq2seq", "embedding"),
        help="default: embedding for sentence-transformers dirs, else seq2seq",
    )
    e.add_argument(
        "--no-quantize",
        action="store_true",
        help="skip the int8 CPU variant (keep full precision only)",
    )
    e.add_argument("--force", action="store_true", help="replace an installed model of that name")
    e.add_argument("--verbose", action="store_true", help="show the exporter's own output")
    e.set_defaults(func=run_export)

    i = msub.add_parser("import", help="install an already exported model directory")
    i.add_argument("dir", type=nonempty, metavar="DIR")
    i.add_argument("--name")
    i.add_argument("--force", action="store_true")
    i.set_defaults(func=run_import)

    ls = msub.add_parser("list", help="list installed models")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=run_list)

    v = msub.add_parser("verify", help="re-hash model files against their manifest")
    v.add_argument("name", nargs="?", help="default: every installed model")
    v.set_defaults(func=run_verify)

    r = msub.add_parser("remove", help="remove an installed model")
    r.add_argument("name")
    r.set_defaults(func=run_remove)

    b = msub.add_parser("bench", help="time generation on this machine")
    b.add_argument("name")
    b.add_argument("--input-tokens", type=bounded_int(MAX_BENCH_INPUT_TOKENS), default=1024)
    b.add_argument("--new-tokens", type=bounded_int(MAX_BENCH_INPUT_TOKENS), default=32)
    b.add_argument("--beams", type=bounded_int(16), default=1)
    b.add_argument("--threads", type=thread_count)
    b.add_argument("--provider", choices=("cpu", "cuda"))
    b.add_argument("--variant", choices=("int8", "fp32"))
    b.add_argument("--runs", type=positive_int, default=5, help=argparse.SUPPRESS)
    b.add_argument("--json", action="store_true")
    b.set_defaults(func=run_bench)


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def run_export(args: argparse.Namespace) -> int:
    from index_builder.progress import TaskProgress
    from models.export import export_model

    progress = TaskProgress("export", unit="steps")
    say = progress.note
    try:
        path = export_model(
            args.source,
            name=args.name,
            kind=args.kind,
            quantize=not args.no_quantize,
            force=args.force,
            verbose=args.verbose,
            log=say,
            progress=progress,
        )
    finally:
        progress.abort()
    from models.store import read_manifest

    m = read_manifest(path)
    t = m.get("timings_s", {})
    extra = "".join(
        f", {stage} {t[stage]:.1f} s"
        for stage in ("quantize", "distill")
        if t.get(stage) is not None
    )
    say(f"export {t.get('export', 0):.1f} s{extra}")
    print(
        f"installed {m['kind']} model '{path.name}' ({', '.join(sorted(m['variants']))}) at {path}"
    )
    return 0


def run_import(args: argparse.Namespace) -> int:
    from models.store import import_model

    path = import_model(args.dir, name=args.name, force=args.force)
    print(f"imported model '{path.name}' at {path}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from models.store import list_models

    infos = list_models()
    if args.json:
        print_json([i.as_dict() for i in infos])
        return 0
    if not infos:
        print("no models installed (scim-edge models export --from DIR_OR_HUB_ID)")
        return 0
    width = max(len(i.name) for i in infos)
    for i in infos:
        if i.problem:
            print(f"{i.name:<{width}}  BROKEN: {i.problem}")
        else:
            variants = ",".join(i.variants)
            print(
                f"{i.name:<{width}}  {i.kind:<9}  {variants:<9}  "
                f"{_human(i.size_bytes):>9}  {i.source}"
            )
    return 0


def run_verify(args: argparse.Namespace) -> int:
    from models.store import list_models, resolve_model, verify

    if args.name:
        targets = [(args.name, resolve_model(args.name, kind=None))]
    else:
        targets = [(i.name, i.path) for i in list_models()]
        if not targets:
            print("no models installed")
            return 0
    bad = 0
    for name, path in targets:
        if is_tty():
            sys.stderr.write(f"verifying {name}...\n")
        problems = verify(path)
        if problems:
            bad += 1
            print(f"{name}: {len(problems)} problem(s)")
            for p in problems:
                print(f"  {p}")
        else:
            print(f"{name}: ok")
    if bad:
        raise ModelError(
            f"{bad} model(s) failed verification",
            hint="re-import or re-export them (scim-edge models import DIR --force)",
        )
    return 0


def run_remove(args: argparse.Namespace) -> int:
    from models.store import remove

    path = remove(args.name)
    print(f"removed model '{args.name}' ({path})")
    return 0


def run_bench(args: argparse.Namespace) -> int:
    import numpy as np

    from models.seq2seq import Seq2SeqModel
    from models.store import resolve_model

    model = Seq2SeqModel.load(
        resolve_model(args.name, kind="seq2seq"),
        provider=args.provider,
        threads=args.threads,
        variant=args.variant,
    )
    rng = np.random.default_rng(0)
    hi = max(4, int(model.tokenizer.get_vocab_size()))
    ids = rng.integers(3, hi, size=args.input_tokens - 1).tolist() + [model.eos_id]
    kw = dict(max_new_tokens=args.new_tokens, min_new_tokens=args.new_tokens, num_beams=args.beams)
    runs = []
    try:
        model.generate_timed(ids, **kw)  # warm-up
        for _ in range(args.runs):
            r = model.generate_timed(ids, **kw)
            runs.append((r.encoder_s + r.decoder_s, r.encoder_s, r.decoder_s))
    except (RuntimeError, MemoryError) as e:  # ONNX Runtime's failures (e.g. bad_alloc)
        first = " ".join(str(e).split())[:160]
        raise ModelError(f"generation failed for model '{args.name}': {first}") from None
    median = statistics.median(t for t, _, _ in runs)
    result = {
        "median_s": round(median, 4),
        "encoder_s": round(statistics.median(e for _, e, _ in runs), 4),
        "decoder_s": round(statistics.median(d for _, _, d in runs), 4),
        "provider": model.provider,
        "variant": model.variant,
        "input_tokens": args.input_tokens,
        "new_tokens": args.new_tokens,
        "beams": args.beams,
    }
    if args.json:
        print_json(result)
    else:
        print(
            f"{model.name}: {result['median_s']:.3f} s median of {args.runs} "
            f"(encoder {result['encoder_s']:.3f} s, decoder {result['decoder_s']:.3f} s) "
            f"for {args.input_tokens} input tokens, {args.new_tokens} new tokens, "
            f"beams {args.beams}; {model.variant} on {model.provider}"
        )
    return 0
