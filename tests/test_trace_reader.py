"""The sans-IO Perfetto trace reader: packets split anywhere, plain and interned names,
incremental state, flows between threads, clocks, and bounded, named failures on bad bytes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb
from trace_helpers import MAIN, MS, RENDER, TASK, TraceWriter, roku_app_trace

from rokuprof.trace.framing import PacketSplitter, TraceFormatError
from rokuprof.trace.model import Trace
from rokuprof.trace.reader import TraceLimits, TraceReader, read_trace


def _shape(trace: Trace) -> tuple:
    """What a trace says, whatever its bytes' encoding."""
    slices = [(s.track, s.name, s.start, s.end, s.depth, s.parent, s.args) for s in trace.slices]
    tracks = sorted((t.uuid, t.name, t.tid) for t in trace.tracks.values())
    return slices, tracks, sorted(trace.flows), trace.clock_snapshots


def _fed(data: bytes, cuts: list[int], limits: TraceLimits | None = None) -> Trace:
    reader = TraceReader(limits)
    at = 0
    for cut in [*sorted(cuts), len(data)]:
        reader.feed(data[at:cut])
        at = cut
    return reader.close()


def test_plain_and_interned_names_read_the_same() -> None:
    plain = read_trace(roku_app_trace(interned=False).data())
    interned = read_trace(roku_app_trace(interned=True).data())
    assert plain.error is None and interned.error is None
    assert _shape(plain) == _shape(interned)
    assert {s.name for s in plain.slices} >= {"swapBuffers", "Rendezvous", "observer.callback"}


def test_split_at_every_byte_gives_the_same_trace() -> None:
    for interned in (False, True):
        data = roku_app_trace(interned=interned).data()
        whole = _shape(read_trace(data))
        for cut in range(1, len(data)):
            assert _shape(_fed(data, [cut])) == whole, (interned, cut)
        one_byte_at_a_time = _fed(data, list(range(1, len(data))))
        assert _shape(one_byte_at_a_time) == whole


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_nesting_and_splits_of_generated_traces(data: st.DataObject) -> None:
    """Random slice trees on two threads, written depth-first, read back with the depth and
    parent the generator gave them, fed in random pieces."""
    w = TraceWriter(interned=data.draw(st.booleans()))
    w.thread(MAIN, 1, "main")
    w.thread(TASK, 2, "task")
    expected: list[tuple[int, str, int, int | None]] = []  # track, name, depth, parent
    clock = [0.0]

    def tree(track: int, depth: int, parent: int | None, budget: int) -> int:
        made = 0
        for _ in range(data.draw(st.integers(0, 3 if depth < 4 else 0))):
            if made >= budget:
                break
            name = data.draw(st.sampled_from(["ExecBrightScript", "getField", "x" * 300]))
            index = len(expected)
            expected.append((track, name, depth, parent))
            clock[0] += 1
            w.begin(clock[0], track, name, args={"n": index})
            made += 1 + tree(track, depth + 1, index, budget - made - 1)
            clock[0] += 1
            w.end(clock[0], track)
        return made

    for track in (MAIN, TASK):
        tree(track, 0, None, 40)
    raw = w.data()
    cuts = data.draw(st.lists(st.integers(1, max(1, len(raw) - 1)), max_size=8))
    trace = _fed(raw, cuts)
    assert trace.error is None and trace.problems == []
    assert [(s.track, s.name, s.depth, s.parent) for s in trace.slices] == expected
    assert [s.args["n"] for s in trace.slices] == list(range(len(expected)))
    assert all(s.end is not None and s.end > s.start for s in trace.slices)


def test_flows_join_threads_whatever_order_their_packets_came_in() -> None:
    """The render thread's packets (the flow's end) are written before the task thread's (its
    start), as separate sequences arrive: the flow still runs enqueue -> dequeue."""
    trace = read_trace(roku_app_trace(interned=True).data())
    [(a, b)] = trace.flows
    assert trace.slices[a].name == "rendezvous-enqueue"
    assert trace.slices[b].name == "rendezvous-dequeue"
    assert trace.thread_name(trace.slices[a].track) == "TN:ContentTask"
    assert trace.thread_name(trace.slices[b].track) == "RenderThr:Main"


def test_a_flow_id_used_again_after_it_ended_starts_a_new_flow() -> None:
    w = TraceWriter()
    w.slice(1, 2, MAIN, "a", flows=(5,))
    w.slice(3, 4, TASK, "b", ends_flows=(5,))
    w.slice(5, 6, MAIN, "c", flows=(5,))
    w.slice(7, 8, TASK, "d", flows=(5,))
    w.slice(9, 10, RENDER, "e", ends_flows=(5,))
    trace = read_trace(w.data())
    names = [(trace.slices[a].name, trace.slices[b].name) for a, b in trace.flows]
    assert names == [("a", "b"), ("c", "d"), ("d", "e")]


