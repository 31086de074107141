"""Where scim-edge keeps its data.

Everything lives under one home directory: platformdirs' user data dir, or
`SCIM_EDGE_HOME` when set (tests and air-gapped installs point it elsewhere).
Directories are created on first use, not at import.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from scim_edge.errors import UserError

APP = "scim-edge"


def is_plain_name(text: str) -> bool:
    """A name of something installed under the data directory (an index, a model), as
    opposed to a path: no separator, not hidden, not empty."""
    return bool(text) and "/" not in text and "\\" not in text and not text.startswith(".")


def plain_name(text: str) -> str:
    """`text` with the separators a shell's completion adds ("sample/") taken off, when
    what is left is a plain name; else `text` as it is."""
    bare = text.rstrip("/\\")
    return bare if is_plain_name(bare) else text


def home() -> Path:
    """The data home. A SCIM_EDGE_HOME that is blank, or names a file, is a UserError: read
    as a folder it gave "no index installed in FILE/indexes" and paths made of spaces."""
    env = os.environ.get("SCIM_EDGE_HOME")
    if env:
        if not env.strip():
            raise UserError("SCIM_EDGE_HOME is blank", hint="unset it, or name a folder")
        where = Path(env).expanduser().resolve()
        if where.exists() and not where.is_dir():
            raise UserError(f"SCIM_EDGE_HOME names a file, not a folder: {where}",
                            hint="name a folder; it is made on first use")  # fmt: skip
        return where
    return Path(platformdirs.user_data_dir(APP))


def indexes_dir() -> Path:
    return home() / "indexes"


def models_dir() -> Path:
    return home() / "models"


def cache_dir() -> Path:
    return home() / "cache"


def config_path() -> Path:
    env = os.environ.get("SCIM_EDGE_CONFIG")
    if env:
        return Path(env).expanduser()
    return home() / "config.toml"


def nltk_data_dir() -> Path:
    return home() / "nltk_data"
