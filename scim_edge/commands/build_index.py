"""`scim-edge build-index DUMP`: build a BM25 passage index from a Wikipedia dump or ZIM.

A build from a file is resumable: after a kill or Ctrl+C, the same command with `--resume`
continues from its last checkpoint (`index_builder.checkpoint`); `--restart` discards it."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

from scim_edge import paths
from scim_edge.commands._args import nonempty, worker_count
from scim_edge.errors import UserError

DEFAULT_NAME = "default"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "build-index",
        help="build a BM25 passage index from a Wikipedia XML dump or a Kiwix ZIM file",
        description="Build a BM25 passage index from a MediaWiki XML dump (.xml, .xml.bz2, "
        "multistream .xml.bz2, .xml.gz, or - for standard input) or a Kiwix ZIM file (.zim, "
        "needs the zim extra). A build from a file checkpoints as it goes: after a kill or "
        "Ctrl+C, run the same command with --resume to continue it.",
    )
    p.add_argument(
        "dump",
        metavar="DUMP",
        nargs="?",
        help="dump file (.xml, .xml.bz2, .xml.gz or .zim), or - for stdin; omit it with "
        "--embeddings to add vectors to an index that exists",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--out", type=nonempty, metavar="DIR", help="write the index to DIR")
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
        type=worker_count,
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
        type=nonempty,
        metavar="MODEL",
        help="also store passage embeddings made by this embedding model (installed name or "
        "directory), for --retriever vector|hybrid; without DUMP, add them to the existing "
        "index --name/--out, reading its passages (not the dump)",
    )
    p.add_argument(
        "--embedding-variant",
        choices=("static", "int8", "fp32"),
        help="the model's variant that writes the vectors (default: int8 on the CPU, fp32 "
        "on CUDA); static: token vectors distilled from the model, ~20x faster and close "
        "in hybrid recall (see the README), for indexes too large for MiniLM on a CPU",
    )
    p.set_defaults(func=run)


def target_dir(out: str | None, name: str | None) -> Path:
    if out:
        return Path(out).expanduser().absolute()
    name = name if name is not None else DEFAULT_NAME
    if not paths.is_plain_name(name) or name != name.strip():
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


def os_failure(e: OSError, dump: str, out: Path) -> str:
    """One line for an OSError of a build, blaming what failed: the dump when the error
    names it (a path too long for the file system, a dump that vanished or became
    unreadable mid-build), else the index being written."""
    name = getattr(e, "filename", None)
    reason = e.strerror or str(e)
    if name is not None and dump != "-" and os.path.abspath(name) == os.path.abspath(dump):
        return f"cannot read the dump {dump}: {reason}"
    where = f" ({name})" if name else ""
    return f"cannot write the index to {out}: {reason}{where}"


def run(args: argparse.Namespace) -> int:
    from index_builder.build import build_index
    from index_builder.progress import ProgressReporter, summary

    if args.embedding_variant and not args.embeddings:
        raise UserError(
            "--embedding-variant needs --embeddings MODEL (the model it is a variant of)"
        )
    if args.dump is None:
        if not args.embeddings:
            raise UserError("give a dump to build from (or --embeddings MODEL to add vectors)")
        return add_vectors(target_dir(args.out, args.name), args.embeddings, args.embedding_variant)
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
            embeddings_variant=args.embedding_variant,
        )
    except UserError:
        reporter.abort()
        raise
    except KeyboardInterrupt:
        reporter.abort()
        sys.stderr.write(f"scim-edge: {interrupted(out, stdin=args.dump == '-')}\n")
        return 130
    except OSError as e:
        reporter.abort()
        raise UserError(os_failure(e, args.dump, out)) from None
    if args.embeddings:
        sys.stderr.write("\n")
    print(summary(manifest, str(out)))
    if "embeddings" in manifest:
        e = manifest["embeddings"]
        print(
            f"embeddings: {e.get('count')} x {e.get('dim')} float16 "
            f"({e.get('model')}, {e.get('variant', 'fp32')})"
        )
    return 0


def interrupted(out: Path, *, stdin: bool = False) -> str:
    """What a Ctrl+C'd build left, in one line. A build that had written no checkpoint has
    nothing to resume from: its hidden partial folder is removed, not offered to --resume.
    A build from standard input never resumes, and leaves another build's partial folder
    of the same index as it was."""
    from index_builder import checkpoint as ck

    work = ck.partial_dir(out)
    before = "was left as it was" if out.exists() else "was not written"
    if stdin:
        return f"build interrupted; {out} {before} (a build from standard input cannot resume)"
    ckpt = ck.Checkpoint.load(work) if work.is_dir() else None
    if ckpt is None or ckpt.position is None:
        if work.is_dir():
            with contextlib.suppress(UserError, OSError), ck.locked(work, wait=0.0):
                ck.discard(work)  # unless another build holds it (its lock)
        return f"build interrupted before its first checkpoint; {out} {before}, nothing was kept"
    return (
        f"build interrupted; {out} {before}; run the same command with --resume to continue "
        f"from the last checkpoint ({ck.describe(work, ckpt)}), or --restart to discard it"
    )


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
    tuning: dict[str, Any] = {"workers": args.workers}  # checked by the parser
    every = args.checkpoint_every
    if every is not None:
        if not every > 0:
            raise UserError(
                f"--checkpoint-every must be a positive number of seconds (got {every})"
            )
        tuning["checkpoint_seconds"] = every
    return words, tuning


def add_vectors(out: Path, model: str, variant: str | None = None) -> int:
    """`build-index --embeddings MODEL --name NAME` without a dump: embed the passages of
    the index that exists and add the vectors to it atomically (an interrupted add
    leaves the index as it was)."""
    from scim_edge.vector_index import add_embeddings

    if not (out / "manifest.json").is_file():
        raise UserError(
            f"no index at {out} to add vectors to",
            hint="build it first: scim-edge build-index DUMP --embeddings MODEL",
        )
    bar = EmbeddingProgress(sys.stderr)
    try:
        with bar:
            meta = add_embeddings(out, model, progress=bar, variant=variant)
    except KeyboardInterrupt:
        sys.stderr.write(f"scim-edge: interrupted; {out} was left as it was\n")
        return 130
    print(
        f"embeddings: {meta['count']} x {meta['dim']} float16 ({meta['model']}, "
        f"{meta.get('variant', 'fp32')}) added to {out} in {bar.elapsed():.1f} s, "
        f"{meta['count'] / max(bar.elapsed(), 1e-9):.0f} passages/s"
    )
    return 0


class EmbeddingProgress:
    """A passages-embedded bar (rich.progress) on a terminal; off one, a plain line every
    few seconds, as the build's own reporter does. Callable as progress(done, total)."""

    def __init__(self, stream: Any, every: float = 5.0) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.every = every
        self._t0 = time.monotonic()
        self._last = self._t0
        self._bar: Any = None
        self._task: Any = None
        self.base_done = 0  # passages already embedded when the clock started

    def __enter__(self) -> EmbeddingProgress:
        self._t0 = self._last = time.monotonic()
        if self.tty:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                TextColumn("embedding passages"),
                BarColumn(),
                TaskProgressColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def elapsed(self) -> float:
        return time.monotonic() - self._t0

    def __call__(self, done: int, total: int) -> None:
        fresh = done - self.base_done
        rate = f"{fresh / max(self.elapsed(), 1e-9):,.0f} passages/s" if fresh > 0 else ""
        if self._bar is not None:
            if self._task is None:
                self._task = self._bar.add_task("embed", total=total, rate=rate)
            self._bar.update(self._task, completed=done, total=total, rate=rate)
            return
        now = time.monotonic()
        if now - self._last >= self.every or done >= total:
            self._last = now
            self.stream.write(f"build-index: embedded {done:,}/{total:,} passages, {rate}\n")
            self.stream.flush()


_build_bar: EmbeddingProgress | None = None


def _embedding_progress(done: int, total: int) -> None:
    """The embedding pass of a build from a dump: the same bar, started on its first
    report and closed on its last."""
    global _build_bar
    if _build_bar is None:
        _build_bar = EmbeddingProgress(sys.stderr).__enter__()
        _build_bar.base_done = done  # the clock starts at the first report
        # an interrupted build must still give the terminal its cursor back
        atexit.register(_build_bar.__exit__, None, None, None)
    _build_bar(done, total)
    if done >= total:
        _build_bar.__exit__(None, None, None)
        _build_bar = None
