"""`scim-edge bundle` / `unbundle`: the round trip, and every archive unbundle must refuse.

Hostile archives are written here with `tarfile` directly, so each one carries exactly
the defect under test (traversal, absolute path, link, device, a wrong hash, ...).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zlib
from pathlib import Path

import pytest

from index_builder.schema import SCHEMA_VERSION
from scim_edge.bundle import META_NAME, SUMS_NAME
from scim_edge.cli import main
from scim_edge.index_files import TANTIVY_FOOTER_MAGIC
from scim_edge.retrieval import BM25Retriever


def home() -> Path:
    return Path(os.environ["SCIM_EDGE_HOME"])


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def fake_model(models_dir: Path, name: str = "fake") -> Path:
    """A model directory with a real store manifest (hashes, sizes) and stand-in files."""
    from models.store import build_manifest, write_manifest

    d = models_dir / name
    (d / "int8").mkdir(parents=True)
    (d / "tokenizer.json").write_text('{"model": {}}')
    (d / "int8" / "encoder_model.onnx").write_bytes(os.urandom(5000))
    m = build_manifest(d, name=name, kind="seq2seq", source="test", shared=["tokenizer.json"],
                       variants={"int8": ["int8/encoder_model.onnx"]})  # fmt: skip
    write_manifest(d, m)
    return d


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(map(str, args)))
    out = capsys.readouterr()
    return rc, out.out, out.err


# ---- round trip ------------------------------------------------------------------------


def test_round_trip_into_a_fresh_home_then_ask(demo_index, tmp_path, capsys, monkeypatch):
    src_home = home()
    shutil.copytree(demo_index, src_home / "indexes" / "demo")
    fake_model(src_home / "models")
    nltk_res = src_home / "nltk_data" / "tokenizers" / "punkt_tab" / "english"
    nltk_res.mkdir(parents=True)
    (nltk_res / "abbrev_types.txt").write_text("dr\nmr\n")
    wheels = tmp_path / "wheelhouse"
    wheels.mkdir()
    (wheels / "scim_edge-0.1.0-py3-none-any.whl").write_bytes(os.urandom(300))

    out = tmp_path / "bundle.tar"
    rc, stdout, err = run_cli(capsys, "bundle", out, "--with-nltk-data", "--wheelhouse", wheels)
    assert rc == 0, err
    assert f"wrote {out}" in stdout
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
    with tarfile.open(out) as tar:
        meta = json.load(tar.extractfile(META_NAME))
    assert meta["contents"]["indexes"] == ["demo"]
    assert meta["contents"]["models"] == ["fake"]
    assert meta["contents"]["nltk_data"] == ["tokenizers/punkt_tab"]
    assert meta["contents"]["wheelhouse"] == ["scim_edge-0.1.0-py3-none-any.whl"]

    fresh = tmp_path / "fresh-home"
    rc, stdout, err = run_cli(capsys, "unbundle", out, "--home", fresh)
    assert rc == 0, err
    assert "installed index demo" in stdout
    assert "installed model fake" in stdout
    for area in ("indexes/demo", "models/fake", "nltk_data/tokenizers/punkt_tab"):
        assert tree_hashes(fresh / area) == tree_hashes(src_home / area), area
    assert (fresh / "wheelhouse" / "scim_edge-0.1.0-py3-none-any.whl").is_file()
    assert [p.name for p in fresh.iterdir() if p.name.startswith(".")] == []
    assert BM25Retriever.open(fresh / "indexes" / "demo").passage_count > 0

    monkeypatch.setenv("SCIM_EDGE_HOME", str(fresh))
    shutil.rmtree(fresh / "models")  # the fake model cannot generate; ask falls back
    rc, stdout, err = run_cli(capsys, "ask", "Who invented the movable-type printing press in "
                              "Europe?", "--index", "demo", "--json")  # fmt: skip
    assert rc == 0, err
    assert "Printing press" in {c["title"] for c in json.loads(stdout)["citations"]}


def test_an_interrupted_practice_inside_an_index_is_not_bundled(demo_index, tmp_path, capsys):
    """A Ctrl+C'd `practice` leaves its chunks in INDEX/.practice-partial/ to resume from;
    they are work in progress, not the index."""
    src_home = home()
    index = src_home / "indexes" / "demo"
    shutil.copytree(demo_index, index)
    (index / ".practice-partial").mkdir()
    (index / ".practice-partial" / "chunk-0001.jsonl").write_text("{}\n")
    out = tmp_path / "bundle.tar"
    rc, _, err = run_cli(capsys, "bundle", out, "--index", "demo")
    assert rc == 0, err
    with tarfile.open(out) as tar:
        names = tar.getnames()
    assert [n for n in names if ".practice-partial" in n] == []


def test_a_damaged_index_is_not_bundled(demo_index, tmp_path, capsys):
    """Its bundle's hashes, taken as it is packed, would vouch for the damage: the segment
    files' own checksums are read first, and nothing is written."""
    src_home = home()
    index = src_home / "indexes" / "demo"
    shutil.copytree(demo_index, index)
    segment = max((f for f in index.glob("*.store")), key=lambda f: f.stat().st_size)
    data = bytearray(segment.read_bytes())
    data[len(data) // 3] ^= 0xFF  # one flipped byte, the footer intact
    segment.write_bytes(bytes(data))
    out = tmp_path / "bundle.tar"
    rc, _, err = run_cli(capsys, "bundle", out, "--index", "demo")
    assert rc == 2
    assert "index 'demo' is damaged" in err
    assert not out.exists()


def test_a_damaged_index_outside_the_home_is_told_to_rebuild_where_it_is(
    demo_index, tmp_path, capsys
):
    index = tmp_path / "elsewhere"
    shutil.copytree(demo_index, index)
    segment = max((f for f in index.glob("*.store")), key=lambda f: f.stat().st_size)
    data = bytearray(segment.read_bytes())
    data[len(data) // 3] ^= 0xFF
    segment.write_bytes(bytes(data))
    rc, _, err = run_cli(capsys, "bundle", tmp_path / "bundle.tar", "--index", index)
    assert rc == 2
    assert f"build-index DUMP --out {index} --force" in err


def test_an_index_with_passage_vectors_is_bundled(demo_index, tmp_path, capsys):
    """Its vectors' matrix has no Tantivy footer to check, and is no damage."""
    src_home = home()
    index = src_home / "indexes" / "demo"
    shutil.copytree(demo_index, index)
    (index / "embeddings.f16").write_bytes(bytes(64))
    rc, _, err = run_cli(capsys, "bundle", tmp_path / "bundle.tar", "--index", "demo")
    assert rc == 0, err


def test_unbundle_refuses_to_overwrite_without_force(demo_index, tmp_path, capsys):
    shutil.copytree(demo_index, home() / "indexes" / "demo")
    out = tmp_path / "b.tar"
    assert run_cli(capsys, "bundle", out, "--index", "demo")[0] == 0
    rc, _, err = run_cli(capsys, "unbundle", out)
    assert rc == 2, err
    assert "already exists" in err
    assert "--force" in err
    assert "nothing was" in err
    before = tree_hashes(home() / "indexes" / "demo")
    rc, stdout, err = run_cli(capsys, "unbundle", out, "--force")
    assert rc == 0, err
    assert "replaced index demo" in stdout, err
    assert tree_hashes(home() / "indexes" / "demo") == before
    assert [p.name for p in (home() / "indexes").iterdir()] == ["demo"]


def test_unbundle_refuses_an_installed_index_before_verifying(
    demo_index, tmp_path, capsys, monkeypatch
):
    """The conflict is known from the archive's first member of the index: no member is
    unpacked before the refusal (a bundle of gigabytes is not read to be refused)."""
    from scim_edge import bundle

    shutil.copytree(demo_index, home() / "indexes" / "demo")
    out = tmp_path / "b.tar"
    assert run_cli(capsys, "bundle", out, "--index", "demo")[0] == 0
    written: list[Path] = []
    real = bundle._write_member

    def recording(src, dest):
        written.append(dest)
        return real(src, dest)

    monkeypatch.setattr(bundle, "_write_member", recording)
    run_cli(capsys, "unbundle", out)
    assert written == []


def test_bundle_errors_leave_no_file(tmp_path, capsys):
    out = tmp_path / "b.tar"
    rc, _, err = run_cli(capsys, "bundle", out)
    assert rc == 2, err
    assert "nothing to bundle" in err
    rc, _, err = run_cli(capsys, "bundle", out, "--index", "nope")
    assert rc == 2, err
    assert "no index named 'nope'" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["b.zip", "b.tar.bz2", "b"])
def test_a_bundle_named_as_another_format_is_refused(name, demo_index, tmp_path, capsys):
    """The archive is a tar, gzipped for .tar.gz/.tgz: a name promising another format
    (or none) is one line, and nothing is written."""
    rc, _, err = run_cli(capsys, "bundle", tmp_path / name, "--index", str(demo_index))
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1
    assert ".tar or .tar.gz" in err
    assert list(tmp_path.iterdir()) == []


def test_bundle_disk_full_leaves_no_file(demo_index, tmp_path, capsys, monkeypatch):
    import scim_edge.bundle as bundle_mod

    def full(self, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bundle_mod._BytesReader, "read", full)  # hit while writing the end
    rc, _, err = run_cli(capsys, "bundle", tmp_path / "b.tar", "--index", demo_index)
    assert rc == 2, err
    assert "disk full" in err, err
    assert "no bundle written" in err, err
    assert list(tmp_path.iterdir()) == []


def test_an_index_search_would_refuse_is_not_bundled(demo_index, tmp_path, capsys):
    """A manifest.json that does not read as an index's: bundle refuses what search would
    refuse, and writes nothing."""
    index = home() / "indexes" / "demo"
    shutil.copytree(demo_index, index)
    (index / "manifest.json").write_text("{garbage")
    out = tmp_path / "bundle.tar"
    rc, _, err = run_cli(capsys, "bundle", out, "--index", "demo")
    assert rc == 2
    assert "no readable manifest.json" in err
    assert not out.exists()


def test_model_damaged_before_bundling_is_caught_on_unbundle(tmp_path, capsys):
    d = fake_model(home() / "models")
    with open(d / "int8" / "encoder_model.onnx", "r+b") as f:
        f.write(b"\0\0\0\0")  # same size, different bytes: the bundle hashes the damage
    out = tmp_path / "b.tar"
    assert run_cli(capsys, "bundle", out, "--model", "fake")[0] == 0
    rc, _, err = run_cli(capsys, "unbundle", out, "--home", tmp_path / "h")
    assert rc == 2, err
    assert "encoder_model.onnx" in err, err
    assert "re-export" in err, err
    assert not (tmp_path / "h" / "models" / "fake").exists()


@pytest.mark.slow
def test_bundle_and_unbundle_stream_in_constant_memory(tmp_path):
    """A 300 MB index file goes through both commands with a peak RSS far below it."""
    h = tmp_path / "h"
    idx = h / "indexes" / "big"
    idx.mkdir(parents=True)
    (idx / "manifest.json").write_text(json.dumps({"schema_version": SCHEMA_VERSION}))
    crc = 0
    with open(idx / "segment.store", "wb") as f:
        for _ in range(300):
            chunk = os.urandom(1 << 20)
            crc = zlib.crc32(chunk, crc)
            f.write(chunk)
        # Tantivy's footer (its JSON, length, magic), which bundle checks the bytes against
        footer = json.dumps({"crc": crc}).encode()
        f.write(footer + struct.pack("<II", len(footer), TANTIVY_FOOTER_MAGIC))
    code = (
        "import sys\n"
        "from scim_edge.cli import main\n"
        "rc = main(sys.argv[1:])\n"
        # VmHWM is this process's own peak (ru_maxrss would include the forking parent's)
        "hwm = [ln for ln in open('/proc/self/status') if ln.startswith('VmHWM')][0]\n"
        "print('MAXRSS_MB', int(hwm.split()[1]) // 1024)\n"
        "sys.exit(rc)\n"
    )
    env = {**os.environ, "SCIM_EDGE_HOME": str(h)}
    peaks = []
    bundle = ["bundle", str(tmp_path / "b.tar")]
    unbundle = ["unbundle", str(tmp_path / "b.tar"), "--home", str(tmp_path / "h2")]
    for args in (bundle, unbundle):
        r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                           env=env, timeout=600)  # fmt: skip
        assert r.returncode == 0, r.stderr
        peaks.append(int(r.stdout.split("MAXRSS_MB")[1].split()[0]))
    assert max(peaks) < 100, f"peak RSS {peaks} MB for a 300 MB archive"
    stored = tmp_path / "h2" / "indexes" / "big" / "segment.store"
    assert stored.stat().st_size == (300 << 20) + len(footer) + 8


