"""ProfileTables: sums, line-level CPU, allocations per line, memory counters, live heap, stacks
and deltas."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import chunk, entry_lists, streams

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import (
    ALLOC,
    CPU,
    FREE,
    FREE_REALLOC,
    MEMORY,
    PATH,
    Footer,
    Header,
    Limits,
)
from rokuprof.path_model import UNKNOWN_PATH, PathNode, PathStats
from rokuprof.profile import tables as tables_module
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import ProfileTables

FIELDS = [
    "cpu",
    "wall",
    "calls",
    "alloc_count",
    "alloc_bytes",
    "free_count",
    "free_realloc_count",
    "freed_bytes",
    "unknown_frees",
]


class Model:
    """What the tables must hold, computed the plain way from the format's rules."""

    def __init__(self, entries) -> None:
        self.stats: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(FIELDS, 0))
        self.line: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
        self.alloc_line: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
        self.heap: dict[int, tuple[int, int]] = {}
        self.paths: dict[int, tuple] = {}
        for e in entries:
            if e[0] == PATH:
                self.paths[e[1]] = e
            elif e[0] == CPU:
                _, pid, lo, cpu, wall = e
                self.stats[pid]["cpu"] += cpu
                self.stats[pid]["wall"] += wall
                if lo:
                    self.line[(pid, lo)][0] += cpu
                    self.line[(pid, lo)][1] += wall
            elif e[0] == 5:
                self.stats[e[1]]["calls"] += e[2]
            elif e[0] == MEMORY:
                _, pid, op, lo, addr, size = e
                s = self.stats[pid]
                if op == ALLOC:
                    s["alloc_count"] += 1
                    s["alloc_bytes"] += size
                    if lo:
                        self.alloc_line[(pid, lo)][0] += 1
                        self.alloc_line[(pid, lo)][1] += size
                    self.heap[addr] = (pid, size)
                else:
                    s["free_count" if op == FREE else "free_realloc_count"] += 1
                    freed = self.heap.pop(addr, None)
                    if freed is None:
                        s["unknown_frees"] += 1
                    else:
                        s["freed_bytes"] += freed[1]

    def snapshot(self) -> dict[int, PathStats]:
        return {p: PathStats(**s) for p, s in self.stats.items() if any(s.values())}

    def chain(self, pid: int) -> list[int]:
        out = []
        while pid:
            out.append(pid)
            pid = self.paths[pid][2]
        return out


def tables_of(entries, limits: Limits | None = None) -> ProfileTables:
    tables = ProfileTables(limits)
    tables.apply(list(entries))
    return tables


# --- sums and memory --------------------------------------------------------------------------


@given(st.booleans().flatmap(lambda line: entry_lists(line, memory_ops=True, max_actions=60)))
def test_tables_match_the_plain_model(entries):
    tables = tables_of(entries)
    model = Model(entries)
    assert tables.snapshot() == model.snapshot()
    assert {k: list(v) for k, v in tables.line_cpu.items()} == dict(model.line)
    assert {k: list(v) for k, v in tables.line_alloc.items()} == dict(model.alloc_line)
    assert tables.heap == model.heap
    assert tables.live_bytes == sum(size for _, size in model.heap.values())
    assert tables.dangling == 0
    totals = tables.totals()
    for name in FIELDS:
        assert getattr(totals, name) == sum(s[name] for s in model.stats.values())
    assert (totals.live_count, totals.live_bytes) == (len(model.heap), tables.live_bytes)


@given(st.booleans().flatmap(lambda line: entry_lists(line, memory_ops=True, max_actions=60)))
def test_leak_sites_group_live_allocations_by_path(entries):
    model = Model(entries)
    sites: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for pid, size in model.heap.values():
        sites[pid][0] += 1
        sites[pid][1] += size
    expected = sorted(
        ((p, n, b) for p, (n, b) in sites.items()), key=lambda t: (-t[2], -t[1], t[0])
    )
    assert tables_of(entries).leak_sites() == expected


ROOT = (PATH, 1, 0, 9, 0, 1, 100, 2)