def test_the_clock_snapshot_puts_the_trace_on_wall_time() -> None:
    trace = read_trace(roku_app_trace(interned=False).data())
    assert trace.wall_offset_ns() == 1_760_000_000_000 * MS
    assert trace.first_ts == 5_000 * MS


def _packet(**fields) -> bytes:
    p = pb.TracePacket(**fields)
    t = pb.Trace()
    t.packet.append(p)
    return t.SerializeToString()


def test_packets_needing_names_never_sent_are_skipped_and_counted() -> None:
    """A sequence's first packets need interned state that was never cleared (the capture
    started mid-sequence): skipped, as Perfetto does, until a packet clears the state."""
    event = pb.TrackEvent(type=1, name_iid=1, track_uuid=MAIN)
    late = pb.InternedData(event_names=[pb.EventName(iid=1, name="late")])
    data = (
        _packet(trusted_packet_sequence_id=3, sequence_flags=2, timestamp=10, track_event=event)
        + _packet(
            trusted_packet_sequence_id=3,
            sequence_flags=3,
            timestamp=20,
            track_event=event,
            interned_data=late,
        )
        + _packet(
            trusted_packet_sequence_id=3,
            sequence_flags=2,
            previous_packet_dropped=1,
            timestamp=30,
            track_event=event,
        )
    )
    trace = read_trace(data)
    assert trace.skipped_packets == 2
    assert trace.loss_marks == 1
    assert [(s.name, s.start) for s in trace.slices] == [("late", 20)]


def test_an_unknown_interned_name_is_named_not_fatal() -> None:
    event = pb.TrackEvent(type=3, name_iid=9, track_uuid=MAIN)
    trace = read_trace(_packet(trusted_packet_sequence_id=1, timestamp=5, track_event=event))
    assert [s.name for s in trace.slices] == ["(unknown name #9)"]


def test_a_slice_never_ended_is_unfinished_and_an_end_with_nothing_open_is_counted() -> None:
    w = TraceWriter()
    w.end(1, MAIN)
    w.begin(2, MAIN, "ExecBrightScript")
    trace = read_trace(w.data())
    assert trace.unmatched_ends == 1
    [s] = trace.slices
    assert s.end is None and not s.finished
    assert s.lower_bound(trace_end=s.start + 8 * MS) == 8 * MS
    assert s.lower_bound(trace_end=s.start - 1) == 0


def test_lost_chunks_from_trace_stats() -> None:
    stats = pb.TraceStats(
        chunks_discarded=2, buffer_stats=[pb.TraceStats.BufferStats(chunks_overwritten=5)]
    )
    trace = read_trace(_packet(trace_stats=stats))
    assert trace.lost_chunks == 7


def test_a_packet_announcing_a_gigabyte_is_refused_at_its_length() -> None:
    good = roku_app_trace(interned=False).data()
    hostile = b"\x0a" + bytes([0x80, 0x80, 0x80, 0x80, 0x04])  # 1 GiB
    reader = TraceReader()
    reader.feed(good)
    reader.feed(hostile)
    reader.feed(b"\x00" * 100_000)  # the body never held
    trace = reader.close()
    assert (
        trace.error
        == f"a packet of 1,073,741,824 bytes (the limit is 16,777,216) at byte {len(good):,}"
    )
    assert _shape(trace) == _shape(read_trace(good))  # nothing read before it is lost
    assert reader.held_bytes <= 16


def test_garbage_is_named_with_its_byte() -> None:
    good = roku_app_trace(interned=False).data()
    trace = read_trace(good + b"\x0f\x01\x02")  # field 1, wire type 7
    assert trace.error == f"wire type 7 (field 1): not a protobuf trace at byte {len(good):,}"
    assert len(trace.slices) == len(read_trace(good).slices)
    trace = read_trace(b"\x0a" + b"\xff" * 11)
    assert trace.error == "a varint longer than ten bytes at byte 1"
    trace = read_trace(b"\x0a\x03\xff\xff\xff")
    assert trace.error is not None and trace.error.startswith("a packet that does not decode")
    assert trace.error.endswith("at byte 0")


