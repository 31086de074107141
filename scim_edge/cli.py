"""The `scim-edge` command line.

Each subcommand lives in its own module under `scim_edge.commands` and exposes
`register(subparsers)`, which adds its parser and sets `func(args) -> int`. This module
only discovers them, parses, and turns every user error into one line on stderr and a
non-zero exit: no traceback ever reaches the user.

Start-up is paid on every `ask`, so only the command being run is imported (the module
named like it: `build-index` → `commands/build_index.py`); `--help`, a bad command or no
command import them all to list them. Heavy libraries (Textual, ONNX Runtime, tantivy)
are imported inside the commands, when used.
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


def command_modules() -> list[str]:
    """The subcommand module names, found without importing them."""
    import scim_edge.commands as commands_pkg

    return sorted(
        info.name
        for info in pkgutil.iter_modules(commands_pkg.__path__)
        if not info.name.startswith("_")
    )


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; with `command`, only that subcommand's module is imported."""
    parser = OneLineParser(
        prog=PROG,
        description="Offline question answering over Wikipedia. With no command, opens the TUI.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    names = command_modules()
    wanted = command.replace("-", "_") if command else None
    if wanted not in names:
        wanted = None  # unknown or none: register all, so argparse lists the choices
    for name in names:
        if wanted is None or name == wanted:
            importlib.import_module(f"scim_edge.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit status as the return value."""
    try:
        return _main(argv)
    except KeyboardInterrupt:  # in the instant after an error's line, or in the cleanup
        return 130


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    parser = build_parser(None if argv[0].startswith("-") else argv[0])
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
