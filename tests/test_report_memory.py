"""The report's memory steps (``export/report/memory.py``) against the rule they implement, stated
here plainly (a row per call path per bucket, looked up one at a time, rows sharing a page row
added up, neighbouring buckets merged pairwise while that makes at least a tenth fewer rows), over
generated buckets: call paths with rows of their own, cold ones sharing their thread's row, ones
with no row, indexes that send two call paths to one row, budgets that force merging. The fast
path's C-level passes must give the same page, bit for bit, and leave its input untouched."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.export.report.memory import memory_buckets


def by_the_rule(buckets, path_index, max_rows, cold):
    """The steps as the docstring states them, one row at a time."""
    unplaced = [0, 0]
    rows = []
    for slot, ops in buckets:
        placed = {}
        for pid, row in ops.items():
            i = path_index.get(pid)
            if i is None and cold is not None:
                i = cold(pid)
            if i is None:
                unplaced[0] += row[1]
                unplaced[1] += row[4]
            elif i in placed:
                placed[i] = [a + b for a, b in zip(placed[i], row, strict=True)]
            else:
                placed[i] = row
        if placed:
            rows.append((slot, placed))
    merged = 0
    count = sum(len(r) for _, r in rows)
    while len(rows) > 1 and count > max_rows:
        pairs = []
        for k in range(0, len(rows), 2):
            if k + 1 == len(rows):
                pairs.append(rows[k])
                continue
            into = dict(rows[k][1])
            for i, row in rows[k + 1][1].items():
                old = into.get(i)
                into[i] = row if old is None else [a + b for a, b in zip(old, row, strict=True)]
            pairs.append((rows[k + 1][0], into))
        fewer = sum(len(r) for _, r in pairs)
        if fewer > count * 0.9:
            break
        rows, count = pairs, fewer
        merged += 1
    flat = []
    previous = 0
    for slot, placed in rows:
        flat += (slot - previous, len(placed))
        previous = slot
        last = 0
        for i in sorted(placed):
            flat += (i - last, *placed[i])
            last = i
    return {"flat": flat, "buckets": len(rows), "merged": merged, "unplaced": unplaced}


ROW = st.lists(st.integers(0, 2**70), min_size=5, max_size=5)  # counters past 64 bits too
PIDS = st.integers(1, 40)


@st.composite
def cases(draw):
    gaps = draw(st.lists(st.integers(0, 5), max_size=30))
    buckets, slot = [], 0
    for gap in gaps:
        slot += gap
        buckets.append((slot, draw(st.dictionaries(PIDS, ROW, max_size=12))))
    # pid -> row: own rows for some, shared rows for others (an index need not be one-to-one)
    path_index = draw(st.dictionaries(PIDS, st.integers(0, 30), max_size=30))
    threads = draw(st.dictionaries(PIDS, st.sampled_from([None, 31, 32]), max_size=20))
    cold = draw(st.sampled_from([None, threads.get]))
    return buckets, path_index, draw(st.integers(1, 80)), cold


@settings(max_examples=300, deadline=None)
@given(cases())
def test_the_steps_are_the_rules_bit_for_bit(case):
    buckets, path_index, max_rows, cold = case
    before = copy.deepcopy(buckets)
    got = memory_buckets(buckets, path_index, max_rows, cold=cold)
    assert buckets == before  # rows are shared, never changed in place
    assert got == by_the_rule(before, path_index, max_rows, cold)


def test_cold_rows_are_asked_once_per_call_path():
    asked = []

    def cold(pid):
        asked.append(pid)
        return 7 if pid % 2 else None

    buckets = [(s, {pid: [1, 2, 3, 4, 5] for pid in range(10, 16)}) for s in range(1, 40)]
    got = memory_buckets(buckets, {10: 0, 12: 1}, 1000, cold=cold)
    assert sorted(asked) == [11, 13, 14, 15]
    assert got["unplaced"] == [2 * 39, 5 * 39]  # 14 has no row
    assert got["flat"][:8] == [1, 3, 0, 1, 2, 3, 4, 5]
    assert got["flat"][14:20] == [6, 3, 6, 9, 12, 15]  # row 7: pids 11, 13 and 15 added up
