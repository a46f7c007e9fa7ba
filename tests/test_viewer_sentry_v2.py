"""Sentry V2 profile chunks read by Sentry's own profile processor (vroomrs): per chunk, vroomrs
gives each function exactly the time Sentry's rule gives its samples (the time until the next
sample on the thread; the one thing it leaves out, a function with a single sample in a chunk, is
accounted for sample by sample); summed over a run's chunks, that is ``inspect``'s wall-self time
per function, within the sampling's rounding (less than one period per call path, and exactly
the builder's reported remainder in total).

Idle gaps: the builder writes a thread's idle time as samples with the empty stack ``[]``. For a
V1 profile Sentry's processor fills such a sample with the frames its busy neighbours share (so
V1 exports send an ``(idle)`` frame instead); for a V2 chunk vroomrs makes no node for an empty
stack, so the gap's time goes to no function. The hand-made chunks below pin that down.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections import defaultdict
from itertools import pairwise

import pytest
from daemon_helpers import cap_config

from rokuprof.capture.loop import DeviceCapture
from rokuprof.capture.session import read_record
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.convert import convert_bytes
from rokuprof.sentry.frames import module_name
from rokuprof.sentry.validate import MAX_SAMPLE_SPAN_SECONDS, validate_chunk
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from tests.viewers import vroom_v2
from tests.viewers.expected import SAMPLE_PERIOD_US, differences, expected_figures
from tests.viewers.samples import SAMPLES, expected

V2_SAMPLES = ("cafe-tv-full", "cafe-tv-long")
T = 1 / 101  # seconds per sample
#: How far vroomrs's node duration may be from the samples' own, per sample. It reads each
#: timestamp as a float, which a Rust JSON reader may leave one ulp off (serde_json's default
#: float parsing is best effort; 238 ns for any time between 2004 and 2038), and turns it into
#: whole nanoseconds, ``(t * 1e9) as u64``
#: (a float product, rounded to its own ulp: 256 ns at these times, so within 128 ns): each end
#: of a node within 366 ns, its duration within twice that. A function has at most one node per
#: sample. (0.5 µs, the product's rounding alone, was 3 ns short in a loaded run: 503 ns.)
_EPOCH = 1.8e9  # a time of the captures' epoch
NODE_ROUNDING_S = 2 * (math.ulp(_EPOCH) + math.ulp(_EPOCH * 1e9) / 2 / 1e9)


def by_function(want_key):
    """inspect's (thread, function, file) key as vroomrs names a function: (module, function)."""
    return (module_name(want_key[2]), want_key[1])


@pytest.fixture(scope="module", params=V2_SAMPLES)
def converted(request):
    name = request.param
    chunks, summary = convert_bytes((SAMPLES / f"{name}.bsprof").read_bytes())
    assert summary.complete and chunks
    payloads = [c.payload for c in chunks]
    return name, payloads, summary, vroom_v2.read([vroom_v2.ingest(p) for p in payloads])


def compare_per_chunk(payloads: list[dict], reads: list[vroom_v2.Read]):
    """vroomrs's self time per function against Sentry's rule applied to each chunk's samples.
    Returns (vroomrs's seconds per function over all chunks, seconds of the single samples it
    left out per function, worst difference in seconds)."""
    got: dict[tuple[str, str], float] = defaultdict(float)
    left_out: dict[tuple[str, str], float] = defaultdict(float)
    worst = 0.0
    for payload, read in zip(payloads, reads, strict=True):
        assert read.error is None
        rule = vroom_v2.leaf_times(payload)
        seconds = {k: ns / 1e9 for k, ns in read.self_ns().items()}
        assert set(seconds) <= set(rule.seconds)
        for key, want in rule.seconds.items():
            if key not in seconds:
                # the one thing vroomrs leaves out: a function with one sample in the chunk
                assert rule.samples[key] == 1, (key, rule.samples[key])
                left_out[key] += want
                continue
            diff = abs(seconds[key] - want)
            assert diff <= NODE_ROUNDING_S * rule.samples[key], (key, seconds[key], want)
            worst = max(worst, diff)
            got[key] += seconds[key]
    return dict(got), dict(left_out), worst


def thread_lanes(payload: dict) -> list[list[tuple[float, list[int]]]]:
    """Per thread of a chunk, its samples in order: (timestamp, stack as frame indexes)."""
    stacks = payload["profile"]["stacks"]
    lanes = defaultdict(list)
    for s in payload["profile"]["samples"]:
        lanes[s["thread_id"]].append((s["timestamp"], stacks[s["stack_id"]]))
    return list(lanes.values())


