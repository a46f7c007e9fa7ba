"""The C core's per-function sums (``function_sums``) against the stack walk in Python, on
generated tables: the same functions and figures as the walk over the same native tables, and as
the pure engine's tables, with deep stacks folded, cycles made by redefinitions, undefined
callers, names shared by several IDs, and allocations."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof import _native
from rokuprof.bsprof.model import CALLS, CPU, MEMORY, MODULE, PATH, STRING, Limits
from rokuprof.profile.functions import _ranked, _walk, aggregate_functions
from rokuprof.profile.tables import ProfileTables

if not _native.built():
    pytest.skip("the native core is not built", allow_module_level=True)

from rokuprof._native.reader import NativeTables

small = st.integers(1, 6)  # few IDs: redefinitions, cycles and undefined callers are common


@st.composite
def tables_entries(draw: st.DrawFn) -> list:
    """Entries over a handful of IDs; texts from three names, so distinct IDs share names."""
    out: list = [(STRING, 1, "a"), (MODULE, 1, 1)]
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(["string", "module", "root", "call", "cpu", "calls", "mem"]))
        if kind == "string":
            out.append((STRING, draw(small), draw(st.sampled_from(["a", "b", "c"]))))
        elif kind == "module":
            out.append((MODULE, draw(small), draw(small)))
        elif kind == "root":
            out.append((PATH, draw(small), 0, draw(small), 0, draw(small), 1, draw(small)))
        elif kind == "call":  # the caller may be undefined, the path itself, or its callee
            caller = draw(small)
            out.append((PATH, draw(small), caller, 0, 1, draw(small), 1, draw(small)))
        elif kind == "cpu":
            out.append((CPU, draw(st.integers(0, 6)), 0, draw(st.integers(0, 9)), draw(small)))
        elif kind == "calls":
            out.append((CALLS, draw(st.integers(0, 6)), draw(st.integers(0, 3))))
        else:
            out.append((MEMORY, draw(small), 0, 0, draw(small), draw(st.integers(0, 99))))
    return out


@settings(max_examples=300, deadline=None)
@given(tables_entries(), st.integers(1, 5), st.booleans())
def test_sums_in_c_are_the_walk(entries, depth, allocations):
    limits = Limits(max_stack_depth=depth)
    native = NativeTables(limits)
    native.apply(entries)
    pure = ProfileTables(limits)
    pure.apply(entries)
    fast = aggregate_functions(native, allocations=allocations)
    assert fast == _ranked(_walk(native, allocations).values())
    assert fast == aggregate_functions(pure, allocations=allocations)


def test_a_name_on_two_ids_counts_once_per_stack():
    # b (string 2) and b (string 3) on one stack: one function, its total counted once
    entries = [
        (STRING, 1, "main"),
        (STRING, 2, "b"),
        (STRING, 3, "b"),
        (MODULE, 1, 1),
        (PATH, 1, 0, 1, 0, 1, 1, 2),
        (PATH, 2, 1, 0, 1, 1, 5, 3),
        (CPU, 2, 0, 7, 70),
    ]
    native = NativeTables()
    native.apply(entries)
    (only,) = aggregate_functions(native)
    assert (only.function, only.self_wall, only.total_wall, only.total_cpu) == ("b", 70, 70, 7)


def test_a_huge_stack_limit_needs_no_huge_buffer():
    # the walk's buffer is bounded by the paths defined, not by max_stack_depth
    limits = Limits(max_stack_depth=2**62)
    entries = [(STRING, 1, "a"), (MODULE, 1, 1), (PATH, 1, 0, 1, 0, 1, 1, 1)]
    entries += [(PATH, 2, 1, 0, 1, 1, 1, 1), (CPU, 2, 0, 3, 4)]
    native = NativeTables(limits)
    native.apply(entries)
    (only,) = aggregate_functions(native)
    assert (only.self_cpu, only.total_wall) == (3, 4)
    assert [only] == _ranked(_walk(native, False).values())
