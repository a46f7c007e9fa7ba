"""``perfetto``: the device's app trace and the ``.bsprof`` timeline as tracks, in one Perfetto
trace. Read back with rokuprof's own trace reader and with Google's compiled protos: the
device's packets first, byte for byte; a track per thread with the thread's name; slices
nested as the call stacks were, their total per thread the timeline's busy time (worked out
here from the export model's runs); on the wall clock the device trace's snapshot gives, inside
the device trace's span. Then a session captured with its app trace against the simulated Roku,
and the command end to end, as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from capture_helpers import Recorder, run_capture, sim
from daemon_helpers import cap_config
from diff_helpers import START_MS, stream
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from trace_helpers import MS, TraceWriter, roku_app_trace

from rokuprof.capture.loop import DeviceCapture
from rokuprof.export import FORMATS, export, export_pieces, input_from_bytes
from rokuprof.export.perfetto import SEQUENCE_ID, TRACK_PREFIX, pieces
from rokuprof.export.perfetto_session import perfetto_with_session
from rokuprof.export.report.session import load_session_capture
from rokuprof.simulator import SimulatedDevice
from rokuprof.timeline import IDLE
from rokuprof.trace.model import CLOCK_REALTIME
from rokuprof.trace.reader import read_trace

ROOT = Path(__file__).resolve().parent.parent
SECONDS = 3.0
DEVICE_SEQ = 7  # trace_helpers' sequence
BOOT_MS = 5_000  # the device trace's clock (BOOTTIME) at the run's start


@pytest.fixture(scope="module")
def capture() -> bytes:
    return stream(SECONDS)


@pytest.fixture(scope="module")
def inp(capture):
    return input_from_bytes(capture)


def aligned_trace(*, interned: bool = True, margin_ms: float = 1000) -> bytes:
    """A device trace whose clock snapshot puts BOOTTIME ``BOOT_MS`` at the capture's start
    (``START_MS`` on the wall clock): the render thread swapping every 16 ms, and a script
    slice on the main thread, from ``margin_ms`` before the run to ``margin_ms`` after it."""
    w = TraceWriter(interned=interned, base_ns=0)
    w.clock(BOOT_MS, START_MS)
    w.thread(10, 100, "RenderThr:Main")
    w.thread(12, 102, "BrightScript")
    first, last = BOOT_MS - margin_ms, BOOT_MS + SECONDS * 1000 + margin_ms
    at = first
    while at < last:
        w.slice(at, at + 2, 10, "swapBuffers")
        at += 16
    w.slice(first, last, 12, "ExecBrightScript", args={"callstack": "main pkg:/source/main.brs:1"})
    return w.data()


def _ns(slot: int, hz: int) -> int:
    """A slot's wall time, worked out here: the run start plus slot / hz, to the nearest ns."""
    return START_MS * 1_000_000 + int(Fraction(slot * 1_000_000_000, hz) + Fraction(1, 2))


def busy_ns(inp, thread: int) -> int:
    """The thread's busy time on the timeline: every busy run's span."""
    tl = inp.timeline
    return sum(
        _ns(slot + n, tl.hz) - _ns(slot, tl.hz)
        for slot, sid, n in tl.runs.get(thread, ())
        if sid != IDLE and tl.stacks[sid]
    )


def bsprof_tracks(trace) -> dict[str, int]:
    """The .bsprof thread tracks: name -> uuid."""
    return {
        t.name.removeprefix(TRACK_PREFIX): uuid
        for uuid, t in trace.tracks.items()
        if t.name.startswith(TRACK_PREFIX)
    }


def check_tracks(inp, trace) -> None:
    """A track per thread; slices nested properly; per thread, top-level total = busy time."""
    tracks = bsprof_tracks(trace)
    names = [inp.threads[t] for t in inp.thread_order()]
    assert set(names) <= set(tracks)
    by_track: dict[int, list] = {}
    for s in trace.slices:
        by_track.setdefault(s.track, []).append(s)
    assert trace.unmatched_ends == 0 and trace.skipped_packets == 0
    functions = {f.function for f in inp.frames}
    for thread in inp.thread_order():
        uuid = tracks[inp.threads[thread]]
        slices = by_track.get(uuid, [])
        assert slices, inp.threads[thread]
        for s in slices:
            assert s.end is not None and s.end >= s.start
            assert s.name in functions
            assert "file" in s.args
            if s.parent is None:
                assert s.depth == 0
                continue
            parent = trace.slices[s.parent]
            assert parent.track == uuid and s.depth == parent.depth + 1
            assert parent.start <= s.start and s.end <= parent.end
        top = sum(s.end - s.start for s in slices if s.depth == 0)
        assert top == busy_ns(inp, thread), inp.threads[thread]
        period = Fraction(1_000_000_000, inp.timeline.hz)
        assert abs(top - inp.timeline.busy_samples(thread) * period) <= len(slices)


