"""The install that README names gives exactly one ONNX Runtime, and it offers CUDA.

`onnxruntime` and `onnxruntime-gpu` both install the module `onnxruntime`; a `[gpu]` extra
added on top of a base `onnxruntime` gave both, the CPU build won and CUDA was never
offered. These tests install the project into a fresh virtual environment with pip (from
the package index, so they need it reachable; they skip when pip cannot connect) and check
what a user gets. No GPU is needed: the provider list is compiled into the build, and on a
machine without CUDA nothing may print ONNX Runtime's load errors.

Measured on 2 cores with pip's cache warm: 78 s for the base install (the module
fixture) and 62 s for the `[gpu]` resolution, 144 s for the file; so they are marked slow.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NO_NETWORK = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "No address associated with hostname",
)

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (platform.system() == "Linux" and platform.machine() == "x86_64"),
        reason="onnxruntime-gpu is the base dependency on Linux x86_64 only",
    ),
]


def _clean_env(home: Path) -> dict[str, str]:
    """The caller's environment without anything that would make the venv see other code."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PIP_REQUIRE_VIRTUALENV")
        and not k.startswith("SCIM_EDGE_NETGUARD")
    }
    env["SCIM_EDGE_HOME"] = str(home)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _pip(venv: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    if proc.returncode != 0 and any(s in proc.stdout + proc.stderr for s in NO_NETWORK):
        pytest.skip("pip cannot reach the package index from here")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory):
    base = tmp_path_factory.mktemp("gpu-install")
    venv = base / "venv"
    env = _clean_env(base / "home")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    _pip(venv, env, "install", "--quiet", str(ROOT))
    return venv, env


def _run(venv: Path, env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "python"), "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(venv.parent),
    )


def test_fresh_install_has_one_onnxruntime_distribution(fresh_venv):
    venv, env = fresh_venv
    code = (
        "import json; from importlib import metadata; "
        "print(json.dumps(sorted(metadata.packages_distributions().get('onnxruntime', []))))"
    )
    proc = _run(venv, env, code)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == ["onnxruntime-gpu"]


def test_fresh_install_offers_cuda(fresh_venv):
    venv, env = fresh_venv
    proc = _run(venv, env, "import onnxruntime as o; print(o.get_available_providers())")
    assert proc.returncode == 0, proc.stderr
    assert "CUDAExecutionProvider" in proc.stdout


def test_fresh_install_probes_cuda_quietly(fresh_venv):
    """Asking whether CUDA may be used prints nothing, on a machine with or without it."""
    venv, env = fresh_venv
    proc = _run(venv, env, "from models.seq2seq import cuda_available; cuda_available()")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout + proc.stderr == ""


def test_fresh_install_doctor_prints_no_onnxruntime_errors(fresh_venv):
    venv, env = fresh_venv
    proc = subprocess.run(
        [str(venv / "bin" / "scim-edge"), "doctor"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(venv.parent),
    )
    assert "onnxruntime-gpu" in proc.stdout
    assert "[E:onnxruntime" not in proc.stdout + proc.stderr
    assert "[W:onnxruntime" not in proc.stdout + proc.stderr


def test_gpu_extra_brings_cuda_libraries_and_no_second_onnxruntime(tmp_path):
    """`pip install "scim-edge[gpu]"` resolves to onnxruntime-gpu alone plus the CUDA 13 and
    cuDNN 9 libraries it loads (resolved, not downloaded: they are over a gigabyte)."""
    venv = tmp_path / "venv"
    env = _clean_env(tmp_path / "home")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, env=env)
    report = tmp_path / "report.json"
    _pip(venv, env, "install", "--quiet", "--dry-run", "--report", str(report), f"{ROOT}[gpu]")
    names = {i["metadata"]["name"].lower() for i in json.loads(report.read_text())["install"]}
    assert {n for n in names if n.startswith("onnxruntime")} == {"onnxruntime-gpu"}
    assert "nvidia-cudnn-cu13" in names
    assert "nvidia-cuda-runtime" in names
    assert "nvidia-cublas" in names