def test_memory_counters_by_hand():
    tables = tables_of(
        [
            ROOT,
            (MEMORY, 1, ALLOC, 0, 0x10, 100),
            (MEMORY, 1, ALLOC, 0, 0x20, 50),
            (MEMORY, 1, FREE, 0, 0x10, 0),
            (MEMORY, 1, FREE_REALLOC, 0, 0x20, 0),
            (MEMORY, 1, ALLOC, 0, 0x30, 80),
            (MEMORY, 1, FREE, 0, 0x999, 0),  # never allocated: counted, not an error
        ]
    )
    assert tables.stats(1) == PathStats(
        alloc_count=3,
        alloc_bytes=230,
        free_count=2,
        free_realloc_count=1,
        freed_bytes=150,
        unknown_frees=1,
    )
    assert (tables.live_bytes, len(tables.heap)) == (80, 1)
    assert tables.leak_sites() == [(1, 1, 80)]
    assert tables.warnings == []


def test_allocation_at_a_live_address_replaces_it():
    tables = tables_of([ROOT, (MEMORY, 1, ALLOC, 0, 7, 10), (MEMORY, 1, ALLOC, 0, 7, 3)])
    assert (tables.live_bytes, len(tables.heap), tables.replaced_allocations) == (3, 1, 1)


def test_zero_sized_allocations_at_a_live_address_replace_it_too():
    """The heap keeps one int per address and tells a replacement by identity: two equal
    values must still be two objects (a 0 size must not give back the same int)."""
    tables = tables_of([ROOT, *[(MEMORY, 1, ALLOC, 0, 7, 0)] * 3, (MEMORY, 1, ALLOC, 0, 8, 0)])
    assert (tables.live_bytes, len(tables.heap), tables.replaced_allocations) == (0, 2, 2)
    assert tables.leak_sites() == [(1, 2, 0)]


def test_entries_on_undefined_paths_are_counted_under_the_unknown_path():
    tables = tables_of([(CPU, 42, 0, 5, 6), (5, 42, 1), (MEMORY, 42, ALLOC, 0, 1, 8)])
    assert tables.stats(UNKNOWN_PATH) == PathStats(
        cpu=5, wall=6, calls=1, alloc_count=1, alloc_bytes=8
    )
    assert tables.dangling == 3
    assert tables.stack(42) == ()


# --- line-level CPU ---------------------------------------------------------------------------


def test_line_cpu_and_line_numbers():
    chained = (PATH, 2, 1, 0, 4, 1, 200, 3)  # called from line offset 4 of path 1
    tables = tables_of(
        [
            ROOT,
            chained,
            (CPU, 2, 3, 10, 20),
            (CPU, 2, 3, 1, 2),
            (CPU, 2, 5, 7, 7),
            (CPU, 1, 0, 9, 9),
        ]
    )
    assert {k: list(v) for k, v in tables.line_cpu.items()} == {(2, 3): [11, 22], (2, 5): [7, 7]}
    assert tables.line_number(2, 3) == 202  # line + offset - 1
    assert tables.line_number(2, 1) == 200
    assert tables.line_number(1, 4) == 103  # the call site of path 2 in its caller
    assert tables.stats(2).cpu == 18


def test_line_cpu_is_bounded_for_a_hostile_stream():
    tables = tables_of(
        [ROOT, *[(CPU, pid, lo, 1, 2) for lo in range(1, 201) for pid in (1, 7)]],
        Limits(max_line_keys=50),
    )
    assert len(tables.line_cpu) == 50
    assert tables.untracked_line_cpu == 400 - 50
    assert tables.totals().cpu == 400  # call-path totals stay complete
    assert tables.totals().wall == 800
    assert len(tables.warnings) == 1
    assert "line-level CPU stopped at 50" in tables.warnings[0]
    tables.apply([(CPU, 1, 1, 5, 5)])  # a pair already kept still adds up
    assert tables.line_cpu[(1, 1)] == (6, 7)


# --- allocations per line ---------------------------------------------------------------------


