"""`scim-edge demo`: build the embedded demo index, search it and ask it a question.

The only command a new user needs to see the whole job run: no dump, no model to supply.
"""

from __future__ import annotations

import argparse
import sys

from scim_edge import paths
from scim_edge.commands._output import is_tty
from scim_edge.wording import counted


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="build the embedded demo index, then run a sample search and question"
    )
    p.add_argument("--force", action="store_true", help="rebuild the demo index")
    p.add_argument("--no-question", action="store_true", help="only build and search")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from index_builder.build import build_index
    from scim_edge.commands.search import BOLD, PLAIN, format_hits
    from scim_edge.demo import DEMO_INDEX_NAME, DEMO_QUERY, DEMO_QUESTION, demo_dump_path
    from scim_edge.retrieval import BM25Retriever

    out = paths.indexes_dir() / DEMO_INDEX_NAME
    if args.force or not (out / "manifest.json").exists():
        m = build_index(demo_dump_path(), out, force=True)
        c = m["counts"]
        print(
            f"Built the demo index at {out}: {c['articles']} articles, {c['passages']} passages, "
            f"{c['aliases']} redirect aliases, "
            f"{counted(c['disambiguation'], 'disambiguation page')}."
        )
    else:
        print(f"Using the demo index at {out} (--force rebuilds it).")
    retriever = BM25Retriever.open(out)
    print(f"\n$ scim-edge search {DEMO_QUERY!r} --index {DEMO_INDEX_NAME} -k 3")
    hits = retriever.search(DEMO_QUERY, 3)
    print(format_hits(retriever, DEMO_QUERY, hits, mark=BOLD if is_tty(sys.stdout) else PLAIN))
    if args.no_question:
        return 0
    return _ask(DEMO_QUESTION, DEMO_INDEX_NAME)


def _ask(question: str, index_name: str) -> int:
    print(f"\n$ scim-edge ask {question!r} --index {index_name}")
    try:
        import scim_edge.generation
        import scim_edge.loops.scim  # noqa: F401
        from scim_edge.engine import Engine
        from scim_edge.settings import load_settings
    except ImportError as e:
        print(f"(question answering is not available in this build: {e.name} is missing)")
        return 0
    settings = load_settings({"index": index_name})
    engine = Engine.open(settings)
    answer = engine.answer(question)
    from scim_edge.commands.ask import format_answer

    print(format_answer(answer))  # as `scim-edge ask` says it: answer, support, confidence
    return 0
