"""Walking the synthetic timeline: frames opening and closing, and call-path weights.

A busy run of ``n`` samples starting at ``slot`` covers slots ``[slot, slot + n)``, one period
each; an idle sample covers nothing (it only ends a run). Walking a thread's runs in order gives
the frames that open and close, root first, at slot boundaries, which is what evented and trace
formats need.
"""

from __future__ import annotations

from collections.abc import Iterator

from rokuprof.export.model import ExportInput
from rokuprof.timeline import IDLE, Timeline

OPEN, CLOSE = "O", "C"


def frame_events(timeline: Timeline, thread: int) -> Iterator[tuple[str, int, int, int]]:
    """``(kind, frame, slot, depth)`` for one thread, in time order; every frame opened is closed
    (closing innermost first), and a frame recurring in a stack opens once per occurrence."""
    stacks = timeline.stacks
    open_: list[int] = []  # frame indexes, root first
    end = 0  # slot where the last busy run ended
    for slot, sid, n in timeline.runs.get(thread, ()):
        if open_ and slot > end:
            yield from _close(open_, 0, end)
        if sid == IDLE:
            yield from _close(open_, 0, slot)
            continue
        stack = stacks[sid][::-1]
        common = 0
        limit = min(len(open_), len(stack))
        while common < limit and open_[common] == stack[common]:
            common += 1
        yield from _close(open_, common, slot)
        for depth in range(common, len(stack)):
            open_.append(stack[depth])
            yield OPEN, stack[depth], slot, depth
        end = slot + n
    yield from _close(open_, 0, end)


def _close(open_: list[int], keep: int, slot: int) -> Iterator[tuple[str, int, int, int]]:
    while len(open_) > keep:
        frame = open_.pop()
        yield CLOSE, frame, slot, len(open_)


def samples_in_order(timeline: Timeline, thread: int) -> Iterator[tuple[int, int]]:
    """``(slot, stack index)`` of every sample of one thread (idle ones included), in order."""
    for slot, sid, n in timeline.runs.get(thread, ()):
        if sid == IDLE:
            yield slot, IDLE
        else:
            for i in range(n):
                yield slot + i, sid


def slot_us(timeline: Timeline, slot: int) -> int:
    """A slot's time in whole microseconds since the run start."""
    return round(slot * 1_000_000 / timeline.hz)


def stack_cpu_rates(inp: ExportInput) -> dict[tuple[int, int], float]:
    """CPU per sample of each ``(thread, timeline stack)``: the exact CPU of the call paths with
    that stack spread evenly over their samples (for CPU counters over time)."""
    ids = {stack: sid for sid, stack in enumerate(inp.timeline.stacks)}
    cpu: dict[tuple[int, int], int] = {}
    for p in inp.paths:
        sid = ids.get(p.frames)
        if sid is not None and p.cpu:
            cpu[(p.thread, sid)] = cpu.get((p.thread, sid), 0) + p.cpu
    counts: dict[tuple[int, int], int] = {}
    for thread, runs in inp.timeline.runs.items():
        for _, sid, n in runs:
            if sid != IDLE:
                counts[(thread, sid)] = counts.get((thread, sid), 0) + n
    return {k: cpu[k] / n for k, n in counts.items() if k in cpu}