def test_allocations_per_line():
    chained = (PATH, 2, 1, 0, 4, 1, 200, 3)
    tables = tables_of(
        [
            ROOT,
            chained,
            (MEMORY, 2, ALLOC, 3, 0x10, 100),
            (MEMORY, 2, ALLOC, 3, 0x20, 28),
            (MEMORY, 2, ALLOC, 9, 0x30, 5),
            (MEMORY, 2, FREE, 3, 0x10, 0),  # frees and realloc frees are no allocation site
            (MEMORY, 2, FREE_REALLOC, 4, 0x20, 0),
            (MEMORY, 2, ALLOC, 4, 0x40, 64),  # the alloc half of that realloc
            (MEMORY, 1, ALLOC, 0, 0x50, 7),  # no line offset: in the path's totals only
            (CPU, 2, 3, 1, 1),
        ]
    )
    assert dict(tables.line_alloc) == {(2, 3): (2, 128), (2, 9): (1, 5), (2, 4): (1, 64)}
    assert tables.line_number(2, 9) == 208
    assert tables.stats(2).alloc_count == 4 and tables.stats(1).alloc_bytes == 7
    assert dict(tables.line_cpu) == {(2, 3): (1, 1)}  # a table of its own
    assert tables.take_delta().line_cpu == {(2, 3): (1, 1)}


def test_allocations_per_line_are_bounded_for_a_hostile_stream():
    entries = [
        (MEMORY, pid, ALLOC, lo, 16 * (lo * 8 + pid), 3) for lo in range(1, 201) for pid in (1, 7)
    ]
    tables = tables_of([ROOT, *entries, (CPU, 1, 1, 1, 1)], Limits(max_line_keys=50))
    assert len(tables.line_alloc) == 50
    assert tables.untracked_line_allocs == 400 - 50
    assert tables.totals().alloc_count == 400 and tables.totals().alloc_bytes == 1200
    assert tables.warnings == [
        "allocations per line stopped at 50 (path, line) pairs (limit); "
        "call-path totals are still complete"
    ]
    assert tables.line_cpu[(1, 1)] == (1, 1)  # the CPU line table has its own bound
    tables.apply([(MEMORY, 1, ALLOC, 1, 0, 10)])  # a pair already kept still adds up
    assert tables.line_alloc[(1, 1)] == (2, 13)


def test_allocations_per_line_saturate():
    top = 2**64 - 1
    tables = tables_of([ROOT])
    for _ in range(2):
        tables.apply([(MEMORY, 1, ALLOC, 2, 1, 2**32 - 1)])
    tables._alloc_lines[1] = top - 1  # as if a long run had allocated that much at the line
    tables.apply([(MEMORY, 1, ALLOC, 2, 2, 10)])
    assert tables.line_alloc[(1, 2)] == (3, top)
    assert tables.saturated == 1


# --- strings, modules, stacks -----------------------------------------------------------------


def test_stack_is_leaf_to_root_with_the_module_of_the_root():
    tables = tables_of(
        [
            (0, 1, "main.brs"),
            (0, 2, "main"),
            (0, 3, "helper"),
            (0, 4, "Main thread"),
            (1, 9, 4),
            ROOT,
            (PATH, 2, 1, 0, 4, 1, 200, 3),
            (PATH, 3, 2, 0, 1, 1, 100, 2),
        ]
    )
    stack = tables.stack(3)
    assert [n.id for n in stack] == [3, 2, 1]
    assert [n.depth for n in stack] == [2, 1, 0]
    assert {n.module for n in stack} == {9}
    assert tables.module_name(stack[-1].module) == "Main thread"
    assert [tables.string(n.function_id) for n in stack] == ["main", "helper", "main"]
    assert tables.string(0) == "<string 0>"
    assert tables.module_name(5) == "<module 5>"


@given(st.booleans().flatmap(lambda line: entry_lists(line, memory_ops=False, max_actions=60)))
def test_every_stack_follows_the_callers(entries):
    tables = tables_of(entries)
    model = Model(entries)
    for pid in model.paths:
        chain = model.chain(pid)
        stack = tables.stack(pid)
        assert [n.id for n in stack] == chain
        root = model.paths[chain[-1]]
        assert all(n.module == root[3] for n in stack)
        assert stack[0].depth == len(chain) - 1


