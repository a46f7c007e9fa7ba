"""The native core on its own terms, and its tables against the pure tables.

Its decoding is compared with the reference parser and the pure decoder in
``test_differential.py`` (over the ``engine`` fixture). Here: what only the core has (its kept
partial entry, UTF-8 replacement, memory per table entry, standalone tables), and the tables
(snapshot, deltas, line CPU, allocations per line, heap, leak sites, totals, warnings, stacks,
names) compared with the pure tables', fed the same bytes split anywhere.
"""

from __future__ import annotations

import os

import pytest
from conftest import engine_for
from hypothesis import given
from hypothesis import strategies as st
from strategies import any_streams, chunk, splits, streams, stretched_streams
from table_views import TIGHT, heap_stream, ids_of, table_view, walk

from rokuprof import _native
from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import build_header, build_stream
from rokuprof.bsprof.model import (
    ALLOC,
    CPU,
    FREE,
    FREE_REALLOC,
    MEMORY,
    Footer,
    Header,
    Limits,
)
from rokuprof.path_model import wall_delta
from rokuprof.profile.engine import PURE
from rokuprof.profile.reader import ProfileReader

if not _native.built():
    if os.environ.get("CI") == "true":
        raise RuntimeError("CI must build the native core: pip install . with gcc available")
    pytest.skip(
        "the native core is not built (pip install . needs a C compiler)", allow_module_level=True
    )

from rokuprof._native import _bsprof
from rokuprof._native.reader import NativeDecoder, NativeTables
from rokuprof.profile.tables import ProfileTables


@pytest.fixture(scope="module", params=["native", "native-queued"])
def native_engine(request):
    """The native core as it chooses, and with its look-ahead queue taking every entry."""
    yield from engine_for(request.param)


@given(st.data(), streams(ended=True, footer=True))
def test_the_core_keeps_at_most_one_partial_entry(native_engine, data, spec):
    """Fed one byte at a time, the kept bytes are a prefix of the entry being read."""
    decoder = NativeDecoder()
    starts = spec.boundaries
    for i in range(len(spec.data)):
        decoder.feed(spec.data[i : i + 1])
        if decoder.state == "body":
            kept = decoder.core.pending()
            start = decoder.offset
            assert start in starts
            assert kept == spec.data[start : i + 1]


@given(st.binary(max_size=64))
def test_utf8_replacement_is_counted_like_python(native_engine, data):
    assert _bsprof.utf8_replace_length(data) == len(data.decode("utf-8", "replace"))


@pytest.mark.parametrize(
    "data",
    [b"\xe0\x80", b"\xed\xa0\x80", b"\xf0\x90\x80A", b"\xf4\x90", b"\xc0\xaf", b"\xe1\x80", b""],
)
def test_utf8_replacement_edge_cases(native_engine, data):
    assert _bsprof.utf8_replace_length(data) == len(data.decode("utf-8", "replace"))


# --- tables: native == pure -------------------------------------------------------------------


def compare_readers(native_engine, chunks, delta_after, limits: Limits | None = None) -> None:
    pure = ProfileReader(limits, PURE)
    native = ProfileReader(limits, native_engine)
    for piece, (take, kind) in zip(chunks, delta_after, strict=False):
        assert native.feed(piece) == pure.feed(piece)
        if take:
            if kind == "walls":  # the C-built WallDelta against its definition
                expected_walls = wall_delta(pure.tables.take_delta(lines=False))
                assert native.tables.take_walls() == expected_walls
            else:
                lines = kind == "lines"
                assert native.tables.take_delta(lines) == pure.tables.take_delta(lines)
            # stacks and strings are cached between feeds: ask for them mid-stream too
            ids = ids_of(pure)
            paths = pure.tables.paths
            assert [native.tables.stack(i) for i in ids] == [walk(paths, i) for i in ids]
            assert [native.tables.string(i) for i in ids] == [pure.tables.string(i) for i in ids]
    for piece in chunks[len(delta_after) :]:
        native.feed(piece)
        pure.feed(piece)
    native.close()
    pure.close()
    ids = ids_of(pure)
    expected = table_view(pure.tables, ids)
    for key, value in table_view(native.tables, ids).items():
        assert (key, value) == (key, expected[key])
    assert [native.tables.stack(i) for i in ids] == [walk(native.tables.paths, i) for i in ids]
    delta = native.tables.take_delta()
    assert delta == pure.tables.take_delta()
    assert native.warnings == pure.warnings
    assert (native.status, native.problem(), native.entry_count) == (
        pure.status,
        pure.problem(),
        pure.entry_count,
    )


#: after which pieces a delta is taken, and which: with line CPU, call paths only, or walls
deltas_when = st.lists(
    st.tuples(st.booleans(), st.sampled_from(["lines", "paths", "walls"])), max_size=40
)


