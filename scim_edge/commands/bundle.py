"""`scim-edge bundle OUT.tar`: pack indexes, models, NLTK data and wheels for an air gap."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from scim_edge.commands._args import nonempty
from scim_edge.commands._output import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bundle",
        help="write one tar with indexes, models (and NLTK data, wheels) for an offline machine",
        description="Write one tar archive holding the chosen indexes and models, with a "
        "BUNDLE.json of sha256 hashes, to carry to a machine without network. With no "
        "--index and no --model, every installed index and model goes in.",
    )
    p.add_argument(
        "out", type=nonempty, metavar="OUT.tar", help="archive to write (.tar, .tar.gz or .tgz)"
    )
    p.add_argument(
        "--index",
        type=nonempty,
        action="append",
        default=[],
        metavar="NAME",
        help="an index to include (repeatable; a name or an index directory)",
    )
    p.add_argument(
        "--model",
        type=nonempty,
        action="append",
        default=[],
        metavar="NAME",
        help="a model to include (repeatable)",
    )
    p.add_argument(
        "--with-nltk-data",
        action="store_true",
        help="include the NLTK resources found on this machine",
    )
    p.add_argument(
        "--wheelhouse",
        type=Path,
        metavar="DIR",
        help="include a directory of wheels made by `pip download`",
    )
    p.add_argument("--force", action="store_true", help="replace OUT if it exists")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from index_builder.progress import TaskProgress  # lazy: start-up
    from scim_edge.bundle import create_bundle, plan_bundle

    plan = plan_bundle(
        args.index, args.model, with_nltk_data=args.with_nltk_data, wheelhouse=args.wheelhouse
    )
    if args.with_nltk_data and not plan.nltk:
        sys.stderr.write("no NLTK data found on this machine; the bundle has none\n")
    progress = TaskProgress("bundle")
    try:
        result = create_bundle(Path(args.out), plan, force=args.force, progress=progress)
    finally:
        progress.abort()  # an error message starts on a fresh line
    summary = {
        "path": str(result.path),
        "files": result.files,
        "bytes": result.bytes,
        "indexes": result.indexes,
        "models": result.models,
        "nltk_data": result.nltk,
        "wheelhouse_files": result.wheelhouse_files,
        "seconds": round(result.seconds, 3),
    }
    if args.json:
        print_json(summary)
        return 0
    print(
        f"wrote {result.path} ({result.bytes / 1e6:,.1f} MB, {result.files} files, "
        f"{result.seconds:.1f} s)"
    )
    for label, items in (
        ("indexes", result.indexes),
        ("models", result.models),
        ("nltk data", result.nltk),
    ):
        if items:
            print(f"  {label}: {', '.join(items)}")
    if result.wheelhouse_files:
        print(f"  wheelhouse: {result.wheelhouse_files} files")
    print(f"install on the target with: scim-edge unbundle {result.path.name}")
    return 0
