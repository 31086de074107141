"""Dump reading: formats, encodings, multistream, and every way a dump can be unreadable."""

from __future__ import annotations

import bz2
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from index_builder.dump_reader import DumpReader, default_index_path
from scim_edge.errors import DumpError
from tests.conftest import ROOT, shared_file

MAKE_BIG_DUMP = ROOT.parent / "shared" / "tools" / "make_big_dump.py"


def make_dump(out: Path, mb: float, *, multistream: bool) -> Path:
    if not MAKE_BIG_DUMP.exists():
        pytest.skip(f"dump generator not present: {MAKE_BIG_DUMP}")
    src = shared_file("enwiki-sample.xml.bz2")
    cmd = [sys.executable, str(MAKE_BIG_DUMP), "--source", str(src), "--mb", str(mb), "-o"]
    subprocess.run([*cmd, str(out), *(["--multistream"] if multistream else [])], check=True,
                   capture_output=True)  # fmt: skip
    return out


@pytest.fixture(scope="module")
def multistream_dump(tmp_path_factory) -> Path:
    return make_dump(tmp_path_factory.mktemp("ms") / "big-multistream.xml.bz2", 8, multistream=True)


@pytest.fixture(scope="module")
def enwiki_xml(tmp_path_factory) -> bytes:
    return bz2.decompress(shared_file("enwiki-sample.xml.bz2").read_bytes())


def test_reads_enwiki_sample_pages_and_redirects():
    reader = DumpReader(shared_file("enwiki-sample.xml.bz2"))
    pages = list(reader)
    assert len(pages) == 206 == reader.pages_read
    assert reader.lang == "en" and reader.compression == "bz2" and not reader.multistream
    assert reader.bytes_read == reader.total_bytes
    assert reader.xml_bytes > 6_000_000
    first = pages[0]
    assert (first.page_id, first.ns, first.title) == (10, 0, "AccessibleComputing")
    assert first.redirect == "Computer accessibility"
    anarchism = next(p for p in pages if p.title == "Anarchism")
    assert anarchism.redirect is None and len(anarchism.text) > 100_000
    assert "'''Anarchism'''" in anarchism.text  # entities decoded, wikitext intact
    assert sum(p.redirect is not None for p in pages if p.ns == 0) == 99


def test_reads_utf16_bgwiki_sample():
    reader = DumpReader(shared_file("bgwiki-sample.xml.bz2"))
    pages = list(reader)
    assert [p.title for p in pages][0] == "Григориански календар"
    assert [p.ns for p in pages] == [0, 4, 4]
    assert reader.lang == "bg"
    assert "календар" in pages[0].text


def test_plain_xml_and_stdin(tmp_path, enwiki_xml, monkeypatch):
    path = tmp_path / "dump.xml"
    path.write_bytes(enwiki_xml)
    titles = [p.title for p in DumpReader(path)]
    assert len(titles) == 206
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(enwiki_xml)))
    stdin_reader = DumpReader("-")
    assert [p.title for p in stdin_reader] == titles
    assert stdin_reader.total_bytes is None and stdin_reader.name == "stdin"


def test_bz2_on_stdin(monkeypatch):
    data = shared_file("bgwiki-sample.xml.bz2").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    assert [p.ns for p in DumpReader("-")] == [0, 4, 4]


def test_declared_single_byte_encoding(tmp_path):
    xml = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<mediawiki xml:lang="fr"><page>'
        "<title>Caf\xe9</title><ns>0</ns><id>7</id><revision><id>1</id>"
        "<text>Le caf\xe9 est une boisson.</text></revision></page></mediawiki>"
    ).encode("latin-1")
    path = tmp_path / "latin1.xml"
    path.write_bytes(xml)
    (page,) = list(DumpReader(path))
    assert page.title == "Café" and page.text == "Le café est une boisson."


def test_multistream_matches_sequential_read(multistream_dump, tmp_path):
    assert default_index_path(multistream_dump) is not None
    reader = DumpReader(multistream_dump)
    assert reader.multistream
    parallel = [(p.page_id, p.title, p.redirect, p.text) for p in reader]
    assert reader.bytes_read == reader.total_bytes and reader.lang == "en"
    # The same file without its index is read as one sequence of bz2 streams.
    alone = tmp_path / "alone.xml.bz2"
    shutil.copy(multistream_dump, alone)
    single = DumpReader(alone)
    assert not single.multistream
    assert parallel == [(p.page_id, p.title, p.redirect, p.text) for p in single]
    assert len(parallel) > 100


def test_multistream_index_given_explicitly(multistream_dump, tmp_path):
    index = default_index_path(multistream_dump)
    dump = tmp_path / "renamed.xml.bz2"
    shutil.copy(multistream_dump, dump)
    moved = tmp_path / "elsewhere-index.txt.bz2"
    shutil.copy(index, moved)
    reader = DumpReader(dump, multistream_index=moved)
    assert reader.multistream and len(list(reader)) > 100


