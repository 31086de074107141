"""Atomic writes: nothing half-written is ever visible under its final name.

A directory (an index, a model) is built in a hidden temporary sibling and renamed
into place; an existing target is swapped out by rename and only then removed, so a
reader holding the old one keeps working and a crash at any point leaves either the
old or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from scim_edge import libc
from scim_edge.errors import UserError

TMP_PREFIX = ".tmp-"
OLD_PREFIX = ".old-"


def write_text(path: Path, text: str) -> None:
    """Write a small text file atomically (temp file + fsync + rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp's files are private; use the usual mode
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def clear_stale(parent: Path, name: str) -> None:
    """Remove leftovers of killed writers for target `name` (temp and old dirs)."""
    if not parent.is_dir():
        return
    for child in parent.iterdir():
        if child.name.startswith((f"{TMP_PREFIX}{name}-", f"{OLD_PREFIX}{name}-")):
            pid = child.name.rsplit("-", 2)[-2] if child.name.count("-") >= 2 else ""
            if pid.isdigit() and alive(int(pid)) and int(pid) != os.getpid():
                continue  # another live writer owns it
            shutil.rmtree(child, ignore_errors=True)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def ensure_writable_dir(path: Path) -> Path:
    """Create `path` if needed and check we may write there; a one-line UserError if not."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UserError(f"cannot create {path}: {e.strerror or e}") from None
    if not os.access(path, os.W_OK):
        raise UserError(f"cannot write to {path}: permission denied")
    return path


@contextlib.contextmanager
def atomic_dir(target: Path, *, force: bool = False, what: str = "directory") -> Iterator[Path]:
    """Yield a fresh temporary directory; on success rename it to `target`.

    On any exception (including KeyboardInterrupt) the temporary directory is removed
    and `target` is untouched. Without `force`, an existing target is an error.
    """
    target = Path(target)
    parent = ensure_writable_dir(target.parent)
    if target.exists() and not force:
        raise UserError(f"{what} already exists: {target}", hint="use --force to replace it")
    clear_stale(parent, target.name)
    tmp = parent / f"{TMP_PREFIX}{target.name}-{os.getpid()}-{os.urandom(3).hex()}"
    tmp.mkdir()
    try:
        yield tmp
        swap_into_place(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def swap_into_place(src: Path, target: Path) -> None:
    """Put `src` at `target`. An existing target is exchanged in one atomic step where the
    OS allows it (Linux renameat2 RENAME_EXCHANGE), so a reader opening `target` never
    finds it missing; elsewhere it falls back to two renames."""
    if target.exists() and _exchange(src, target):
        shutil.rmtree(src, ignore_errors=True)  # src now holds the old target
        return
    old: Path | None = None
    if target.exists():
        old = target.parent / f"{OLD_PREFIX}{target.name}-{os.getpid()}-{os.urandom(3).hex()}"
        os.rename(target, old)
    try:
        os.rename(src, target)
    except BaseException:
        if old is not None:
            os.rename(old, target)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths with renameat2(RENAME_EXCHANGE); False if unsupported."""
    renameat2 = libc.function("renameat2")
    if renameat2 is None:
        return False
    at_fdcwd, rename_exchange = -100, 2
    rc = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return rc == 0


PARTIAL_PREFIX = ".partial-"  # a resumable build in progress (index_builder.checkpoint)


def is_hidden_temp(name: str) -> bool:
    return name.startswith((TMP_PREFIX, OLD_PREFIX, PARTIAL_PREFIX))
