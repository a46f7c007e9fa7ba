"""The simulated device's app trace generator, without sockets: the built-in Café TV model's run
and keys in, Perfetto bytes out, read back with Google's protos and with rokuprof's own trace
reader and Roku's analyses."""

from __future__ import annotations

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from rokuprof.simulator.app_keys import HOME_SCREEN, key_work
from rokuprof.simulator.cafe_tv import CAFE_TV
from rokuprof.simulator.trace_gen import TICK_NS, TraceClock, TraceGenerator
from rokuprof.trace.analysis import frame_cadence
from rokuprof.trace.model import Trace
from rokuprof.trace.reader import read_trace
from rokuprof.trace.summary import trace_report

CLOCK = TraceClock(boot_ns=7_000_000_000, wall_ms=1_760_000_000_000)
KEYS = [(1.0, "Down"), (2.0, "Select"), (3.0, "Back")]


def generate(
    steps: list[float], keys=KEYS, *, slower=(), pause: tuple[float, float] | None = None
) -> bytes:
    """A run of ``sum(steps)`` app seconds advanced step by step, the keys taken on the step
    that reaches them (as the device hands them over); paused over ``pause`` if given."""
    gen = TraceGenerator(CAFE_TV, CLOCK, seed="9:0:trace", app_name="Café TV", slower=slower)
    gen.restart(0.0)
    out = bytearray()
    screen, waiting, clock = HOME_SCREEN, list(keys), 0.0
    for step in steps:
        clock += step
        while waiting and waiting[0][0] <= clock + 1e-9:
            at, key = waiting.pop(0)
            bursts, screen = key_work(key, screen)
            gen.key(at, key, bursts)
        if pause is not None and pause[0] <= clock < pause[1]:
            gen.pause()
        elif pause is not None and not gen.writer.enabled:
            gen.restart(clock - step)
        out += gen.advance(clock)
    return bytes(out + gen.finish(clock))


def events(trace: Trace) -> list[tuple]:
    return sorted(
        (trace.thread_name(s.track), s.name, s.start, s.end, sorted(s.args.items()))
        for s in trace.slices
    )


def packets(data: bytes) -> list[pb.TracePacket]:
    return list(pb.Trace.FromString(data).packet)


def test_the_same_run_gives_the_same_trace_however_its_time_is_cut() -> None:
    even = read_trace(generate([0.1] * 40))
    uneven = read_trace(generate([0.37, 0.05, 1.3, 0.28, 0.6, 0.9, 0.5]))
    assert events(even) == events(uneven) and sorted(even.flows) != []
    assert events(read_trace(generate([0.1] * 40, keys=KEYS[:1]))) != events(even)


def test_names_are_interned_per_sequence_and_again_after_a_restart() -> None:
    seen: dict[int, int] = {}
    for p in packets(generate([0.25] * 16)):
        first = p.trusted_packet_sequence_id not in seen
        seen[p.trusted_packet_sequence_id] = seen.get(p.trusted_packet_sequence_id, 0) + 1
        assert p.sequence_flags == (3 if first else 2)
        if p.HasField("track_event") and p.track_event.type != pb.TrackEvent.TYPE_SLICE_END:
            assert not p.track_event.HasField("name") and p.track_event.name_iid
            assert all(not a.HasField("name") for a in p.track_event.debug_annotations)
    assert len(seen) == 1 + 3 + 2  # the process, render, aux, main and the two Tasks
    per_sequence: dict[tuple[int, str], int] = {}
    for p in packets(generate([0.25] * 16)):
        for e in p.interned_data.event_names:
            key = (p.trusted_packet_sequence_id, e.name)
            per_sequence[key] = per_sequence.get(key, 0) + 1
    assert set(per_sequence.values()) == {1}
    # a client joining at 1.5 s gets a trace that stands alone: it clears every sequence again
    resumed = generate([0.5] * 8, pause=(0.5, 1.5))
    cleared = [p for p in packets(resumed) if p.sequence_flags == 3]
    assert len(cleared) == 2 * 6
    report = trace_report(read_trace(resumed))
    assert report["skipped_packets"] == 0 and report["complete"]


def test_the_clock_maps_app_time_zero_to_the_wall_clock_start() -> None:
    trace = read_trace(generate([0.5] * 4))
    snapshot = trace.clock_snapshots[0]
    assert snapshot == {6: CLOCK.boot_ns, 1: CLOCK.wall_ms * 1_000_000}
    assert trace.wall_offset_ns() == CLOCK.wall_ms * 1_000_000 - CLOCK.boot_ns
    assert CLOCK.boot_ns <= trace.first_ts < CLOCK.boot_ns + 20_000_000
    assert trace.last_ts <= CLOCK.boot_ns + 2_200_000_000


def test_a_slow_key_misses_frames_and_its_script_costs_what_the_profile_charges() -> None:
    quiet = trace_report(read_trace(generate([0.1] * 40, keys=[])))
    assert quiet["frames"]["missed"] == 0 and 55 <= quiet["frames"]["frames"] / 4 <= 61
    for factor in (1.0, 3.0):
        trace = read_trace(
            generate([0.1] * 40, keys=[(1.0, "Down")], slower=[("RowList_scroll", factor)])
        )
        [key] = [s for s in trace.slices if s.name == "keyEvent"]
        assert key.args == {"key": "Down"} and trace.thread_name(key.track) == "RenderThr:Main"
        _, missed = frame_cadence(trace)
        assert any(m.start <= key.start < m.end for m in missed)
        [scroll] = [
            s
            for s in trace.slices
            if s.name == "ExecBrightScript" and str(s.args["callstack"]).startswith("RowList_s")
        ]
        # the key's render-thread burst: RowList_scroll, 4 walks of 10 ms (app_keys), slower
        assert scroll.duration == round(4 * TICK_NS * factor)
        assert (
            scroll.args["callstack"] == "RowList_scroll pkg:/components/rows/PosterRowList.brs:330"
        )
        assert 0 < scroll.args["cpu_us"] <= scroll.duration // 1000
        assert trace.thread_name(scroll.track) == "RenderThr:Main"
    [miss] = [m for m in missed if m.start <= key.start < m.end]
    assert miss.end - miss.start > 4 * TICK_NS * 3


def test_rendezvous_observers_and_the_exit() -> None:
    trace = read_trace(generate([0.2] * 25))
    report = trace_report(trace)
    assert report["unfinished"] == 1
    [open_] = [s for s in trace.slices if s.end is None]
    assert (open_.name, trace.thread_name(open_.track)) == ("ExecBrightScript", "main")
    assert open_.args == {"callstack": "Main pkg:/source/main.brs:1"}
    assert report["rendezvous"] and all(r["thread"].startswith("TN:") for r in report["rendezvous"])
    by_index = {i: s for i, s in enumerate(trace.slices)}
    for a, b in trace.flows:
        assert (by_index[a].name, by_index[b].name) == ("rendezvous-enqueue", "rendezvous-dequeue")
        rendezvous = trace.slices[by_index[a].parent]
        operation = trace.slices[rendezvous.parent]
        assert rendezvous.name == "Rendezvous" and operation.name.startswith("roSGNode.")
        assert set(operation.args) == {"component", "name", "callstack"}
        assert trace.thread_name(by_index[b].track) == "RenderThr:Main"
        assert rendezvous.start < by_index[b].start < rendezvous.end
    assert report["observers"]["count"] and report["observers"]["max_depth"] >= 2
    assert report["key_events"] == 3 and report["args"]["cpu_us"] and report["args"]["depth"]
