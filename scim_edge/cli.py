"""The `scim-edge` command line.

Each subcommand lives in its own module under `scim_edge.commands` and exposes
`register(subparsers)`, which adds its parser and sets `func(args) -> int`. This module
only discovers them, parses, and turns every user error into one line on stderr and a
non-zero exit: no traceback ever reaches the user.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import signal
import sys
import threading
from collections.abc import Sequence

from scim_edge import __version__
from scim_edge.errors import UserError

PROG = "scim-edge"


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a bad flag on a single line, exit 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        description="Offline question answering over Wikipedia. With no command, opens the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    import scim_edge.commands as commands_pkg

    for info in sorted(pkgutil.iter_modules(commands_pkg.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"scim_edge.commands.{info.name}")
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    args = parser.parse_args(argv)
    # SIGTERM (a service stop, `kill`) unwinds like Ctrl-C, so atomic writers clean up.
    previous = None
    if threading.current_thread() is threading.main_thread():
        global _MAIN_PID
        _MAIN_PID = os.getpid()
        previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return int(args.func(args) or 0)
    except UserError as e:
        sys.stderr.write(f"{PROG}: error: {e.one_line()}\n")
        return e.exit_code
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except MemoryError:
        sys.stderr.write(f"{PROG}: error: out of memory\n")
        return 1
    except OSError as e:
        # Disk full, permission denied and the like: say what and where, one line.
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        sys.stderr.write(f"{PROG}: error: {e.strerror or e}{where}\n")
        return 1
    finally:
        if previous is not None:  # main() may run inside another program (tests, the TUI)
            signal.signal(signal.SIGTERM, previous)


_MAIN_PID = 0


def _terminate(signum: int, frame: object) -> None:
    if os.getpid() != _MAIN_PID:
        os._exit(128 + signum)  # a forked worker: leave quietly, the main process cleans up
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
