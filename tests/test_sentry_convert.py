"""Offline conversion: sample files and generated streams give valid chunks whose flamegraph
matches ``rokuprof inspect``; the result does not depend on how the bytes are fed."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentry_helpers import (
    DEFINITIONS,
    HEADER,
    SAMPLES,
    START,
    T,
    assert_valid,
    counter_ids,
    flamegraph_differences,
    synthetic_stream,
)
from strategies import splits, streams

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import CPU, Footer
from rokuprof.profile import ProfileReader
from rokuprof.sentry import frames
from rokuprof.sentry.assemble import HEAP_MEASUREMENT
from rokuprof.sentry.convert import (
    TIMING_BUSIEST,
    TIMING_FOOTER,
    OfflineConverter,
    convert_bytes,
    default_slice_bytes,
)
from rokuprof.sentry.settings import ChunkSettings

SAMPLE_NAMES = sorted(p.stem for p in SAMPLES.glob("*.bsprof"))
_converted: dict[str, tuple] = {}


def converted(name: str):
    """(data, chunks, summary, reader) of a sample file, converted once per test session."""
    if name not in _converted:
        data = (SAMPLES / f"{name}.bsprof").read_bytes()
        chunks, summary = convert_bytes(data, new_id=counter_ids())
        _converted[name] = (data, chunks, summary, ProfileReader.from_bytes(data))
    return _converted[name]


def leftover_by_function(summary) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = defaultdict(int)
    for x in summary.report.leftovers:
        for function in x.functions:
            out[(x.thread_name, function)] += x.samples
    return out


def test_there_are_sample_files():
    assert len(SAMPLE_NAMES) >= 4


@pytest.mark.parametrize("name", SAMPLE_NAMES)
def test_sample_files_give_valid_chunks_matching_inspect(name):
    _, chunks, summary, reader = converted(name)
    assert chunks, summary.lines()
    payloads = assert_valid(c.data for c in chunks)
    assert summary.status == reader.status
    assert summary.report.chunks == len(chunks) and summary.report.rejected == []
    diffs = flamegraph_differences(reader, payloads, leftover=leftover_by_function(summary))
    worst = max(diffs.items(), key=lambda kv: kv[1][0] - kv[1][1])
    assert all(d <= allowed for d, allowed in diffs.values()), worst
    assert all(c.duration <= 60 + 1e-6 for c in chunks)
    assert all(a.end < b.start for a, b in itertools.pairwise(chunks))
    assert_inside_the_run(payloads, summary)
    for p in payloads:
        assert p["release"] == "Café TV@2.4.1" and p["environment"] == "production"
        assert set(p["profile"]["thread_metadata"]) <= {"1", "2", "3", "4"}


def test_memory_travels_only_when_the_stream_has_memory_operations():
    _, chunks, _, _ = converted("cafe-tv-full")
    values = [v for c in chunks for v in c.payload["measurements"][HEAP_MEASUREMENT]["values"]]
    assert values and all(v["value"] >= 0 for v in values)
    reader = converted("cafe-tv-full")[3]
    assert values[-1]["value"] == reader.tables.live_bytes
    _, chunks, _, _ = converted("cafe-tv-cpu-only")
    assert all("measurements" not in c.payload for c in chunks)


def test_a_complete_file_is_spread_between_header_and_footer():
    _, chunks, summary, reader = converted("cafe-tv-full")
    assert summary.timing == TIMING_FOOTER and summary.complete
    assert summary.run_start == reader.header.start_ms / 1000
    assert summary.run_end == reader.footer.end_ms / 1000
    assert chunks[0].start >= summary.run_start
    assert chunks[-1].end <= summary.run_end


@pytest.mark.parametrize("name", ["cafe-tv-cut-short", "cafe-tv-corrupt"])
def test_without_a_footer_the_run_lasts_as_long_as_its_busiest_thread(name):
    _, _chunks, summary, reader = converted(name)
    assert summary.timing == TIMING_BUSIEST and not summary.complete
    busy: dict[int, int] = defaultdict(int)
    for pid, counters in reader.tables.counters.items():
        stack = reader.tables.stack(pid)
        if stack:
            busy[stack[-1].module] += counters[1]
    assert summary.run_end - summary.run_start == pytest.approx(max(busy.values()) / 1e6)
    text = "\n".join(summary.lines())
    assert summary.status in text and "converted what was decoded" in text
    assert "busiest thread" in text


def test_ignores_an_implausible_footer_and_warns():
    data = synthetic_stream(2.0, footer=False)
    chunks, summary = convert_bytes(data + b"\x01")  # footer: 1 ms after 1970
    assert summary.timing == TIMING_BUSIEST and summary.complete
    assert any("footer end time" in w for w in summary.warnings)
    assert_valid(c.data for c in chunks)


def test_split_invariance_of_a_whole_run():
    data = synthetic_stream(4.0, seed=3)
    whole = OfflineConverter(slice_bytes=1500, new_id=counter_ids())
    whole.feed(data)
    expected = [c.data for c in whole.chunks()]
    assert expected
    bytewise = OfflineConverter(slice_bytes=1500, new_id=counter_ids())
    for i in range(len(data)):
        bytewise.feed(data[i : i + 1])
    assert [c.data for c in bytewise.chunks()] == expected


def test_the_runs_frame_cache_starting_over_changes_no_chunk(monkeypatch):
    """A run's stacks are remembered up to a bound (then the cache starts over): the chunks are
    the same bytes whether it never fills or fills at every call path."""
    data = synthetic_stream(150.0, seed=3)
    expected = [c.data for c in convert_bytes(data, new_id=counter_ids())[0]]
    monkeypatch.setattr(frames, "MAX_REMEMBERED_STACKS", 1)
    assert [c.data for c in convert_bytes(data, new_id=counter_ids())[0]] == expected
    assert len(expected) > 1


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_split_invariance_any_split(data):
    stream = synthetic_stream(3.0, seed=4, rate=0.5)
    parts = data.draw(splits(stream))
    conv = OfflineConverter(slice_bytes=1024, new_id=counter_ids())
    for part in parts:
        conv.feed(part)
    got = [c.data for c in conv.chunks()]
    ref = OfflineConverter(slice_bytes=1024, new_id=counter_ids())
    ref.feed(stream)
    assert got == [c.data for c in ref.chunks()]


@given(streams(max_actions=80), st.none() | st.integers(1, 600_000))
def test_generated_streams_convert_to_valid_chunks_that_keep_the_time(spec, run_ms):
    """Any valid stream, with a plausible start (and end, or no footer), converts to valid
    chunks, and samples x T per call path equals its wall total within half a period."""
    start_ms = int(START * 1000)
    header = dataclasses.replace(spec.header, start_ms=start_ms)
    footer = Footer(start_ms + run_ms) if run_ms is not None else None
    # Keep each CPU entry's wall time under 3 s so that runs stay small.
    entries = [(*e[:4], e[4] % 3_000_000) if e[0] == CPU else e for e in spec.entries]
    data = build_stream(header, entries, footer)
    conv = OfflineConverter(new_id=counter_ids(), slice_bytes=64)
    conv.feed(data)
    chunks = list(conv.chunks())
    payloads = assert_valid(c.data for c in chunks)
    summary = conv.summary
    assert summary.report.rejected == []
    reader = ProfileReader.from_bytes(data)
    diffs = flamegraph_differences(reader, payloads, leftover=leftover_by_function(summary))
    assert all(d <= allowed for d, allowed in diffs.values()), diffs
    # What is in no chunk is what did not fit before the end, or a lone sample.
    unplaced = round(summary.report.unplaced_seconds * 101)
    assert summary.report.leftover_samples <= unplaced + len(summary.report.leftovers)
    assert_inside_the_run(payloads, summary)


def assert_inside_the_run(payloads, summary) -> None:
    """No sample, busy or idle, lies before the run's start or after its end."""
    times = [s["timestamp"] for p in payloads for s in p["profile"]["samples"]]
    assert all(summary.run_start <= t <= summary.run_end + 1e-6 for t in times), (
        min(times, default=None),
        max(times, default=None),
        summary.run_start,
        summary.run_end,
    )


