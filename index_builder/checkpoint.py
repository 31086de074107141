"""Checkpoints of a resumable build: where it is, what it was built from, and the lock.

A build of `…/NAME` happens in the hidden sibling `…/.partial-NAME` (the Tantivy index, the
SQLite side tables and `checkpoint.json`); only a finished build is swapped into `…/NAME`,
so a checkpoint is never visible under the index name. A checkpoint is taken every
`checkpoint_seconds` at a clean cut of the source (a whole group of multistream bz2
streams, a bz2 block range plus the page fragment that straddles it, a count of pages for
sources that cannot seek, ZIM entries done), in this order:

1. `committing.json` says how many results since the last checkpoint are about to go in;
2. the Tantivy writer commits, then the SQLite side tables commit;
3. `checkpoint.json` is replaced atomically and `committing.json` removed.

A kill between 1 and 3 leaves Tantivy holding passages past the checkpoint; on resume the
builder deletes them by `doc_id` before it adds those pages again (`replay_results`), and
the side tables drop rows past the checkpoint's batch number. So a resumed build has the same
passages and counts as one that was never interrupted.

The fingerprint (the source's path, size, mtime and first/last bytes, and the options that
change the index) must match for `--resume`; anything else is refused in one line.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from scim_edge import jsonl
from scim_edge.atomic import PARTIAL_PREFIX, write_text
from scim_edge.errors import UserError

CHECKPOINT = "checkpoint.json"
COMMITTING = "committing.json"
LOCK = ".lock"
FORMAT = 1
SAMPLE_BYTES = 1 << 16  # head and tail bytes of the source hashed into the fingerprint


def partial_dir(target: Path) -> Path:
    """Where the resumable build of `target` lives (hidden, beside it)."""
    return target.parent / f"{PARTIAL_PREFIX}{target.name}"


def source_fingerprint(path: Path, extra: Path | None = None) -> dict[str, Any]:
    """Identity of a dump file: resolved path, size, mtime and a hash of its first and last
    64 KiB (cheap on a 20 GB file, and catches a dump replaced by another of equal size)."""
    st = path.stat()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        h.update(f.read(SAMPLE_BYTES))
        f.seek(max(0, st.st_size - SAMPLE_BYTES))
        h.update(f.read(SAMPLE_BYTES))
    out: dict[str, Any] = {
        "path": str(path.resolve()),
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "sample_sha256": h.hexdigest(),
    }
    if extra is not None:
        est = extra.stat()
        out["index_file"] = {"path": str(extra.resolve()), "size": est.st_size}
    return out


@dataclass
class Checkpoint:
    """The durable state of a build at its last commit."""

    source: dict[str, Any]  # source_fingerprint
    options: dict[str, Any]  # options that change the index (passage words, embeddings, …)
    position: dict[str, Any] | None = None  # reader position; None: nothing committed yet
    batches: int = 0  # results added up to this checkpoint
    counters: dict[str, Any] = field(default_factory=dict)
    analyzer: str = ""
    lang: str | None = None
    phase: str = "reading"  # reading | aliases (the pass over the dump is complete)
    elapsed: float = 0.0  # build seconds spent in earlier runs
    runs: int = 1
    format: int = FORMAT
    saved_at: float = 0.0

    def save(self, work: Path) -> None:
        self.saved_at = time.time()
        write_text(work / CHECKPOINT, json.dumps(asdict(self), ensure_ascii=False) + "\n")
        _sync_dir(work)

    @classmethod
    def load(cls, work: Path) -> Checkpoint | None:
        try:
            data = jsonl.loads((work / CHECKPOINT).read_text(encoding="utf-8"))
            if data.get("format") != FORMAT:
                return None
            return cls(**data)
        except (OSError, ValueError, TypeError):
            return None

    def done_fraction(self) -> float:
        pos = self.position or {}
        size = self.source.get("size") or 0
        if self.phase != "reading":
            return 1.0
        return min(1.0, pos.get("bytes_read", 0) / size) if size else 0.0


def mismatch(old: Checkpoint, source: dict[str, Any], options: dict[str, Any]) -> str | None:
    """Why a checkpoint cannot be resumed with this source and these options (None: it can)."""
    if old.source.get("path") != source.get("path"):
        return f"it was started from {old.source.get('path')}, not {source.get('path')}"
    for key, what in (("size", "size"), ("mtime_ns", "modification time"),
                      ("sample_sha256", "content")):  # fmt: skip
        if old.source.get(key) != source.get(key):
            return f"{source.get('path')} changed since it was started (its {what} differs)"
    if old.source.get("index_file") != source.get("index_file"):
        return "it was started with a different multistream index file"
    for key in sorted(set(old.options) | set(options)):
        if old.options.get(key) != options.get(key):
            flag = "--" + key.replace("_", "-")
            return f"it was started with {flag} {old.options.get(key)}, not {options.get(key)}"
    return None


def committing(work: Path) -> int:
    """Results past the checkpoint that may already be in the Tantivy index (see module doc)."""
    try:
        return int(jsonl.loads((work / COMMITTING).read_text(encoding="utf-8"))["results"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def mark_committing(work: Path, results: int) -> None:
    write_text(work / COMMITTING, json.dumps({"results": results}) + "\n")
    _sync_dir(work)


def _sync_dir(work: Path) -> None:
    """Make a rename in `work` durable: after a power cut the marker or checkpoint is there
    whenever the Tantivy commit that follows it is."""
    try:
        fd = os.open(work, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def clear_committing(work: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(work / COMMITTING)


def describe(work: Path, ckpt: Checkpoint | None) -> str:
    """`… (42% of enwiki.xml.bz2 done, checkpoint 3 min ago)`, for the refusal message."""
    if ckpt is None:
        return f"{work} (no checkpoint yet)"
    ago = max(0.0, time.time() - ckpt.saved_at)
    when = f"{ago / 60:.0f} min ago" if ago >= 60 else f"{ago:.0f} s ago"
    name = Path(str(ckpt.source.get("path", "?"))).name
    return f"{ckpt.done_fraction() * 100:.0f}% of {name} done, last checkpoint {when}"


_HELD: set[int] = set()  # lock fds this process holds


def _close_held_in_child() -> None:
    # A forked worker must not keep the build's lock alive after its parent is killed.
    for fd in _HELD:
        with contextlib.suppress(OSError):
            os.close(fd)
    _HELD.clear()


os.register_at_fork(after_in_child=_close_held_in_child)


@contextlib.contextmanager
def locked(work: Path, wait: float = 3.0) -> Iterator[None]:
    """Hold an exclusive lock on the partial build; a second build of the same index is
    refused instead of writing into it. The kernel drops the lock when the process dies."""
    fd = os.open(work / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise UserError(f"another build is writing {work} right now") from None
                time.sleep(0.1)
        _HELD.add(fd)
        yield
    finally:
        _HELD.discard(fd)
        os.close(fd)


def discard(work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