# ---- hostile or damaged archives -------------------------------------------------------


def _member(name: str, data: bytes = b"x", **kw) -> tuple[tarfile.TarInfo, bytes | None]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for k, v in kw.items():
        setattr(info, k, v)
    if info.type != tarfile.REGTYPE:
        info.size = 0
        return info, None
    return info, data


def _meta_for(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> bytes:
    files = {
        i.name: {"sha256": hashlib.sha256(d).hexdigest(), "size": len(d)}
        for i, d in members
        if d is not None and i.name not in (META_NAME, SUMS_NAME)
    }
    return json.dumps({"format": "scim-edge-bundle", "format_version": 1, "files": files}).encode()


def write_archive(path: Path, members, meta: bytes | None | str = "auto") -> Path:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
        if meta == "auto":
            meta = _meta_for(members)
        if meta is not None:
            info = tarfile.TarInfo(META_NAME)
            info.size = len(meta)
            tar.addfile(info, io.BytesIO(meta))
    return path


INDEX_MANIFEST = json.dumps({"schema_version": SCHEMA_VERSION}).encode()
GOOD = [_member("indexes/x/manifest.json", INDEX_MANIFEST), _member("indexes/x/seg.idx", b"data")]

# Each case: the members, then the exact reason clause unbundle must give. Archive and
# member names are neutral, so no file name can satisfy the assertion on the reason.
HOSTILE = {
    "traversal": ([*GOOD, _member("indexes/x/../../../m1", b"pwn")],
                  "member 'indexes/x/../../../m1' points outside the archive (..)"),
    "traversal-top": ([*GOOD, _member("../m1", b"pwn")],
                      "member '../m1' points outside the archive (..)"),
    "absolute": ([*GOOD, _member("/tmp/scim-edge-test-m1", b"pwn")],
                 "member '/tmp/scim-edge-test-m1' has an absolute path"),
    "symlink": ([*GOOD, _member("indexes/x/m1", type=tarfile.SYMTYPE, linkname="/etc/passwd")],
                "member 'indexes/x/m1' is a link"),
    "hardlink": ([*GOOD, _member("indexes/x/m1", type=tarfile.LNKTYPE,
                                 linkname="indexes/x/seg.idx")], "member 'indexes/x/m1' is a link"),
    "char-device": ([*GOOD, _member("indexes/x/m1", type=tarfile.CHRTYPE, devmajor=1,
                                    devminor=3)], "member 'indexes/x/m1' is a device or pipe"),
    "block-device": ([*GOOD, _member("indexes/x/m1", type=tarfile.BLKTYPE)],
                     "member 'indexes/x/m1' is a device or pipe"),
    "fifo": ([*GOOD, _member("indexes/x/m1", type=tarfile.FIFOTYPE)],
             "member 'indexes/x/m1' is a device or pipe"),
    "unknown-area": ([*GOOD, _member("etc/m1", b"root")], "unexpected member 'etc/m1'"),
    "hidden-name": ([*GOOD, _member("indexes/.m1/f", b"1")],
                    "member 'indexes/.m1/f' has a hidden name"),
    "loose-file": ([*GOOD, _member("indexes/m1", b"1")],
                   "member 'indexes/m1' is not inside an index, model or resource"),
    "duplicate": ([*GOOD, _member("indexes/x/seg.idx", b"other")],
                  "member 'indexes/x/seg.idx' appears twice"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_unbundle_refuses_hostile_archives(case, tmp_path, capsys):
    members, reason = HOSTILE[case]
    archive = write_archive(tmp_path / "bundle.tar", members)
    target = tmp_path / "h"
    rc, _, err = run_cli(capsys, "unbundle", archive, "--home", target)
    assert rc == 2, err
    assert f"{reason}; nothing was installed" in err, err
    assert len([ln for ln in err.splitlines() if ln.startswith("scim-edge: error:")]) == 1, err
    assert "Traceback" not in err
    assert not (tmp_path / "m1").exists()
    assert not Path("/tmp/scim-edge-test-m1").exists()
    assert [p.name for p in target.rglob("*")] == [], "something was written"


def _hash_cases(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    ok_meta = _meta_for(GOOD)
    wrong = json.loads(ok_meta)
    wrong["files"]["indexes/x/seg.idx"]["sha256"] = "0" * 64
    missing = json.loads(ok_meta)
    missing["files"]["indexes/x/other"] = {"sha256": "0" * 64, "size": 1}
    unlisted = json.loads(ok_meta)
    del unlisted["files"]["indexes/x/seg.idx"]
    future = json.loads(ok_meta)
    future["format_version"] = 99
    no_size = json.loads(ok_meta)
    no_size["files"]["indexes/x/seg.idx"]["size"] = "big"
    cases = {
        "hash-mismatch": (json.dumps(wrong).encode(), "indexes/x/seg.idx is corrupt"),
        "listed-but-missing": (
            json.dumps(missing).encode(),
            "indexes/x/other is listed in BUNDLE.json but missing from the archive",
        ),
        "unlisted-file": (
            json.dumps(unlisted).encode(),
            "indexes/x/seg.idx is in the archive but not listed in BUNDLE.json",
        ),
        "no-bundle-json": (None, "it has no BUNDLE.json"),
        "bad-json": (b"{not json", "its BUNDLE.json is not valid JSON"),
        "future-format": (json.dumps(future).encode(), "bundle format 99 is not supported"),
        "size-not-a-number": (
            json.dumps(no_size).encode(),
            "its BUNDLE.json gives no size and sha256 for indexes/x/seg.idx",
        ),
    }
    return {
        name: (write_archive(tmp_path / f"bundle-{i}.tar", GOOD, meta), why)
        for i, (name, (meta, why)) in enumerate(cases.items())
    }


@pytest.mark.parametrize(
    "case",
    ["hash-mismatch", "listed-but-missing", "unlisted-file", "no-bundle-json", "bad-json",
     "future-format", "size-not-a-number"],
)  # fmt: skip
def test_unbundle_verifies_every_hash_before_installing(case, tmp_path, capsys):
    archive, why = _hash_cases(tmp_path)[case]
    rc, _, err = run_cli(capsys, "unbundle", archive, "--home", tmp_path / "h")
    assert rc == 2, err
    assert why in err, err
    assert "nothing was installed" in err, err
    assert not (tmp_path / "h" / "indexes").exists()
    assert [p.name for p in (tmp_path / "h").iterdir()] == []


def _sums(members, override: dict[str, str] | None = None) -> bytes:
    lines = {i.name: hashlib.sha256(d).hexdigest() for i, d in members if d is not None}
    lines.update(override or {})
    return "".join(f"{digest}  {name}\n" for name, digest in lines.items()).encode()


@pytest.mark.parametrize(
    ("manifest", "why"),
    [(b"[]", "no readable manifest.json"), (b"{garbage", "no readable manifest.json"),
     (b'{"format": 1}', "its manifest.json names no index schema"),
     (b'{"schema_version": 99}', "schema version 99; this scim-edge reads")],
)  # fmt: skip
def test_unbundle_refuses_an_index_whose_manifest_is_no_index_s(tmp_path, capsys, manifest, why):
    """A bundle made elsewhere whose index has a manifest that search would refuse: refused
    on unbundle too, nothing installed."""
    members = [_member("indexes/x/manifest.json", manifest), _member("indexes/x/seg.idx", b"d")]
    archive = write_archive(tmp_path / "bundle.tar", members)
    rc, _, err = run_cli(capsys, "unbundle", archive, "--home", tmp_path / "h")
    assert rc == 2, err
    assert f"index 'x': {why}" in err
    assert not (tmp_path / "h" / "indexes").exists()


def test_unbundle_accepts_a_sha256sums_that_agrees(tmp_path, capsys):
    archive = write_archive(tmp_path / "bundle.tar", [*GOOD, _member(SUMS_NAME, _sums(GOOD))])
    rc, _, err = run_cli(capsys, "unbundle", archive, "--home", tmp_path / "h")
    assert rc == 0, err
    assert (tmp_path / "h" / "indexes" / "x" / "seg.idx").read_bytes() == b"data"


def test_unbundle_refuses_a_sha256sums_that_disagrees(tmp_path, capsys):
    """BUNDLE.json and its files agree, but SHA256SUMS (what a user checks with sha256sum
    before scim-edge is installed) names another hash: the two must not silently differ."""
    sums = _sums(GOOD, {"indexes/x/seg.idx": "0" * 64})
    archive = write_archive(tmp_path / "bundle.tar", [*GOOD, _member(SUMS_NAME, sums)])
    rc, _, err = run_cli(capsys, "unbundle", archive, "--home", tmp_path / "h")
    assert rc == 2, err
    assert "SHA256SUMS disagrees with BUNDLE.json; nothing was installed" in err, err
    assert not (tmp_path / "h" / "indexes").exists()


def test_unbundle_truncated_or_not_a_tar(demo_index, tmp_path, capsys):
    good = tmp_path / "good.tar"
    assert run_cli(capsys, "bundle", good, "--index", demo_index)[0] == 0
    data = good.read_bytes()
    cut = tmp_path / "cut.tar"  # ends inside a member
    cut.write_bytes(data[: len(data) // 2 + 100])
    cut_at_header = tmp_path / "cut-at-header.tar"  # ends cleanly between members
    cut_at_header.write_bytes(data[:1024])
    text = tmp_path / "notes.txt"
    text.write_text("hello\n" * 200)
    for archive, why in ((cut, "complete|truncated"), (text, "not a complete bundle"),
                         (cut_at_header, "truncated"),
                         (tmp_path / "missing.tar", "no such file")):  # fmt: skip
        rc, _, err = run_cli(capsys, "unbundle", archive, "--home", tmp_path / "h")
        assert rc == 2, err
        assert re.search(why, err), err
        assert "Traceback" not in err
        assert not (tmp_path / "h" / "indexes").exists()


def test_an_empty_bundle_name_is_refused(demo_index, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["bundle", "", "--index", str(demo_index)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2
    assert len(err) == 1
    assert "must not be empty" in err[0]
