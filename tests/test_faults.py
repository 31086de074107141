"""Faults: nothing lost when a build is killed, the disk fills up, a file is damaged, many
processes ask at once, or the config file is wrong.

Commands run as child processes where a crash (signal, segfault, traceback) is the thing
to rule out; `scim-edge` error lines are checked for being one line that names the
problem. Full-disk tests use a real small tmpfs when this machine lets us mount one
(root), and an injected OSError(ENOSPC) always.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest
from conftest import shared_file
from test_offline import exported_tiny_t5

from scim_edge.cli import main
from scim_edge.demo import demo_dump_path
from scim_edge.retrieval import BM25Retriever

DEMO_QUESTIONS = [
    "Who invented the movable-type printing press in Europe?",
    "When did Apollo 11 land on the Moon?",
    "What is the capital of Iceland?",
    "Who was Ada Lovelace?",
    "How tall is Mount Kilimanjaro?",
    "What did the Great Fire of London destroy?",
    "Where do emperor penguins breed?",
    "Who patented the telephone?",
]


# ---- helpers ---------------------------------------------------------------------------


def home() -> Path:
    return Path(os.environ["SCIM_EDGE_HOME"])


def cli(*args: str, home_dir: Path | None = None, timeout: int = 300):
    env = {**os.environ, "SCIM_EDGE_HOME": str(home_dir or home())}
    return subprocess.run(
        [sys.executable, "-m", "scim_edge", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip


def error_line(stderr: str) -> str:
    """The `scim-edge: error:` line, after checking it is the only error output."""
    assert "Traceback" not in stderr, stderr
    lines = [ln for ln in stderr.splitlines() if ln.startswith("scim-edge: error:")]
    assert len(lines) == 1, stderr
    return lines[0]


def assert_clean_failure(r, *needles: str) -> str:
    assert r.returncode in (1, 2), f"rc={r.returncode} (negative = killed by a signal)\n{r.stderr}"
    line = error_line(r.stderr)
    for n in needles:
        assert n.lower() in line.lower(), line
    return line


def leftovers(base: Path) -> list[str]:
    return sorted(p.name for p in base.iterdir() if p.name.startswith(".")) if base.is_dir() else []


def assert_serves(index_dir: Path, passages: int) -> None:
    r = BM25Retriever.open(index_dir)
    assert r.passage_count == passages
    assert r.search("anarchism", 3), "the index no longer answers queries"


@pytest.fixture(scope="module")
def big_dump(tmp_path_factory) -> Path:
    """A ~60 MB-of-XML dump (2,000 pages): builds take several seconds here."""
    source = shared_file("enwiki-sample.xml.bz2")
    tool = shared_file("../tools/make_big_dump.py")  # beside data/, wherever that lives
    out = tmp_path_factory.mktemp("dumps") / "big.xml.bz2"
    subprocess.run([sys.executable, str(tool), "--source", str(source), "--mb", "20",
                    "-o", str(out)], check=True, capture_output=True, timeout=300)  # fmt: skip
    return out


@pytest.fixture
def wiki(sample_index) -> tuple[Path, int]:
    """The enwiki sample index installed as `wiki` in this test's home."""
    target = home() / "indexes" / "wiki"
    shutil.copytree(sample_index, target)
    return target, BM25Retriever.open(target).passage_count


@pytest.fixture
def small_fs(tmp_path):
    """Mount a small tmpfs (size in MB); skip with the reason when not allowed here."""
    mounts: list[Path] = []

    def make(size_mb: int) -> Path:
        if os.geteuid() != 0:
            pytest.skip("mounting a tmpfs needs root; the injected-ENOSPC variant still runs")
        mnt = tmp_path / f"tmpfs-{size_mb}m-{len(mounts)}"
        mnt.mkdir()
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(mnt)],
                           capture_output=True, text=True)  # fmt: skip
        if r.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
        mounts.append(mnt)
        return mnt

    yield make
    for mnt in mounts:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def enospc(path: str = "") -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


# ---- 1. SIGKILL during build-index -----------------------------------------------------


