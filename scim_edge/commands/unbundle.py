"""`scim-edge unbundle FILE`: verify a bundle, then install what it holds."""

from __future__ import annotations

import argparse

from scim_edge.commands._args import nonempty_path
from scim_edge.commands._output import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "unbundle",
        help="verify a bundle and install its indexes and models",
        description="Check every file of a bundle against its BUNDLE.json hashes, then "
        "install each index and model atomically. Nothing is installed if any check fails.",
    )
    p.add_argument(
        "file", type=nonempty_path, metavar="FILE", help="a bundle written by scim-edge bundle"
    )
    p.add_argument(
        "--home",
        type=nonempty_path,
        metavar="DIR",
        help="data directory to install into (default: SCIM_EDGE_HOME or the platform's data dir)",
    )
    p.add_argument("--force", action="store_true", help="replace indexes/models that exist")
    p.add_argument("--json", action="store_true", help="print a JSON summary")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from index_builder.progress import TaskProgress  # lazy: start-up
    from scim_edge.bundle import install_bundle

    progress = TaskProgress("verify")
    try:
        result = install_bundle(args.file, args.home, force=args.force, progress=progress)
    finally:
        progress.abort()  # an error message starts on a fresh line
    if args.json:
        print_json(result.to_dict())
        return 0
    print(
        f"verified {result.files} files ({result.bytes / 1e6:,.1f} MB) from "
        f"{result.archive.name}; installed into {result.home}:"
    )
    for u in result.installed:
        extra = f", {u.detail}" if u.detail else ""
        verb = "replaced" if u.replaced else "installed"
        print(f"  {verb} {u.kind} {u.name}{extra} -> {u.target}")
    if any(u.kind == "wheelhouse" for u in result.installed):
        wh = next(u.target for u in result.installed if u.kind == "wheelhouse")
        print(f"  reinstall offline with: pip install --no-index --find-links {wh} scim-edge")
    return 0
