"""One Settings object for every tunable of the loops.

Values come, in increasing precedence, from: defaults, the chosen profile, the TOML
config file, `SCIM_EDGE_<KEY>` environment variables, then explicit overrides (CLI
flags, the TUI settings screen). A profile named in any layer is applied first and the
explicit values of every layer still win over it, so `--profile high-stakes --theta 0.9`
means what it says.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from scim_edge import paths
from scim_edge.errors import ConfigError

Weights = tuple[float, float, float, float, float]

DEFAULT_WEIGHTS: Weights = (0.25, 0.25, 0.15, 0.25, 0.10)

# Weight sets of the sensitivity study, keyed by name (order: completeness, consistency,
# confidence, factuality, coherence).
WEIGHT_SETS: dict[str, Weights] = {
    "default": DEFAULT_WEIGHTS,
    "uniform": (0.2, 0.2, 0.2, 0.2, 0.2),
    "factuality-heavy": (0.15, 0.15, 0.10, 0.45, 0.15),
    "completeness-heavy": (0.40, 0.20, 0.10, 0.20, 0.10),
    "consistency-heavy": (0.15, 0.40, 0.10, 0.25, 0.10),
    "high-stakes": (0.15, 0.35, 0.10, 0.30, 0.10),
    "education": (0.35, 0.15, 0.15, 0.15, 0.20),
}

PROFILES: dict[str, dict[str, Any]] = {
    "general": {},
    "high-stakes": {
        "theta": 0.80,
        "weights": WEIGHT_SETS["high-stakes"],
        "hallucination_warning": 0.6,
        "review_force_accepted": True,
    },
    "efficiency": {"theta": 0.65, "t_max": 2, "cache_answers": True},
    "education": {"weights": WEIGHT_SETS["education"]},
}

LOOPS = ("scim", "simrag", "standard", "iter-retgen", "fixed-1", "fixed-2", "fixed-3", "single-dim")
# the loops that stop on θ (Algorithm 1), and the one of them that may compare the Critic's
# calibrated confidence with it (`quality`); single-dim, the paper's ablation, keeps its Q
THETA_LOOPS = ("scim", "single-dim")
LEARNED_QUALITY_LOOPS = ("scim",)
CRITICS = ("trained", "heuristic", "model")
QUALITY_MODES = ("auto", "paper", "learned")
# "auto": hybrid (BM25 + MiniLM, fused by reciprocal rank) when the index has passage
# embeddings and their model is installed, BM25 otherwise (scim_edge.passage_search).
RETRIEVERS = ("auto", "bm25", "vector", "hybrid")
RERANKERS = ("none", "hybrid", "embedding")
REWRITERS = ("none", "keyword", "model")


@dataclass
class Settings:
    profile: str = "general"
    loop: str = "scim"
    index: str | None = None  # name or directory; None = the default index
    model: str | None = None  # model name, "extractive", or None = installed or extractive
    # SCIM quality
    weights: Weights = DEFAULT_WEIGHTS
    alpha: float = 0.6
    l_target: int = 30
    # SCIM decision policy (Algorithm 1)
    theta: float = 0.70
    t_max: int = 3
    delta: float = 0.05
    fast_path: bool = False
    fast_path_threshold: float = 0.75
    # What Algorithm 1 compares with θ: the paper's five-dimension Q ("paper"), or the
    # calibrated confidence of the trained Critic ("learned"; θ is then a probability).
    # "auto" is learned when a trained Critic fits the generator, paper otherwise.
    quality: str = "auto"
    augment_threshold: float = 0.7  # completeness below this -> augment mode
    refine_threshold: float = 0.6  # consistency or factuality below this -> refine mode
    # retrieval
    k1: int = 3
    k2: int = 2
    candidates: int = 50
    retriever: str = "auto"
    reranker: str = "none"
    rewriter: str = "none"
    hyde: bool = False
    embedding_model: str | None = None
    # generation
    num_beams: int = 3
    max_new_tokens: int = 200
    min_new_tokens: int = 10
    passage_max_tokens: int = 512
    input_max_tokens: int = 1024
    threads: int | None = None
    # profile extras
    hallucination_warning: float | None = None
    review_force_accepted: bool = False
    cache_answers: bool = False
    # critic loop
    critic: str = "trained"
    critic_model: str | None = None  # a Critic in the model store; None = the index's/default
    max_iterations: int = 3
    critic_max_tokens: int = 4096
    critic_min_consistency: float = 0.6
    critic_min_factuality: float = 0.3
    critic_min_completeness: float = 0.5
    # index building
    passage_words: int = 100

    def replace(self, **changes: Any) -> Settings:
        return validate(dataclasses.replace(self, **changes))

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["weights"] = list(self.weights)
        return d


_FIELDS = {f.name: f for f in fields(Settings)}


def _coerce(key: str, value: Any) -> Any:
    """Turn a TOML/env/flag value into the field's type, or raise naming the key."""
    if key not in _FIELDS:
        raise ConfigError(f"unknown setting '{key}'")
    default = getattr(Settings(), key)
    try:
        if key == "weights":
            if isinstance(value, str):
                if value in WEIGHT_SETS:
                    return WEIGHT_SETS[value]
                value = [float(v) for v in value.split(",")]
            return _five_weights(value)
        return _like_default(key, default, value)
    except (TypeError, ValueError):
        raise ConfigError(f"setting '{key}' has an invalid value: {value!r}") from None


