"""The chunk builder: sample synthesis invariants, chunk fields, carries, leftovers, golden."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sentry_helpers import (
    GOLDEN,
    HEADER,
    PATHS,
    START,
    THREAD_OF,
    T,
    counter_ids,
    small_tables,
    stack_seconds,
)

from rokuprof import __version__
from rokuprof.bsprof.model import ALLOC, CPU, FREE, MEMORY
from rokuprof.sentry.assemble import HEAP_MEASUREMENT
from rokuprof.sentry.chunk import ChunkBuilder
from rokuprof.sentry.flamegraph import stack_times
from rokuprof.sentry.frames import FrameTable, RunFrames
from rokuprof.sentry.settings import ChunkSettings, ChunkSettingsError
from rokuprof.sentry.validate import INVALID_JSON, validate_chunk

US = 1_000_000


def make(settings: ChunkSettings | None = None, **kw) -> ChunkBuilder:
    kw.setdefault("header", HEADER)
    return ChunkBuilder(small_tables(), START, settings=settings, new_id=counter_ids(), **kw)


def finish(builder: ChunkBuilder, end: float | None = None, *, after_end: bool = False):
    chunks = list(builder.ready())
    flush = builder.finish(end, after_end=after_end)
    return chunks + flush.chunks, flush.report


def thread_samples(payload: dict, tid: str) -> list[tuple[float, list[int]]]:
    stacks = payload["profile"]["stacks"]
    return [
        (s["timestamp"], stacks[s["stack_id"]])
        for s in payload["profile"]["samples"]
        if s["thread_id"] == tid
    ]


def all_samples(payload: dict) -> list[tuple[float, list[int]]]:
    stacks = payload["profile"]["stacks"]
    return [(s["timestamp"], stacks[s["stack_id"]]) for s in payload["profile"]["samples"]]


def functions(payload: dict, stack: list[int]) -> list[str]:
    return [payload["profile"]["frames"][f]["function"] for f in stack]


# -- the fields of a chunk --------------------------------------------------------------------


def test_chunk_fields_ids_release_environment_threads_frames():
    b = make(ChunkSettings(environment="staging"))
    b.add_wall({3: 300_000, 5: 200_000}, START + 1)
    chunks, report = finish(b)
    assert len(chunks) == 1 and report.leftovers == []
    p = chunks[0].payload
    assert p["version"] == "2" and p["platform"] == "brightscript"
    assert p["profiler_id"] == f"{1:032x}" == b.profiler_id
    assert p["chunk_id"] == f"{2:032x}" == chunks[0].chunk_id
    assert p["client_sdk"] == {"name": "rokuprof", "version": __version__}
    assert p["release"] == "Café TV@2.4.1"
    assert p["environment"] == "staging"
    assert p["profile"]["thread_metadata"] == {"1": {"name": "main"}, "2": {"name": "Task"}}
    frames = {f["function"]: f for f in p["profile"]["frames"]}
    assert len(p["profile"]["frames"]) == 4  # Main, work, sleep, run: `work` shared by threads
    assert frames["sleep"] == {
        "function": "sleep",
        "filename": "lib/core.brs",
        "abs_path": "common:/lib/core.brs",
        "module": "common.lib.core",
        "in_app": False,
        "lineno": 5,
    }
    assert frames["work"] == {
        "function": "work",
        "filename": "source/main.brs",
        "abs_path": "pkg:/source/main.brs",
        "module": "source.main",
        "in_app": True,
        "lineno": 20,
    }
    busy = {tuple(functions(p, s)) for _, s in thread_samples(p, "1") if s}
    assert busy == {("sleep", "work", "Main")}  # leaf first, root last
    busy = {tuple(functions(p, s)) for _, s in thread_samples(p, "2") if s}
    assert busy == {("work", "run")}
    stacks = [tuple(s) for s in p["profile"]["stacks"]]
    assert len(stacks) == len(set(stacks)) == 3  # deduplicated: two busy stacks and the idle []
    assert json.loads(chunks[0].data) == p
    assert validate_chunk(chunks[0].data) == []


def test_every_chunk_gets_a_fresh_chunk_id_and_one_profiler_id():
    b = ChunkBuilder(small_tables(), START, header=HEADER, settings=ChunkSettings(chunk_seconds=1))
    for i in range(1, 6):
        b.add_wall({2: 500_000}, START + i)
    chunks, _ = finish(b)
    assert len(chunks) >= 4
    assert len({c.chunk_id for c in chunks}) == len(chunks)
    assert {c.payload["profiler_id"] for c in chunks} == {b.profiler_id}
    assert all(len(c.chunk_id) == 32 and c.chunk_id == c.chunk_id.lower() for c in chunks)
    assert [c.index for c in chunks] == list(range(1, len(chunks) + 1))


def test_release_override_sanitising_and_absence():
    assert make(ChunkSettings(release="tv@9")).release == "tv@9"
    odd = dataclasses.replace(HEADER, target_name="My/App\tX", target_version="1\\2")
    assert make(header=odd).release == "My-App X@1-2"
    assert make(header=dataclasses.replace(HEADER, target_version="")).release == "Café TV"
    b = make(header=None, settings=ChunkSettings(environment=None))
    b.add_wall({2: 100_000}, START + 1)
    (chunk,), _ = finish(b)
    assert "release" not in chunk.payload and "environment" not in chunk.payload
    assert validate_chunk(chunk.data) == []


@pytest.mark.parametrize(
    "kw",
    [
        {"chunk_seconds": 61},
        {"chunk_seconds": 0},
        {"chunk_seconds": float("nan")},
        {"wall_unit": "minutes"},
        {"environment": "a/b"},
        {"release": " "},
    ],
)
def test_settings_reject_bad_values(kw):
    with pytest.raises(ValueError):
        ChunkSettings(**kw)


def test_settings_report_every_broken_rule_by_field() -> None:
    with pytest.raises(ChunkSettingsError) as caught:
        ChunkSettings(chunk_seconds="60", environment="a\nb", settle_seconds=11, wall_unit=["us"])
    problems = caught.value.problems
    assert [name for name, _ in problems] == [
        "wall_unit",
        "chunk_seconds",
        "settle_seconds",
        "environment",
    ]
    assert caught.value.named({"chunk_seconds": "capture.chunk_seconds"})[1] == (
        "capture.chunk_seconds: must be a number of seconds above 0 and at most 60 "
        "(the longest Sentry chunk), got '60'"
    )
    assert "'a\\nb'" in dict(problems)["environment"]  # shown escaped, never as a line break


@pytest.mark.parametrize(
    ("seconds", "rule"),
    [(61, "at most 60"), (60.5, "at most 60"), (0.01, "two samples"), (True, "at most 60")],
)
def test_chunk_seconds_rules(seconds, rule) -> None:
    with pytest.raises(ChunkSettingsError) as caught:
        ChunkSettings(chunk_seconds=seconds)
    [(name, text)] = caught.value.problems
    assert name == "chunk_seconds" and rule in text
    assert ChunkSettings(chunk_seconds=0.02).chunk_seconds == 0.02  # two samples at 101 Hz
    assert ChunkSettings(chunk_seconds=60).chunk_seconds == 60


# -- where samples go -------------------------------------------------------------------------


def test_samples_end_at_the_arrival_and_a_busy_run_ends_with_an_idle_sample():
    b = make()
    b.add_wall({2: 300_000}, START + 10)  # 0.3 s = 30.3 periods -> 30 samples
    (chunk,), report = finish(b)
    samples = thread_samples(chunk.payload, "1")
    assert [t for t, s in samples if s] == [START + i / 101 for i in range(980, 1010)]
    assert samples[-1] == (START + 10.0, [])  # the idle sample at the arrival closes the run
    assert len(samples) == 31
    assert report.remainder_seconds == pytest.approx(0.3 - 30 * T)


def test_busy_time_beyond_the_run_fills_back_never_past_the_end():
    b = make()
    b.add_wall({2: 200_000}, START + 1)  # 20 samples, right before t = 1 s
    b.add_wall({2: 1_500_000}, START + 2)  # 1.5 s of work in a 1 s window
    (chunk,), report = finish(b, START + 2)
    samples = thread_samples(chunk.payload, "1")
    busy = [round((t - START) * 101) for t, s in samples if s]
    # 1.7 s = 171.7 periods -> 172 samples (the last remainder rounds up at the end), pushed
    # back into the idle time before them so that the run closes at its end, t = 2 s
    assert busy == list(range(30, 202))
    assert samples[-1] == (START + 2, [])
    assert b.path_samples == {2: 172}
    assert report.unplaced_seconds == 0 and report.leftovers == []


def test_busy_time_that_cannot_fit_before_the_end_is_reported_not_sent_after_it():
    b = make()
    b.add_wall({5: 150 * US}, START + 1)  # 150 s of busy time in a 1 s run
    (chunk,), report = finish(b, START + 1)
    samples = thread_samples(chunk.payload, "2")
    assert max(t for t, _ in samples) == START + 1  # the closing idle sample, at the end
    assert b.path_samples == {5: 101}
    assert report.unplaced_seconds == pytest.approx(15_049 / 101)  # 15,150 samples - 101
    assert b.leftover_paths() == {5: 15_049}
    assert any("not placed" in line and "wall-time unit" in line for line in report.describe())


def test_with_after_end_busy_time_that_cannot_fit_before_the_end_is_placed_right_after_it():
    b = make()
    b.add_wall({5: 150 * US}, START + 1)  # 150 s of busy time in a 1 s run
    chunks, report = finish(b, START + 1, after_end=True)
    # 101 samples before the end, then right after them the rest, window by window (each
    # window closes with an idle sample on its last slot: 60 s windows are 6,061 slots).
    busy = [
        round((t - START) * 101) for c in chunks for t, s in thread_samples(c.payload, "2") if s
    ]
    assert busy == [*range(0, 6060), *range(6061, 12121), *range(12122, 15152)]
    assert all(validate_chunk(c.data) == [] for c in chunks)
    assert b.path_samples == {5: 15_150} and b.leftover_paths() == {}
    assert report.after_end_seconds == pytest.approx(15_049 / 101)  # 15,150 samples - 101
    assert report.unplaced_seconds == 0 and report.leftovers == []
    assert any("after the end" in line and "wall-time unit" in line for line in report.describe())


def test_the_backlog_limit_bounds_what_lies_after_the_end():
    b = make(ChunkSettings(max_backlog_seconds=100))
    b.add_wall({5: 150 * US}, START + 1)  # 101 samples fit, 15,049 wait: 4,949 over the limit
    chunks, report = finish(b, START + 1, after_end=True)
    last = max(t for c in chunks for t, _ in all_samples(c.payload))
    assert last <= START + 1 + 100 + 3 / 101  # 100 s after the end, and a slot per window
    assert b.path_samples == {5: 10_201} and b.dropped_samples == {5: 4_949}
    assert report.after_end_seconds == pytest.approx(100)
    assert report.unplaced_seconds == 0 and report.leftovers == []


def test_no_chunk_spans_more_than_60_s_and_bulk_data_carries_into_next_chunks():
    b = make()
    b.add_wall({5: 150 * US}, START + 1)  # 150 s of busy time delivered at once
    chunks, report = finish(b, START + 200)  # in a run that went on long enough to hold it
    assert [c.samples for c in chunks] == [6061, 6061, 3031]  # busy + the closing idle sample
    assert [round(c.duration, 6) for c in chunks] == [60.0, 60.0, 30.0]
    assert all(a.end < b_.start for a, b_ in itertools.pairwise(chunks))
    assert b.path_samples == {5: 15150} and report.leftovers == []
    assert all(validate_chunk(c.data) == [] for c in chunks)


def test_shorter_chunk_windows():
    b = make(ChunkSettings(chunk_seconds=5))
    for i in range(1, 21):
        b.add_wall({2: 700_000, 5: 300_000}, START + i)
    chunks, _ = finish(b)
    assert len(chunks) == 4
    assert all(c.duration <= 5 + 1e-6 for c in chunks)


def test_wall_unit_setting_scales_samples():
    b = make(ChunkSettings(wall_unit="ms"))
    b.add_wall({2: 300}, START + 1)  # 300 ms
    finish(b)
    assert b.path_samples == {2: 30}
    b = make()  # microseconds: 300 us is not even one period
    b.add_wall({2: 300}, START + 1)
    chunks, report = finish(b)
    assert chunks == [] and report.remainder_seconds == pytest.approx(300e-6)


# -- what cannot form a valid chunk -----------------------------------------------------------


def test_a_single_sample_is_carried_into_the_next_chunk():
    b = make()
    b.add_wall({2: 9_901}, START + 5)  # one period
    assert list(b.ready(now=START + 70)) == []  # its window is over, but one sample is not enough
    assert b.report.carried_single_samples == 1 and b.report.carried_windows == 1
    b.add_wall({2: 400_000}, START + 65)  # 40 more samples in the next window
    (chunk,), report = finish(b)
    busy = [s for _, s in thread_samples(chunk.payload, "1") if s]
    assert len(busy) == 41 and b.path_samples == {2: 41}
    assert report.leftovers == []


def test_a_single_sample_at_the_end_is_reported_not_dropped_silently():
    b = make()
    b.add_wall({2: 9_901}, START + 5)
    chunks, report = finish(b)
    assert chunks == []
    (leftover,) = report.leftovers
    assert (leftover.thread_id, leftover.thread_name, leftover.samples) == ("1", "main", 1)
    assert leftover.functions == ("work",) and leftover.seconds == pytest.approx(T)
    assert any("left over" in line and "work" in line for line in report.describe())
    assert b.leftover_paths() == {2: 1}


def test_a_thread_with_one_sample_next_to_a_valid_thread_is_not_sent_with_it():
    b = make()
    b.add_wall({2: 500_000, 5: 9_901}, START + 3)
    (chunk,), report = finish(b)
    assert set(chunk.payload["profile"]["thread_metadata"]) == {"1"}
    assert report.leftovers[0].thread_name == "Task"


def test_chunks_that_fail_validation_are_reported_not_handed_out():
    b = ChunkBuilder(small_tables(), START, header=HEADER, new_id=lambda: "not-a-uuid")
    b.add_wall({2: 500_000}, START + 1)
    chunks, report = finish(b)
    assert chunks == []
    ((samples, problems),) = report.rejected
    assert samples == 52 and problems[0].reason == INVALID_JSON  # 51 busy + 1 idle
    assert any("rejected by validation" in line for line in report.describe())


def test_unknown_paths_are_reported_as_unattributed():
    b = make()
    b.add_wall({99: 2 * US, 2: 100_000}, START + 3)
    _chunks, report = finish(b)
    assert report.unattributed_seconds == 2.0
    assert b.path_samples == {2: 10}


def test_builder_refuses_use_after_finish_and_bad_times():
    b = make()
    b.finish()
    with pytest.raises(RuntimeError):
        b.add_wall({2: 1}, START + 1)
    with pytest.raises(ValueError):
        make().add_wall({2: 1}, float("inf"))
    with pytest.raises(ValueError):
        ChunkBuilder(small_tables(), float("nan"))


# -- memory -----------------------------------------------------------------------------------


def test_live_heap_travels_as_a_byte_measurement():
    tables = small_tables()
    b = ChunkBuilder(tables, START, header=HEADER, new_id=counter_ids())
    tables.apply([(CPU, 2, 1, 10, 300_000), (MEMORY, 2, ALLOC, 1, 0x10, 64)])
    b.add(tables.take_delta(), START + 1)
    tables.apply([(CPU, 5, 1, 10, 300_000), (MEMORY, 5, ALLOC, 1, 0x20, 100)])
    tables.apply([(MEMORY, 5, FREE, 1, 0x10, 0)])
    b.add(tables.take_delta(), START + 2)
    (chunk,), _ = finish(b)
    m = chunk.payload["measurements"]
    assert m == {
        HEAP_MEASUREMENT: {
            "unit": "byte",
            "values": [
                {"timestamp": START + 1, "value": 64},
                {"timestamp": START + 2, "value": 100},
            ],
        }
    }
    assert validate_chunk(chunk.data) == []


def test_no_measurement_without_memory_operations():
    tables = small_tables()
    header = dataclasses.replace(HEADER, memory_ops=False)
    b = ChunkBuilder(tables, START, header=header, new_id=counter_ids())
    tables.apply([(CPU, 2, 1, 10, 300_000)])
    b.update(START + 1)
    (chunk,), _ = finish(b)
    assert "measurements" not in chunk.payload


# -- invariants on random deltas --------------------------------------------------------------

walls = st.dictionaries(st.sampled_from(PATHS), st.integers(0, 2_000_000), max_size=5)
deliveries = st.lists(
    st.tuples(
        st.integers(0, 3000) | st.integers(0, 130_000),  # ms since the previous delivery
        walls,
        st.none() | st.tuples(st.sampled_from(PATHS), st.integers(0, 30 * US)),  # bulk
    ),
    max_size=12,
)


def feed(b: ChunkBuilder, plan, end: float, call_ready: bool) -> tuple[list, dict[int, int]]:
    """Deliver ``plan``; with ``call_ready``, ask for chunks after each delivery as late as
    allowed (the time of the next delivery, or the end)."""
    chunks = []
    totals: dict[int, int] = {}
    times = arrivals(plan)
    for (_, w, bulk), t, now in zip(plan, times, [*times[1:], end], strict=False):
        w = dict(w)
        if bulk:
            w[bulk[0]] = w.get(bulk[0], 0) + bulk[1]
        for path, wall in w.items():
            totals[path] = totals.get(path, 0) + wall
        b.add_wall(w, t)
        if call_ready:
            chunks += [*b.ready(now=t), *b.ready(now=now)]
    return chunks, totals


def compact(payload: dict) -> bytes:
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def dict_per_sample(payload: dict, tables, origin: float) -> dict:
    """``payload`` made again the way the builder first made chunks: a (slot, thread id, path)
    row per sample, sorted, then frames and stacks numbered in order of first use."""
    frames = FrameTable(RunFrames(tables))
    path_of = {}
    for path in (0, *PATHS):
        stack = frames.stacks[frames.stack_id(path)]
        path_of[tuple(json.dumps(frames.frames[f]) for f in stack)] = path
    profile = payload["profile"]
    rows = sorted(
        (
            round((s["timestamp"] - origin) * 101),
            s["thread_id"],
            path_of[
                tuple(json.dumps(profile["frames"][f]) for f in profile["stacks"][s["stack_id"]])
            ],
        )
        for s in profile["samples"]
    )
    again = FrameTable(RunFrames(tables))
    samples = [
        {"timestamp": origin + slot / 101, "thread_id": tid, "stack_id": again.stack_id(path)}
        for slot, tid, path in rows
    ]
    return {
        **payload,
        "profile": {
            **profile,
            "frames": again.frames,
            "stacks": again.stacks,
            "samples": samples,
        },
    }


def arrivals(plan) -> list[float]:
    t, out = START, []
    for gap_ms, _, _ in plan:
        t += gap_ms / 1000
        out.append(t)
    return out


@given(deliveries, st.sampled_from([60.0, 5.0, 0.5]), st.integers(0, 5000), st.booleans())
def test_invariants_on_random_deliveries(plan, window, extra_ms, after_end):
    settings = ChunkSettings(chunk_seconds=window)
    end = (arrivals(plan) or [START])[-1] + extra_ms / 1000
    b = make(settings)
    chunks, totals = feed(b, plan, end, call_ready=True)
    flush = b.finish(end, after_end=after_end)
    chunks += flush.chunks
    payloads = [json.loads(c.data) for c in chunks]

    # Same deltas, ready() never called before the end: the same chunks.
    other = make(settings)
    feed(other, plan, end, call_ready=False)
    assert [c.data for c in other.finish(end, after_end=after_end).chunks] == [
        c.data for c in chunks
    ]

    for chunk, payload in zip(chunks, payloads, strict=True):
        assert validate_chunk(chunk.data) == []
        assert chunk.data == compact(payload) and chunk.payload == payload
        assert payload == dict_per_sample(payload, b.tables, b.origin)
        assert chunk.duration <= window + 1e-6  # never more than one window of samples
        for tid in payload["profile"]["thread_metadata"]:
            samples = thread_samples(payload, tid)
            times = [t for t, _ in samples]
            assert times == sorted(times) and len(set(times)) == len(times)
            assert sum(1 for _, s in samples if s) >= 2  # Relay keeps the thread
            assert samples[-1][1] == []  # every busy run ends with an idle sample
    assert all(a.end < b_.start for a, b_ in itertools.pairwise(chunks))

    # No sample after the end of the run; with after_end, only the busy time that did not fit
    # before it, right after the samples before it (a slot per window on the way, for its idle
    # sample), and then nothing is in no chunk but lone samples.
    report = flush.report
    end_slot = START + math.floor((end - START) * 101 + 1e-6) / 101  # its idle sample's place
    after = sum(t >= end_slot - 1e-9 for p in payloads for t, s in all_samples(p) if s)
    assert after == round(report.after_end_seconds * 101)
    past = end + report.after_end_seconds + len(chunks) / 101 + 1e-9
    assert all(t <= past for p in payloads for t, _ in all_samples(p))
    if not after_end:
        assert all(t <= end + 1e-9 for p in payloads for t, _ in all_samples(p))
    else:
        assert report.unplaced_seconds == 0
        assert all(n == 1 for n in b.leftover_paths().values())
    # samples x T per call path = its wall total within a period (half a period when the last
    # rounding sample found room before the end), nothing lost: what is in no chunk did not
    # fit before the end, or is a lone sample.
    left = b.leftover_paths()
    assert report.leftover_samples <= round(report.unplaced_seconds * 101) + len(report.leftovers)
    for path in PATHS:
        n = b.path_samples.get(path, 0) + left.get(path, 0) + b.dropped_samples.get(path, 0)
        assert abs(n * T - totals.get(path, 0) / US) <= T + 1e-9
    # Sentry's way of turning samples into time gives back exactly those samples.
    got = stack_times(payloads)
    expected = stack_seconds(b.tables, b.path_samples)
    assert got.keys() == expected.keys()
    for key, seconds in expected.items():
        assert got[key] == pytest.approx(seconds, abs=1e-6)
    assert {THREAD_OF[p] for p in b.path_samples} >= {
        tid for p in payloads for tid in p["profile"]["thread_metadata"]
    }


# -- golden -----------------------------------------------------------------------------------


def test_golden_small_chunk():
    b = make()
    b.add_wall({2: 30_000, 3: 20_000, 5: 40_000}, START + 0.5, live_bytes=4096, memory=True)
    b.add_wall({3: 10_000, 5: 20_000}, START + 1.0, live_bytes=2048)
    (chunk,), report = finish(b, START + 1.0)
    text = json.dumps(chunk.payload, indent=2, ensure_ascii=False) + "\n"
    path = GOLDEN / "sentry_chunk_small.json"
    if os.environ.get("ROKUPROF_UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")
    assert report.leftovers == [] and validate_chunk(chunk.data) == []


# -- hostile or mistaken input stays bounded ----------------------------------------------------


def test_backlog_over_the_limit_is_dropped_and_reported():
    b = make(ChunkSettings(max_backlog_seconds=10))
    b.add_wall({2: 100 * US}, START + 1)  # 100 s of work in the first second
    chunks, report = finish(b)
    assert b.dropped_samples == {2: 10100 - 101 - 1010}
    assert report.dropped_seconds == pytest.approx(89.0)
    # the first second is sent; the 10 s backlog does not fit before the end of the run
    assert b.path_samples == {2: 101} and b.leftover_paths() == {2: 1010}
    assert any("dropped" in line and "wall-time unit" in line for line in report.describe())
    assert all(validate_chunk(c.data) == [] for c in chunks)


def test_a_far_future_arrival_with_a_waiting_single_sample_does_not_loop_per_window():
    b = make()
    b.add_wall({2: 9_901}, START + 5)
    b.add_wall({5: 500_000}, START + 1e9)  # 30 years later: 16 million windows away
    chunks, report = finish(b)
    assert len(chunks) == 1 and report.leftovers[0].thread_name == "main"


def test_a_sample_pushed_out_of_the_last_window_still_forms_a_chunk():
    """Found by the property test: 1.5 periods just before a window ends (0.5 s windows); the
    last remainder rounds up to a second sample that no longer fits in the window."""
    b = make(ChunkSettings(chunk_seconds=0.5))
    b.add_wall({1: 14_852}, START + 0.496)
    chunks, report = finish(b, START + 0.496)
    assert report.leftovers == [] and b.path_samples == {1: 2}
    assert len(chunks) == 1 and validate_chunk(chunks[0].data) == []


def test_finish_chunks_cuts_one_window_at_a_time():
    """A backlog that fills many windows before the end of the run: the lazy finish cuts a
    window only when its chunk is asked for, and makes exactly what finish() makes."""
    eager, lazy = make(), make()
    for b in (eager, lazy):
        b.add_wall({2: 300 * US}, START + 1)  # 300 s of work reported in the first second
    flush = eager.finish(START + 600)
    chunks = lazy.finish_chunks(START + 600)
    with pytest.raises(RuntimeError, match="already finished"):
        lazy.add_wall({2: 1}, START + 2)
    first = next(chunks)
    assert lazy.report.chunks == 1  # the other windows are not cut yet
    rest = list(chunks)
    assert len(rest) >= 4 and [c.data for c in [first, *rest]] == [c.data for c in flush.chunks]
    assert lazy.report == flush.report and lazy.path_samples == eager.path_samples