def test_a_cycle_of_callers_does_not_hang():
    tables = tables_of([(PATH, 1, 2, 0, 0, 1, 1, 1), (PATH, 2, 1, 0, 0, 1, 1, 1)])
    assert [n.id for n in tables.stack(1)] == [1, 2]


# --- deltas -----------------------------------------------------------------------------------


def add(a: PathStats, b: PathStats) -> PathStats:
    return PathStats(*(getattr(a, f) + getattr(b, f) for f in FIELDS))


@given(st.data(), st.booleans().flatmap(lambda line: entry_lists(line, max_actions=60)))
def test_deltas_sum_to_the_totals_whatever_the_batching(data, entries):
    cuts = data.draw(st.lists(st.integers(0, len(entries)), max_size=8))
    tables = ProfileTables()
    summed: dict[int, PathStats] = {}
    lines: dict[tuple[int, int], tuple[int, int]] = {}
    for batch in chunk(entries, cuts):
        tables.apply(batch)
        delta = tables.take_delta()
        assert all(delta.paths.values())  # only paths that changed
        assert delta.live_bytes == tables.live_bytes
        assert delta.live_count == len(tables.heap)
        assert delta.wall == sum(p.wall for p in delta.paths.values())
        for pid, stats in delta.paths.items():
            summed[pid] = add(summed.get(pid, PathStats()), stats)
        for key, (cpu, wall) in delta.line_cpu.items():
            old = lines.get(key, (0, 0))
            lines[key] = (old[0] + cpu, old[1] + wall)
    assert summed == tables.snapshot() == Model(entries).snapshot()
    # a CPU entry of 0/0 leaves a zero row that no delta reports
    assert lines == {k: tuple(v) for k, v in tables.line_cpu.items() if any(v)}
    empty = tables.take_delta()
    assert empty.paths == {}
    assert empty.line_cpu == {}


def test_unchanged_interval_gives_an_empty_delta():
    tables = tables_of([ROOT, (CPU, 1, 0, 5, 5)])
    first = tables.take_delta()
    assert first.paths == {1: PathStats(cpu=5, wall=5)}
    tables.apply([(0, 5, "late string"), (CPU, 1, 0, 0, 0)])  # nothing counted changes
    assert tables.take_delta().paths == {}
    tables.apply([(5, 1, 2)])
    assert tables.take_delta().paths == {1: PathStats(calls=2)}


@pytest.mark.engine
@given(st.data(), streams(memory_ops=True))
def test_reader_deltas_do_not_depend_on_the_byte_split(data, spec):
    def deltas(pieces) -> dict[int, PathStats]:
        reader = ProfileReader()
        out: dict[int, PathStats] = {}
        for piece in pieces:
            reader.feed(piece)
            for pid, stats in reader.tables.take_delta().paths.items():
                out[pid] = add(out.get(pid, PathStats()), stats)
        return out

    cuts = data.draw(st.lists(st.integers(0, len(spec.data)), max_size=10))
    assert deltas(chunk(spec.data, cuts)) == deltas([spec.data]) == Model(spec.entries).snapshot()


# --- ProfileReader: decoder and tables together -----------------------------------------------

HEADER = Header(1, 0, 0, 0, 1.0, 1.0, False, True, 0, "app", "", "1", "Roku", "4800X", "12")
STREAM = build_stream(
    HEADER, [(0, 1, "f"), (1, 1, 1), ROOT, (CPU, 1, 0, 3, 4), (5, 1, 1)], Footer(99)
)


@pytest.mark.engine
def test_reader_fills_the_tables_and_says_complete():
    reader = ProfileReader()
    counts = [reader.feed(STREAM[i : i + 7]) for i in range(0, len(STREAM), 7)]
    reader.close()
    assert sum(counts) == reader.entry_count == 5
    assert reader.complete
    assert reader.status == "complete"
    assert reader.problem() is None
    assert reader.footer == Footer(99, 0)
    assert reader.header.target_name == "app"
    assert reader.tables.stats(1) == PathStats(cpu=3, wall=4, calls=1)