def test_a_trace_cut_inside_a_packet_keeps_what_came_before() -> None:
    data = roku_app_trace(interned=True).data()
    cut = data[: len(data) - 3]
    trace = read_trace(cut)
    assert trace.error is None
    assert trace.trailing_bytes > 0
    assert trace.problems and "ends inside a packet" in trace.problems[0]


def test_other_top_level_fields_are_skipped() -> None:
    data = roku_app_trace(interned=False).data()
    # field 2 varint, field 3 fixed64, field 4 length-delimited, field 5 fixed32
    noise = b"\x10\x96\x01" + b"\x19" + b"\x00" * 8 + b"\x22\x02ab" + b"\x2d" + b"\x00" * 4
    assert _shape(read_trace(noise + data)) == _shape(read_trace(data))


def test_limits_drop_the_excess_and_say_so_once() -> None:
    w = TraceWriter()
    for i in range(50):
        w.slice(i, i + 0.5, MAIN, "s")
    trace = read_trace(w.data(), TraceLimits(max_slices=10))
    assert len(trace.slices) == 10
    eleventh = sum(map(len, w.packets[:20]))  # the 11th slice's begin: its packet's offset
    assert trace.problems == [
        f"more slices than the limit of 10 at byte {eleventh}: the rest were not kept"
    ]
    deep = TraceWriter()
    for i in range(20):
        deep.begin(i, MAIN, "d")
    for i in range(20):
        deep.end(100 + i, MAIN)
    trace = read_trace(deep.data(), TraceLimits(max_depth=5))
    assert [s.depth for s in trace.slices] == [0, 1, 2, 3, 4]
    assert all(s.end is not None for s in trace.slices)
    assert trace.unmatched_ends == 0


def test_endless_small_packets_stay_bounded() -> None:
    """Many tiny packets hold no more than the limits allow, and cost linear time."""
    one = _packet(track_event=pb.TrackEvent(type=3, name="k", track_uuid=MAIN), timestamp=1)
    reader = TraceReader(TraceLimits(max_slices=1000))
    for _ in range(200):
        reader.feed(one * 500)
    trace = reader.close()
    assert trace.packets == 100_000
    assert len(trace.slices) == 1000
    assert len(trace.problems) == 1


def test_the_splitter_hands_out_packets_with_their_offsets() -> None:
    data = roku_app_trace(interned=False).data()
    splitter = PacketSplitter()
    packets = [p for i in range(len(data)) for p in splitter.feed(data[i : i + 1])]
    assert b"".join(
        data[p.offset : p.offset + 2 + len(p.data)][-len(p.data) :] for p in packets
    ) == (b"".join(p.data for p in packets))
    assert splitter.pending == 0
    try:
        list(PacketSplitter(max_packet_bytes=4).feed(data))
    except TraceFormatError as exc:
        assert exc.offset == 0 and "the limit is 4" in exc.what
    else:
        raise AssertionError("a packet over the limit was accepted")


def test_timestamps_on_another_clock_are_put_on_the_trace_s_clock() -> None:
    """A packet (or its sequence's defaults) may give its timestamp on another clock, as
    rokuprof's own Perfetto export writes its tracks on REALTIME: through the clock snapshot,
    it lands on the trace's BOOTTIME clock; without a snapshot it is said and taken as it is."""
    boot, real = 5_000 * MS, 1_760_000_000_000 * MS
    snapshot = pb.ClockSnapshot(
        clocks=[pb.ClockSnapshot.Clock(clock_id=6, timestamp=boot),
                pb.ClockSnapshot.Clock(clock_id=1, timestamp=real)]
    )  # fmt: skip
    begin = pb.TrackEvent(type=1, name="on realtime", track_uuid=MAIN)
    end = pb.TrackEvent(type=2, track_uuid=MAIN)
    defaults = pb.TracePacketDefaults(timestamp_clock_id=1)
    data = (
        _packet(clock_snapshot=snapshot)
        + _packet(timestamp=real + 7 * MS, timestamp_clock_id=1, track_event=begin)
        + _packet(trusted_packet_sequence_id=9, trace_packet_defaults=defaults)
        + _packet(trusted_packet_sequence_id=9, timestamp=real + 9 * MS, track_event=end)
    )
    trace = read_trace(data)
    [s] = trace.slices
    assert (s.start, s.end) == (boot + 7 * MS, boot + 9 * MS)
    assert trace.problems == []
    alone = read_trace(_packet(timestamp=real, timestamp_clock_id=1, track_event=begin))
    assert alone.slices[0].start == real
    assert alone.problems == [
        "timestamps on clock 1 at byte 0 with no clock snapshot to put them on the trace's "
        "clock (6): taken as they are"
    ]
