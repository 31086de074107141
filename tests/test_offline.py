"""No network, proven: the whole `ask` path runs with every socket entry point refused.

The strict guard (tests/netguard.py) refuses internet sockets and name lookups in this
process and, through a `sitecustomize` on PYTHONPATH, in every Python child process; each
attempt is also logged, so an attempt that some library catches and hides still fails the
test. The first tests prove the guard catches what it claims to; the rest run the real
path (index, generator, loop) under it, through the engine, the CLI in-process and the
CLI as a child process.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import netguard
import pytest

from scim_edge.cli import main

ROOT = Path(__file__).resolve().parents[1]
HUB_MODULES = ("torch", "transformers", "huggingface_hub", "optimum", "requests", "httpx")
QUESTION = "Who invented the movable-type printing press in Europe?"


@pytest.fixture
def strict_guard(no_network: Path) -> Path:
    """The suite-wide guard (conftest) with its attempt log, for tests that read it."""
    return no_network


def _forget(log: Path) -> list[str]:
    """Read and clear the log (for tests that make attempts on purpose)."""
    lines = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    log.unlink(missing_ok=True)
    return lines


def exported_tiny_t5(tmp_path_factory) -> Path:
    """A tiny random T5 exported through `scim-edge models export`, once per session.

    Returns the model directory (inside a throwaway home); tests copy it into their own
    home. Skips when the export extra is not installed."""
    import importlib.util

    for extra in ("torch", "transformers", "optimum"):
        if importlib.util.find_spec(extra) is None:
            pytest.skip(f"the export extra is not installed ({extra} missing)")
    base = tmp_path_factory.getbasetemp() / "tiny-t5-export"
    model = base / "home" / "models" / "tiny-t5"
    if (model / "manifest.json").is_file():
        return model
    env = {**os.environ, "SCIM_EDGE_HOME": str(base / "home")}
    for key in (netguard.LOG_ENV, "PYTHONPATH"):
        env.pop(key, None)
    hf = base / "hf"
    run = [sys.executable, str(ROOT / "tests" / "fixtures" / "make_tiny_t5.py"), str(hf)]
    subprocess.run(run, check=True, env=env, capture_output=True, timeout=300)
    export = [sys.executable, "-m", "scim_edge", "models", "export", "--from", str(hf),
              "--name", "tiny-t5", "--force"]  # fmt: skip
    r = subprocess.run(export, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return model


def install_model(src: Path, home: Path) -> Path:
    dst = home / "models" / src.name
    shutil.copytree(src, dst)
    return dst


# ---- the guard itself ------------------------------------------------------------------


def test_strict_guard_catches_every_entry_point(strict_guard):
    attempts = [
        lambda: socket.create_connection(("example.org", 80), timeout=1),
        lambda: socket.getaddrinfo("example.org", 443),
        lambda: socket.gethostbyname("example.org"),
        lambda: socket.gethostbyname_ex("example.org"),
        lambda: socket.gethostbyaddr("192.0.2.1"),
        lambda: socket.getnameinfo(("192.0.2.1", 80), 0),
    ]
    for attempt in attempts:
        with pytest.raises(netguard.NetworkUsed):
            attempt()
    for kind, op in (
        (socket.SOCK_STREAM, lambda s: s.connect(("192.0.2.1", 80))),
        (socket.SOCK_STREAM, lambda s: s.connect_ex(("192.0.2.1", 80))),
        (socket.SOCK_DGRAM, lambda s: s.sendto(b"x", ("192.0.2.1", 53))),
        (socket.SOCK_DGRAM, lambda s: s.sendmsg([b"x"], [], 0, ("192.0.2.1", 53))),
        (socket.SOCK_STREAM, lambda s: s.bind(("0.0.0.0", 0))),
    ):
        with socket.socket(socket.AF_INET, kind) as s, pytest.raises(netguard.NetworkUsed):
            op(s)
    # Unix sockets are not network: event loops and pipes keep working.
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"ok")
        assert b.recv(2) == b"ok"
    assert len(_forget(strict_guard)) == 11


def test_strict_guard_sees_an_attempt_that_was_swallowed(strict_guard):
    try:
        socket.create_connection(("192.0.2.1", 80), timeout=1)
    except Exception:  # noqa: BLE001 - a library that hides the failure
        pass
    with pytest.raises(netguard.NetworkUsed, match="192.0.2.1"):
        netguard.check_log(strict_guard)
    _forget(strict_guard)


def test_strict_guard_reaches_child_processes(strict_guard):
    code = (
        "import socket\n"
        "try:\n"
        "    socket.create_connection(('192.0.2.1', 80), timeout=1)\n"
        "except Exception as e:\n"
        "    print(type(e).__name__)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "NetworkUsed", (r.stdout, r.stderr)
    lines = _forget(strict_guard)
    assert len(lines) == 1 and "192.0.2.1" in lines[0] and f"pid {os.getpid()}" not in lines[0]


@pytest.mark.allow_loopback
def test_declared_loopback_passes_and_the_internet_still_does_not(strict_guard):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        with socket.create_connection(server.getsockname(), timeout=5) as client:
            conn, _ = server.accept()
            with conn:
                client.sendall(b"hi")
                assert conn.recv(2) == b"hi"
    with socket.socket() as s, pytest.raises(netguard.NetworkUsed):
        s.connect(("192.0.2.1", 80))
    assert len(_forget(strict_guard)) == 1


# ---- the ask path under the guard ------------------------------------------------------


@pytest.mark.parametrize("loop", ["scim", "simrag"])
def test_ask_extractive_in_process(strict_guard, demo_index, capsys, loop):
    rc = main(["ask", QUESTION, "--index", str(demo_index), "--model", "extractive",
               "--loop", loop, "--json"])  # fmt: skip
    out = capsys.readouterr()
    assert rc == 0, out.err
    answer = json.loads(out.out)
    assert answer["loop"] == loop
    assert answer["answer"].strip()
    assert answer["iterations"], "the loop ran no iteration"
    # retrieval and the reader ran offline; what the Critic then decides (simrag may
    # reject a first reading at 46%) is not this test's business
    first = answer["iterations"][0]
    assert "Printing press" in first["new_titles"].values()
    assert first["answer"] == "Johannes Gutenberg"


def test_ask_cli_child_process_imports_no_hub_code(strict_guard, demo_index):
    """`scim-edge ask` as a user runs it, in a child process guarded by sitecustomize;
    the child also reports which hub/HTTP packages it imported (must be none)."""
    code = (
        "import sys\n"
        "from scim_edge.cli import main\n"
        f"rc = main(['ask', {QUESTION!r}, '--index', {str(demo_index)!r}, '--json'])\n"
        f"loaded = [m for m in {HUB_MODULES!r} if m in sys.modules]\n"
        "print('LOADED', loaded, file=sys.stderr)\n"
        "sys.exit(rc or (3 if loaded else 0))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert "network use blocked" not in r.stderr
    assert r.returncode == 0, r.stderr
    assert "LOADED []" in r.stderr
    assert json.loads(r.stdout)["answer"].strip()


@pytest.mark.slow
def test_ask_with_exported_t5_model(strict_guard, demo_index, tmp_path_factory, capsys):
    """The ONNX generator path: a tiny T5 exported by `models export`, loaded from the
    store by `ask`, under the guard."""
    src = exported_tiny_t5(tmp_path_factory)
    install_model(src, Path(os.environ["SCIM_EDGE_HOME"]))
    rc = main(["ask", QUESTION, "--index", str(demo_index), "--model", src.name, "--json"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    answer = json.loads(out.out)
    assert src.name in answer["generator"]
    assert answer["iterations"]


def test_doctor_network_check_runs_a_question_with_sockets_blocked(strict_guard, demo_index):
    from scim_edge import doctor

    home = Path(os.environ["SCIM_EDGE_HOME"])
    shutil.copytree(demo_index, home / "indexes" / "demo")
    (check,) = doctor.check_network([home / "indexes" / "demo"])
    assert check.status == "ok", check
    assert "no attempt" in check.detail


def test_doctor_guard_records_and_refuses():
    from scim_edge.doctor import NetworkAttempt, block_network

    attempts: list[str] = []
    before = (socket.socket.connect, socket.getaddrinfo)
    with block_network(attempts):
        with pytest.raises(NetworkAttempt):
            socket.getaddrinfo("example.org", 80)
        with socket.socket() as s, pytest.raises(NetworkAttempt):
            s.connect(("192.0.2.1", 80))
    assert len(attempts) == 2
    assert (socket.socket.connect, socket.getaddrinfo) == before  # restored on exit


@pytest.mark.skipif(shutil.which("unshare") is None, reason="unshare is not installed")
def test_offline_ask_script_in_a_network_namespace(tmp_path):
    """.ci/offline-ask.sh: `ask` inside a namespace with no network at all (covers native
    code too). It prints SKIPPED itself when namespaces are not allowed here."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", netguard.LOG_ENV)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    r = subprocess.run(["bash", str(ROOT / ".ci" / "offline-ask.sh")], capture_output=True,
                       text=True, timeout=300, env=env)  # fmt: skip
    if "SKIPPED" in r.stdout:
        pytest.skip(r.stdout.strip().splitlines()[-1])
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no network in the namespace: ok" in r.stdout
    assert "offline ask: ok" in r.stdout


