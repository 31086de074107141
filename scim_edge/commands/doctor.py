"""`scim-edge doctor`: check this machine can answer questions offline."""

from __future__ import annotations

import argparse
import sys

from scim_edge.commands._output import is_tty, print_json

_MARK = {"ok": "ok", "warning": "WARN", "error": "ERROR"}
_COLOUR = {"ok": "\x1b[32m", "warning": "\x1b[33m", "error": "\x1b[31m"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check versions, data dirs, indexes, models, ONNX Runtime, NLTK, disk, offline use",
        description="Check that this machine can answer questions offline. Exits 1 when "
        "any check is an error.",
    )
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument(
        "--hashes",
        action="store_true",
        help="also re-hash every model file and check every index file's checksum (slow)",
    )
    p.add_argument(
        "--no-network-check",
        action="store_true",
        help="skip the test question run with the network blocked",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from scim_edge.doctor import run_checks, summary  # lazy: start-up

    checks = run_checks(hashes=args.hashes, network=not args.no_network_check)
    counts = summary(checks)
    if args.json:
        print_json(
            {"ok": counts["error"] == 0, "summary": counts, "checks": [c.to_dict() for c in checks]}
        )
        return 1 if counts["error"] else 0
    colour = is_tty(sys.stdout)
    group = None
    for c in checks:
        if c.group != group:
            group = c.group
            print(f"{group}:")
        mark = f"{_MARK[c.status]:<5}"
        if colour:
            mark = f"{_COLOUR[c.status]}{mark}\x1b[0m"
        print(f"  {mark}  {c.name}: {c.detail}")
        if c.hint and c.status != "ok":
            print(f"         fix: {c.hint}")
    w, e = counts["warning"], counts["error"]
    print(f"{counts['ok']} ok, {w} warning{'s' * (w != 1)}, {e} error{'s' * (e != 1)}")
    return 1 if counts["error"] else 0
