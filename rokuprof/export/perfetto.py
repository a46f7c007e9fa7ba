"""A Perfetto trace (``.perfetto-trace``): the device's app trace, when there is one, and the
``.bsprof`` timeline as tracks beside it, in one file Perfetto UI opens (pure).

A Perfetto trace file is the protobuf message ``Trace``: length-delimited ``TracePacket``\\s
(field 1) one after another, so packets appended to a trace make a trace. The file is:

* **the device's packets**, byte for byte as the session's ``trace.perfetto-trace`` holds them
  (every whole packet: bytes the device never finished, or that are not a trace, are left out
  with a note, since a packet cut short would swallow what follows it);
* **the .bsprof tracks**, on a packet sequence of their own (:data:`SEQUENCE_ID`, another one if
  the device's trace uses it; its first packet clears its incremental state): a parent track
  ``bsprof: <app>``, under it one track per BrightScript thread (executable module, in module
  order) named ``bsprof: <thread>``, and a ``bsprof: live heap`` counter (bytes). Each thread
  track holds the synthetic 101 Hz timeline the other timeline formats draw (the Sentry chunks'):
  ``SLICE_BEGIN``/``SLICE_END`` pairs, one per frame occurrence, nested as the call stacks were
  (where a stack changes, the ends come before the begins at the same time), named by the
  function (interned), with the file and definition line as debug annotations. Events are
  written in time order across the tracks;
* **the clock**: the .bsprof timeline is in wall time, so every one of its packets says
  ``timestamp_clock_id = BUILTIN_CLOCK_REALTIME``; Perfetto converts them to the device's trace
  clock (BOOTTIME) through the device trace's own clock snapshots, which is what puts the two
  side by side. Without a device trace, a clock snapshot of the sequence makes REALTIME the
  trace's clock (``primary_trace_clock``), so the file stands alone.

Cost is linear: the device's bytes are copied in the blocks they come in (each packet decoded
once, to learn its sequence, its track and whether it maps the trace clock to wall time), and
the tracks' packets are yielded in blocks of about :data:`BLOCK` bytes as they are encoded.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from rokuprof.export.model import ExportInput
from rokuprof.export.names import drawn
from rokuprof.export.protobuf import varint
from rokuprof.export.walk import OPEN, frame_events
from rokuprof.trace.framing import PacketSplitter, TraceFormatError
from rokuprof.trace.model import CLOCK_BOOTTIME, CLOCK_REALTIME

#: The tracks' packet sequence ("roku"); the next free one if the device's trace uses it.
SEQUENCE_ID = 0x726F6B75
#: The first track's UUID ("rokuprof"); moved on if the device's trace has one in its range.
TRACK_UUID = 0x726F6B7570726F66
TRACK_PREFIX = "bsprof: "
BLOCK = 1 << 16
SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
#: Debug annotation names, interned once: a frame's file and definition line.
ARG_FILE, ARG_LINE = 1, 2
_NS = 1_000_000_000


def _pb() -> Any:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2

    return perfetto_trace_pb2


@dataclass
class DeviceFacts:
    """What the tracks need to know of the device's trace: the sequences and track UUIDs it
    uses (not to collide with them), whether a clock snapshot maps its clock to wall time,
    and how many of its bytes were kept."""

    sequences: set[int] = field(default_factory=set)
    tracks: set[int] = field(default_factory=set)
    wall_clock: bool = False
    packets: int = 0
    kept_bytes: int = 0


def _copy_device(blocks: Iterable[bytes], facts: DeviceFacts, notes: list[str]) -> Iterator[bytes]:
    """The device trace's bytes up to the end of its last whole packet, as they come; each
    packet is decoded once for :class:`DeviceFacts`. A packet cut short, bytes that are not a
    trace, or a packet that does not decode end the copy there, with a note."""
    pb = _pb()
    splitter = PacketSplitter()
    held = b""  # bytes read, not yet handed on; they start at stream offset `start`
    start = 0
    total = 0
    for block in blocks:
        total += len(block)
        held = held + block if held else block  # a block handed on whole is not copied
        end = None  # where the copy stops early
        try:
            for packet in splitter.feed(block):
                try:
                    p = pb.TracePacket.FromString(packet.data)
                except Exception:  # protobuf's DecodeError
                    end = packet.offset
                    notes.append(
                        f"the app trace has a packet that does not decode at byte "
                        f"{packet.offset:,}: its packets before it were kept"
                    )
                    break
                facts.packets += 1
                if p.HasField("trusted_packet_sequence_id"):
                    facts.sequences.add(p.trusted_packet_sequence_id)
                if p.HasField("track_descriptor"):
                    facts.tracks.add(p.track_descriptor.uuid)
                if p.HasField("clock_snapshot"):
                    ids = {c.clock_id for c in p.clock_snapshot.clocks}
                    if CLOCK_REALTIME in ids and len(ids) > 1:
                        facts.wall_clock = True
        except TraceFormatError as exc:
            end = splitter.offset
            notes.append(f"the app trace is not a trace past byte {end:,} ({exc.what})")
        safe = splitter.offset if end is None else end
        if safe > start:
            n = safe - start
            yield held if n == len(held) else bytes(held[:n])
            held = bytes(held[n:])
            facts.kept_bytes += n
            start = safe
        if end is not None:
            return  # the rest is neither copied nor read
    if start < total:
        notes.append(
            f"the app trace ends inside a packet: its last {total - start:,} bytes were left out"
        )


@dataclass(frozen=True, slots=True)
class _Clock:
    """A slot's wall time in nanoseconds since 1970 (REALTIME)."""

    origin_ns: int
    hz: int

    def ns(self, slot: int) -> int:
        # round(slot * 1e9 / hz) in integers: exact for any run length; a header's absurd start
        # (a hostile stream) is held inside the proto's uint64 timestamp
        return min(_U64_MAX, max(0, self.origin_ns + (2 * slot * _NS + self.hz) // (2 * self.hz)))


_U64_MAX = (1 << 64) - 1


class _Writer:
    """The tracks' packets, each framed as a ``Trace.packet`` field, in blocks."""

    def __init__(self, sequence: int) -> None:
        self.sequence = sequence
        self.first = True
        self._parts: list[bytes] = []
        self._size = 0

    def packet(self, p: Any, *, timed: bool = True, interned: bool = False) -> None:
        p.trusted_packet_sequence_id = self.sequence
        if timed:
            p.timestamp_clock_id = CLOCK_REALTIME
        if self.first:
            p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED
            self.first = False
        elif interned:
            p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE
        data = p.SerializeToString()
        self._parts.append(b"\x0a" + varint(len(data)) + data)
        self._size += len(data) + 6

    def full(self) -> bool:
        return self._size >= BLOCK

    def take(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        self._size = 0
        return out


def _free(start: int, used: set[int], width: int) -> int:
    """The first of ``start, start + width, ...`` with none of its ``width`` values in ``used``."""
    while any(start <= u < start + width for u in used):
        start += width
    return start


def _events(inp: ExportInput, clock: _Clock) -> Iterator[tuple[int, int, int, str, int]]:
    """Every event of the tracks in time order: ``(ns, order, track index, kind, value)``;
    kind ``O``/``C`` a frame opening or closing (value: the frame), ``H`` the live heap
    (value: bytes). Per track the walk's own order is kept (the ends before the begins)."""
    timeline = inp.timeline

    def thread(index: int, module: int) -> Iterator[tuple[int, int, int, str, int]]:
        for n, (kind, frame, slot, _) in enumerate(frame_events(timeline, module)):
            yield clock.ns(slot), n, index, kind, frame

    def heap(index: int) -> Iterator[tuple[int, int, int, str, int]]:
        for n, (slot, value) in enumerate(sorted(timeline.heap, key=lambda h: h[0])):
            yield clock.ns(slot), n, index, "H", value

    order = inp.thread_order()
    streams = [thread(i, t) for i, t in enumerate(order)]
    streams.append(heap(len(order)))
    return heapq.merge(*streams, key=lambda e: e[0])


def pieces(
    inp: ExportInput,
    *,
    device_trace: bytes | Iterable[bytes] | None = None,
    notes: list[str] | None = None,
) -> Iterator[bytes]:
    """The file in blocks: the device trace's packets (``device_trace``: its bytes, or its
    bytes in blocks as they are read), then the .bsprof tracks. What was left out is appended
    to ``notes`` as it is found (one short sentence each)."""
    notes = notes if notes is not None else []
    pb = _pb()
    facts = DeviceFacts()
    if device_trace is not None:
        blocks = (device_trace,) if isinstance(device_trace, bytes | bytearray) else device_trace
        yield from _copy_device(blocks, facts, notes)
        if facts.packets and not facts.wall_clock:
            notes.append(
                "the app trace has no clock snapshot with wall time: Perfetto cannot place "
                "the .bsprof tracks beside it"
            )
    timeline = inp.timeline
    origin = timeline.origin if timeline.origin is not None else inp.run.start
    if origin is None:
        notes.append("the capture has no start time: its tracks start at 1970")
    clock = _Clock(round((origin or 0.0) * 1e6) * 1000, timeline.hz)
    order = inp.thread_order()
    sequence = SEQUENCE_ID
    while sequence in facts.sequences:
        sequence += 1
    root = _free(TRACK_UUID, facts.tracks, len(order) + 2)
    tracks = [root + 1 + i for i in range(len(order) + 1)]  # the threads', then the heap's
    out = _Writer(sequence)

    if not facts.packets:  # no device clock: wall time is the trace's clock
        p = pb.TracePacket()
        p.clock_snapshot.primary_trace_clock = CLOCK_REALTIME
        for clock_id in (CLOCK_REALTIME, CLOCK_BOOTTIME):
            c = p.clock_snapshot.clocks.add()
            c.clock_id, c.timestamp = clock_id, clock.ns(0)
        out.packet(p, timed=False)
    p = pb.TracePacket()
    p.track_descriptor.uuid = root
    p.track_descriptor.name = TRACK_PREFIX + (inp.run.app or "BrightScript app")
    p.track_descriptor.child_ordering = pb.TrackDescriptor.EXPLICIT
    out.packet(p, timed=False)
    names = [*(inp.threads[t] for t in order), "live heap"]
    for rank, (uuid, name) in enumerate(zip(tracks, names, strict=True)):
        p = pb.TracePacket()
        desc = p.track_descriptor
        desc.uuid, desc.parent_uuid = uuid, root
        desc.name = TRACK_PREFIX + drawn(name)
        desc.sibling_order_rank = rank
        if rank == len(order):
            desc.counter.unit = pb.CounterDescriptor.UNIT_SIZE_BYTES
        out.packet(p, timed=False)

    frames = inp.frames
    named: set[int] = set()  # frames whose name is interned
    files: dict[str, int] = {}  # file -> its interned string
    begin, end = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END
    for ns, _, index, kind, value in _events(inp, clock):
        p = pb.TracePacket()
        p.timestamp = ns
        ev = p.track_event
        ev.track_uuid = tracks[index]
        if kind == "H":
            ev.type = pb.TrackEvent.TYPE_COUNTER
            ev.counter_value = value
            out.packet(p)
        elif kind == OPEN:
            ev.type = begin
            f = frames[value]
            if not named:  # the annotation names, once
                for iid, arg in ((ARG_FILE, "file"), (ARG_LINE, "line")):
                    entry = p.interned_data.debug_annotation_names.add()
                    entry.iid, entry.name = iid, arg
            if value not in named:
                named.add(value)
                entry = p.interned_data.event_names.add()
                entry.iid, entry.name = value + 1, drawn(f.function)
            ev.name_iid = value + 1
            file = drawn(f.file)
            file_iid = files.get(file)
            if file_iid is None:
                file_iid = files[file] = len(files) + 1
                entry = p.interned_data.debug_annotation_string_values.add()
                entry.iid, entry.str = file_iid, file.encode("utf-8")
            a = ev.debug_annotations.add()
            a.name_iid, a.string_value_iid = ARG_FILE, file_iid
            if f.line:
                a = ev.debug_annotations.add()
                a.name_iid, a.int_value = ARG_LINE, f.line
            out.packet(p, interned=True)
        else:
            ev.type = end
            out.packet(p)
        if out.full():
            yield out.take()
    yield out.take()


def export(inp: ExportInput, *, device_trace: bytes | None = None) -> bytes:
    """The whole file (see the module docstring)."""
    return b"".join(pieces(inp, device_trace=device_trace))