@pytest.mark.engine
def test_reader_problem_for_each_way_a_stream_falls_short():
    header_end = len(build_stream(HEADER, [], end=False))
    short_header = ProfileReader.from_bytes(STREAM[:10])
    assert short_header.problem() == "incomplete: the header was cut short after 10 bytes"
    cut = len(STREAM) - 5
    in_body = ProfileReader.from_bytes(STREAM[:cut])
    kept = in_body.decoder.offset
    assert header_end < kept < cut
    assert in_body.problem() == (
        f"incomplete: the stream stops at byte {cut} inside the body "
        f"(whole entries up to byte {kept} kept; no end marker)"
    )
    no_footer = ProfileReader.from_bytes(STREAM[:-1])
    assert no_footer.problem() == (
        "incomplete: the end marker is there but the footer (end timestamp) is missing"
    )
    corrupt = ProfileReader.from_bytes(STREAM[:header_end] + b"\x07")
    assert corrupt.problem() == f"corrupt at byte {header_end}: unknown entry type 7"
    assert not corrupt.complete


@pytest.mark.engine
def test_reader_warnings_come_from_decoder_and_tables():
    data = build_stream(
        dataclasses.replace(HEADER, major=7),
        [ROOT, *[(MEMORY, 1, ALLOC, 0, a, 1) for a in range(3)]],
    )
    reader = ProfileReader.from_bytes(data, Limits(max_live_allocations=1))
    assert len(reader.warnings) == 2
    assert "7.0.0" in reader.warnings[0]
    assert "live-heap tracking stopped" in reader.warnings[1]


# --- compact storage --------------------------------------------------------------------------


def observed(tables: ProfileTables, deltas: list) -> tuple:
    """Everything the read API says about the tables."""
    return (
        deltas,
        tables.snapshot(),
        dict(tables.counters),
        dict(tables.line_cpu),
        dict(tables.line_alloc),
        dict(tables.heap),
        tables.leak_sites(),
        tables.totals(),
        {pid: tables.stack(pid) for pid in tables.paths},
        tables.warnings,
    )


@given(
    st.data(),
    st.booleans().flatmap(lambda line: entry_lists(line, memory_ops=True, max_actions=60)),
)
def test_a_write_back_cache_of_one_row_changes_nothing(data, entries):
    """Rows evicted (and folded into the columns) at every new path or line key give the same
    tables as rows kept: counting order and eviction never show."""
    cuts = data.draw(st.lists(st.integers(0, len(entries)), max_size=6))

    def run() -> tuple:
        tables = ProfileTables()
        deltas = []
        for batch in chunk(entries, cuts):
            tables.apply(batch)
            deltas.append(tables.take_delta())
        return observed(tables, deltas)

    with patch.object(tables_module, "HOT_ROWS", 1):
        tiny = run()
    assert tiny == run()


def test_counters_stop_at_2_64_minus_1():
    top = 2**64 - 1
    tables = tables_of([ROOT, (CPU, 1, 3, 2**63, 5), (CPU, 1, 3, 2**63, 5)])
    assert (tables.stats(1).cpu, tables.stats(1).wall) == (top, 10)
    assert tables.line_cpu[(1, 3)] == (top, 10)
    assert tables.saturated == 2
    assert tables.warnings == ["a counter reached 2**64 - 1 and stays there (saturated)"]
    tables.apply([(CPU, 1, 0, 1, 1)])
    assert (tables.stats(1).cpu, tables.stats(1).wall) == (top, 11)
    assert tables.totals().cpu == top and len(tables.warnings) == 1


