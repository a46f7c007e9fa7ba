"""A chunk's size does not grow with the length of names: ``rokuprof convert`` of a stream of
64 KiB function names gives chunks Sentry takes (each under its size limit, valid, readable by
vroomrs) with the same busy samples per thread as the same stream with short names; a frame's
text is cut to ``FRAME_TEXT_LIMIT`` characters with an ellipsis, as the exports draw names; and
one thread's window over the byte budget is sent as several chunks, cut in time."""

from __future__ import annotations

import json
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import pytest

from rokuprof.export.names import NAME_LIMIT
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.chunk import ChunkBuilder
from rokuprof.sentry.convert import convert_bytes
from rokuprof.sentry.frames import ELLIPSIS, FRAME_TEXT_LIMIT
from rokuprof.sentry.settings import MIN_CHUNK_BYTES, ChunkSettings
from rokuprof.sentry.validate import MAX_CHUNK_BYTES, validate_chunk
from rokuprof.simulator.worst_cases import long_names
from tests.viewers import vroom_v2

ROOT = Path(__file__).resolve().parents[1]
NAMES, LENGTH, DEPTH = 60, 64 * 1024, 2_000


def convert(tmp_path: Path, name: str, data: bytes) -> tuple[list[bytes], dict]:
    """``rokuprof convert`` as a process: the chunk files it wrote and its JSON summary."""
    stream = tmp_path / f"{name}.bsprof"
    stream.write_bytes(data)
    out = tmp_path / name
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "convert", str(stream), "-o", str(out), "-j"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert proc.returncode == 0, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    files = sorted((out / "chunks").glob("*.json"))
    return [f.read_bytes() for f in files], json.loads(proc.stdout)


def busy_per_thread(payloads: list[dict]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in payloads:
        stacks = p["profile"]["stacks"]
        for s in p["profile"]["samples"]:
            if stacks[s["stack_id"]]:
                out[s["thread_id"]] = out.get(s["thread_id"], 0) + 1
    return out


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("long-names")
    long = convert(tmp, "long", long_names(NAMES, LENGTH, DEPTH))
    short = convert(tmp, "short", long_names(NAMES, 12, DEPTH))
    return long, short


def test_long_names_give_valid_chunks_under_the_limit(converted):
    (chunks, summary), _ = converted
    assert chunks and summary["rejected_chunks"] == 0
    for data in chunks:
        assert len(data) < MAX_CHUNK_BYTES
        assert validate_chunk(json.loads(data), size=len(data)) == []


def test_long_names_keep_every_threads_busy_samples(converted):
    (long, _), (short, _) = converted
    got = busy_per_thread([json.loads(d) for d in long])
    want = busy_per_thread([json.loads(d) for d in short])
    assert got == want and sum(want.values()) > 0


def test_frame_text_is_cut_with_an_ellipsis(converted):
    (chunks, _), _ = converted
    assert FRAME_TEXT_LIMIT == NAME_LIMIT  # the same limit as what the exports draw
    functions = {f["function"] for d in chunks for f in json.loads(d)["profile"]["frames"]}
    long = {f for f in functions if f.startswith("fn")}
    assert len(long) == NAMES
    for name in long:
        assert len(name) == FRAME_TEXT_LIMIT and name.endswith(ELLIPSIS)
    for d in chunks:
        for frame in json.loads(d)["profile"]["frames"]:
            for key in ("function", "filename", "abs_path", "module"):
                assert len(frame[key]) <= FRAME_TEXT_LIMIT


def test_vroom_reads_the_long_names_chunks(converted):
    (chunks, _), _ = converted
    reads = vroom_v2.read([vroom_v2.ingest(json.loads(d)) for d in chunks])
    assert reads and all(r.error is None and r.functions for r in reads)


def test_one_thread_over_the_budget_is_cut_in_time():
    """One thread whose window's chunk is over ``max_chunk_bytes`` (1 MiB here): several chunks,
    each within the budget and valid, in time order, with every busy sample of the run."""
    data = long_names(NAMES, LENGTH, DEPTH)
    whole, _ = convert_bytes(data)
    settings = ChunkSettings(max_chunk_bytes=MIN_CHUNK_BYTES)
    chunks, summary = convert_bytes(data, settings)
    assert len(whole) == 1 and len(whole[0].data) > MIN_CHUNK_BYTES  # the window is one chunk
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.data) <= MIN_CHUNK_BYTES
        assert validate_chunk(chunk.payload, size=len(chunk.data)) == []
    # each span ends with an idle sample at the slot the next starts at
    assert all(a.end <= b.start for a, b in pairwise(chunks))
    assert summary.report.split_chunks == len(chunks) - 1
    busy = busy_per_thread([c.payload for c in whole])
    assert busy_per_thread([c.payload for c in chunks]) == busy
    # Sentry's rule (each sample lasts until the next on its thread) gives every busy sample
    # its period in the split chunks too
    seconds = sum(sum(vroom_v2.leaf_times(c.payload).seconds.values()) for c in chunks)
    assert seconds == pytest.approx(sum(busy.values()) / 101, abs=1e-6)


def live_chunks(data: bytes, settings: ChunkSettings) -> list[dict]:
    """The stream as the live capture makes chunks of it: fed in pieces that arrive 0.5 s
    apart, a delta per piece, chunks taken as they are ready, finished as a live run is."""
    reader = ProfileReader()
    start = 1_800_000_000.0
    builder = ChunkBuilder(reader.tables, start, settings=settings)
    out = []
    now = start
    piece = len(data) // 80 + 1
    for at in range(0, len(data), piece):
        reader.feed(data[at : at + piece])
        if reader.header and builder.header is None:
            builder.set_header(reader.header)
        now += 0.5
        builder.update(now)
        out += [c.payload for c in builder.ready(now)]
    builder.update(now)
    out += [c.payload for c in builder.finish(now, after_end=True).chunks]
    return out


def test_live_chunks_of_long_names_are_bounded_and_keep_busy_samples():
    """The live path (the same builder, fed as data arrives): long names give chunks within the
    budget, valid, with the busy samples per thread of the same stream with short names."""
    settings = ChunkSettings(max_chunk_bytes=MIN_CHUNK_BYTES)
    long = live_chunks(long_names(NAMES, LENGTH, DEPTH), settings)
    short = live_chunks(long_names(NAMES, 12, DEPTH), settings)
    for payload in long:
        size = len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())
        assert size <= MIN_CHUNK_BYTES
        assert validate_chunk(payload) == []
    assert busy_per_thread(long) == busy_per_thread(short)
    assert sum(busy_per_thread(long).values()) > 0
