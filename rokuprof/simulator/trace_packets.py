"""Perfetto packets as the simulated device writes them (pure): framed ``TracePacket`` bytes
built with Google's compiled protos, one packet sequence per thread, names interned.

A trace file is the protobuf ``perfetto.protos.Trace``: field 1 repeated, each a tag byte
``0x0A``, a varint length and the packet. :class:`PacketWriter` appends framed packets to a
buffer that :meth:`PacketWriter.take` empties. Event names and argument names are interned per
sequence (``interned_data.event_names`` / ``debug_annotation_names``, ids from 1), as the
Perfetto SDK does: the first packet a sequence writes after :meth:`PacketWriter.restart` says
``sequence_flags = 1 | 2`` (incremental state cleared, and needed), every later one ``2``, and
a name is interned again after a restart. Argument values are written plain.

While :attr:`PacketWriter.enabled` is false nothing is built (the device traces with no client
connected: the data is lost, and costs nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
CLOCK_REALTIME = 1  # BuiltinClock
CLOCK_BOOTTIME = 6
BEGIN = pb.TrackEvent.TYPE_SLICE_BEGIN
END = pb.TrackEvent.TYPE_SLICE_END
INSTANT = pb.TrackEvent.TYPE_INSTANT
PACKET_TAG = b"\x0a"  # field 1, length-delimited

Args = Mapping[str, object]


def varint(value: int) -> bytes:
    """``value`` (>= 0) as a protobuf varint."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@dataclass
class _Sequence:
    """One packet sequence's interning state since the last restart."""

    fresh: bool = True
    names: dict[str, int] = field(default_factory=dict)
    arg_names: dict[str, int] = field(default_factory=dict)


class PacketWriter:
    """Framed packets in order; see the module's notes."""

    def __init__(self) -> None:
        self.enabled = True
        self.packets = 0  # packets written since the writer was made
        self._out = bytearray()
        self._sequences: dict[int, _Sequence] = {}

    def restart(self) -> None:
        """Every sequence starts over: its next packet clears the incremental state and its
        names are interned again (a reader that joins here needs nothing from before)."""
        self._sequences.clear()

    def take(self) -> bytes:
        """The bytes written since the last call."""
        out = bytes(self._out)
        self._out.clear()
        return out

    # -- descriptors and clocks --------------------------------------------------------------

    def clock_snapshot(self, seq: int, boot_ns: int, wall_ns: int) -> None:
        """BOOTTIME (the trace's clock) and REALTIME read at the same moment."""
        if not self.enabled:
            return
        p = pb.TracePacket()
        p.timestamp = boot_ns
        snap = p.clock_snapshot
        snap.primary_trace_clock = CLOCK_BOOTTIME
        for clock_id, value in ((CLOCK_BOOTTIME, boot_ns), (CLOCK_REALTIME, wall_ns)):
            clock = snap.clocks.add()
            clock.clock_id, clock.timestamp = clock_id, value
        self._write(seq, p)

    def process(self, seq: int, uuid: int, pid: int, name: str) -> None:
        if not self.enabled:
            return
        p = pb.TracePacket()
        p.track_descriptor.uuid = uuid
        p.track_descriptor.process.pid = pid
        p.track_descriptor.process.process_name = name
        self._write(seq, p)

    def thread(self, seq: int, uuid: int, parent: int, pid: int, tid: int, name: str) -> None:
        if not self.enabled:
            return
        p = pb.TracePacket()
        desc = p.track_descriptor
        desc.uuid, desc.parent_uuid = uuid, parent
        desc.thread.pid, desc.thread.tid, desc.thread.thread_name = pid, tid, name
        self._write(seq, p)

    # -- track events ------------------------------------------------------------------------

    def begin(
        self,
        seq: int,
        ts: int,
        track: int,
        name: str,
        args: Args | None = None,
        flows: Iterable[int] = (),
    ) -> None:
        self._event(seq, ts, track, BEGIN, name, args, flows, ())

    def end(self, seq: int, ts: int, track: int, ends_flows: Iterable[int] = ()) -> None:
        self._event(seq, ts, track, END, None, None, (), ends_flows)

    def instant(self, seq: int, ts: int, track: int, name: str, args: Args | None = None) -> None:
        self._event(seq, ts, track, INSTANT, name, args, (), ())

    def slice(
        self,
        seq: int,
        start: int,
        end: int,
        track: int,
        name: str,
        args: Args | None = None,
        flows: Iterable[int] = (),
        ends_flows: Iterable[int] = (),
    ) -> None:
        """A slice with nothing inside it: its begin (with the outgoing flows) and its end
        (with the flows it terminates)."""
        self._event(seq, start, track, BEGIN, name, args, flows, ())
        self._event(seq, end, track, END, None, None, (), ends_flows)

    # -- internals ---------------------------------------------------------------------------

    def _event(
        self,
        seq: int,
        ts: int,
        track: int,
        kind: int,
        name: str | None,
        args: Args | None,
        flows: Iterable[int],
        ends_flows: Iterable[int],
    ) -> None:
        if not self.enabled:
            return
        state = self._sequences.setdefault(seq, _Sequence())
        p = pb.TracePacket()
        p.timestamp = ts
        ev = p.track_event
        ev.type = kind
        ev.track_uuid = track
        if name is not None:
            ev.name_iid = _iid(p, state.names, name, "event_names")
        for key, value in (args or {}).items():
            a = ev.debug_annotations.add()
            a.name_iid = _iid(p, state.arg_names, key, "debug_annotation_names")
            if isinstance(value, bool):
                a.bool_value = value
            elif isinstance(value, int):
                a.int_value = value
            elif isinstance(value, float):
                a.double_value = value
            else:
                a.string_value = str(value)
        ev.flow_ids.extend(flows)
        ev.terminating_flow_ids.extend(ends_flows)
        self._write(seq, p, state)

    def _write(self, seq: int, p: pb.TracePacket, state: _Sequence | None = None) -> None:
        state = state or self._sequences.setdefault(seq, _Sequence())
        p.trusted_packet_sequence_id = seq
        if state.fresh:
            p.sequence_flags = SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE
            state.fresh = False
        else:
            p.sequence_flags = SEQ_NEEDS_INCREMENTAL_STATE
        data = p.SerializeToString()
        self._out += PACKET_TAG
        self._out += varint(len(data))
        self._out += data
        self.packets += 1


def _iid(p: pb.TracePacket, table: dict[str, int], name: str, kind: str) -> int:
    """``name``'s id in ``table``; a new one is added to the packet's interned data."""
    iid = table.get(name)
    if iid is None:
        iid = table[name] = len(table) + 1
        entry = getattr(p.interned_data, kind).add()
        entry.iid, entry.name = iid, name
    return iid
