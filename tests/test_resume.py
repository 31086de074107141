"""Resumable builds: after kill -9 or Ctrl+C, `--resume` gives the very index an
uninterrupted build gives; a resume with another dump or other options is refused."""

from __future__ import annotations

import bz2
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tantivy

from index_builder import checkpoint as CK
from index_builder.build import ProgressInfo, build_index
from scim_edge.cli import main
from tests.conftest import shared_file
from tests.test_dump_reader import make_dump


def index_digest(path: Path) -> tuple[int, str]:
    """(passages, hash of every passage's id, title, section, text and aliases)."""
    searcher = tantivy.Index.open(str(path)).searcher()
    n = searcher.num_docs
    rows = []
    for _, addr in searcher.search(tantivy.Query.all_query(), limit=max(1, n)).hits:
        d = searcher.doc(addr).to_dict()
        rows.append(
            [d["doc_id"][0], d["title"][0], d.get("section", [""])[0], d["text"][0],
             sorted(d.get("aliases", []))]
        )  # fmt: skip
    rows.sort()
    return n, hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def counts(path: Path) -> dict:
    return json.loads((path / "manifest.json").read_text())["counts"]


def interrupt_after(n_results: int):
    """A progress callback that presses Ctrl+C once `n_results` batches are in (and, with
    checkpoint_seconds=0, checkpointed): at the report of the next one. The first report
    comes before any batch."""
    seen = []

    def progress(info: ProgressInfo) -> None:
        if info.phase == "reading":
            seen.append(info)
            if len(seen) > n_results + 1:
                raise KeyboardInterrupt

    return progress


def one_error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture(scope="module")
def ms_dump(tmp_path_factory) -> Path:
    return make_dump(tmp_path_factory.mktemp("resume") / "ms.xml.bz2", 12, multistream=True)