def _five_weights(value: Any) -> tuple[float, ...]:
    """The five quality weights as floats; ValueError for any other count."""
    ws = tuple(float(v) for v in value)
    if len(ws) != 5:
        raise ValueError
    return ws


def _like_default(key: str, default: Any, value: Any) -> Any:
    """`value` in the type of the field's default (bool, int, float or text); TypeError or
    ValueError when it does not read as one."""
    if isinstance(default, bool):
        return _as_bool(value)
    if isinstance(default, int):
        return _as_int(value)
    if isinstance(default, float):
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    if key == "threads":  # None by default (ONNX Runtime's own choice); "4" from the environment
        return None if value is None else _as_int(value)
    if key == "hallucination_warning":  # None by default (no warning); "0.5" from the environment
        return None if value is None else _like_default(key, 0.0, value)
    if value is None or isinstance(value, str):
        return value
    return str(value)


def _as_bool(value: Any) -> bool:
    """A real bool, or the words env vars and flags use for one ("yes", "off", "1", ...)."""
    if isinstance(value, str):
        if value.lower() in ("1", "true", "yes", "on"):
            return True
        if value.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError
    if not isinstance(value, bool):
        raise ValueError
    return value


def _as_int(value: Any) -> int:
    """An int from an int, a whole float or a string of digits; never from a bool (True is
    not 1 in a config file) nor by truncating a fraction."""
    if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
        raise ValueError
    if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
        raise ValueError
    return int(value)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


# Upper bounds, guards against a typo's extra digits: a search asked for 10**11 passages
# allocates for all of them and aborts the process.
MOST_PASSAGES = 10_000  # passages one search may ask for (also `search -k`)
_MOST = {"k1": MOST_PASSAGES, "k2": MOST_PASSAGES, "candidates": MOST_PASSAGES}
_MOST_ANY = 10_000_000
# not per core: a config file written on a larger machine still loads on a smaller one
_MOST_THREADS = 1024


def max_threads() -> int:
    """What `--threads` and `--workers` allow on this machine: 4 per core, a guard against
    a typo's extra digits."""
    return 4 * (os.cpu_count() or 1)


