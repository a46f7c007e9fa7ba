"""A Perfetto app trace read as it arrives (sans-IO, pure): bytes in, a :class:`Trace` out.

``TraceReader.feed(bytes)`` in any pieces, ``close()`` at the end; ``trace`` holds what was
read so far. Each packet is decoded with the compiled protos of Google's ``perfetto`` package
(``TracePacket``); what app traces use is kept:

* **names**, plain or interned: per packet sequence (``trusted_packet_sequence_id``) the
  ``interned_data`` tables of event names, argument names and argument strings, cleared by a
  packet that clears the sequence's incremental state. A packet that needs incremental state
  on a sequence without valid state (none sent yet, or a loss since) is skipped and counted,
  as Perfetto's own reader does;
* **tracks**: ``track_descriptor`` (a thread's name, or the track's own), and the sequence's
  default track (``trace_packet_defaults``);
* **slices** from ``SLICE_BEGIN`` / ``SLICE_END`` per track (depth and parent from the track's
  open slices), **instants**, their **debug annotations** (an end's merge into its slice), and
  **flows** (``flow_ids`` link an event to the previous one in time with the same id;
  ``terminating_flow_ids`` link and close it; joined at :meth:`TraceReader.close`);
* **clock snapshots** (the trace clock against wall time) and **losses** (``trace_stats``,
  ``previous_packet_dropped``).

Bounded by :class:`TraceLimits`: past a limit the excess is dropped and said once in
``trace.problems``; bytes that are not a trace stop the reading with ``trace.error`` naming
the byte, and everything read before it stays.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rokuprof.trace.framing import MAX_PACKET_BYTES, Packet, PacketSplitter, TraceFormatError
from rokuprof.trace.model import CLOCK_BOOTTIME, Slice, Trace, Track

SEQ_INCREMENTAL_STATE_CLEARED = 1
SEQ_NEEDS_INCREMENTAL_STATE = 2
TYPE_SLICE_BEGIN, TYPE_SLICE_END, TYPE_INSTANT = 1, 2, 3


@dataclass(frozen=True)
class TraceLimits:
    """What one trace may make the reader hold."""

    max_packet_bytes: int = MAX_PACKET_BYTES
    max_slices: int = 2_000_000
    max_tracks: int = 10_000
    max_sequences: int = 10_000
    max_interned: int = 1_000_000  # names per sequence, all tables together
    max_depth: int = 1_000  # open slices per track
    max_flow_events: int = 1_000_000
    max_args: int = 64  # per slice
    max_name_chars: int = 4_096


def _protos() -> Any:
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2

    return perfetto_trace_pb2


@dataclass
class _Sequence:
    """One packet sequence's incremental state."""

    valid: bool = False
    names: dict[int, str] | None = None  # event names
    arg_names: dict[int, str] | None = None
    arg_strings: dict[int, str] | None = None
    default_track: int | None = None
    default_clock: int | None = None  # the clock of its packets' timestamps, when not the trace's
    interned: int = 0

    def clear(self) -> None:
        self.valid = True
        self.names, self.arg_names, self.arg_strings = {}, {}, {}
        self.interned = 0


