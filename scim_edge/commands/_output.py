"""Small output helpers shared by the subcommands."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, indent=2) + "\n")


def is_tty(stream: Any = None) -> bool:
    stream = stream or sys.stderr
    return bool(getattr(stream, "isatty", lambda: False)())