def validate(s: Settings) -> Settings:
    """Check every value's type and range; a ConfigError (also a ValueError) names the key."""

    def bad(key: str, why: str) -> ConfigError:
        return ConfigError(f"setting '{key}' {why} (got {getattr(s, key)!r})")

    for key in (
        "theta",
        "delta",
        "alpha",
        "fast_path_threshold",
        "augment_threshold",
        "refine_threshold",
        "critic_min_consistency",
        "critic_min_factuality",
        "critic_min_completeness",
        "hallucination_warning",  # or None: no warning
    ):
        v = getattr(s, key)
        if v is None and key == "hallucination_warning":
            continue
        if not _is_number(v) or not 0.0 <= v <= 1.0:
            raise bad(key, "must be between 0 and 1")
    for key in (
        "t_max",
        "k1",
        "k2",
        "num_beams",
        "max_new_tokens",
        "max_iterations",
        "critic_max_tokens",
        "passage_max_tokens",
        "input_max_tokens",
        "passage_words",
        "l_target",
        "candidates",
    ):
        v = getattr(s, key)
        if not _is_int(v) or v <= 0:
            raise bad(key, "must be a positive integer")
        if v > (most := _MOST.get(key, _MOST_ANY)):
            raise bad(key, f"must be at most {most:,}")
    if not _is_int(s.min_new_tokens) or s.min_new_tokens < 0 or s.min_new_tokens > s.max_new_tokens:
        raise bad("min_new_tokens", "must be between 0 and max_new_tokens")
    if s.threads is not None and (not _is_int(s.threads) or s.threads <= 0):
        raise bad("threads", "must be a positive integer")
    if s.threads is not None and s.threads > _MOST_THREADS:
        raise bad("threads", f"must be at most {_MOST_THREADS}")
    # `not w >= 0`, not `w < 0`: NaN fails every comparison (an infinity fails the sum)
    if not all(w >= 0 for w in s.weights) or abs(sum(s.weights) - 1.0) > 1e-6:
        raise bad("weights", "must be five non-negative numbers summing to 1")
    choices = {
        "profile": tuple(PROFILES),
        "loop": LOOPS,
        "critic": CRITICS,
        "quality": QUALITY_MODES,
        "retriever": RETRIEVERS,
        "reranker": RERANKERS,
        "rewriter": REWRITERS,
    }
    for key, allowed in choices.items():
        if getattr(s, key) not in allowed:
            raise bad(key, f"must be one of {', '.join(allowed)}")
    return s


def read_config(path: Path | None = None) -> dict[str, Any]:
    """Read the TOML config file (missing file = empty). Keys may sit at top level or
    under a `[settings]` table."""
    path = path or paths.config_path()
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"config file {path} is not valid TOML: {e}") from None
    except RecursionError:  # the parser's, on arrays or tables nested thousands deep
        raise ConfigError(f"config file {path} nests too deeply to be a config") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read config file {path}: {e}") from None
    data = data.get("settings", data)
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: [settings] must be a table")
    return {k.replace("-", "_"): v for k, v in data.items()}


def read_env(environ: dict[str, str] | None = None) -> dict[str, Any]:
    environ = dict(os.environ if environ is None else environ)
    out: dict[str, Any] = {}
    for name, value in environ.items():
        if name.startswith("SCIM_EDGE_") and name not in (
            "SCIM_EDGE_HOME",
            "SCIM_EDGE_CONFIG",
            "SCIM_EDGE_REQUIRE_SHARED",
        ):
            key = name[len("SCIM_EDGE_") :].lower()
            if key in _FIELDS:
                out[key] = value
    return out


def load_settings(
    overrides: dict[str, Any] | None = None,
    *,
    config_file: Path | None = None,
    environ: dict[str, str] | None = None,
    use_config: bool = True,
) -> Settings:
    """Merge defaults < profile < config file < environment < overrides, then validate."""
    layers = [
        read_config(config_file) if use_config else {},
        read_env(environ),
        {k: v for k, v in (overrides or {}).items() if v is not None},
    ]
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            merged[key] = _coerce(key, value)
    profile = merged.get("profile", "general")
    if profile not in PROFILES:
        raise ConfigError(f"unknown profile '{profile}' (choose from {', '.join(PROFILES)})")
    base = dict(PROFILES[profile])
    base.update(merged)
    return validate(Settings(**base))


def save_config(values: dict[str, Any], path: Path | None = None) -> Path:
    """Write settings to the TOML config file atomically (only the keys given)."""
    from scim_edge.atomic import write_text

    path = path or paths.config_path()
    lines = ["# scim-edge settings", "[settings]"]
    for key, value in sorted(values.items()):
        _coerce(key, value)
        if value is None:
            continue
        lines.append(f"{key} = {_toml_value(value)}")
    write_text(path, "\n".join(lines) + "\n")
    return path


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    s = str(v).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{s}"'


__all__ = ["Settings", "load_settings", "save_config", "PROFILES", "WEIGHT_SETS", "LOOPS", "field"]