@given(st.data(), any_streams(max_actions=60), deltas_when)
def test_tables_match_the_pure_tables(native_engine, data, stream, when):
    compare_readers(native_engine, data.draw(splits(stream)), when)


@given(st.data(), any_streams(max_actions=60), deltas_when)
def test_tables_match_under_tight_limits(native_engine, data, stream, when):
    compare_readers(native_engine, data.draw(splits(stream)), when, TIGHT)


@given(st.data(), stretched_streams(max_actions=40), deltas_when)
def test_tables_match_on_non_minimal_varints(native_engine, data, stretched, when):
    _, stream = stretched
    compare_readers(native_engine, data.draw(splits(stream)), when)


@given(
    st.integers(0, 2**32),
    st.integers(500, 6000),
    st.sampled_from([3, 200, 3000]),
    st.booleans(),
    st.lists(st.integers(1, 60_000), max_size=6),
)
def test_tables_match_on_a_busy_heap(native_engine, seed, operations, addresses, line_data, cuts):
    stream = heap_stream(seed, operations, addresses, line_data)
    chunks = chunk(stream, cuts)
    compare_readers(native_engine, chunks, [(True, "lines")] * len(chunks))
    limits = Limits(max_live_allocations=100, max_line_keys=30)
    compare_readers(native_engine, chunks, [(True, "paths")] * len(chunks), limits)
    compare_readers(native_engine, chunks, [(True, "walls")] * len(chunks), limits)


def test_tables_match_while_the_heap_grows_past_the_queue_threshold(native_engine):
    """A heap that passes 65,536 cells (over 32,768 live allocations): by default the core
    switches to its look-ahead queue mid-stream, and its answers stay the pure engine's, cut
    anywhere (inside entries too)."""
    stream = heap_stream(7, 150_000, 80_000, True)
    decoder = NativeDecoder()
    decoder.feed(stream)
    assert len(decoder.core.heap()) > 32_768  # the default threshold was crossed
    cuts = [1, 1_000, 99_999, 400_001, 500_003, len(stream) - 3]
    chunks = chunk(stream, cuts)
    compare_readers(native_engine, chunks, [(i % 2 == 0, "lines") for i in range(len(chunks))])


# --- allocations per line --------------------------------------------------------------------

HEAP_FULL = (
    "live-heap tracking stopped at {} allocations (limit); later allocations are counted but not "
    "tracked"
)
LINES_FULL = (
    "line-level CPU stopped at 2 (path, line) pairs (limit); call-path totals are still complete"
)
ALLOC_LINES_FULL = (
    "allocations per line stopped at 2 (path, line) pairs (limit); call-path totals are still "
    "complete"
)
LINE_DEFS = [(0, 1, "f"), (1, 1, 1), (2, 1, 0, 1, 0, 1, 10, 1)]


@pytest.mark.parametrize(
    ("max_live", "entries", "line_alloc", "untracked", "warnings"),
    [
        (  # the allocation-line table fills first, then the heap, then line CPU
            3,
            [
                *((MEMORY, 1, ALLOC, lo, 16 * lo, lo) for lo in (1, 2, 3)),
                (MEMORY, 1, ALLOC, 9, 0x100, 5),
                *((CPU, 1, lo, 1, 1) for lo in (1, 2, 3)),
                (MEMORY, 99, ALLOC, 2, 0x200, 7),  # an undefined path: a new pair, not kept
                (MEMORY, 1, ALLOC, 1, 16, 10),  # a pair kept still adds up
                (MEMORY, 1, FREE, 2, 32, 0),  # a free is no allocation site
            ],
            {(1, 1): (2, 11), (1, 2): (1, 2)},
            3,
            [ALLOC_LINES_FULL, HEAP_FULL.format(3), LINES_FULL],
        ),
        (  # the heap, line CPU, then the allocation-line table
            1,
            [
                (MEMORY, 1, ALLOC, 0, 1, 1),  # no line offset: the path's totals only
                (MEMORY, 1, ALLOC, 0, 2, 1),
                *((CPU, 1, lo, 1, 1) for lo in (1, 2, 3)),
                (MEMORY, 0, ALLOC, 5, 3, 4),  # path 0: the line keeps the path named
                (MEMORY, 1, FREE_REALLOC, 6, 1, 0),
                (MEMORY, 1, ALLOC, 6, 4, 8),
                (MEMORY, 1, ALLOC, 7, 5, 16),
            ],
            {(0, 5): (1, 4), (1, 6): (1, 8)},
            1,
            [HEAP_FULL.format(1), LINES_FULL, ALLOC_LINES_FULL],
        ),
    ],
)
def test_allocations_per_line_are_bounded_and_warn_in_stream_order(
    native_engine, max_live, entries, line_alloc, untracked, warnings
):
    header = Header(1, 0, 0, 0, 1.0, 1.0, True, True, 0, "lines", "", "1", "R", "X", "1")
    data = build_stream(header, LINE_DEFS + entries, Footer(9))
    limits = Limits(max_live_allocations=max_live, max_line_keys=2)
    pure, native = ProfileReader(limits, PURE), ProfileReader(limits, native_engine)
    pure.feed(data)
    for i in range(len(data)):  # one byte at a time
        native.feed(data[i : i + 1])
    for reader in (pure, native):
        tables = reader.tables
        assert list(tables.line_alloc.items()) == list(line_alloc.items())
        assert tables.untracked_line_allocs == untracked
        assert tables.warnings == warnings
        assert tables.totals().alloc_count == sum(e[2] == ALLOC for e in entries if e[0] == MEMORY)
        (key, value), missing = next(iter(line_alloc.items())), (1, 99)
        assert tables.line_alloc[key] == value and key in tables.line_alloc
        assert missing not in tables.line_alloc and tables.line_alloc.get(missing) is None
        with pytest.raises(KeyError):
            tables.line_alloc[missing]
    assert native.warnings == pure.warnings


