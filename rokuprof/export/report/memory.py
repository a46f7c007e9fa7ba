"""The report's memory steps: the timeline's memory operations per bucket, as rows of the
page's ``paths``, merged in time until the page carries at most a budget of them.

The rows are added up with C-level operations wherever the rule allows (a bucket whose call
paths all have rows of their own maps in one pass; two buckets merge by a key union and sums of
the rows they share), so a long run's tens of thousands of rows cost milliseconds. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import chain
from operator import sub

#: Rows (call path, bucket) of ``memory`` the page carries at most: past it, neighbouring
#: buckets merge (a coarser time step, said in the page), so the page stays small.
MAX_MEMORY_ROWS = 25_000

#: A bucket's rows: the page's path row -> its memory counters (five numbers).
Rows = dict[int, list[int]]


def memory_buckets(
    buckets: list[tuple[int, dict[int, list[int]]]],
    path_index: Mapping[int, int],
    max_rows: int = MAX_MEMORY_ROWS,
    *,
    cold: Callable[[int], int | None] | None = None,
) -> dict[str, object]:
    """The timeline's memory operations for the page: ``flat`` holds per bucket the slots since
    the previous bucket's, its row count, then per row the gap to the previous row's path index
    (rows by path) and the :data:`~rokuprof.export.report.model.MEMORY_COLUMNS`; a bucket at
    slot ``s`` holds what arrived after the previous bucket's slot and up to ``s`` (the live
    heap's step at ``s``); ``path_index`` gives a row's path index, and for a call path it does
    not hold, ``cold`` (when given) its row: a cold path's thread's ``other`` row, where the
    rows of its cold paths add up. Rows of call paths the model has no row for are left out
    (``unplaced``: their bytes allocated and freed). More than ``max_rows`` rows: each pair of
    neighbouring buckets merges (at the later one's slot) until they fit, ``merged`` times over,
    or until merging no longer makes fewer rows (each step's own call paths: the page is then as
    large as its paths' columns are)."""
    unplaced = [0, 0]
    rows: list[tuple[int, Rows]] = []
    row_of = path_index.__getitem__
    resolved: dict[int, int | None] = {}  # call path -> row, for those path_index lacks
    for slot, ops in buckets:
        try:  # every call path has a row of its own: one pass, no sums
            placed = dict(zip(map(row_of, ops), ops.values(), strict=True))
        except KeyError:
            placed = None
        if placed is None or len(placed) < len(ops):  # some without, or sharing, a row
            placed = _placed(ops, path_index, cold, resolved, unplaced)
        if placed:
            rows.append((slot, placed))
    merged = 0
    count = sum(map(len, (r for _, r in rows)))
    while len(rows) > 1 and count > max_rows:
        pairs = [
            (rows[k + 1][0], _merged(rows[k][1], rows[k + 1][1]))
            for k in range(0, len(rows) - 1, 2)
        ]
        if len(rows) % 2:
            pairs.append(rows[-1])
        fewer = sum(map(len, (r for _, r in pairs)))
        if fewer > count * 0.9:
            break  # distinct call paths in each step (a hostile stream): merging does not help
        rows, count = pairs, fewer
        merged += 1
    flat: list[int] = []
    previous = 0
    for slot, placed in rows:
        flat += (slot - previous, len(placed))
        previous = slot
        order = sorted(placed)
        gaps = map(sub, order, [0, *order[:-1]])
        columns = zip(*map(placed.__getitem__, order), strict=True)
        flat += chain.from_iterable(zip(gaps, *columns, strict=True))
    return {"flat": flat, "buckets": len(rows), "merged": merged, "unplaced": unplaced}


def _placed(
    ops: dict[int, list[int]],
    path_index: Mapping[int, int],
    cold: Callable[[int], int | None] | None,
    resolved: dict[int, int | None],
    unplaced: list[int],
) -> Rows:
    """A bucket's rows when some of its call paths have no row of their own: a cold path's add
    up in its ``other`` row (``cold``, asked once per call path), the rest are ``unplaced``."""
    placed: Rows = {}
    for pid, row in ops.items():
        i = path_index.get(pid)
        if i is None:
            if pid not in resolved:
                resolved[pid] = cold(pid) if cold is not None else None
            i = resolved[pid]
        if i is None:
            unplaced[0] += row[1]
            unplaced[1] += row[4]
            continue
        old = placed.get(i)
        placed[i] = row if old is None else _merged({i: old}, {i: row})[i]
    return placed


def _merged(early: Rows, late: Rows) -> Rows:
    """Two neighbouring buckets' rows as one: a call path's in both, added up."""
    into = early.copy()
    into.update(late)
    for i in early.keys() & late.keys():  # five counters a row (a longer or shorter row raises)
        a0, a1, a2, a3, a4 = early[i]
        b0, b1, b2, b3, b4 = late[i]
        into[i] = [a0 + b0, a1 + b1, a2 + b2, a3 + b3, a4 + b4]
    return into