def test_vroom_reads_every_chunk(converted):
    _, payloads, _, reads = converted
    assert [r.error for r in reads] == [None] * len(payloads)
    assert {r.platform for r in reads} == {"brightscript"}
    # duration_ms is (last - first sample) rounded to whole seconds
    assert all(0 < r.duration_ms <= MAX_SAMPLE_SPAN_SECONDS * 1000 for r in reads)
    assert all(validate_chunk(p) == [] for p in payloads)


def test_every_frame_is_in_app(converted):
    """vroomrs gives an in-app function the time of its system callees too; these samples have
    none, so self time per function is comparable with inspect's as it is."""
    _, payloads, _, reads = converted
    assert all(f["in_app"] for p in payloads for f in p["profile"]["frames"])
    assert all(f["in_app"] for r in reads for f in r.functions)


def test_gaps_between_busy_samples_sharing_frames_are_in_the_chunks(converted):
    """The case under suspicion is really there: idle samples between two busy samples of a
    thread whose stacks share their root frame."""
    _, payloads, _, _ = converted
    shared = 0
    for payload in payloads:
        for timed in thread_lanes(payload):
            lane = [stack for _, stack in timed]
            for before, idle, after in zip(lane, lane[1:], lane[2:], strict=False):
                shared += idle == [] and bool(before) and bool(after) and before[-1] == after[-1]
    assert shared > 10


def test_vroom_gives_each_function_the_time_of_its_samples(converted):
    """Per chunk, exactly: a busy sample's time is the time until the next sample on its
    thread, an idle sample's goes to no function."""
    _, payloads, _, reads = converted
    got, _, worst = compare_per_chunk(payloads, reads)
    assert got and worst < 10e-6


def test_every_busy_sample_gets_one_period(converted):
    """Every busy run is closed by a sample one slot after it: no busy sample's time is lost
    (as a thread's last sample) or stretched over a gap."""
    _, payloads, summary, _ = converted
    busy = 0
    for payload in payloads:
        for lane in thread_lanes(payload):
            assert lane[-1][1] == []  # a thread's last sample is idle
            for (t, stack), (t_next, _) in pairwise(lane):
                if stack:
                    busy += 1
                    assert abs(t_next - t - T) < 1e-6
    assert busy == summary.report.busy_samples


def test_vroom_self_times_summed_over_chunks_are_inspects(converted):
    name, payloads, summary, reads = converted
    got, left_out, _ = compare_per_chunk(payloads, reads)
    in_sentry = {k: (got.get(k, 0) + left_out.get(k, 0)) * 1e6 for k in set(got) | set(left_out)}
    want = expected(name)
    ours = want.by(by_function, "wall")
    paths = want.by(by_function, "paths")
    report = summary.report
    assert report.leftovers == [] and report.rejected == []
    assert report.dropped_seconds == report.unplaced_seconds == report.unattributed_seconds == 0
    # Each call path's samples x T is its wall-self time within one period (the sampler's
    # remainder, carried to the end of the run), so a function is within T per call path.
    tolerance = lambda k: SAMPLE_PERIOD_US * paths.get(k, 0)  # noqa: E731
    assert differences(in_sentry, ours, tolerance) == []
    # In total the remainders are known exactly: what was not sampled is the reported remainder.
    assert abs(sum(in_sentry.values()) - (sum(ours.values()) - report.remainder_seconds * 1e6)) < (
        1 + NODE_ROUNDING_S * 1e6 * report.busy_samples
    )


# -- hand-made chunks: idle gaps ---------------------------------------------------------------

T0 = 1_795_273_445.0
FRAMES = [
    {"function": "root", "module": "source.main", "in_app": True},
    {"function": "A", "module": "source.main", "in_app": True},
    {"function": "B", "module": "source.main", "in_app": True},
]
STACKS = [[], [1, 0], [2, 0], [0]]  # idle, A under root, B under root, root alone (leaf first)
IDLE, A, B, ROOT = range(4)


def hand_chunk(*lanes: list[tuple[int, int]]) -> dict:
    """A chunk with one thread per lane of (slot, stack id) samples, slots 1/101 s apart."""
    samples = [
        {"timestamp": T0 + slot * T, "thread_id": str(tid), "stack_id": sid}
        for tid, lane in enumerate(lanes, 1)
        for slot, sid in lane
    ]
    samples.sort(key=lambda s: (s["timestamp"], s["thread_id"]))
    return {
        "version": "2",
        "platform": "brightscript",
        "profiler_id": "a" * 32,
        "chunk_id": "b" * 32,
        "client_sdk": {"name": "rokuprof", "version": "0"},
        "release": "Cafe TV@1",
        "profile": {
            "frames": FRAMES,
            "stacks": STACKS,
            "samples": samples,
            "thread_metadata": {str(tid): {"name": f"t{tid}"} for tid in range(1, len(lanes) + 1)},
        },
    }


