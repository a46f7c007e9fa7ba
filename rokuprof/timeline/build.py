"""A :class:`~rokuprof.timeline.model.Timeline` from the windows the chunk builder placed.

Each window is ``(thread, runs)`` per thread with runs ``(slot, call path, count)`` (call path
:data:`~rokuprof.timeline.model.IDLE` for an idle sample) on the timeline's own slots, and the
live heap's values ``(slot, bytes)``. Stacks are numbered as a reader of the window's Sentry chunk
numbers them (by their first sample: time, then thread ID as text), threads are named in the
order of their IDs as text, and a thread's runs that continue one another are joined: the same
timeline the chunks' JSON reads back to, made without writing or reading any. Linear in the runs;
each call path's stack is made once. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from rokuprof.timeline.model import IDLE, Timeline

#: One thread's placed runs in a window: ``(module ID, ((slot, call path, count), ...))``.
PlacedThread = tuple[int, Sequence[tuple[int, int, int]]]


class TimelineBuilder:
    """Windows in, one timeline out. ``stack_of(path)`` gives a call path's frames (leaf first,
    as indexes the caller owns); ``name_of(module)`` a thread's name, recorded in :attr:`threads`
    in the order threads appear."""

    def __init__(
        self,
        hz: int,
        origin: float | None,
        stack_of: Callable[[int], tuple[int, ...]],
        name_of: Callable[[int], str],
    ) -> None:
        self.timeline = Timeline(hz, origin)
        self.threads: dict[int, str] = {}
        self._stack_of = stack_of
        self._name_of = name_of
        self._stack_ids: dict[tuple[int, ...], int] = {(): IDLE}
        self._path_stacks: dict[int, int] = {IDLE: IDLE}

    def release(self) -> Timeline:
        """The timeline; the per-path stack map (as large as the call paths) is dropped."""
        self._path_stacks = {IDLE: IDLE}
        self._stack_ids = {(): IDLE}
        return self.timeline

    def _path_stack(self, path: int) -> int:
        sid = self._path_stacks.get(path)
        if sid is None:
            key = self._stack_of(path)
            sid = self._stack_ids.get(key)
            if sid is None:
                sid = self._stack_ids[key] = len(self.timeline.stacks)
                self.timeline.stacks.append(key)
            self._path_stacks[path] = sid
        return sid

    def add_window(
        self, threads: Sequence[PlacedThread], heap: Iterable[tuple[int, int]] = ()
    ) -> None:
        """One placed window (or one chunk's part of it)."""
        first_use: dict[int, tuple[int, str]] = {}
        for module, runs in threads:
            tid = str(module)
            for slot, path, _ in runs:
                seen = first_use.get(path)
                if seen is None or (slot, tid) < seen:
                    first_use[path] = (slot, tid)
        for path in sorted(first_use, key=lambda path: (*first_use[path], path)):
            self._path_stack(path)
        for module, _ in sorted(threads, key=lambda thread: str(thread[0])):
            if module not in self.threads:
                self.threads[module] = self._name_of(module)
        lanes = sorted((t for t in threads if t[1]), key=lambda t: (t[1][0][0], str(t[0])))
        all_runs = self.timeline.runs
        path_stacks = self._path_stacks
        for module, runs in lanes:
            lane = all_runs.get(module)
            if lane is None:
                lane = all_runs[module] = []
            for slot, path, n in runs:
                sid = path_stacks[path]
                if lane:
                    first, last_sid, count = lane[-1]
                    if last_sid == sid and first + count == slot:
                        lane[-1] = (first, sid, count + n)
                        continue
                lane.append((slot, sid, n))
        self.timeline.heap.extend(heap)

    def add_memory(self, arrivals: Iterable[tuple[float, dict[int, list[int]]]]) -> None:
        """Memory operations per arrival (epoch seconds, call path -> counter differences), on
        the slots where the chunk builder puts the live heap of the same arrival (the arrival's
        slot, never earlier than the previous one's); arrivals on one slot are one bucket."""
        t = self.timeline
        assert t.origin is not None
        origin, hz, last = t.origin, t.hz, 0
        memory = t.memory
        for at, ops in arrivals:
            slot = last = max(last, math.floor((at - origin) * hz + 1e-6))
            if memory and memory[-1][0] == slot:
                into = memory[-1][1]
                for path, row in ops.items():
                    old = into.get(path)
                    into[path] = (
                        row if old is None else [a + b for a, b in zip(old, row, strict=True)]
                    )
            else:
                memory.append((slot, ops))