def test_read_only_views():
    top = 2**32 - 1
    tables = tables_of(
        [
            ROOT,
            (PATH, top, 1, 0, 4, 1, 200, 3),
            (CPU, top, top, 10, 20),
            (MEMORY, top, ALLOC, 0, top, top),
            (MEMORY, 1, ALLOC, 0, 0, 0),
        ]
    )
    assert list(tables.paths) == [1, top] and len(tables.paths) == 2
    assert 0 not in tables.paths and 5 not in tables.paths
    assert tables.paths[top] == PathNode(top, 1, 9, 1, 200, 3, 4, 1)
    assert dict(tables.counters) == {
        UNKNOWN_PATH: (0,) * 9,
        1: (0, 0, 0, 1, 0, 0, 0, 0, 0),
        top: (10, 20, 0, 1, top, 0, 0, 0, 0),
    }
    assert dict(tables.line_cpu) == {(top, top): (10, 20)}
    assert dict(tables.heap) == {top: (top, top), 0: (1, 0)}
    assert tables.leak_sites() == [(top, 1, top), (1, 1, 0)]
    assert tables.line_number(top, top) == 200 + top - 1
    with pytest.raises(TypeError):
        tables.heap[1] = (1, 1)  # type: ignore[index]


def test_entries_on_undefined_paths_keep_the_heap_and_line_table_right():
    tables = tables_of(
        [
            ROOT,
            (MEMORY, 42, ALLOC, 0, 0x10, 8),  # undefined path: counted under UNKNOWN_PATH
            (MEMORY, 1, ALLOC, 0, 0x10, 3),  # replaces it
            (MEMORY, 1, ALLOC, 0, 0x20, 5),
            (MEMORY, 42, ALLOC, 0, 0x20, 7),  # replaces that one
            (MEMORY, 0, FREE, 0, 0x10, 0),  # path 0: unknown, but not a dangling reference
            (CPU, 42, 6, 1, 2),
            (MEMORY, 42, ALLOC, 6, 0x30, 9),  # its line keeps the path it named
            (MEMORY, 42, FREE, 0, 0x30, 0),
        ]
    )
    assert (tables.live_bytes, tables.replaced_allocations, tables.dangling) == (7, 2, 5)
    assert dict(tables.heap) == {0x20: (UNKNOWN_PATH, 7)}
    assert tables.stats(UNKNOWN_PATH) == PathStats(
        cpu=1, wall=2, alloc_count=3, alloc_bytes=24, free_count=2, freed_bytes=12
    )
    assert tables.stats(1) == PathStats(alloc_count=2, alloc_bytes=8)
    assert dict(tables.line_cpu) == {(42, 6): (1, 2)}
    assert dict(tables.line_alloc) == {(42, 6): (1, 9)}


def test_a_redefined_path_changes_every_stack_through_it():
    tables = tables_of(
        [
            ROOT,
            (PATH, 3, 0, 8, 0, 1, 300, 2),
            (PATH, 2, 1, 0, 4, 1, 200, 3),
            (PATH, 4, 2, 0, 1, 1, 400, 3),
        ]
    )
    assert [n.id for n in tables.stack(4)] == [4, 2, 1]
    tables.apply([(PATH, 2, 3, 0, 4, 1, 200, 3)])  # a hostile stream moves path 2 under 3
    assert [n.id for n in tables.stack(4)] == [4, 2, 3]
    assert tables.stack(2)[0] == PathNode(2, 3, 8, 1, 200, 3, 4, 1)
    assert len(tables.paths) == 4


def test_a_stack_asked_for_before_its_paths_are_defined_is_not_kept_stale():
    tables = ProfileTables()
    assert tables.stack(5) == ()
    tables.apply([(0, 1, "f"), (1, 1, 1), (2, 3, 0, 1, 0, 1, 1, 1), (2, 5, 3, 0, 0, 1, 2, 1)])
    assert [n.id for n in tables.stack(5)] == [5, 3]
    tables = ProfileTables()
    tables.apply([(0, 1, "f"), (1, 1, 1), (2, 5, 3, 0, 0, 1, 2, 1)])  # caller 3 not yet defined
    assert [n.id for n in tables.stack(5)] == [5]
    tables.apply([(2, 3, 0, 1, 0, 1, 1, 1)])
    assert [n.id for n in tables.stack(5)] == [5, 3]
