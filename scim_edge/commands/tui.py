"""`scim-edge tui`: the interactive terminal UI (also what `scim-edge` alone opens)."""

from __future__ import annotations

import argparse
import sys

from scim_edge.commands._args import nonempty
from scim_edge.errors import UserError
from scim_edge.settings import LOOPS, PROFILES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tui", help="open the interactive terminal UI (the default command)")
    p.add_argument(
        "--index",
        type=nonempty,
        metavar="NAME",
        help="index name or directory (default: the installed one)",
    )
    p.add_argument("--model", type=nonempty, metavar="NAME", help="model name, or 'extractive'")
    p.add_argument("--loop", choices=LOOPS, help="loop to run (default: scim)")
    p.add_argument("--profile", choices=tuple(PROFILES), help="settings profile")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from scim_edge.commands._preflight import check_index, check_model
    from scim_edge.settings import load_settings

    settings = load_settings(
        {"index": args.index, "model": args.model, "loop": args.loop, "profile": args.profile}
    )
    # A wrong index or model is one line and exit 2 before the UI opens, never a broken UI.
    check_index(args.index)
    check_model(settings.model)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError(
            "the terminal UI needs an interactive terminal",
            hint="use `scim-edge ask QUESTION` in scripts",
        )
    from tui.app import make_app  # Textual loads only when the UI is wanted

    make_app(settings).run()
    return 0
