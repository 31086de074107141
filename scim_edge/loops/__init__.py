"""The loops: SCIM, its baselines and the SIM-RAG-style critic loop.

`make_loop(settings, engine)` is the one factory; it imports lazily so a loop's
optional dependencies cost nothing unless that loop is chosen.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scim_edge.errors import UserError
from scim_edge.settings import LOOPS, Settings

if TYPE_CHECKING:
    from scim_edge.engine import Engine, Loop


def make_loop(settings: Settings, engine: Engine) -> Loop:
    name = settings.loop
    if name not in LOOPS:
        raise UserError(f"unknown loop '{name}' (choose from {', '.join(LOOPS)})")
    if name == "simrag":
        from scim_edge.loops.simrag import SimRagLoop

        return SimRagLoop(settings, engine)
    from scim_edge.loops.scim import make_scim_family_loop

    return make_scim_family_loop(name, settings, engine)
