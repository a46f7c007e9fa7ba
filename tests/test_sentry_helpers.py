"""The Sentry tests' helpers (tests/sentry_helpers.py) are what those tests take them for."""

from __future__ import annotations

from sentry_helpers import PATHS, THREAD_OF, small_tables, synthetic_stream

from rokuprof.profile import ProfileReader
from rokuprof.sentry.flamegraph import stack_times


def test_small_tables_have_two_threads_and_leaf_first_stacks():
    tables = small_tables()
    assert [n.id for n in tables.stack(3)] == [3, 2, 1]
    assert tables.stack(5)[-1].module == 2
    assert {THREAD_OF[p] for p in PATHS} == {"1", "2"}


def test_synthetic_stream_decodes_completely_with_and_without_footer():
    data = synthetic_stream(3.0)
    reader = ProfileReader.from_bytes(data)
    assert reader.complete and reader.tables.totals().wall > 0
    cut = ProfileReader.from_bytes(synthetic_stream(3.0, footer=False))
    assert cut.status == "incomplete" and cut.footer is None


def test_stack_times_of_nothing_is_empty():
    assert stack_times([]) == {}
