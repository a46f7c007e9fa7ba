"""Chunks are bounded in bytes, not only in time: a window with many busy threads becomes several
chunks under ``max_chunk_bytes``, built one at a time; a run's chunk bytes have their own cap
(issue 18, row 2)."""

from __future__ import annotations

import json
import tracemalloc
from collections import Counter

import pytest

from rokuprof.capture import machine as machine_module
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.sentry.settings import ChunkSettings, ChunkSettingsError
from rokuprof.simulator.worst_cases import busy_modules

MIB = 1024 * 1024


def convert(data: bytes, settings: ChunkSettings) -> tuple[list, object]:
    converter = OfflineConverter(settings, new_id=lambda: "0" * 32)
    converter.feed(data)
    converter.close()
    chunks = list(converter.chunks())
    return chunks, converter.summary.report


def busy_samples_per_thread(chunks) -> Counter:
    out: Counter = Counter()
    for chunk in chunks:
        profile = json.loads(chunk.data)["profile"]
        stacks = profile["stacks"]
        for sample in profile["samples"]:
            if stacks[sample["stack_id"]]:
                out[sample["thread_id"]] += 1
    return out


def test_300_busy_modules_fit_in_chunks_under_the_budget_and_lose_nothing():
    """Today's default window with 300 busy threads is one ~130 MB chunk, over Sentry's 50 MiB:
    every sample of the run was rejected."""
    chunks, report = convert(busy_modules(300, seconds=70.0), ChunkSettings())
    budget = ChunkSettings().max_chunk_bytes
    assert not report.rejected
    assert len(chunks) > 2 * 2  # two windows, each split
    assert max(len(c.data) for c in chunks) <= budget
    assert report.largest_chunk == max(len(c.data) for c in chunks)
    assert report.chunk_bytes == sum(len(c.data) for c in chunks)
    assert report.split_windows == 2
    per_thread = busy_samples_per_thread(chunks)
    assert len(per_thread) == 300
    assert sum(per_thread.values()) == report.busy_samples
    # each window's threads are spread over its chunks, none twice: two windows, two chunks
    appearances = Counter(tid for chunk in chunks for tid in chunk.threads)
    assert set(appearances.values()) == {2}


def test_a_small_budget_splits_and_the_same_samples_arrive():
    data = busy_modules(40, seconds=20.0)
    whole, report_whole = convert(data, ChunkSettings())
    split, report_split = convert(data, ChunkSettings(max_chunk_bytes=MIB))
    assert len(whole) == 1 and len(split) >= 5
    assert max(len(c.data) for c in split) <= MIB
    assert busy_samples_per_thread(split) == busy_samples_per_thread(whole)
    assert report_split.busy_samples == report_whole.busy_samples
    assert report_split.split_windows == 1
    assert any("sent as several" in line for line in report_split.describe())


def test_the_chunks_of_a_run_stop_at_its_byte_cap_and_say_so():
    data = busy_modules(40, seconds=20.0)
    settings = ChunkSettings(max_chunk_bytes=MIB, max_session_chunk_bytes=3 * MIB)
    chunks, report = convert(data, settings)
    assert sum(len(c.data) for c in chunks) == report.chunk_bytes <= 3 * MIB
    assert report.capped_at == 3 * MIB
    whole, _ = convert(data, ChunkSettings())
    sent = sum(busy_samples_per_thread(chunks).values())
    assert report.capped_samples > 0
    assert sent < sum(busy_samples_per_thread(whole).values())
    assert any("max_session_chunk_bytes" in line for line in report.describe())


def test_chunks_are_built_one_at_a_time():
    """Memory holds one chunk, not a window's worth."""
    data = busy_modules(120, seconds=20.0)
    converter = OfflineConverter(ChunkSettings(max_chunk_bytes=MIB))
    converter.feed(data)
    converter.close()
    tracemalloc.start()
    try:
        total = 0
        for chunk in converter.chunks():
            total += len(chunk.data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total > 12 * MIB
    assert peak < total / 3


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("max_chunk_bytes", 1000),
        ("max_chunk_bytes", 60 * 1024 * 1024),
        ("max_chunk_bytes", 1.5),
        ("max_session_chunk_bytes", 0),
    ],
)
def test_byte_budgets_are_checked(field, value):
    with pytest.raises(ChunkSettingsError) as error:
        ChunkSettings(**{field: value})
    assert [name for name, _ in error.value.problems] == [field]


def test_a_live_tick_hands_out_a_bounded_share_of_a_big_window(monkeypatch):
    """The run machine takes at most CHUNK_BYTES_PER_TICK of chunks per tick; the rest come at
    the following ticks, in order."""

    class Sink:
        def __init__(self, chunks: list[bytes]) -> None:
            self.chunks = chunks
            self.calls = 0

        def ready(self, now):
            self.calls += 1
            while self.chunks:
                yield self.chunks.pop(0)

    monkeypatch.setattr(machine_module, "CHUNK_BYTES_PER_TICK", 250)
    sink = Sink([bytes([i]) * 100 for i in range(7)])
    m = machine_module.RunMachine.__new__(machine_module.RunMachine)
    m.sink = sink
    taken = [m._take_ready(0.0) for _ in range(4)]
    assert [len(t) for t in taken] == [3, 3, 1, 0]
    assert [c[0] for t in taken for c in t] == list(range(7))