def test_standalone_native_tables_count_allocations_per_line(native_engine):
    tables = NativeTables(Limits(max_line_keys=50))
    entries = [
        (MEMORY, pid, ALLOC, lo, 16 * (lo * 8 + pid), 3) for lo in range(1, 101) for pid in (1, 7)
    ]
    tables.apply([*LINE_DEFS, *entries])
    pure = ProfileTables(Limits(max_line_keys=50))
    pure.apply([*LINE_DEFS, *entries])
    assert len(tables.line_alloc) == 50 and tables.untracked_line_allocs == 200 - 50
    assert list(tables.line_alloc.items()) == list(pure.line_alloc.items())
    assert tables.warnings == pure.warnings == [ALLOC_LINES_FULL.replace(" 2 ", " 50 ")]
    assert tables.take_delta() == pure.take_delta()  # no allocation lines in a delta


def test_an_allocation_line_key_costs_at_most_48_bytes(native_engine):
    """Allocations per line: 24-byte records behind an index of 4-byte cells."""
    header = Header(1, 0, 0, 0, 1.0, 1.0, True, True, 0, "lines", "", "1", "R", "X", "1")
    reader = ProfileReader(engine=native_engine)
    reader.feed(build_header(header) + encode_entries(LINE_DEFS, True))
    empty = reader.tables.memory()
    n = 200_000
    allocs = (
        (MEMORY, 1, op, lo, 16, 32 if op == ALLOC else 0)
        for lo in range(1, n + 1)
        for op in (ALLOC, FREE)
    )
    reader.feed(encode_entries(allocs, True))
    assert len(reader.tables.line_alloc) == n and reader.tables.totals().live_count == 0
    assert (reader.tables.memory() - empty) / n <= 48


def test_a_live_allocation_costs_at_most_64_bytes(native_engine):
    """The live heap is an open-addressing table: 12-byte cells (8 probed, 4 for the path) at
    most half full below the capacity its limit needs at 3/4 full."""
    header = Header(1, 0, 0, 0, 1.0, 1.0, False, True, 0, "heap", "", "1", "R", "X", "1")
    define = [(0, 1, "f"), (1, 1, 1), (2, 1, 0, 1, 0, 1, 10, 1)]
    reader = ProfileReader(engine=native_engine)
    reader.feed(build_header(header) + encode_entries(define, False))
    empty = reader.tables.memory()
    n = 200_000
    reader.feed(encode_entries(((MEMORY, 1, ALLOC, 0, 16 * i, 32) for i in range(n)), False))
    assert reader.tables.totals().live_count == n
    assert (reader.tables.memory() - empty) / n <= 64


@pytest.mark.parametrize(("limit", "cells"), [(700, 1024), (3000, 4096), (3100, 8192)])
def test_the_live_heap_at_its_limit_is_at_most_3_4_full(native_engine, limit, cells):
    """Below its limit the heap stays at most half full (short probes); at the limit it takes no
    more than a 3/4-full table: `cells` 12-byte cells, never the next doubling."""
    header = Header(1, 0, 0, 0, 1.0, 1.0, False, True, 0, "heap", "", "1", "R", "X", "1")
    define = [(0, 1, "f"), (1, 1, 1), (2, 1, 0, 1, 0, 1, 10, 1)]
    reader = ProfileReader(Limits(max_live_allocations=limit), engine=native_engine)
    reader.feed(build_header(header) + encode_entries(define, False))
    empty = reader.tables.memory()
    allocs = ((MEMORY, 1, ALLOC, 0, 16 * i + 16, 32) for i in range(2 * limit))
    reader.feed(encode_entries(allocs, False))
    assert reader.tables.totals().live_count == limit
    assert reader.tables.untracked_allocations == limit
    assert (cells - 1024) * 12 <= reader.tables.memory() - empty <= (cells - 1024) * 12 + 4096