def test_doctor_on_a_ready_home_exits_zero(demo_index, capsys):
    """An index and no model: warnings at most (the extractive fallback), exit 0, and the
    test question ran with the network blocked."""
    shutil.copytree(demo_index, Path(os.environ["SCIM_EDGE_HOME"]) / "indexes" / "demo")
    rc = main(["doctor", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert rc == 0, report
    assert report["ok"], report
    assert report["summary"]["error"] == 0, report
    by_name = {c["name"]: c for c in report["checks"]}
    assert by_name["index demo"]["status"] == "ok"
    assert by_name["no network needed"]["status"] == "ok"
    assert {"python", "tantivy", "free space", "CUDA"} <= set(by_name)
    # the ONNX Runtime check is named after the distribution installed (CPU or GPU build)
    assert set(by_name) & {"onnxruntime", "onnxruntime-gpu"}
    rc = main(["doctor"])
    text = capsys.readouterr().out
    assert rc == 0
    assert "index demo" in text
    assert "errors" in text.splitlines()[-1]


def test_doctor_names_real_text_models_and_prints_no_onnxruntime_errors(capfd):
    """A default install: real Punkt and a trained tagger (no fallback), and no ONNX Runtime
    error lines, which its C++ logger would write straight to file descriptor 2."""
    rc = main(["doctor", "--json"])
    out, err = capfd.readouterr()
    by_name = {c["name"]: c for c in json.loads(out)["checks"]}
    assert rc == 0, out  # no index here: warnings at most
    assert by_name["sentences"]["status"] == "ok"
    assert by_name["pos_tags"]["status"] == "ok"
    assert "fallback" not in out
    assert "[E:onnxruntime" not in err
    assert "[W:onnxruntime" not in err