# ---- unreadable dumps -----------------------------------------------------------------------


def _error(source, **kw) -> str:
    with pytest.raises(DumpError) as e:
        list(DumpReader(source, **kw))
    msg = e.value.one_line()
    assert "\n" not in msg
    return msg


def test_missing_path_and_directory(tmp_path):
    assert "no such file" in _error(tmp_path / "nope.xml.bz2")
    assert "is a directory" in _error(tmp_path)


def test_non_xml_files(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("just some notes, not a dump\n")
    assert "not an XML dump" in _error(text)
    empty = tmp_path / "empty.xml"
    empty.write_bytes(b"")
    assert "empty" in _error(empty)
    fake_bz2 = tmp_path / "fake.xml.bz2"
    fake_bz2.write_bytes(b"BZh9" + b"\x00" * 200)
    assert "not a valid bz2" in _error(fake_bz2)
    html = tmp_path / "page.xml"
    html.write_text("<html><body>hello</body></html>")
    assert "not a MediaWiki dump" in _error(html)


def test_truncated_bz2_says_how_far(tmp_path):
    data = shared_file("enwiki-sample.xml.bz2").read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) // 2])
    msg = _error(cut)
    assert "truncated bz2" in msg and "pages" in msg and "MB of XML" in msg
    pages_read = int(msg.split("after ")[1].split(" pages")[0])
    assert 0 < pages_read < 206