class TraceReader:
    """Feed a trace's bytes; read :attr:`trace`."""

    def __init__(
        self,
        limits: TraceLimits | None = None,
        *,
        keep_slices: bool = True,
        on_slice_end: Callable[[Slice], None] | None = None,
    ) -> None:
        self.limits = limits or TraceLimits()
        #: False: slices are handed to ``on_slice_end`` as they end and not kept (a live
        #: consumer: what is held is the open slices, their parents and the tables of names;
        #: slices have no parent index and flows are not joined)
        self.keep_slices = keep_slices
        self.on_slice_end = on_slice_end
        self.trace = Trace()
        self._pb = _protos()
        self._splitter = PacketSplitter(self.limits.max_packet_bytes)
        self._sequences: dict[int, _Sequence] = {}
        #: track -> its open slices: (index in trace.slices, or -1 when not kept; the slice, or
        #: None when over a limit)
        self._open: dict[int, list[tuple[int, Slice | None]]] = {}
        self._flow_events: list[tuple[int, int, int, bool, int]] = []  # see _flow
        self._said: set[str] = set()
        self._closed = False

    @property
    def held_bytes(self) -> int:
        """Bytes held for a packet not yet whole (at most one packet's limit and its head)."""
        return self._splitter.pending

    # -- input -----------------------------------------------------------------------------

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """The trace's next bytes (any split). After an error the rest is ignored."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        self.trace.bytes_read += len(data)
        if self.trace.error is not None:
            return
        try:
            for packet in self._splitter.feed(data):
                self._packet(packet)
        except TraceFormatError as exc:
            self.trace.error = str(exc)

    def close(self) -> Trace:
        """The end of the trace: what was held and never completed is counted."""
        if not self._closed:
            self._closed = True
            self._join_flows()
            self.trace.trailing_bytes = self._splitter.pending
            if self.trace.trailing_bytes and self.trace.error is None:
                self.trace.problems.append(
                    f"the trace ends inside a packet: {self.trace.trailing_bytes:,} bytes after "
                    f"byte {self._splitter.offset:,} never made a whole packet"
                )
        return self.trace

    # -- packets ---------------------------------------------------------------------------

    def _packet(self, packet: Packet) -> None:
        try:
            p = self._pb.TracePacket.FromString(packet.data)
        except Exception as exc:  # protobuf's DecodeError; nothing else is raised here
            what = f"a packet that does not decode ({exc})"
            raise TraceFormatError(what, packet.offset) from None
        trace = self.trace
        trace.packets += 1
        seq = self._sequence(p.trusted_packet_sequence_id, packet.offset)
        if p.previous_packet_dropped:
            trace.loss_marks += 1
            if seq is not None:
                seq.valid = False
        if seq is not None and (
            p.sequence_flags & SEQ_INCREMENTAL_STATE_CLEARED or p.incremental_state_cleared
        ):
            seq.clear()
        if p.sequence_flags & SEQ_NEEDS_INCREMENTAL_STATE and seq is not None and not seq.valid:
            trace.skipped_packets += 1
            return
        if seq is not None and p.HasField("interned_data"):
            self._intern(seq, p.interned_data, packet.offset)
        if seq is not None and p.HasField("trace_packet_defaults"):
            defaults = p.trace_packet_defaults
            if defaults.HasField("track_event_defaults"):
                seq.default_track = defaults.track_event_defaults.track_uuid
            if defaults.HasField("timestamp_clock_id"):
                seq.default_clock = defaults.timestamp_clock_id
        if p.HasField("track_descriptor"):
            self._track(p.track_descriptor, packet.offset)
        if p.HasField("track_event"):
            clock = p.timestamp_clock_id if p.HasField("timestamp_clock_id") else None
            if clock is None and seq is not None:
                clock = seq.default_clock
            ts = self._on_trace_clock(p.timestamp, clock, packet.offset)
            self._event(ts, p.track_event, seq, packet.offset)
        if p.HasField("clock_snapshot"):
            snap = p.clock_snapshot
            trace.clock_snapshots.append({c.clock_id: c.timestamp for c in snap.clocks})
            if snap.primary_trace_clock:
                trace.trace_clock = snap.primary_trace_clock
        if p.HasField("trace_stats"):
            stats = p.trace_stats
            lost = stats.chunks_discarded + sum(
                b.chunks_overwritten + b.chunks_discarded for b in stats.buffer_stats
            )
            trace.lost_chunks = max(trace.lost_chunks, lost)  # each stats packet is cumulative

    def _on_trace_clock(self, ts: int, clock: int | None, offset: int) -> int:
        """``ts`` of ``clock`` on the trace's clock, through the latest snapshot holding both (a
        trace may mix clocks: rokuprof's own Perfetto export writes its tracks on REALTIME)."""
        trace = self.trace
        if not clock or clock == trace.trace_clock:
            return ts
        for snapshot in reversed(trace.clock_snapshots):
            if clock in snapshot and trace.trace_clock in snapshot:
                return ts - snapshot[clock] + snapshot[trace.trace_clock]
        said = f"clock {clock}"
        if said not in self._said:
            self._said.add(said)
            trace.problems.append(
                f"timestamps on clock {clock} at byte {offset:,} with no clock snapshot to put "
                f"them on the trace's clock ({trace.trace_clock}): taken as they are"
            )
        return ts

    def _sequence(self, sid: int, offset: int) -> _Sequence | None:
        seq = self._sequences.get(sid)
        if seq is None:
            if len(self._sequences) >= self.limits.max_sequences:
                self._once("sequences", offset, self.limits.max_sequences)
                return None
            seq = self._sequences[sid] = _Sequence()
        return seq

    def _intern(self, seq: _Sequence, data: Any, offset: int) -> None:
        if seq.names is None:  # interned data on a sequence that never cleared: start it
            seq.clear()
        tables = (
            (seq.names, data.event_names, "name"),
            (seq.arg_names, data.debug_annotation_names, "name"),
            (seq.arg_strings, data.debug_annotation_string_values, "str"),
        )
        for table, entries, key in tables:
            assert table is not None
            for entry in entries:
                if seq.interned >= self.limits.max_interned:
                    self._once("interned names on one sequence", offset, self.limits.max_interned)
                    return
                value = getattr(entry, key)
                if isinstance(value, bytes):
                    value = value.decode("utf-8", "replace")
                if entry.iid not in table:
                    seq.interned += 1
                table[entry.iid] = self._text(value)

    def _track(self, desc: Any, offset: int) -> None:
        tracks = self.trace.tracks
        if desc.uuid not in tracks and len(tracks) >= self.limits.max_tracks:
            self._once("tracks", offset, self.limits.max_tracks)
            return
        pid = tid = None
        name = desc.name
        if desc.HasField("thread"):
            pid, tid = desc.thread.pid, desc.thread.tid
            name = desc.thread.thread_name or name or f"thread {tid}"
        elif desc.HasField("process"):
            pid = desc.process.pid
            name = name or desc.process.process_name or f"process {pid}"
        tracks[desc.uuid] = Track(desc.uuid, self._text(name or f"track {desc.uuid}"), pid, tid)

    def _event(self, ts: int, ev: Any, seq: _Sequence | None, offset: int) -> None:
        track = ev.track_uuid if ev.HasField("track_uuid") else None
        if track is None:
            track = seq.default_track if seq is not None and seq.default_track else 0
        kind = ev.type
        if kind == TYPE_SLICE_END:
            stack = self._open.get(track)
            if not stack:
                self.trace.unmatched_ends += 1
                return
            index, s = stack.pop()
            if s is not None:
                s.end = max(ts, s.start)
                self._args(s, ev, seq)
                self._finished(index, s, ts, ev)
            return
        if kind not in (TYPE_SLICE_BEGIN, TYPE_INSTANT):
            return  # counters and states: not used by app traces' analyses
        stack = self._open.setdefault(track, [])
        if kind == TYPE_SLICE_BEGIN and len(stack) >= self.limits.max_depth:
            self._once("open slices on one track", offset, self.limits.max_depth)
            stack.append((-1, None))  # its end pops this
            return
        parent = next((i for i, _ in reversed(stack) if i >= 0), None)
        if self.keep_slices and len(self.trace.slices) >= self.limits.max_slices:
            self._once("slices", offset, self.limits.max_slices)
            if kind == TYPE_SLICE_BEGIN:
                stack.append((-1, None))
            return
        name = self._name(ev, seq)
        s = Slice(track, name, ts, ts if kind == TYPE_INSTANT else None, len(stack), parent)
        s.instant = kind == TYPE_INSTANT
        index = -1
        if self.keep_slices:
            index = len(self.trace.slices)
            self.trace.slices.append(s)
        self._args(s, ev, seq)
        if kind == TYPE_SLICE_BEGIN:
            if index >= 0:
                self._flow(index, ts, ev)
            stack.append((index, s))
        else:
            self._finished(index, s, ts, ev)

    def _finished(self, index: int, s: Slice, ts: int, ev: Any) -> None:
        """A slice (or instant) is complete: the flows of the event that completed it noted
        (kept slices only), the ``on_slice_end`` hook told."""
        if index >= 0:
            self._flow(index, ts, ev)
        if self.on_slice_end is not None:
            self.on_slice_end(s)

    def _name(self, ev: Any, seq: _Sequence | None) -> str:
        if ev.HasField("name"):
            return self._text(ev.name)
        if ev.HasField("name_iid"):
            names = seq.names if seq is not None else None
            found = names.get(ev.name_iid) if names else None
            return found if found is not None else f"(unknown name #{ev.name_iid})"
        return "(unnamed)"

    def _args(self, s: Slice, ev: Any, seq: _Sequence | None) -> None:
        for a in ev.debug_annotations:
            if len(s.args) >= self.limits.max_args:
                break
            if a.HasField("name"):
                key = self._text(a.name)
            else:
                names = seq.arg_names if seq is not None else None
                key = (names or {}).get(a.name_iid, f"(unknown arg #{a.name_iid})")
            s.args[key] = self._value(a, seq)

    def _value(self, a: Any, seq: _Sequence | None) -> object:
        which = a.WhichOneof("value")
        if which in ("int_value", "uint_value", "double_value", "bool_value", "pointer_value"):
            return getattr(a, which)
        if which == "string_value":
            return self._text(a.string_value)
        if which == "string_value_iid":
            strings = seq.arg_strings if seq is not None else None
            iid = a.string_value_iid
            return (strings or {}).get(iid, f"(unknown string #{iid})")
        if which == "legacy_json_value":
            return self._text(a.legacy_json_value)
        return None

    def _flow(self, index: int, ts: int, ev: Any) -> None:
        """Note the event's flow ids; they are joined at :meth:`close`, in time order (a
        trace's sequences arrive interleaved in any order, as Perfetto's reader sorts them)."""
        for fid, terminating in (
            *((f, False) for f in ev.flow_ids),
            *((f, True) for f in ev.terminating_flow_ids),
        ):
            if len(self._flow_events) >= self.limits.max_flow_events:
                self._once("flow events", None, self.limits.max_flow_events)
                return
            self._flow_events.append((ts, len(self._flow_events), fid, terminating, index))

    def _join_flows(self) -> None:
        """Each flow event linked to the one before it with the same id (an id ends at a
        terminating event: a later use starts a new flow)."""
        last: dict[int, int] = {}
        for _, _, fid, terminating, index in sorted(self._flow_events):
            before = last.pop(fid, None)
            if before is not None and before != index:
                self.trace.flows.append((before, index))
            if not terminating:
                last[fid] = index
        self._flow_events.clear()

    # -- bounds ----------------------------------------------------------------------------

    def _text(self, value: str) -> str:
        limit = self.limits.max_name_chars
        return value if len(value) <= limit else value[:limit] + "…"

    def _once(self, what: str, offset: int | None, limit: int) -> None:
        if what not in self._said:
            self._said.add(what)
            where = f" at byte {offset:,}" if offset is not None else ""
            self.trace.problems.append(
                f"more {what} than the limit of {limit:,}{where}: the rest were not kept"
            )


def read_trace(data: bytes, limits: TraceLimits | None = None) -> Trace:
    """A whole trace held in memory."""
    reader = TraceReader(limits)
    reader.feed(data)
    return reader.close()


__all__ = ["CLOCK_BOOTTIME", "TraceLimits", "TraceReader", "read_trace"]
