"""`scim-edge eval QA.jsonl`: compare the loops on a QA set, the way the SCIM study did."""

from __future__ import annotations

import argparse
import shlex
import sys
from datetime import UTC, datetime
from pathlib import Path

from scim_edge.commands._args import nonempty, nonempty_path, positive_int
from scim_edge.commands._output import print_json
from scim_edge.commands._preflight import check_index
from scim_edge.errors import UserError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="evaluate the loops on a QA set (JSON Lines) and write a report",
        description="Run every chosen system on the same questions, index, generator and "
        "settings; write report.md, results.json, per_question.jsonl and plots to --out.",
    )
    p.add_argument(
        "qa_file",
        metavar="QA.jsonl",
        type=nonempty,
        help="one JSON object a line: question, answers (list; [] = unanswerable), "
        "optional id, type, titles",
    )
    p.add_argument(
        "--systems",
        help="comma-separated loops (default: standard,iter-retgen,"
        "scim,fixed-1,fixed-2,fixed-3,single-dim,simrag; default with --sweep: none); "
        "also the upper bounds simrag-oracle and scim-oracle, which read the gold answers",
    )
    p.add_argument(
        "--index", type=nonempty, help="index name or directory (default: the default index)"
    )
    p.add_argument(
        "--model", type=nonempty, help="model name, or 'extractive' for the built-in generator"
    )
    p.add_argument(
        "--profile", help="settings profile (general, high-stakes, efficiency, education)"
    )
    p.add_argument("--limit", type=positive_int, help="use only the first N questions")
    p.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    p.add_argument(
        "--out", type=nonempty_path, help="output directory (default ./eval-<timestamp>)"
    )
    p.add_argument("--json", action="store_true", help="print results.json to stdout")
    p.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted run in --out, skipping finished questions",
    )
    p.add_argument(
        "--sweep",
        action="append",
        default=[],
        metavar="KEY=V1,V2,...",
        help="sensitivity sweep of scim over theta, delta or weights (repeatable)",
    )
    p.add_argument("--no-plots", action="store_true", help="do not draw PNG plots")
    p.add_argument(
        "--warmup",
        choices=("full", "first", "none"),
        default="full",
        help="untimed warm-up before each system's timed pass: every question (default; "
        "fair timings, twice the run time), the first question only, or none",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from scim_edge.engine import Engine
    from scim_edge.evaluation import harness
    from scim_edge.evaluation.oracle import ORACLE_SYSTEMS
    from scim_edge.evaluation.qa_io import load_qa
    from scim_edge.evaluation.report import ORACLE_FOOTNOTE, main_table, sensitivity_lines
    from scim_edge.settings import load_settings
    from scim_edge.wording import counted

    sweeps = [harness.parse_sweep(s) for s in args.sweep]
    if args.systems is None and sweeps:
        systems: list[str] = []
    else:
        systems = harness.parse_systems(args.systems)
    qa_path = Path(args.qa_file)
    items = load_qa(qa_path)
    if args.limit:
        items = items[: args.limit]
    if args.resume and args.out is None:
        raise UserError("--resume needs --out DIR, the directory of the interrupted run")
    out = args.out or Path(f"eval-{datetime.now(UTC).strftime('%Y%m%d-%H%M%S')}")
    if out.exists() and not out.is_dir():
        raise UserError(f"{out} is a file; --out names the folder the report is written to")

    settings = load_settings({"profile": args.profile, "index": args.index, "model": args.model})
    check_index(settings.index)
    runs = harness.plan_runs(settings, systems, sweeps)
    engine = Engine.open(settings)
    progress = harness.Progress()
    harness.check_loops(runs, engine)  # a mistake found here is one line, before any note
    notes = [
        *engine.notes,
        f"{counted(len(items), 'question')} x {counted(len(runs), 'run')}; "
        f"index {engine.index_name}, "
        f"generator {getattr(engine.generator, 'name', '?')}; writing to {out}",
    ]
    try:
        results = harness.evaluate(
            engine,
            items,
            runs,
            out,
            qa_file=str(qa_path),
            qa_bytes=qa_path.read_bytes(),
            seed=args.seed,
            resume=args.resume,
            progress=progress,
            make_plots=not args.no_plots,
            warmup=args.warmup,
            notes=notes,
        )
    except KeyboardInterrupt:
        sys.stderr.write(
            f"finished questions are kept in {out / harness.PER_QUESTION}; "
            f"continue with: {resume_command(args, out)}\n"
        )
        raise
    if args.json:
        from scim_edge.evaluation.report import jsonable

        print_json(jsonable(results))
        return 0
    lines = []
    if results["systems"]:
        lines += main_table(results)
        if any(k in ORACLE_SYSTEMS for k in results["systems"]):
            lines += ["", ORACLE_FOOTNOTE]
    if results["sensitivity"]:
        lines += ["", *sensitivity_lines(results["sensitivity"])]
    lines += ["", f"report: {out / 'report.md'}", f"results: {out / 'results.json'}"]
    print("\n".join(lines))
    return 0


def resume_command(args: argparse.Namespace, out: Path) -> str:
    """The command that continues an interrupted run: the same QA file and every option
    that decides what is run (index, model, profile, systems, sweeps, limit, seed,
    warm-up, plots), so resuming neither refuses nor quietly runs other systems."""
    words = ["scim-edge", "eval", str(args.qa_file)]
    for flag, value in (("--index", args.index), ("--model", args.model),
                        ("--profile", args.profile), ("--systems", args.systems),
                        ("--limit", args.limit)):  # fmt: skip
        if value is not None:
            words += [flag, str(value)]
    for sweep in args.sweep:
        words += ["--sweep", sweep]
    if args.seed:
        words += ["--seed", str(args.seed)]
    if args.warmup != "full":
        words += ["--warmup", args.warmup]
    if args.no_plots:
        words.append("--no-plots")
    words += ["--out", str(out), "--resume"]
    return shlex.join(words)
