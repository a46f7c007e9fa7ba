"""aggregate_functions: self from leaf paths, total once per path, calls, ordering."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import entry_lists

from rokuprof.bsprof.model import CALLS, CPU, MODULE, PATH, STRING
from rokuprof.profile.functions import FunctionStats, aggregate_functions
from rokuprof.profile.tables import ProfileTables

FILE, A, B, C, MAIN, OTHER = 1, 2, 3, 4, 5, 6
DEFINITIONS = [
    (STRING, FILE, "pkg:/source/main.brs"),
    (STRING, A, "a"),
    (STRING, B, "b"),
    (STRING, C, "c"),
    (STRING, MAIN, "main"),
    (STRING, OTHER, "render"),
    (MODULE, 1, MAIN),
    (MODULE, 2, OTHER),
    (PATH, 1, 0, 1, 0, FILE, 10, A),  # a
    (PATH, 2, 1, 0, 3, FILE, 20, B),  # a > b
    (PATH, 3, 2, 0, 4, FILE, 10, A),  # a > b > a  (recursion)
    (PATH, 4, 1, 0, 5, FILE, 30, C),  # a > c
    (PATH, 5, 0, 2, 0, FILE, 10, A),  # a, in the other module
    (PATH, 6, 1, 0, 6, FILE, 40, B),  # a > b from another call site, no data
]
DATA = [
    (CPU, 1, 0, 10, 100),
    (CPU, 2, 0, 20, 200),
    (CPU, 3, 0, 5, 50),
    (CPU, 4, 0, 1, 400),
    (CPU, 5, 0, 2, 30),
    (CALLS, 1, 1),
    (CALLS, 2, 3),
    (CALLS, 3, 2),
    (CALLS, 4, 7),
]


def tables_of(entries) -> ProfileTables:
    tables = ProfileTables()
    tables.apply(list(entries))
    return tables


def test_self_total_and_calls_by_hand():
    result = aggregate_functions(tables_of(DEFINITIONS + DATA))
    file = "pkg:/source/main.brs"
    assert result == [
        FunctionStats(
            "main", "c", file, self_cpu=1, self_wall=400, total_cpu=1, total_wall=400, calls=7
        ),
        FunctionStats(
            "main", "b", file, self_cpu=20, self_wall=200, total_cpu=25, total_wall=250, calls=3
        ),
        # a: self = paths 1 and 3; total = paths 1..4, path 3 once although a is on it twice
        FunctionStats(
            "main", "a", file, self_cpu=15, self_wall=150, total_cpu=36, total_wall=750, calls=3
        ),
        FunctionStats(
            "render", "a", file, self_cpu=2, self_wall=30, total_cpu=2, total_wall=30, calls=0
        ),
    ]


def test_a_function_seen_only_as_a_caller_has_total_but_no_self():
    result = aggregate_functions(tables_of([*DEFINITIONS, (CPU, 2, 0, 4, 8)]))
    by_name = {(f.module, f.function): f for f in result}
    assert by_name["main", "a"] == FunctionStats(
        "main", "a", "pkg:/source/main.brs", total_cpu=4, total_wall=8
    )
    assert by_name["main", "b"].self_wall == 8
    assert ("main", "c") not in by_name  # no data on any path through c


def test_no_data_gives_no_functions():
    assert aggregate_functions(tables_of(DEFINITIONS)) == []
    assert aggregate_functions(ProfileTables()) == []


def test_to_json():
    f = FunctionStats("m", "f", "x.brs", 1, 2, 3, 4, 5)
    assert f.to_json() == {
        "module": "m",
        "function": "f",
        "file": "x.brs",
        "self_cpu": 1,
        "self_wall": 2,
        "total_cpu": 3,
        "total_wall": 4,
        "calls": 5,
    }


@given(st.booleans().flatmap(lambda line: entry_lists(line, memory_ops=False, max_actions=60)))
def test_aggregates_add_up(entries):
    tables = tables_of(entries)
    result = aggregate_functions(tables)
    totals = tables.totals()
    assert sum(f.self_cpu for f in result) == totals.cpu
    assert sum(f.self_wall for f in result) == totals.wall
    assert sum(f.calls for f in result) == totals.calls
    for f in result:
        assert f.self_cpu <= f.total_cpu <= totals.cpu
        assert f.self_wall <= f.total_wall <= totals.wall
    walls = [f.self_wall for f in result]
    assert walls == sorted(walls, reverse=True)
    keys = [(f.module, f.function, f.file) for f in result]
    assert len(keys) == len(set(keys))
