"""`scim-edge search QUERY`: show the top BM25 passages for a plain-text query."""

from __future__ import annotations

import argparse
import sys

from scim_edge.commands._args import nonempty
from scim_edge.commands._output import is_tty, print_json
from scim_edge.commands._preflight import check_index
from scim_edge.errors import UserError

BOLD = ("\x1b[1m", "\x1b[0m")
PLAIN = ("[", "]")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="search an index and print the top passages")
    p.add_argument("query", metavar="QUERY", help="plain text; punctuation is not syntax")
    p.add_argument("--index", type=nonempty, metavar="NAME|DIR", help="index name or directory")
    p.add_argument("-k", type=int, default=5, help="number of passages (default 5)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from scim_edge.retrieval import BM25Retriever, resolve_index_dir
    from scim_edge.settings import MOST_PASSAGES, load_settings
    from scim_edge.textutil import typed_text

    if args.k <= 0:
        raise UserError(f"-k must be a positive number (got {args.k})")
    if args.k > MOST_PASSAGES:
        raise UserError(f"-k must be at most {MOST_PASSAGES:,} (got {args.k})")
    query = typed_text(args.query, "query")
    # --index, else SCIM_EDGE_INDEX or the config file's `index`, as `ask` reads them
    index = load_settings(overrides={"index": args.index}).index
    check_index(index)
    retriever = BM25Retriever.open(resolve_index_dir(index))
    hits = retriever.search(query, args.k)
    if args.json:
        print_json(
            [
                {
                    "doc_id": p.doc_id,
                    "title": p.title,
                    "section": p.section,
                    "score": round(p.score, 4),
                    "text": p.text,
                }
                for p in hits
            ]
        )
        return 0
    print(format_hits(retriever, query, hits, mark=BOLD if is_tty(sys.stdout) else PLAIN))
    return 0


def format_hits(retriever, query: str, hits, *, mark: tuple[str, str] = PLAIN) -> str:
    if not hits:
        return f"no passages match {query!r} in index {retriever.name}"
    lines = []
    for i, p in enumerate(hits, 1):
        where = f"{p.title} › {p.section}" if p.section else p.title
        lines.append(f"{i}. {where}  (BM25 {p.score:.2f}, {p.doc_id})")
        lines.append("   " + retriever.snippet(p, query, mark=mark))
    lines.append(
        f"[{len(hits)} of {retriever.passage_count:,} passages, index {retriever.name}; "
        "ranked by BM25 with the query's neighbouring words kept together counted again, so "
        "the words' own BM25 shown need not fall; text from Wikipedia, CC BY-SA]"
    )
    return "\n".join(lines)