HAND_MADE = {
    # A for 3 samples, idle for 50 slots, A again for 2: the gap is nobody's time
    "A [] A": ([[(0, A), (1, A), (2, A), (3, IDLE), (53, A), (54, A), (55, IDLE)]], {"A": 5}),
    "A [] B": (
        [[(0, A), (1, A), (2, A), (3, IDLE), (53, B), (54, B), (55, IDLE)]],
        {"A": 3, "B": 2},
    ),
    # the shared frame is the leaf itself: the gap is still not root's self time
    "root [] root": (
        [[(0, ROOT), (1, ROOT), (2, IDLE), (50, ROOT), (51, ROOT), (52, IDLE)]],
        {"root": 4},
    ),
    # gaps on two threads at once, interleaved in time
    "two threads": (
        [
            [(0, A), (1, A), (2, IDLE), (40, A), (41, IDLE)],
            [(5, B), (6, IDLE), (20, B), (21, B), (22, IDLE)],
        ],
        {"A": 3, "B": 3},
    ),
    # no closing idle sample: the last busy sample gets no time (why the builder closes runs)
    "unclosed": ([[(0, A), (1, A), (2, A)]], {"A": 2}),
    # a function with one sample in the chunk is left out
    "A once": ([[(0, A), (1, IDLE), (5, B), (6, B), (7, IDLE)]], {"B": 2}),
}


@pytest.mark.parametrize("case", HAND_MADE)
def test_vroom_gives_an_idle_gap_to_no_function(case):
    lanes, periods = HAND_MADE[case]
    chunk = hand_chunk(*lanes)
    assert validate_chunk(chunk) == []
    (read,) = vroom_v2.read([vroom_v2.ingest(chunk)])
    assert read.error is None
    got = {fn: ns / 1e9 / T for (_, fn), ns in read.self_ns().items()}
    assert got.keys() == periods.keys()
    for fn, n in periods.items():
        assert got[fn] == pytest.approx(n, abs=1e-3), (fn, got)
    # and Sentry's rule as written out here agrees, but for the single sample vroomrs leaves out
    rule = vroom_v2.leaf_times(chunk)
    kept = {key[1]: s / T for key, s in rule.seconds.items() if rule.samples[key] > 1}
    assert kept == pytest.approx(periods, abs=1e-3)


# -- a live-captured session -------------------------------------------------------------------

#: A left-over line of the build report's notes: the thread's left-over ms, and its functions.
LEFT_OVER = re.compile(
    r"left over \(in no chunk\): thread .* \(\S+\): \d+ sample\(s\), ([\d.]+) ms in (.*)"
)


async def test_live_captured_chunks_agree_with_vroom(tmp_path):
    """A run captured from the simulated device (real time, 0.5 s chunks) as the daemon writes
    its chunks: vroomrs reads each exactly as Sentry's rule says, and the functions add up to
    inspect's figures for the archived stream, but for what the builder reported left over."""
    device = DeviceConfig(run_seconds=2.0, runs=1, run_gap=0.1, seed=3, burst_ticks=(2, 10))
    async with SimulatedDevice(device) as dev:
        config = cap_config(dev, tmp_path, runs=1, chunk_seconds=0.5)
        summary = await asyncio.wait_for(DeviceCapture(config).run(), 20)
    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "complete"
    payloads = [
        json.loads(p.read_bytes()) for p in sorted((session.path / "chunks").glob("*.json"))
    ]
    assert len(payloads) >= 2
    reads = vroom_v2.read([vroom_v2.ingest(p) for p in payloads])
    got, left_out, _ = compare_per_chunk(payloads, reads)
    in_sentry = {k: (got.get(k, 0) + left_out.get(k, 0)) * 1e6 for k in set(got) | set(left_out)}
    want = expected_figures(
        ProfileReader.from_bytes((session.path / "capture.bsprof").read_bytes())
    )
    ours = want.by(by_function, "wall")
    paths = want.by(by_function, "paths")
    # Samples that did not fit before the run's end are in no chunk; the report names each
    # thread's left-over time and the functions it belongs to.
    leftover_us: dict[str, float] = defaultdict(float)
    for note in record["chunk_report"]["notes"]:
        if m := LEFT_OVER.fullmatch(note):
            for function in m.group(2).split(", "):
                leftover_us[function] += float(m.group(1)) * 1000 + 50  # ms to 1 decimal
    tolerance = lambda k: SAMPLE_PERIOD_US * paths.get(k, 0) + leftover_us.get(k[1], 0)  # noqa: E731
    assert differences(in_sentry, ours, tolerance) == []