@settings(max_examples=25)
@given(streams())
def test_raw_generated_streams_never_break_the_converter(spec):
    """Whatever the header and footer say (times far in the future, ends before starts)."""
    conv = OfflineConverter(ChunkSettings(wall_unit="ns"), slice_bytes=97)
    conv.feed(spec.data)
    for chunk in conv.chunks():
        assert chunk.payload["version"] == "2"
    assert conv.summary is not None and conv.summary.lines()


def test_a_flood_of_busy_time_is_bounded_by_the_backlog_limit():
    """A broken stream claiming 4295 s of work per entry converts quickly and says so."""
    header = dataclasses.replace(HEADER, line_data=False)
    entries = [*DEFINITIONS, *[(CPU, 2, 0, 1, 0xFFFFFFFF)] * 300]
    data = build_stream(header, entries, Footer(header.start_ms + 60_000))
    chunks, summary = convert_bytes(data, ChunkSettings(max_backlog_seconds=30))
    assert 1 <= len(chunks) <= 3
    assert summary.report.dropped_seconds > 1_000_000
    assert any("dropped" in line for line in summary.lines())
    assert_valid(c.data for c in chunks)


def test_wall_unit_scales_the_samples():
    data = synthetic_stream(3.0, seed=5)
    _, us = convert_bytes(data)
    _, ns = convert_bytes(data, ChunkSettings(wall_unit="ns"))
    assert us.report.busy_samples > 200
    assert ns.report.busy_samples <= us.report.busy_samples / 1000 + 50
    assert us.wall_unit == "us" and ns.wall_unit == "ns"