def test_registered_with_its_suffix():
    info = FORMATS["perfetto"]
    assert info.suffix == ".perfetto-trace" and info.binary and not info.multi_file


def test_a_capture_alone_is_its_tracks_on_the_wall_clock(inp):
    data = export(inp, "perfetto")
    assert b"".join(export_pieces(inp, "perfetto")) == data
    trace = read_trace(data)
    assert trace.error is None and trace.trailing_bytes == 0 and not trace.problems
    check_tracks(inp, trace)
    # its own clock snapshot: wall time is the trace's clock
    assert trace.trace_clock == CLOCK_REALTIME and trace.wall_offset_ns() == 0
    packets = pb.Trace.FromString(data).packet
    assert packets[0].clock_snapshot.primary_trace_clock == CLOCK_REALTIME
    assert {p.trusted_packet_sequence_id for p in packets} == {SEQUENCE_ID}
    assert packets[0].sequence_flags & 1  # the sequence's state cleared first
    timed = [p for p in packets if p.HasField("track_event")]
    assert timed and all(p.timestamp_clock_id == CLOCK_REALTIME for p in timed)
    stamps = [p.timestamp for p in timed]
    assert stamps == sorted(stamps)  # one sequence, in time order
    assert stamps[0] >= START_MS * 1_000_000
    begins = sum(p.track_event.type == pb.TrackEvent.TYPE_SLICE_BEGIN for p in timed)
    ends = sum(p.track_event.type == pb.TrackEvent.TYPE_SLICE_END for p in timed)
    assert begins == ends == len(trace.slices)


def test_the_device_trace_comes_first_byte_for_byte_then_the_tracks_beside_it(inp):
    device = aligned_trace()
    data = b"".join(pieces(inp, device_trace=device))
    assert data.startswith(device)
    assert len(pb.Trace.FromString(data).packet) > len(pb.Trace.FromString(device).packet)
    ours = pb.Trace.FromString(data[len(device) :]).packet
    assert ours[0].HasField("track_descriptor")  # no clock snapshot of ours: the device's
    assert not any(p.HasField("clock_snapshot") for p in ours)
    assert {p.trusted_packet_sequence_id for p in ours} == {SEQUENCE_ID}

    trace = read_trace(data)
    assert trace.error is None and not trace.problems
    check_tracks(inp, trace)
    alone = read_trace(device)
    assert {t.name for t in alone.tracks.values()} <= {t.name for t in trace.tracks.values()}
    assert len(trace.slices) > len(alone.slices)
    # Aligned through the device's snapshot: the .bsprof slices (written on REALTIME) are read
    # on the trace's clock, inside the device trace's span.
    assert trace.wall_offset_ns() == (START_MS - BOOT_MS) * MS
    first, last = alone.first_ts, alone.last_ts
    ours_ids = set(bsprof_tracks(trace).values())
    mine = [s for s in trace.slices if s.track in ours_ids]
    assert mine and all(first <= s.start and s.end <= last for s in mine)
    assert min(s.start for s in mine) >= BOOT_MS * MS  # not before the run's start


def test_a_device_trace_on_the_same_sequence_and_tracks_moves_them(inp):
    w = TraceWriter(base_ns=0)
    w.clock(BOOT_MS, START_MS)
    w.thread(0x726F6B7570726F66 + 1, 100, "RenderThr:Main")  # our first thread track's uuid
    w.slice(BOOT_MS, BOOT_MS + 5, 0x726F6B7570726F66 + 1, "swapBuffers")
    packets = []
    for raw in w.packets:  # on our sequence
        p = pb.Trace.FromString(raw).packet[0]
        p.trusted_packet_sequence_id = SEQUENCE_ID
        packets.append(pb.Trace(packet=[p]).SerializeToString())
    device = b"".join(packets)
    data = b"".join(pieces(inp, device_trace=device))
    assert data.startswith(device)
    ours = pb.Trace.FromString(data[len(device) :]).packet
    assert {p.trusted_packet_sequence_id for p in ours} == {SEQUENCE_ID + 1}
    trace = read_trace(data)
    check_tracks(inp, trace)
    assert trace.thread_name(0x726F6B7570726F66 + 1) == "RenderThr:Main"