@pytest.mark.slow
def test_sigkill_during_build_then_rebuild_while_readers_read(big_dump, wiki):
    """(1) SIGKILL build-index partway: the old index still serves, and the rerun needs no
    clean-up. (2) During that rerun, new readers and a `scim-edge ask` keep reading the
    old index until the atomic swap, and a reader opened before it keeps working after."""
    idx, old_n = wiki
    base = idx.parent
    build = [sys.executable, "-m", "scim_edge", "build-index", str(big_dump), "--name", "wiki",
             "--force"]  # fmt: skip
    proc = subprocess.Popen(build, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Partway = the Tantivy writer of the new index is running in its temp dir.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        tmp_dirs = list(base.glob(".partial-wiki"))
        if tmp_dirs and any(p.suffix == ".idx" or p.name == ".tantivy-writer.lock"
                            for p in tmp_dirs[0].iterdir()):  # fmt: skip
            break
        time.sleep(0.05)
    time.sleep(1.0)  # let it write for a while
    assert proc.poll() is None, "the build finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    # The killed writer left its temp dir (and Tantivy's lock files in it) behind ...
    assert list(base.glob(".partial-wiki")), "expected the killed build's partial dir"
    # ... and the old index still serves queries.
    assert_serves(idx, old_n)

    # The rerun, with readers busy during it.
    opened_before = BM25Retriever.open(idx)
    proc = subprocess.Popen([*build, "--resume"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    counts: list[int] = []
    asker = None
    while proc.poll() is None:
        fresh = BM25Retriever.open(idx)  # a new reader, as a new `ask` would open it
        counts.append(fresh.passage_count)
        assert fresh.search("anarchism", 3)
        assert opened_before.search("anarchism", 3)
        if asker is None and list(base.glob(".partial-wiki")):
            asker = subprocess.Popen(
                [sys.executable, "-m", "scim_edge", "ask", "What is anarchism?", "--index",
                 "wiki", "--model", "extractive", "--json"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        time.sleep(0.2)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert leftovers(base) == [], "stale temp dirs or old copies were left behind"
    new_n = BM25Retriever.open(idx).passage_count
    assert new_n > old_n
    assert counts.count(old_n) >= 3, f"too few reads during the build: {counts}"
    assert set(counts) <= {old_n, new_n}, "a reader saw a half-built index"
    first_new = counts.index(new_n) if new_n in counts else len(counts)
    assert all(c == new_n for c in counts[first_new:]), "a reader went back to the old index"
    assert asker is not None, "the build ended before `ask` could run during it"
    out, err = asker.communicate(timeout=300)
    assert asker.returncode == 0, err
    assert "Anarchism" in {c["title"] for c in json.loads(out)["citations"]}
    # A reader opened before the swap keeps working after the old files are deleted.
    assert opened_before.passage_count == old_n
    assert opened_before.search("anarchism", 3)
    assert BM25Retriever.open(idx).search("anarchism", 3)


def _checkpointed(work: Path) -> bool:
    from index_builder.checkpoint import Checkpoint

    ckpt = Checkpoint.load(work) if work.is_dir() else None
    return ckpt is not None and ckpt.position is not None


@pytest.mark.slow
def test_sigterm_during_build_cleans_up_and_keeps_the_old_index(big_dump, wiki):
    """SIGTERM (a service stop, `kill`) unwinds like Ctrl-C: one line, exit 130, the partial
    build kept for --resume, the old index untouched, no traceback from main or workers."""
    idx, old_n = wiki
    base = idx.parent
    build = [sys.executable, "-m", "scim_edge", "build-index", str(big_dump), "--name", "wiki",
             "--force"]  # fmt: skip
    proc = subprocess.Popen(build, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    # stopped after its first checkpoint: before one, nothing is kept to resume from
    while time.monotonic() < deadline and not _checkpointed(base / ".partial-wiki"):
        time.sleep(0.05)
    assert proc.poll() is None, "the build finished before it could be stopped"
    proc.terminate()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    assert "--resume" in err  # the partial build is kept, to be resumed
    assert_serves(idx, old_n)


def test_stale_temp_dirs_of_dead_writers_are_cleared_and_live_ones_kept():
    base = home() / "indexes"
    base.mkdir(parents=True)
    live_writer = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    dead_writer = subprocess.Popen([sys.executable, "-c", "pass"])
    dead_writer.wait()
    try:
        live = base / f".tmp-wiki-{live_writer.pid}-aaaaaa"
        dead = base / f".tmp-wiki-{dead_writer.pid}-bbbbbb"
        old = base / f".old-wiki-{dead_writer.pid}-cccccc"
        for d in (live, dead, old):
            d.mkdir()
            (d / ".tantivy-writer.lock").touch()
            (d / "meta.json").write_text("{")
        r = cli("build-index", demo_dump_path(), "--name", "wiki")
        assert r.returncode == 0, r.stderr
        assert live.is_dir(), "the temp dir of a live writer must not be touched"
        assert not dead.exists() and not old.exists()
    finally:
        live_writer.kill()
        live_writer.wait()


def test_tantivy_writer_lock_of_a_killed_process_is_not_held(tmp_path, sample_index):
    """Tantivy's `.tantivy-writer.lock` is an OS file lock: a writer killed with SIGKILL
    leaves the file but not the lock, so the next writer gets it; a live writer keeps it."""
    idx = tmp_path / "idx"
    shutil.copytree(sample_index, idx)
    hold = (
        "import os, signal, sys, time, tantivy\n"
        f"w = tantivy.Index.open({str(idx)!r}).writer(heap_size=15_000_000, num_threads=1)\n"
        "print('locked', flush=True)\n"
        "if sys.argv[1] == 'die': os.kill(os.getpid(), signal.SIGKILL)\n"
        "time.sleep(60)\n"
    )
    killed = subprocess.run([sys.executable, "-c", hold, "die"], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL and "locked" in killed.stdout
    assert (idx / ".tantivy-writer.lock").exists()
    import tantivy

    w = tantivy.Index.open(str(idx)).writer(heap_size=15_000_000, num_threads=1)
    del w  # got the lock: the stale file did not block
    live = subprocess.Popen([sys.executable, "-c", hold, "live"], stdout=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        assert live.stdout.readline().strip() == "locked"
        with pytest.raises(ValueError, match="(?i)lock"):
            tantivy.Index.open(str(idx)).writer(heap_size=15_000_000, num_threads=1)
    finally:
        live.kill()
        live.wait()
    assert_serves(idx, BM25Retriever.open(sample_index).passage_count)


# ---- 3. full disk ----------------------------------------------------------------------


def _free(path: Path) -> int:
    return shutil.disk_usage(path).free


@pytest.mark.slow
def test_full_disk_during_build_index_tmpfs(small_fs, big_dump, sample_index):
    fs = small_fs(12)
    h = fs / "home"
    shutil.copytree(sample_index, h / "indexes" / "wiki")
    old_n = BM25Retriever.open(h / "indexes" / "wiki").passage_count
    free_before = _free(fs)
    r = cli("build-index", big_dump, "--name", "wiki", "--force", home_dir=h, timeout=600)
    assert r.returncode > 0, r.stderr  # it failed, and not by a signal
    assert leftovers(h / "indexes") == [], "a partial index was left behind"
    assert _free(fs) == free_before
    assert_serves(h / "indexes" / "wiki", old_n)
    assert_clean_failure(r, "space")


def test_full_disk_during_build_index_injected(monkeypatch, capsys, wiki):
    import index_builder.build as build

    idx, old_n = wiki

    def full(path, text):
        Path(path).write_text(text[: len(text) // 2])  # a partial write, then the error
        raise enospc(str(path))

    monkeypatch.setattr(build, "write_text", full)
    rc = main(["build-index", str(demo_dump_path()), "--name", "wiki", "--force"])
    line = error_line(capsys.readouterr().err)
    assert rc in (1, 2) and "no space left on device" in line.lower(), line
    assert leftovers(idx.parent) == []
    assert_serves(idx, old_n)


@pytest.mark.slow
def test_full_disk_during_model_export_tmpfs(small_fs, tmp_path_factory):
    src = exported_tiny_t5(tmp_path_factory)
    hf_dir = src.parents[2] / "hf"
    fs = small_fs(4)
    h = fs / "home"
    shutil.copytree(src, h / "models" / "existing")
    free_before = _free(fs)
    r = cli("models", "export", "--from", hf_dir, "--name", "tiny2", home_dir=h, timeout=600)
    line = assert_clean_failure(r)
    assert "space" in line.lower(), line
    assert not (h / "models" / "tiny2").exists()
    assert leftovers(h / "models") == [] and _free(fs) == free_before
    from models.store import verify

    assert verify(h / "models" / "existing") == []


def test_full_disk_during_model_export_injected(monkeypatch, capsys, tmp_path_factory):
    pytest.importorskip("optimum")
    import models.export as export

    src = exported_tiny_t5(tmp_path_factory)
    hf_dir = src.parents[2] / "hf"

    def full(src_, local, out, task, verbose):
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "encoder_model.onnx").write_bytes(b"\0" * 4096)  # partial output
        raise enospc(str(Path(out) / "encoder_model.onnx"))

    monkeypatch.setattr(export, "_main_export", full)
    rc = main(["models", "export", "--from", str(hf_dir), "--name", "tiny2"])
    line = error_line(capsys.readouterr().err)
    assert rc in (1, 2) and "no space left on device" in line.lower(), line
    models = home() / "models"
    assert not (models / "tiny2").exists() and leftovers(models) == []


def _bundle_of(index_dir: Path, out: Path) -> Path:
    rc = main(["bundle", str(out), "--index", str(index_dir)])
    assert rc == 0
    return out


@pytest.mark.parametrize("suffix", [".tar", ".tar.gz"])
def test_full_disk_during_unbundle_tmpfs(small_fs, sample_index, tmp_path, suffix):
    """.tar: the free-space pre-check refuses at once; .tar.gz (size unknown up front):
    the disk really fills mid-extraction. Either way: one line, nothing installed."""
    bundle = _bundle_of(sample_index, tmp_path / f"b{suffix}")
    fs = small_fs(6)
    h = fs / "home"
    shutil.copytree(sample_index, h / "indexes" / "wiki")
    old_n = BM25Retriever.open(h / "indexes" / "wiki").passage_count
    free_before = _free(fs)
    r = cli("unbundle", bundle, "--home", h)
    line = assert_clean_failure(r, "nothing was installed")
    assert "disk" in line.lower(), line
    assert not (h / "indexes" / sample_index.name).exists()
    assert leftovers(h) == [] and leftovers(h / "indexes") == []
    assert _free(fs) == free_before
    assert_serves(h / "indexes" / "wiki", old_n)


def test_full_disk_during_unbundle_injected(monkeypatch, capsys, sample_index, tmp_path, wiki):
    import scim_edge.bundle as bundle_mod

    bundle = _bundle_of(sample_index, tmp_path / "b.tar")
    capsys.readouterr()
    idx, old_n = wiki
    real = bundle_mod._write_member
    calls = {"n": 0}

    def fill_up(src, dest):
        calls["n"] += 1
        if calls["n"] == 3:
            dest.write_bytes(b"partial")
            raise enospc(str(dest))
        return real(src, dest)

    monkeypatch.setattr(bundle_mod, "_write_member", fill_up)
    rc = main(["unbundle", str(bundle)])
    line = error_line(capsys.readouterr().err)
    assert rc == 2 and "disk full" in line and "nothing was installed" in line, line
    assert not (home() / "indexes" / sample_index.name).exists()
    assert leftovers(home()) == [] and leftovers(home() / "indexes") == []
    assert_serves(idx, old_n)


# ---- 4. corrupted files ----------------------------------------------------------------


def _segment_file(idx: Path, suffix: str) -> Path:
    return max(idx.glob(f"*{suffix}"), key=lambda p: p.stat().st_size)


def _corrupt_index(idx: Path, mode: str) -> str:
    """Damage the index; return the file name a good message should mention."""
    if mode == "truncated-store":
        f = _segment_file(idx, ".store")
        os.truncate(f, f.stat().st_size // 2)
        return f.name
    if mode == "garbage-meta":
        (idx / "meta.json").write_text("garbage{")
        return "meta.json"
    if mode == "missing-postings":
        f = _segment_file(idx, ".pos")
        f.unlink()
        return f.name
    if mode == "flipped-bytes":
        f = _segment_file(idx, ".term")
        with open(f, "r+b") as fh:
            fh.seek(f.stat().st_size // 2)
            fh.write(os.urandom(64))
        return f.name
    raise AssertionError(mode)


CORRUPTIONS = [
    "truncated-store",
    "garbage-meta",
    "missing-postings",
    "flipped-bytes",
]


def test_a_damaged_segment_file_is_named_in_words(sample_index, tmp_path, capsys):
    """Not Tantivy's Rust debug text ("IoError { io_error: Custom { kind: InvalidData …")."""
    idx = tmp_path / "idx"
    shutil.copytree(sample_index, idx)
    name = _corrupt_index(idx, "truncated-store")
    assert main(["search", "Lincoln", "--index", str(idx)]) == 2
    assert f"its file {name} is damaged or cut short" in capsys.readouterr().err


@pytest.mark.parametrize("mode", CORRUPTIONS)
def test_corrupted_index_file_gives_a_clear_error(mode, sample_index, capsys):
    idx = home() / "indexes" / "wiki"
    shutil.copytree(sample_index, idx)
    name = _corrupt_index(idx, mode)
    r = cli("ask", "What is anarchism?", "--index", "wiki", "--model", "extractive")
    assert r.returncode >= 0, f"killed by signal {-r.returncode}"
    assert "Traceback" not in r.stderr, r.stderr
    if mode != "flipped-bytes":  # Tantivy cannot notice a flip without reading checksums
        line = assert_clean_failure(r, "wiki", "rebuild")
        assert r.returncode == 2, line
    # `doctor --hashes` finds every kind of damage and names the file and the fix.
    rc = main(["doctor", "--hashes", "--json", "--no-network-check"])
    report = json.loads(capsys.readouterr().out)
    (check,) = [c for c in report["checks"] if c["name"] == "index wiki"]
    assert rc == 1 and check["status"] == "error", check
    assert name in check["detail"] and "build-index" in check["hint"], check


def _corrupt_model(model: Path, mode: str) -> str:
    if mode == "truncated":
        f = model / "int8" / "decoder_model.onnx"
        os.truncate(f, f.stat().st_size - 1000)
    elif mode == "garbage-header":
        f = model / "int8" / "encoder_model.onnx"
        with open(f, "r+b") as fh:
            fh.write(b"\xff" * 256)
    elif mode == "flipped-weights":
        f = model / "int8" / "decoder_with_past_model.onnx"
        with open(f, "r+b") as fh:
            fh.seek(f.stat().st_size // 2)
            fh.write(bytes(b ^ 0x55 for b in fh.read(32)))
    else:
        raise AssertionError(mode)
    return f"int8/{f.name}"


@pytest.mark.parametrize("mode", ["truncated", "garbage-header", "flipped-weights"])
def test_corrupted_model_file_gives_a_clear_error(mode, tmp_path_factory, demo_index, capsys):
    src = exported_tiny_t5(tmp_path_factory)
    model = home() / "models" / "tiny"
    shutil.copytree(src, model)
    rel = _corrupt_model(model, mode)
    r = cli("ask", DEMO_QUESTIONS[0], "--index", demo_index, "--model", "tiny")
    assert r.returncode >= 0, f"killed by signal {-r.returncode}"
    assert "Traceback" not in r.stderr, r.stderr
    if mode != "flipped-weights":  # same size, valid protobuf: only a hash can tell
        line = assert_clean_failure(r, rel.split("/")[-1])
        assert "verify" in line or "re-export" in line or "re-import" in line, line
    v = cli("models", "verify", "tiny")
    assert v.returncode != 0 and rel in v.stdout + v.stderr, v.stdout + v.stderr
    assert "Traceback" not in v.stderr
    rc = main(["doctor", "--hashes", "--json", "--no-network-check"])
    report = json.loads(capsys.readouterr().out)
    bad = [c for c in report["checks"] if c["name"].startswith("model tiny") and
           c["status"] == "error"]  # fmt: skip
    assert rc == 1 and bad and rel in bad[0]["detail"], report["checks"]


# ---- 5. concurrent readers -------------------------------------------------------------


@pytest.mark.slow
def test_eight_concurrent_ask_processes_on_one_index(demo_index):
    shutil.copytree(demo_index, home() / "indexes" / "demo")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "scim_edge", "ask", q, "--index", "demo", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for q in DEMO_QUESTIONS
    ]
    results = [p.communicate(timeout=600) for p in procs]
    for p, (out, err), q in zip(procs, results, DEMO_QUESTIONS, strict=True):
        assert p.returncode == 0, f"{q}: {err}"
        answer = json.loads(out)
        assert answer["question"] == q and answer["answer"].strip() and answer["citations"]


# ---- 6. config file errors -------------------------------------------------------------


@pytest.mark.parametrize(
    "text, needle",
    [
        ("[settings]\ntheta = 1.5\n", "theta"),
        ("[settings]\nthetta = 0.7\n", "thetta"),
        ('[settings]\nk1 = "three"\n', "k1"),
        ("[settings]\nweights = [0.5, 0.5]\n", "weights"),
        ("[settings]\ntheta = [\n", "not valid TOML"),
        ('[settings]\nloop = "scimm"\n', "loop"),
    ],
)
def test_config_file_errors_name_the_key(text, needle, demo_index, capsys):
    cfg = home() / "config.toml"
    cfg.write_text(text, encoding="utf-8")
    rc = main(["ask", DEMO_QUESTIONS[0], "--index", str(demo_index), "--model", "extractive"])
    line = error_line(capsys.readouterr().err)
    assert rc == 2 and needle in line, line
    if needle == "not valid TOML":
        assert str(cfg) in line, line


def test_config_error_through_a_child_process(demo_index):
    (home() / "config.toml").write_text("[settings]\ntheta = 7\n", encoding="utf-8")
    r = cli("ask", DEMO_QUESTIONS[0], "--index", demo_index)
    line = assert_clean_failure(r, "theta", "between 0 and 1")
    assert r.returncode == 2, line
    (home() / "config.toml").unlink()
    env_bad = {**os.environ, "SCIM_EDGE_THETA": "high"}
    r = subprocess.run(
        [sys.executable, "-m", "scim_edge", "ask", DEMO_QUESTIONS[0], "--index", str(demo_index)],
        capture_output=True,
        text=True,
        env=env_bad,
        timeout=300,
    )
    assert r.returncode == 2 and "theta" in error_line(r.stderr)


def test_bundle_archive_is_a_plain_tar(sample_index, tmp_path):
    """Checked here because the air-gap steps rely on it: `tar -xf ... wheelhouse
    SHA256SUMS` and `sha256sum -c` work on a bundle without scim-edge installed."""
    bundle = _bundle_of(sample_index, tmp_path / "b.tar")
    with tarfile.open(bundle) as tar:
        names = tar.getnames()
    assert names[-2:] == ["SHA256SUMS", "BUNDLE.json"]
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["tar", "-xf", str(bundle), "-C", str(out)], check=True)
    r = subprocess.run(["sha256sum", "--check", "--quiet", "SHA256SUMS"], cwd=out,
                       capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr


# ---- an index on a read-only share, and a folder that is no index ------------------------


@pytest.fixture()
def read_only_index(demo_index, tmp_path, request) -> Path:
    """A copy of the demo index in a folder that cannot be written: a read-only tmpfs when
    running as root (who ignores modes), else a folder of mode 0o500."""
    where = tmp_path / "share"
    where.mkdir()
    if os.geteuid() != 0:
        shutil.copytree(demo_index, where / "demo")
        (where / "demo").chmod(0o500)
        request.addfinalizer(lambda: (where / "demo").chmod(0o700))
        return where / "demo"
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
                      capture_output=True).returncode != 0:  # fmt: skip
        pytest.skip("running as root and cannot mount a tmpfs")
    request.addfinalizer(lambda: subprocess.run(["umount", str(where)]))
    shutil.copytree(demo_index, where / "demo")
    if subprocess.run(["mount", "-o", "remount,ro", str(where)]).returncode != 0:
        pytest.skip("cannot remount the tmpfs read-only")
    return where / "demo"


def test_a_read_only_index_is_not_called_damaged(read_only_index, capsys):
    """Tantivy writes a lock file to read an index; on a read-only share that fails, and
    the hint must not be the rebuild with --force that would destroy a good index."""
    rc = main(["search", "printing press", "--index", str(read_only_index)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "its folder is read-only" in err
    assert "--force" not in err


def test_a_folder_with_another_manifest_is_no_index(demo_index, tmp_path, capsys):
    """A practice set's folder has a manifest.json too: it is no old index to rebuild."""
    practice = tmp_path / "practice"
    practice.mkdir()
    (practice / "manifest.json").write_text('{"format": 1, "pairs": {}}\n')
    rc = main(["search", "printing press", "--index", str(practice)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "is not a scim-edge index" in err
    assert "--force" not in err


def test_doctor_gives_a_read_only_index_the_copy_as_its_fix(
    read_only_index, tmp_path, monkeypatch, capsys
):
    """doctor's fix for an index on a read-only share is the copy, not a rebuild."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "indexes").symlink_to(read_only_index.parent)
    monkeypatch.setenv("SCIM_EDGE_HOME", str(home))
    main(["doctor", "--json", "--no-network-check"])
    checks = json.loads(capsys.readouterr().out)["checks"]
    (check,) = [c for c in checks if c["name"] == "index demo"]
    assert "copy the index folder" in check["hint"]