@pytest.fixture(scope="module")
def ms_reference(ms_dump, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ref") / "idx"
    build_index(ms_dump, out, workers=2)
    return out


@pytest.fixture(scope="module")
def plain_xml(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("xml") / "enwiki-sample.xml"
    path.write_bytes(bz2.decompress(shared_file("enwiki-sample.xml.bz2").read_bytes()))
    return path


# ---- kill -9 of a real build ---------------------------------------------------------------


def test_sigkill_then_resume_gives_the_same_index(ms_dump, ms_reference, tmp_path):
    out = tmp_path / "idx"
    cmd = [sys.executable, "-m", "scim_edge", "build-index", str(ms_dump), "--out", str(out),
           "--workers", "2"]  # fmt: skip
    proc = subprocess.Popen(
        [*cmd, "--checkpoint-every", "0.2"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    ckpt_file = CK.partial_dir(out) / CK.CHECKPOINT
    deadline = time.monotonic() + 180
    done = 0.0
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            ck = CK.Checkpoint.load(ckpt_file.parent) if ckpt_file.exists() else None
            done = ck.done_fraction() if ck and ck.phase == "reading" else 0.0
            if done >= 0.3:
                break
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process tree, like a power cut
        proc.wait()
    assert done >= 0.3, "the build finished or stalled before a checkpoint at 30%"
    assert not out.exists()  # nothing half-built under the index name

    again = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert again.returncode == 2
    line = one_error_line(again.stderr)
    assert "a resumable build" in line
    assert "--resume" in line and "--restart" in line

    resumed = subprocess.run([*cmd, "--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert counts(out) == counts(ms_reference)
    assert index_digest(out) == index_digest(ms_reference)
    assert json.loads((out / "manifest.json").read_text())["runs"] == 2
    assert not CK.partial_dir(out).exists()
    assert not (out / CK.CHECKPOINT).exists()


# ---- Ctrl+C, each kind of source position --------------------------------------------------


@pytest.mark.parametrize("kind", ["bz2-blocks", "plain-xml", "multistream"])
def test_ctrl_c_then_resume_gives_the_same_index(kind, sample_index, plain_xml, ms_dump,
                                                 ms_reference, tmp_path):  # fmt: skip
    src, ref = {
        "bz2-blocks": (shared_file("enwiki-sample.xml.bz2"), sample_index),
        "plain-xml": (plain_xml, sample_index),
        "multistream": (ms_dump, ms_reference),
    }[kind]
    out = tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        build_index(src, out, workers=2, checkpoint_seconds=0, progress=interrupt_after(1))
    ck = CK.Checkpoint.load(CK.partial_dir(out))
    assert ck is not None and ck.position is not None
    assert ck.position["kind"] == {"bz2-blocks": "blocks", "plain-xml": "pages",
                                   "multistream": "streams"}[kind]  # fmt: skip
    assert 0 < ck.counters["passages"] < counts(ref)["passages"]
    build_index(src, out, workers=2, resume=True)
    assert counts(out) == counts(ref)
    assert index_digest(out) == index_digest(ref)


def test_kill_between_commit_and_checkpoint_adds_nothing_twice(
    sample_index, plain_xml, tmp_path, monkeypatch
):
    """The index committed batches past the checkpoint, then the process died before the
    checkpoint was written: the resumed build must not hold those passages twice."""
    out = tmp_path / "idx"
    real_save = CK.Checkpoint.save
    saves = []

    def save_then_die(self, work):
        saves.append(1)
        if len(saves) == 3:
            raise KeyboardInterrupt  # after the Tantivy commit, before the checkpoint
        real_save(self, work)

    monkeypatch.setattr(CK.Checkpoint, "save", save_then_die)
    with pytest.raises(KeyboardInterrupt):
        build_index(plain_xml, out, workers=2, checkpoint_seconds=0)
    monkeypatch.setattr(CK.Checkpoint, "save", real_save)
    assert CK.committing(CK.partial_dir(out)) == 1
    build_index(plain_xml, out, workers=2, resume=True)
    assert counts(out) == counts(sample_index)
    assert index_digest(out) == index_digest(sample_index)


@pytest.mark.parametrize("phase", ["committing", "done"])
def test_resume_after_the_whole_dump_is_in(phase, sample_index, tmp_path):
    """Killed in the alias pass or after the final commit, before the swap: the aliases are
    attached once, not twice or never, when it resumes."""
    src = shared_file("enwiki-sample.xml.bz2")
    out = tmp_path / "idx"

    def die_at(info: ProgressInfo) -> None:
        if info.phase == phase:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_index(src, out, progress=die_at)
    assert not out.exists()
    assert CK.Checkpoint.load(CK.partial_dir(out)).phase == "aliases"
    build_index(src, out, resume=True)
    assert counts(out) == counts(sample_index)
    assert index_digest(out) == index_digest(sample_index)


# ---- refusals ------------------------------------------------------------------------------


@pytest.fixture
def interrupted(tmp_path) -> tuple[Path, Path]:
    """(dump, index dir) with a resumable build of the dump left at its first checkpoint."""
    src = tmp_path / "dump.xml.bz2"
    src.write_bytes(shared_file("enwiki-sample.xml.bz2").read_bytes())
    out = tmp_path / "idx"
    with pytest.raises(KeyboardInterrupt):
        build_index(src, out, workers=2, checkpoint_seconds=0, progress=interrupt_after(1))
    assert CK.Checkpoint.load(CK.partial_dir(out)) is not None
    return src, out


def test_resume_with_a_different_dump_is_refused(interrupted, plain_xml, capsys):
    src, out = interrupted
    assert main(["build-index", str(plain_xml), "--out", str(out), "--resume"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "cannot resume" in line
    assert f"started from {src}" in line
    assert CK.Checkpoint.load(CK.partial_dir(out)) is not None  # refused, not discarded


def test_resume_with_different_options_is_refused(interrupted, capsys):
    src, out = interrupted
    args = ["build-index", str(src), "--out", str(out), "--resume"]
    assert main([*args, "--passage-words", "50"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "--passage-words 100, not 50" in line


def test_resume_after_the_dump_changed_is_refused(interrupted, capsys):
    src, out = interrupted
    st = src.stat()
    os.utime(src, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    assert main(["build-index", str(src), "--out", str(out), "--resume"]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "changed since it was started" in line


def test_without_resume_the_user_is_told_how(interrupted, sample_index, capsys):
    src, out = interrupted
    assert main(["build-index", str(src), "--out", str(out)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert "resumable build" in line and "% of dump.xml.bz2 done" in line
    assert "--resume" in line and "--restart" in line
    assert main(["build-index", str(src), "--out", str(out), "--restart"]) == 0
    assert counts(out)["passages"] == counts(sample_index)["passages"]
    assert json.loads((out / "manifest.json").read_text())["runs"] == 1


def test_resume_and_restart_are_exclusive_and_stdin_cannot_resume(tmp_path, capsys):
    out = str(tmp_path / "idx")
    with pytest.raises(SystemExit):
        main(["build-index", "-", "--out", out, "--resume", "--restart"])
    capsys.readouterr()
    assert main(["build-index", "-", "--out", out, "--resume"]) == 2
    assert "standard input cannot be resumed" in one_error_line(capsys.readouterr().err)


def test_workers_default_to_every_core(sample_index):
    from index_builder.build import default_workers

    assert json.loads((sample_index / "manifest.json").read_text())["workers"] == default_workers()


def test_workers_flag(tmp_path, capsys):
    src = str(shared_file("enwiki-sample.xml.bz2"))
    with pytest.raises(SystemExit) as e:  # refused by the parser, as other bad counts are
        main(["build-index", src, "--out", str(tmp_path / "a"), "--workers", "0"])
    assert e.value.code == 2
    assert "--workers" in one_error_line(capsys.readouterr().err)
    assert main(["build-index", src, "--out", str(tmp_path / "a"), "--workers", "1"]) == 0
    assert json.loads((tmp_path / "a" / "manifest.json").read_text())["workers"] == 1


def test_a_build_shorter_than_the_interval_still_checkpoints_by_share():
    """A tenth of the input since the last checkpoint is reason enough (after the minimum
    gap), so a short build has checkpoints to resume from; a sliver is not."""
    import time
    from types import SimpleNamespace

    from index_builder.build import MIN_CHECKPOINT_GAP_S, _Build

    job = SimpleNamespace(
        checkpoint_seconds=30.0, reader=SimpleNamespace(bytes_read=0, total_bytes=1000)
    )
    long_ago = time.perf_counter() - MIN_CHECKPOINT_GAP_S - 0.5
    job.reader.bytes_read = 150
    assert _Build._checkpoint_due(job, long_ago, 0)
    job.reader.bytes_read = 50
    assert not _Build._checkpoint_due(job, long_ago, 0)
