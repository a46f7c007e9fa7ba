"""The run machine (rokuprof/capture/machine.py), fed scripted events: no sockets, no clock.

Property tests over random event sequences (splits, ticks, stalls, stops, ends of every kind,
archive limits, corrupt data, facts at any point) check what every run must satisfy; the named
tests pin single behaviours, among them chunks written on time with a scripted clock.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from sentry_helpers import synthetic_stream

from rokuprof.capture.chunks import RunContext, add_walls
from rokuprof.capture.config import CaptureConfig
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.capture.machine import (
    Archive,
    CloseStream,
    EndKind,
    Facts,
    Finished,
    FreeSpace,
    Notify,
    OpenSession,
    Received,
    RunMachine,
    RunPlan,
    StopRequested,
    StreamEnded,
    Tick,
    WriteChunk,
    WriteRecord,
)
from rokuprof.capture.stop import StopCause
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry import ChunkBuilder, ChunkSettings, convert_bytes
from rokuprof.sentry.coverage import chunk_samples
from rokuprof.sentry.frames import frame_for

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
STREAMS = {
    name: (SAMPLES / f"cafe-tv-{name}.bsprof").read_bytes()
    for name in ("cpu-only", "corrupt", "cut-short")
}
START = 1_800_000_000.0
CHUNK_SECONDS = 5.0
FINAL = {"complete", "truncated", "interrupted", "failed"}


class NumberedSink:
    """The real chunk builder with chunk IDs numbered per run (so runs can be compared)."""

    def __init__(self, context: RunContext) -> None:
        numbers = iter(range(1, 1 << 30))
        self.builder = ChunkBuilder(
            context.tables,
            context.start,
            header=context.header,
            settings=ChunkSettings(chunk_seconds=CHUNK_SECONDS),
            profiler_id=context.profiler_id,
            new_id=lambda: f"{next(numbers):032x}",
        )

    def add(self, delta, arrival: float) -> None:
        add_walls(self.builder, delta, arrival)

    def ready(self, now: float) -> list[bytes]:
        return [chunk.data for chunk in self.builder.ready(now)]

    def finish(self, end: float):
        flush = self.builder.finish(end)
        return [c.data for c in flush.chunks], {"leftover_samples": flush.report.leftover_samples}


def machine(archive_limits: ArchiveLimits | None = None, sink=NumberedSink) -> RunMachine:
    settings = CaptureConfig(
        host="127.0.0.1",
        out=Path("/out"),
        chunk_settings=ChunkSettings(chunk_seconds=CHUNK_SECONDS),
        archive_limits=archive_limits or ArchiveLimits(min_free_bytes=0),
    )
    plan = RunPlan(
        session="s",
        profiler_id="ab" * 16,
        device={"dir": "dev", "host": "127.0.0.1"},
        start=START,
        settings=settings,
    )
    return RunMachine(plan, sink)


def run(events, archive_limits: ArchiveLimits | None = None):
    """Feed every event (then the stream's end, if the run is still going); all actions."""
    m = machine(archive_limits)
    actions = []
    for event in events:
        actions += m.handle(event)
    last = max((getattr(e, "at", getattr(e, "now", START)) for e in events), default=START)
    actions += m.handle(StreamEnded(EndKind.CLOSED, "the device closed the stream", last))
    return m, actions


@st.composite
def scripts(draw):
    """A stream's bytes split anywhere, arriving over time, with ticks, stalls, facts, and
    perhaps a stop or an early end anywhere."""
    name = draw(st.sampled_from(sorted(STREAMS)))
    data = STREAMS[name]
    cuts = sorted(draw(st.sets(st.integers(1, len(data) - 1), max_size=12)))
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    if draw(st.booleans()):  # the device stops sending part-way (a truncated run)
        pieces = pieces[: draw(st.integers(0, len(pieces)))]
    events, now, offset = [], START, 0
    interrupt_at = draw(st.integers(0, len(pieces) + 1))
    for i, piece in enumerate(pieces):
        if i == interrupt_at:
            events.append(draw(interruptions(now)))
        now += draw(st.sampled_from([0.0, 0.001, 0.3, 1.0, 2.5, 7.0]))  # 7 s: a stall
        for _ in range(draw(st.integers(0, 3))):
            now += draw(st.sampled_from([0.0, 0.5, 1.0, 6.0]))
            events.append(Tick(now))
        if draw(st.integers(0, 9)) == 0:
            events.append(Facts("app", {"ecp": {"id": "dev", "name": "Café TV"}}))
        if draw(st.integers(0, 9)) == 0:
            events.append(FreeSpace(draw(st.sampled_from([0, 1 << 40]))))
        events.append(("bytes", offset, offset + len(piece), now))
        offset += len(piece)
    if interrupt_at >= len(pieces):
        events.append(draw(interruptions(now + 0.5)))
    limits = ArchiveLimits(
        max_bytes_after_error=draw(st.sampled_from([0, 100, 16 << 20])),
        max_session_bytes=draw(st.sampled_from([0, 5_000, 60_000])),
        min_free_bytes=draw(st.sampled_from([0, 1 << 20])),
    )
    return name, events, limits


def materialize(name: str, script: list) -> list:
    """The script's events, with its ``("bytes", start, end, at)`` steps as :class:`Received`
    (kept as offsets in the script so that a failing example prints small)."""
    data = STREAMS[name]
    return [Received(data[e[1] : e[2]], e[3]) if isinstance(e, tuple) else e for e in script]


def interruptions(at: float):
    return st.one_of(
        st.builds(StopRequested, st.sampled_from(list(StopCause)), st.just(at)),
        st.builds(StreamEnded, st.sampled_from(list(EndKind)), st.just("it ended"), st.just(at)),
    )


def received_before_end(events) -> bytes:
    """The bytes the device delivered before the first stop or end event."""
    out = bytearray()
    for event in events:
        if isinstance(event, StopRequested | StreamEnded):
            break
        if isinstance(event, Received):
            out += event.data
    return bytes(out)


def paths_per_stack(data: bytes) -> Counter:
    """How many call paths of the stream share each stack as a chunk writes it (paths that
    differ only in where a caller made the call have the same frames)."""
    tables = ProfileReader.from_bytes(data).tables
    counts: Counter = Counter()
    for path in tables.snapshot():
        stack = tables.stack(path)
        if stack:
            frames = (frame_for(tables, node) for node in stack)
            counts[tuple(json.dumps(f, sort_keys=True, ensure_ascii=False) for f in frames)] += 1
    return counts


def samples_per_stack(payloads) -> Counter:
    counts: Counter = Counter()
    for payload in payloads:
        counts += chunk_samples(json.loads(payload))[0]
    return counts


@given(scripts())
def test_every_run_ends_once_archives_each_byte_once_and_chunks_every_sample(script) -> None:
    name, events, limits = script
    events = materialize(name, events)
    m, actions = run(events, limits)
    kinds = [type(a) for a in actions]

    # Exactly one end, last, with one status and one reason.
    assert kinds.count(Finished) == 1 and kinds[-1] is Finished
    assert kinds.count(CloseStream) == 1
    record = actions[-1].record
    sent = received_before_end(events)
    if not sent:
        assert record is None and OpenSession not in kinds
        return
    assert record.status in FINAL and record.end_reason
    assert kinds.count(OpenSession) == 1 and kinds.index(OpenSession) < kinds.index(Archive)
    assert isinstance(actions[-2], WriteRecord) and actions[-2].record == record

    # The archive gets every byte received before the end exactly once, in order, up to a
    # limit's cut; the cut is the only reason for fewer.
    archived = b"".join(a.data for a in actions if isinstance(a, Archive))
    assert sent.startswith(archived)
    if m.cut is None:
        assert archived == sent
    else:
        assert record.errors[-1]["kind"] in ("limit", "decoder")
        assert any(e["kind"] == "limit" for e in record.errors)
    assert record.bytes == len(archived)

    # Chunks cover every sample: per stack, what the chunks and the leftovers hold is what an
    # offline conversion of the archive gives (within one sample per call path of the stack:
    # each conversion is within a period of every path's wall time, rounding its own way), less
    # what either could not place (a cut-short run offline ends at its busiest thread's busy
    # time, so another thread's last samples may not fit before it).
    live = samples_per_stack(a.data for a in actions if isinstance(a, WriteChunk))
    offline, summary = convert_bytes(archived, ChunkSettings(chunk_seconds=CHUNK_SECONDS))
    want = samples_per_stack(c.data for c in offline)
    leftovers = record.chunk_report.get("leftover_samples", 0)
    total = sum(live.values()) + leftovers
    assert abs(total - sum(want.values()) - summary.report.leftover_samples) <= max(1, len(want))
    paths = paths_per_stack(archived)
    unplaced = leftovers + summary.report.leftover_samples  # either side's, on any stack
    for stack in set(live) | set(want):
        assert abs(live[stack] - want[stack]) <= max(1, paths[stack]) + unplaced, stack
    assert record.chunks == sum(1 for a in actions if isinstance(a, WriteChunk))


@given(scripts())
def test_the_same_events_give_the_same_actions(script) -> None:
    name, events, limits = script
    events = materialize(name, events)
    assert run(events, limits)[1] == run(events, limits)[1]


# -- single behaviours -------------------------------------------------------------------


def feed_steadily(m: RunMachine, data: bytes, seconds: float, pieces: int = 300):
    """``data`` in ``pieces`` evenly over ``seconds``, ticking when the machine asks; returns
    (time, action) for every action."""
    out = []
    step = seconds / pieces
    size = -(-len(data) // pieces)
    for i in range(pieces):
        at = START + (i + 1) * step
        while (due := m.next_tick()) is not None and due <= at:
            out += [(due, a) for a in m.handle(Tick(due))]
        out += [(at, a) for a in m.handle(Received(data[i * size : (i + 1) * size], at))]
    return out


def test_a_chunk_is_written_within_one_second_of_its_window_end() -> None:
    data = STREAMS["cpu-only"]
    m = machine()
    timed = feed_steadily(m, data, 30.0)
    writes = [(t, json.loads(a.data)) for t, a in timed if isinstance(a, WriteChunk)]
    assert len(writes) >= 4
    for written_at, payload in writes:
        window_end = max(s["timestamp"] for s in payload["profile"]["samples"])
        assert written_at - window_end <= 1.0 + 1e-6, (written_at, window_end)


def test_stop_is_recorded_with_its_cause() -> None:
    data = STREAMS["cpu-only"]
    for cause, reason in (
        (StopCause.CTRL_C, "stopped by Ctrl-C"),
        (StopCause.SIGTERM, "stopped by SIGTERM"),
        (StopCause.DURATION, "--duration reached"),
        (StopCause.RUNS, "--runs reached"),
    ):
        m = machine()
        m.handle(Received(data[:5000], START + 1))
        actions = m.handle(StopRequested(cause, START + 2))
        record = actions[-1].record
        assert record.status == "interrupted" and record.end_reason.startswith(reason)


def test_each_end_kind_is_classified_once() -> None:
    data = STREAMS["cpu-only"]
    expected = {
        EndKind.CLOSED: "truncated",
        EndKind.CUT_SHORT: "truncated",
        EndKind.IDLE: "truncated",
        EndKind.LOST: "truncated",
        EndKind.PROTOCOL: "failed",
    }
    for kind, status in expected.items():
        m = machine()
        m.handle(Received(data[:5000], START + 1))
        record = m.handle(StreamEnded(kind, "why", START + 2))[-1].record
        assert record.status == status, kind
        if kind is not EndKind.CLOSED:
            assert record.errors == [{"kind": str(kind), "message": "why"}]
    m = machine()
    record = m.handle(Received(data, START + 1))
    record = m.handle(StreamEnded(EndKind.CLOSED, "closed", START + 2))[-1].record
    assert record.status == "complete" and not record.errors


def test_the_footer_time_ends_a_complete_run_even_if_the_close_comes_later() -> None:
    m = machine()
    m.handle(Received(STREAMS["cpu-only"], START + 3))
    record = m.handle(StreamEnded(EndKind.CLOSED, "closed", START + 60))[-1].record
    assert record.end == START + 3


def test_nothing_received_means_no_session() -> None:
    m = machine()
    actions = m.handle(StreamEnded(EndKind.IDLE, "no data for 120 s", START + 120))
    assert actions == [CloseStream(), Finished(None, "no data for 120 s")]
    assert m.handle(Received(b"late", START + 121)) == []  # the run is over


def test_a_corrupt_stream_is_archived_up_to_the_limit_then_closed() -> None:
    data = STREAMS["corrupt"]
    error_at = ProfileReader.from_bytes(data).error.offset
    m = machine(ArchiveLimits(max_bytes_after_error=100, min_free_bytes=0))
    actions = []
    for i in range(0, len(data), 1000):
        actions += m.handle(Received(data[i : i + 1000], START + 1 + i / 1e5))
    archived = b"".join(a.data for a in actions if isinstance(a, Archive))
    # the read holding the corrupt byte is archived whole (the decoder finds the error in it)
    holding_error_ends = (error_at // 1000 + 1) * 1000
    assert archived == data[: max(error_at + 100, holding_error_ends)]
    record = actions[-1].record
    assert record.status == "failed" and "corrupt data at byte" in record.end_reason
    assert any(isinstance(a, Notify) and a.level == "warning" for a in actions)


def test_a_chunk_builder_bug_ends_chunks_but_not_the_capture() -> None:
    class Broken(NumberedSink):
        def add(self, delta, arrival: float) -> None:
            raise RuntimeError("boom")

    m = RunMachine(machine().plan, Broken)
    data = STREAMS["cpu-only"]
    actions = m.handle(Received(data[:6000], START + 1))
    actions += m.handle(Tick(START + 2))
    actions += m.handle(Received(data[6000:], START + 3))
    actions += m.handle(StreamEnded(EndKind.CLOSED, "closed", START + 4))
    assert b"".join(a.data for a in actions if isinstance(a, Archive)) == data
    record = actions[-1].record
    assert record.status == "complete"
    assert record.errors[0]["kind"] == "chunks" and "boom" in record.errors[0]["message"]


def feed_in_bursts(m: RunMachine, data: bytes, seed: int, seconds: float = 30.0, pieces: int = 300):
    """``data`` in ``pieces`` over ``seconds``, each piece held back by up to 2 to 3 s (a device
    sending in bursts, or a busy event loop stamping arrivals late), ticking when the machine
    asks, then the stream's end; returns every action."""
    rng = random.Random(seed)
    hold = rng.uniform(2.0, 3.0)
    size = -(-len(data) // pieces)
    at, actions = START, []
    for i in range(pieces):
        at = max(at, START + (i + 1) * seconds / pieces + rng.uniform(0, hold))
        while (due := m.next_tick()) is not None and due <= at:
            actions += m.handle(Tick(due))
        actions += m.handle(Received(data[i * size : (i + 1) * size], at))
    return actions + m.handle(StreamEnded(EndKind.CLOSED, "closed", at))


class LateSink(NumberedSink):
    """A live sink that places busy time not fitting before the run's end right after it."""

    def finish(self, end: float):
        flush = self.builder.finish(end, after_end=True)
        return [c.data for c in flush.chunks], {"leftover_samples": flush.report.leftover_samples}


def test_busy_time_that_arrives_late_at_the_end_of_a_run_still_goes_into_chunks() -> None:
    data = STREAMS["cpu-only"]
    runs = [feed_in_bursts(machine(sink=LateSink), data, seed) for seed in range(50)]
    for seed, actions in enumerate(runs):
        record = actions[-1].record
        assert record.status == "complete"
        assert record.chunk_report["leftover_samples"] == 0, (seed, record.chunk_report)
    # Per stack the chunks hold what an offline conversion gives, within one sample.
    offline, summary = convert_bytes(data, ChunkSettings(chunk_seconds=60))
    assert summary.report.leftover_samples == 0
    want = samples_per_stack(c.data for c in offline)
    for seed, actions in enumerate(runs):
        live = samples_per_stack(a.data for a in actions if isinstance(a, WriteChunk))
        assert max(abs(live[k] - want[k]) for k in set(live) | set(want)) <= 1, seed


MEMORY_STREAM = synthetic_stream(8.0, seed=5, memory_ops=True, start_ms=int(START * 1000))


@given(cuts=st.lists(st.integers(1, len(MEMORY_STREAM) - 1), max_size=12), step=st.floats(0.2, 3))
def test_the_live_walls_make_the_chunks_the_full_delta_makes(cuts: list[int], step: float) -> None:
    """The capture hands its sink ``take_walls()`` (no row per path): for any split of a stream
    and any arrival times, the chunks are byte for byte those of ``add(take_delta())``."""

    def chunks(take) -> list[bytes]:
        reader, builder, out = ProfileReader(), None, []
        numbers = iter(range(1, 1 << 30))
        bounds = [0, *sorted(set(cuts)), len(MEMORY_STREAM)]
        for i, (a, b) in enumerate(itertools.pairwise(bounds)):
            reader.feed(MEMORY_STREAM[a:b])
            if builder is None and reader.header is not None:
                builder = ChunkBuilder(
                    reader.tables,
                    START,
                    header=reader.header,
                    settings=ChunkSettings(chunk_seconds=1.0),
                    profiler_id="ab" * 16,
                    new_id=lambda: f"{next(numbers):032x}",
                )
            if builder is not None:
                take(builder, reader.tables, START + step * (i + 1))
                out += [c.data for c in builder.ready(START + step * (i + 1))]
        return out + [c.data for c in builder.finish(START + step * len(bounds)).chunks]

    full = chunks(lambda builder, tables, at: builder.add(tables.take_delta(lines=False), at))
    walls = chunks(lambda builder, tables, at: add_walls(builder, tables.take_walls(), at))
    assert full and walls == full
