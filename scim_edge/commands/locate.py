"""`scim-edge locate`: print where indexes, models and config live."""

from __future__ import annotations

import argparse

from scim_edge import paths
from scim_edge.commands._output import print_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("locate", help="print where indexes, models and the config file live")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    where = {
        "home": str(paths.home()),
        "indexes": str(paths.indexes_dir()),
        "models": str(paths.models_dir()),
        "config": str(paths.config_path()),
        "nltk_data": str(paths.nltk_data_dir()),
    }
    if args.json:
        print_json(where)
    else:
        width = max(map(len, where))
        for key, value in where.items():
            print(f"{key:<{width}}  {value}")
    return 0
