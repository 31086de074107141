"""`scim-edge build-index DUMP`: build a BM25 passage index from a Wikipedia dump or ZIM.

A build from a file is resumable: after a kill or Ctrl+C, the same command with `--resume`
continues from its last checkpoint (`index_builder.checkpoint`); `--restart` discards it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from scim_edge import paths
from scim_edge.errors import UserError

DEFAULT_NAME = "default"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build-index",
        help="build a BM25 passage index from a Wikipedia XML dump or a Kiwix ZIM file",
        description="Build a BM25 passage index from a MediaWiki XML dump (.xml, .xml.bz2, "
        "multistream .xml.bz2, or - for standard input) or a Kiwix ZIM file (.zim, needs the "
        "zim extra). A build from a file checkpoints as it goes: after a kill or Ctrl+C, run "
        "the same command with --resume to continue it.",
    )
    p.add_argument(
        "dump", metavar="DUMP", help="dump file (.xml, .xml.bz2 or .zim), or - for stdin"
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", metavar="DIR", help="write the index to DIR")
    where.add_argument(
        "--name",
        metavar="NAME",
        help=f"install the index under this name in the indexes directory (default: "
        f"{DEFAULT_NAME})",
    )
    p.add_argument("--force", action="store_true", help="replace an existing index")
    p.add_argument(
        "--multistream-index",
        metavar="FILE",
        help="index file of a multistream dump (default: the -index.txt.bz2 beside it)",
    )
    p.add_argument(
        "--passage-words",
        type=int,
        metavar="N",
        default=None,
        help="about how many words per passage (default: the passage_words setting, 100)",
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        default=None,
        help="worker processes that read and clean pages (default: every core)",
    )
    again = p.add_mutually_exclusive_group()
    again.add_argument(
        "--resume",
        action="store_true",
        help="continue an interrupted build of this index from its last checkpoint",
    )
    again.add_argument(
        "--restart",
        action="store_true",
        help="discard an interrupted build of this index and start over",
    )
    p.add_argument(
        "--checkpoint-every",
        type=float,
        metavar="SECONDS",
        default=None,
        help="commit and checkpoint this often (default: 30); a resumed build redoes at most "
        "this much work",
    )
    p.add_argument(
        "--embeddings",
        metavar="MODEL",
        help="also store passage embeddings made by this embedding model (installed name or "
        "directory), for --retriever vector|hybrid",
    )
    p.set_defaults(func=run)


def target_dir(out: str | None, name: str | None) -> Path:
    if out:
        return Path(out).expanduser().absolute()
    name = name if name is not None else DEFAULT_NAME
    if not name or name.startswith(".") or "/" in name or "\\" in name or name != name.strip():
        raise UserError(f"invalid index name {name!r}: use letters, digits, '-' or '_'")
    return paths.indexes_dir() / name


def check_target(out: Path, force: bool) -> None:
    """Refuse targets that are not ours to replace, before reading a byte of the dump."""
    if out.exists() and not out.is_dir():
        raise UserError(f"cannot write the index to {out}: it exists and is not a directory")
    if force and out.is_dir() and any(out.iterdir()) and not (out / "manifest.json").exists():
        raise UserError(f"refusing to replace {out}: it is not a scim-edge index")
    parent = out.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise UserError(f"cannot write the index to {out}: {parent} is not a directory")


def run(args: argparse.Namespace) -> int:
    from index_builder.build import build_index
    from index_builder.progress import ProgressReporter, summary

    words, tuning = _build_options(args)
    out = target_dir(args.out, args.name)
    check_target(out, args.force)
    reporter = ProgressReporter(sys.stderr)
    try:
        manifest = build_index(
            args.dump,
            out,
            force=args.force,
            passage_words=words,
            multistream_index=args.multistream_index,
            progress=reporter,
            resume=args.resume,
            restart=args.restart,
            **tuning,
            embeddings_model=args.embeddings,
            embeddings_progress=_embedding_progress if args.embeddings else None,
        )
    except UserError:
        reporter.abort()
        raise
    except KeyboardInterrupt:
        reporter.abort()
        sys.stderr.write(f"scim-edge: build interrupted; {out} was left as it was\n")
        if args.dump != "-":
            sys.stderr.write(
                "scim-edge: to continue from the last checkpoint, run the same command with "
                "--resume (or --restart to discard it)\n"
            )
        return 130
    except OSError as e:
        reporter.abort()
        where = f" ({e.filename})" if getattr(e, "filename", None) else ""
        raise UserError(f"cannot write the index to {out}: {e.strerror or e}{where}") from None
    if args.embeddings:
        sys.stderr.write("\n")
    print(summary(manifest, str(out)))
    if "embeddings" in manifest:
        e = manifest["embeddings"]
        print(f"embeddings: {e.get('count')} x {e.get('dim')} float16 ({e.get('model')})")
    return 0


def _build_options(args: argparse.Namespace) -> tuple[int, dict[str, Any]]:
    """Checked --passage-words (or the setting), and the workers/checkpoint arguments."""
    if not args.dump.strip():
        raise UserError("the dump path is empty (give a file, or - for standard input)")
    words = args.passage_words
    if words is None:
        from scim_edge.settings import load_settings

        words = load_settings().passage_words
    if words <= 0:
        raise UserError(f"--passage-words must be a positive number (got {words})")
    tuning: dict[str, Any] = {"workers": args.workers}
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be 1 or more (got {args.workers})")
    every = args.checkpoint_every
    if every is not None:
        if not every > 0:
            raise UserError(
                f"--checkpoint-every must be a positive number of seconds (got {every})"
            )
        tuning["checkpoint_seconds"] = every
    return words, tuning


def _embedding_progress(done: int, total: int) -> None:
    sys.stderr.write(f"\rembedding passages {done}/{total}")
    sys.stderr.flush()
