"""Where scim-edge keeps its data.

Everything lives under one home directory: platformdirs' user data dir, or
`SCIM_EDGE_HOME` when set (tests and air-gapped installs point it elsewhere).
Directories are created on first use, not at import.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "scim-edge"


def home() -> Path:
    env = os.environ.get("SCIM_EDGE_HOME")
    if env:
        return Path(env).expanduser().resolve()
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