def test_a_device_trace_cut_inside_a_packet_keeps_its_whole_packets(inp):
    device = roku_app_trace(interned=True).data()
    notes: list[str] = []
    data = b"".join(pieces(inp, device_trace=[device[:100], device[100:-3]], notes=notes))
    whole = device[: len(device) - len(roku_app_trace(interned=True).packets[-1])]
    assert data.startswith(whole) and not data.startswith(device[:-3])
    assert notes and "ends inside a packet" in notes[0]
    trace = read_trace(data)
    assert trace.error is None and trace.trailing_bytes == 0
    check_tracks(inp, trace)


def test_a_device_trace_that_is_not_a_trace_is_left_out_past_its_packets(inp):
    device = roku_app_trace(interned=False).data()
    notes: list[str] = []
    data = b"".join(pieces(inp, device_trace=device + b"\x0fgarbage", notes=notes))
    assert data.startswith(device) and b"garbage" not in data
    assert notes and "not a trace" in notes[0]
    check_tracks(inp, read_trace(data))


def test_a_session_s_trace_is_read_from_its_directory(tmp_path, capture, inp):
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes(capture)
    files, notes = perfetto_with_session(inp, session)  # no trace: the tracks alone
    assert b"".join(files[""]) == export(inp, "perfetto") and notes == []
    device = aligned_trace()
    (session / "trace.perfetto-trace").write_bytes(device)
    files, notes = perfetto_with_session(inp, session)
    data = b"".join(files[""])
    assert data == b"".join(pieces(inp, device_trace=device)) and notes == []


#: The simulator makes both files from one run clock (the .bsprof's timeline ends where the
#: trace does); a sample's period of slack at either end.
SLACK_NS = 10_000_000


async def test_a_captured_session_exports_its_trace_and_its_tracks(tmp_path: Path) -> None:
    async with SimulatedDevice(sim(run_seconds=2.0, speed=1.0)) as dev:
        config = cap_config(dev, tmp_path, runs=1, trace=True)
        summary = await run_capture(DeviceCapture(config, observer=Recorder()), timeout=40)
    [session] = summary.sessions
    device = (session.path / "trace.perfetto-trace").read_bytes()
    assert device
    inp = load_session_capture(session.path)
    files, notes = perfetto_with_session(inp, session.path)
    data = b"".join(files[""])
    assert notes == []
    assert data.startswith(device)
    trace = read_trace(data)
    assert trace.error is None and not trace.problems
    check_tracks(inp, trace)
    alone = read_trace(device)
    assert "RenderThr:Main" in {t.name for t in trace.tracks.values()}
    offset = trace.wall_offset_ns()
    assert offset is not None
    first = alone.first_ts  # both on the trace's clock (the reader converts REALTIME)
    last = max(s.end if s.end is not None else s.start for s in alone.slices)
    ours = set(bsprof_tracks(trace).values())
    mine = [s for s in trace.slices if s.track in ours]
    assert mine
    assert first - SLACK_NS <= min(s.start for s in mine)
    assert max(s.end for s in mine) <= last + SLACK_NS


def _rokuprof(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", *args],
        capture_output=True, text=True, timeout=120, check=False,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip


@pytest.mark.parametrize("trace", ["roku", "aligned"])
def test_export_session_as_a_process_then_inspect_it(tmp_path, capture, inp, trace):
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes(capture)
    device = roku_app_trace(interned=True).data() if trace == "roku" else aligned_trace()
    (session / "trace.perfetto-trace").write_bytes(device)
    done = _rokuprof("export", str(session), "-f", "perfetto")
    assert done.returncode == 0, done.stderr
    target = session / "capture.perfetto-trace"
    assert target.is_file() and f"perfetto: {target}" in done.stdout
    data = target.read_bytes()
    assert data.startswith(device)
    seen = _rokuprof("inspect", str(target), "--json")
    assert seen.returncode == 0, seen.stderr
    report = json.loads(seen.stdout)
    assert report["kind"] == "perfetto-trace" and report["complete"]
    threads = set(report["threads"])
    device_threads = set(
        json.loads(_rokuprof("inspect", str(session), "--trace", "--json").stdout)["threads"]
    )
    assert device_threads and device_threads <= threads
    assert {TRACK_PREFIX + inp.threads[t] for t in inp.thread_order()} <= threads
    check_tracks(inp, read_trace(data))


def test_export_a_capture_alone_as_a_process(tmp_path, capture, inp):
    source = tmp_path / "run.bsprof"
    source.write_bytes(capture)
    done = _rokuprof("export", str(source), "-f", "perfetto")
    assert done.returncode == 0, done.stderr
    data = (tmp_path / "run.perfetto-trace").read_bytes()
    assert data == export(inp, "perfetto")
    seen = json.loads(_rokuprof("inspect", str(tmp_path / "run.perfetto-trace"), "--json").stdout)
    assert set(seen["threads"]) == {TRACK_PREFIX + inp.threads[t] for t in inp.thread_order()}