def test_xml_that_breaks_off(tmp_path, enwiki_xml):
    cut = tmp_path / "cut.xml"
    cut.write_bytes(enwiki_xml[: len(enwiki_xml) // 2])
    msg = _error(cut)
    assert "XML ends early" in msg and "pages" in msg


def test_malformed_xml_midway(tmp_path, enwiki_xml):
    mid = enwiki_xml.index(b"<page>", len(enwiki_xml) // 2)
    bad = enwiki_xml[:mid] + b"<page><title>x</titel></page>" + enwiki_xml[mid:]
    path = tmp_path / "bad.xml"
    path.write_bytes(bad)
    msg = _error(path)
    assert "malformed XML" in msg and "line" in msg and "pages" in msg
    assert "after 0 pages" not in msg


def test_truncated_multistream(multistream_dump, tmp_path):
    data = multistream_dump.read_bytes()
    offsets = [
        int(line.split(":")[0])
        for line in bz2.decompress(default_index_path(multistream_dump).read_bytes())
        .decode()
        .splitlines()
    ]
    assert len(set(offsets)) >= 3
    cut = tmp_path / "cut-multistream.xml.bz2"
    cut.write_bytes(data[: max(offsets) - 10])
    msg = _error(cut, multistream_index=default_index_path(multistream_dump))
    assert "truncated multistream dump" in msg
    # A stream cut inside, with an index that does not reach past the cut.
    index = tmp_path / "short-index.txt"
    index.write_text("\n".join(f"{o}:1:x" for o in offsets if o < max(offsets)) + "\n")
    msg = _error(cut, multistream_index=index)
    assert "truncated or corrupt bz2 stream" in msg and "ends early" in msg
    assert "pages" in msg


# ---- block-parallel reading of single-stream bz2 -------------------------------------------


@pytest.fixture(scope="module")
def pool():
    """A parsing pool shared by the module's tests, stopped as a build stops its own
    (`stop_pool`: a worker that misses terminate()'s SIGTERM is killed after a grace, where
    a bare terminate() and join() waited for it for ever and hung the suite)."""
    from index_builder.dump_reader import make_pool, stop_pool

    p = make_pool(2)
    yield p
    assert stop_pool(p)


@pytest.fixture(scope="module")
def single_stream_dump(multistream_dump, tmp_path_factory) -> Path:
    """The XML of the multistream dump as one bz2 stream (level 1: quick to make)."""
    dst = tmp_path_factory.mktemp("single") / "one.xml.bz2"
    dst.write_bytes(bz2.compress(bz2.decompress(multistream_dump.read_bytes()), 1))
    return dst


def test_bz2_blocks_tile_the_file(multistream_dump, single_stream_dump):
    from index_builder.bz2_blocks import blocks_in_range, decompress_blocks, scan_blocks

    for path in (single_stream_dump, multistream_dump):  # one stream; concatenated streams
        blocks = scan_blocks(str(path))
        assert len(blocks) > 3 and all(b.closed for b in blocks)
        size, step = path.stat().st_size, 200_000
        parts = [blocks_in_range(str(path), s, s + step) for s in range(0, size, step)]
        assert [b for part in parts for b in part] == blocks
    # blocks of concatenated streams decompress on their own, in groups across streams too
    whole = bz2.decompress(multistream_dump.read_bytes())
    blocks = scan_blocks(str(multistream_dump))
    groups = [blocks[i : i + 3] for i in range(0, len(blocks), 3)]
    assert b"".join(decompress_blocks(str(multistream_dump), g) for g in groups) == whole


def test_block_parallel_reading_matches_sequential(single_stream_dump, pool):
    single = single_stream_dump
    reader = DumpReader(single)
    assert reader._blocks_ok()
    pages = [p for batch in reader.map(None, pool) for p in batch]
    sequential = list(DumpReader(single))
    assert [(p.page_id, p.title, p.text) for p in pages] == [
        (p.page_id, p.title, p.text) for p in sequential
    ]
    assert reader.pages_read == len(pages) and reader.bytes_read == reader.total_bytes
    assert reader.xml_bytes == len(bz2.decompress(single.read_bytes()))
    assert reader.lang == "en"


def test_block_parallel_reading_of_truncated_file(single_stream_dump, tmp_path, pool):
    data = single_stream_dump.read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: len(data) * 3 // 4])
    with pytest.raises(DumpError) as e:
        for _ in DumpReader(cut).map(None, pool):
            pass
    msg = e.value.one_line()
    assert "truncated bz2" in msg and "pages" in msg
    assert int(msg.split("after ")[1].split(" pages")[0]) > 0


def test_utf16_bz2_is_read_sequentially_even_with_a_pool(pool):
    reader = DumpReader(shared_file("bgwiki-sample.xml.bz2"))
    assert not reader._blocks_ok()
    pages = [p for batch in reader.map(None, pool) for p in batch]
    assert [p.ns for p in pages] == [0, 4, 4]


def test_stopping_a_pool_whose_result_lock_a_killed_worker_held_does_not_hang():
    """A worker killed while sending its result leaves the result queue's lock taken, and
    `Pool.terminate()` then waits on it for ever; `stop_pool` gives up after its timeout."""
    import time

    from index_builder.dump_reader import make_pool, stop_pool

    pool = make_pool(1)
    lock = pool._outqueue._wlock  # as a worker killed mid-send leaves it
    lock.acquire()
    t0 = time.perf_counter()
    stopped = stop_pool(pool, timeout=1.0)
    waited = time.perf_counter() - t0
    lock.release()  # let the pool's own threads finish
    assert (stopped, waited < 5.0) == (False, True)


def test_a_pool_stops_in_time_after_its_idle_worker_took_a_sigterm():
    """`kill -- -PGID` (or a service stop) sends SIGTERM to every process of the command.
    An idle worker waits for its next task holding the task queue's read lock; killed
    outright there, it left the lock taken and the parent's `Pool.terminate()` waited on
    it until `stop_pool` gave up. The worker now leaves by unwinding, releasing it."""
    import os
    import signal
    import time

    from index_builder.dump_reader import make_pool, stop_pool

    pool = make_pool(1)
    assert pool.apply(int, ("1",)) == 1
    worker = pool._pool[0]
    time.sleep(0.3)  # back in its wait for the next task
    os.kill(worker.pid, signal.SIGTERM)
    worker.join(5.0)
    assert stop_pool(pool, timeout=3.0)


def _deaf_to_sigterm_for(seconds: float) -> None:
    import signal
    import time

    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    time.sleep(seconds)


def test_a_pool_stops_in_time_when_a_worker_missed_terminates_sigterm():
    """A worker forked an instant before `terminate()` can drop its SIGTERM (here: one
    that ignores it); `stop_pool` kills what is still alive after its grace."""
    import time

    from index_builder.dump_reader import make_pool, stop_pool

    pool = make_pool(1)
    pool.apply_async(_deaf_to_sigterm_for, (30.0,))
    time.sleep(0.5)  # the worker is in the task, deaf
    assert stop_pool(pool, timeout=6.0)


def test_a_signal_taken_by_another_thread_reaches_a_build_waiting_for_a_result():
    """A signal sent to the whole process may be taken by one of the pool's threads; the
    main thread, waiting for a task's result, must still run its handler (an interrupt
    whose workers were stopped otherwise waited for their results for ever)."""
    import signal
    import threading
    import time

    from index_builder.dump_reader import make_pool, result_of, stop_pool

    class Interrupted(Exception):
        pass

    def handler(signum, frame):
        raise Interrupted

    previous = signal.signal(signal.SIGUSR1, handler)
    pool = make_pool(1)
    try:
        res = pool.apply_async(_deaf_to_sigterm_for, (8.0,))
        other = threading.Thread(
            target=lambda: (
                time.sleep(0.3),
                signal.pthread_kill(threading.get_ident(), signal.SIGUSR1),
            )
        )
        t0 = time.perf_counter()
        other.start()
        with pytest.raises(Interrupted):
            result_of(res)
        assert time.perf_counter() - t0 < 4.0
    finally:
        signal.signal(signal.SIGUSR1, previous)
        stop_pool(pool, timeout=6.0)


def test_a_pool_with_nothing_in_the_way_stops_in_time():
    from index_builder.dump_reader import make_pool, stop_pool

    assert stop_pool(make_pool(1), timeout=10.0)
