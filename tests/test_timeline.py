"""The timeline package: windows in, one timeline out (:class:`TimelineBuilder`), and the
timeline of a conversion, which has no Sentry byte budget: an offline output of a 100-hour run
covers 100 hours, and its busy time is the tables' wall time less what the placement rules
reported (dropped over the backlog, left unplaced, remainders under a period)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.export.model import build_input, input_from_bytes
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.simulator.worst_cases import busy_modules
from rokuprof.timeline import IDLE, TimelineBuilder

HOUR = 3600


def _builder() -> TimelineBuilder:
    # call path p's stack is (p % 5, p % 3): distinct paths may share a stack
    return TimelineBuilder(101, 0.0, lambda p: (p % 5, p % 3), lambda m: f"thread {m}")


# A window: per thread, busy runs back to back from a slot, each closed by an idle sample.
_runs = st.lists(st.tuples(st.integers(1, 9), st.integers(1, 4)), min_size=1, max_size=5)
_windows = st.lists(st.dictionaries(st.integers(1, 12), _runs, max_size=3), max_size=6)


def _placed(windows: list[dict[int, list[tuple[int, int]]]]) -> list[list]:
    out = []
    for w, threads in enumerate(windows):
        placed = []
        for module, runs in threads.items():
            slot, lane = w * 100, []
            for path, n in runs:
                lane.append((slot, path, n))
                slot += n
            lane.append((slot, IDLE, 1))
            placed.append((module, lane))
        out.append(placed)
    return out


@settings(max_examples=60, deadline=None)
@given(_windows)
def test_every_sample_is_kept_on_its_slot_with_its_stack(windows) -> None:
    builder = _builder()
    placed = _placed(windows)
    for window in placed:
        builder.add_window(window)
    timeline = builder.release()
    expected: dict[int, list[tuple[int, tuple]]] = {}
    for window in placed:
        for module, lane in window:
            for slot, path, n in lane:
                stack = () if path == IDLE else (path % 5, path % 3)
                expected.setdefault(module, []).extend((slot + i, stack) for i in range(n))
    got = {
        module: [(slot + i, timeline.stacks[sid]) for slot, sid, n in runs for i in range(n)]
        for module, runs in timeline.runs.items()
    }
    assert got == {m: sorted(samples) for m, samples in expected.items() if samples}
    assert len(set(timeline.stacks)) == len(timeline.stacks)  # each stack once
    for runs in timeline.runs.values():  # neighbouring runs of one stack are one run
        for (a, sa, na), (b, sb, _) in pairwise(runs):
            assert not (sa == sb and a + na == b)
    assert set(builder.threads) == set(timeline.runs) | {m for window in placed for m, _ in window}


def test_stacks_are_numbered_by_their_first_sample_then_thread_id_as_text() -> None:
    builder = _builder()
    # thread 10 sorts before thread 9 as text; path 3's first sample is the earliest
    builder.add_window([(9, [(5, 1, 2), (7, IDLE, 1)]), (10, [(5, 2, 1), (6, IDLE, 1)])])
    builder.add_window([(9, [(2, 3, 1), (3, IDLE, 1)])])
    timeline = builder.release()
    assert timeline.stacks == [(), (2, 2), (1, 1), (3, 0)]
    assert list(builder.threads) == [10, 9]


def test_a_100_hour_run_is_laid_out_to_its_end() -> None:
    """Busy for 100 hours: its chunks would pass the per-run Sentry budget (1 GiB) at about 47
    hours (the code before this package cut the report and the exports there); the timeline
    goes on to the run's end, and its busy time is what the tables hold less what the placement
    reported, to the microsecond."""
    inp = input_from_bytes(busy_modules(1, seconds=100 * HOUR, flushes=20_000))
    timeline, report = inp.timeline, inp.summary.report
    assert timeline.last_slot() / timeline.hz > 99.9 * HOUR
    busy = sum(timeline.busy_samples(t) for t in timeline.runs)
    assert busy / timeline.hz > 50 * HOUR  # past the budget's ~47 hours
    assert busy == report.busy_samples
    placed = busy / timeline.hz + report.dropped_seconds + report.unplaced_seconds
    wall = sum(p.wall for p in inp.paths) / inp.run.units_per_second
    assert placed + report.remainder_seconds == pytest.approx(wall, abs=1e-6)
    assert report.capped_at is None


def test_the_sentry_byte_budget_caps_the_chunks_not_the_timeline(engine_env) -> None:
    data = busy_modules(2, seconds=2 * HOUR, flushes=400)
    capped = ChunkSettings(max_session_chunk_bytes=1024 * 1024)

    def converter(settings: ChunkSettings) -> OfflineConverter:
        c = OfflineConverter(settings, new_id=lambda: "0" * 32)
        c.feed(data)
        return c

    chunks = converter(capped)
    assert sum(len(c.data) for c in chunks.chunks()) <= 1024 * 1024
    assert chunks.summary is not None and chunks.summary.report.capped_at == 1024 * 1024
    full, cut = build_input(converter(ChunkSettings())), build_input(converter(capped))
    assert cut.timeline == full.timeline
    assert cut.timeline.last_slot() / cut.timeline.hz > 1.99 * HOUR