@pytest.mark.parametrize("data", [b"", b"bsprof", b"not a profile at all, really"])
def test_nothing_decodable_gives_no_chunks_and_says_why(data):
    chunks, summary = convert_bytes(data)
    assert chunks == [] and not summary.complete
    assert summary.problem and summary.lines()[0].startswith(f"read {len(data)} bytes")


def test_slice_size_follows_the_file_size():
    assert default_slice_bytes(None) == 16 * 1024
    assert default_slice_bytes(10_000) == 4096
    assert default_slice_bytes(100_000_000) == 100_000


def test_summary_lines_describe_the_output():
    _, chunks, summary, _ = converted("cafe-tv-long")
    text = "\n".join(summary.lines())
    assert f"chunks: {len(chunks)}" in text and "threads: 4" in text
    assert "time covered" in text and "left over" in text
    assert json.loads(chunks[0].data)["profile"]["samples"]
    assert T > 0


def test_slices_are_kept_in_arrays_and_hostile_counters_still_fit():
    from array import array

    from rokuprof.sentry.convert import _Slice

    plain = _Slice.of(10, {3: 5, 1: 2**64 - 1}, 0, False)
    assert isinstance(plain.walls, array) and plain.wall_map() == {3: 5, 1: 2**64 - 1}
    huge = _Slice.of(10, {3: 5, 1: 2**70}, 0, False)  # unbounded pure-Python counters
    assert huge.wall_map() == {3: 5, 1: 2**70}


@settings(max_examples=100)
@given(
    st.dictionaries(
        st.integers(1, 2**64 - 1),
        st.lists(st.integers(0, 2**70), min_size=5, max_size=5),
        max_size=20,
    )
)
def test_a_slices_memory_rows_come_back_as_they_went_in(rows):
    """Packed six numbers a row (an array, or a list when a counter is past 64 bits), a
    slice's memory rows read back as the same call paths, in order, with the same counters."""
    from rokuprof.sentry.convert import _Slice

    ops = [x for pid, row in rows.items() for x in (pid, *row)]
    got = _Slice.of(10, {}, 0, bool(ops), ops).ops_map()
    assert got == rows and list(got) == list(rows)
    assert all(type(row) is list for row in got.values())


def test_slices_past_their_entry_budget_are_merged_rather_than_kept():
    """Every slice of a long file is held until its end is known: past the budget of (path,
    wall) pairs, neighbouring slices merge (a coarser grain, the same totals), wherever the
    bytes were split."""
    data = synthetic_stream(30.0, seed=5)
    fine = OfflineConverter(slice_bytes=512, new_id=counter_ids())
    fine.feed(data)
    fine_chunks = list(fine.chunks())
    budget = 400
    coarse = OfflineConverter(slice_bytes=512, new_id=counter_ids(), max_slice_entries=budget)
    for i in range(0, len(data), 777):
        coarse.feed(data[i : i + 777])
        assert coarse._entries <= budget or coarse.slices == 1
    coarse_chunks = list(coarse.chunks())
    assert coarse.slice_bytes >= 2 * 512 and coarse.slices < fine.slices / 2
    assert coarse._entries == sum(len(s.paths) for s in coarse._slices)
    assert coarse.summary.report.busy_samples == fine.summary.report.busy_samples
    assert_valid(c.data for c in coarse_chunks) and len(coarse_chunks) == len(fine_chunks)
    whole = OfflineConverter(slice_bytes=512, new_id=counter_ids(), max_slice_entries=budget)
    whole.feed(data)
    assert [c.data for c in whole.chunks()] == [c.data for c in coarse_chunks]
