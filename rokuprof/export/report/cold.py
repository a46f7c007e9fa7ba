"""Which call paths the report page shows one by one, and which it adds up per thread.

A capture with more than :data:`MAX_PATHS` call paths would make a page too large to open (a
million paths: over 100 MB of columns, a page no browser opens in good time). Then a call path
is *hot* when its wall time, CPU, allocated bytes or live bytes at the end is more than
:data:`COLD_SHARE` of its thread's, and a stack (the thread and the frames the timeline shows)
is kept when any of its paths is hot. The paths of the other stacks, the cold ones, are added up
per thread into one call path of a node :data:`OTHER_FUNCTION` under the thread, which also
takes their samples on the timeline; the model's ``other`` entry says how many paths that is,
and the page says so under its header. At most ``4 / COLD_SHARE`` paths per thread can be hot,
so the page stays small whatever the capture. Pure: no I/O.
"""

from __future__ import annotations

from rokuprof.export.model import CallPath

#: Call paths a page shows one by one, at most, before cold paths are added up.
MAX_PATHS = 50_000
#: A path with at most this share of each of its thread's figures is cold (0.01 %).
COLD_SHARE = 1e-4
OTHER_FUNCTION = "[other call paths]"
OTHER_FILE = "rokuprof:/other"

_FIGURES = ("wall", "cpu", "alloc_bytes", "live_bytes")


def hot_stacks(
    paths: list[CallPath], max_paths: int = MAX_PATHS, share: float = COLD_SHARE
) -> set[tuple[int, tuple[int, ...]]] | None:
    """``(thread, frames)`` of the stacks the page shows one by one; ``None``: all of them
    (``paths`` has at most ``max_paths``)."""
    if len(paths) <= max_paths:
        return None
    totals: dict[int, list[int]] = {}
    for p in paths:
        sums = totals.get(p.thread)
        if sums is None:
            sums = totals[p.thread] = [0, 0, 0, 0]
        sums[0] += p.wall
        sums[1] += p.cpu
        sums[2] += p.alloc_bytes
        sums[3] += p.live_bytes
    bars = {t: [x * share for x in sums] for t, sums in totals.items()}
    hot: set[tuple[int, tuple[int, ...]]] = set()
    for p in paths:
        bar = bars[p.thread]
        if p.wall > bar[0] or p.cpu > bar[1] or p.alloc_bytes > bar[2] or p.live_bytes > bar[3]:
            hot.add((p.thread, p.frames))
    return hot


def other_note(paths: int, threads: int, share: float = COLD_SHARE) -> str:
    """What the page says about the paths it added up."""
    return (
        f"{paths:,} call paths with at most {share:.2%} of their thread's wall time, CPU, "
        f"allocated and live bytes each are shown added up, as one '{OTHER_FUNCTION}' node "
        f"per thread ({threads:,} threads): the capture has more than {MAX_PATHS:,} call paths."
    )
