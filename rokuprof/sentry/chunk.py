"""Sentry V2 profile chunks from profile-table deltas: the chunk builder (pure, no I/O).

One :class:`ChunkBuilder` per app run (it draws one ``profiler_id``). Give it the run's
:class:`~rokuprof.profile.tables.ProfileTables` and the time the run started; then hand it each
delta with the time its data arrived, collect the chunks that are ready, and flush at the end.
Times are Unix epoch seconds (``time.time()``). Nothing here reads a clock, a file or a socket::

    reader = ProfileReader()
    builder = ChunkBuilder(reader.tables, start=time.time(),
                           settings=ChunkSettings(environment="production"))
    ...
    reader.feed(data)                                   # bytes as they come from the device
    if reader.header and builder.header is None:
        builder.set_header(reader.header)               # gives the release name
    # every second or so:
    builder.add(reader.tables.take_delta(lines=False), arrival=time.time())  # or update()
    # every chunk interval (60 s by default) - or as often as you like, the result is the same:
    for chunk in builder.ready(now=time.time()):
        spool(chunk.data)           # the chunk's JSON bytes (chunk.payload is the dict)
    # end of the run, whether complete, truncated or interrupted:
    builder.update(time.time())                         # the last delta
    flush = builder.finish(end=time.time())             # or finish_chunks(): one at a time
    for chunk in flush.chunks:
        spool(chunk.data)
    print(flush.report.describe())                      # leftovers, carries, remainders

How samples are made (see ``design.md``, "From aggregated deltas to Sentry samples"):

* Each delta's wall-self time becomes whole samples at 101 Hz
  (:class:`~rokuprof.sentry.sampling.Sampler`): per call path, and the whole periods left in the
  sum of a thread's remainders go to its paths with the largest remainders; at
  :meth:`ChunkBuilder.finish` each thread's sum is rounded to the nearest period the same way
  where the thread has room before the end (and the one sample would not be alone in its
  window). So over the run ``samples x T`` per call path equals its wall-self total within one
  period, and per thread its busy time within one period, however short its call paths.
* Each executable module is a thread (``thread_id`` = module ID). A delta's samples are laid back
  to back, one period apart, ending at the slot their data arrived in; a busy run always ends with
  an idle sample, since Sentry gives each sample the time until the next one on its thread.
  An idle sample has the empty stack ``[]``: for a V2 chunk Sentry's processor credits its time
  to no function, even between two busy samples that share frames (unlike a V1 profile, where
  it fills the gap with them; :mod:`rokuprof.export.sentry_v1` sends an ``(idle)`` frame).
* Chunks sit on a fixed grid of ``chunk_seconds`` (60 s) windows from ``start``: a chunk never
  spans more than that. Busy time that does not fit before its window ends (more busy time than
  wall time) first pushes the window's samples back into the idle time before them, and what
  still does not fit is carried into the next window. At the end of the run
  (:meth:`ChunkBuilder.finish`) busy time that cannot fit before it (more busy time than wall
  time, or data that came late) is by default reported (:attr:`BuildReport.unplaced_seconds`,
  :attr:`BuildReport.leftovers`), never sent after it: no sample lies after the end. With
  ``after_end=True`` (a live run, whose arrival stamps, and so its end, may be late) it is carried
  on like mid-run late data instead: laid right after the last placed samples, in as many further
  windows as it needs (bounded by ``max_backlog_seconds``, the backlog each thread may hold), and
  reported (:attr:`BuildReport.after_end_seconds`).
  A chunk is cut at the first arrival after its window (whose data may still go into it), or by
  ``ready(now)`` once ``settle_seconds`` have passed since it ended, so *when* you call
  :meth:`ready` does not change the chunks.
* A thread with a single busy sample in a window would be dropped by Sentry (it keeps threads with
  two or more); that sample is carried into the next window instead. A window with nothing valid
  is not emitted; its data moves on. What still cannot form a valid chunk when the run ends is
  listed in :attr:`BuildReport.leftovers`, never dropped silently.
* Every chunk passes :func:`~rokuprof.sentry.validate.validate_chunk` before it is handed out; a
  chunk that does not (a bug, or a payload over 50 MiB) is listed in
  :attr:`BuildReport.rejected` instead. The samples are checked as facts of the placed runs
  (:class:`~rokuprof.sentry.validate.SampleFacts`), everything else as it is sent.
* The chunk's JSON is written straight from the runs (:mod:`rokuprof.sentry.chunkjson`), never
  as a dict per sample; :attr:`Chunk.payload` parses it back when asked for.

An offline file is converted with the same builder (:mod:`rokuprof.sentry.convert`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rokuprof.bsprof.model import Header
from rokuprof.path_model import MEMORY_COUNTERS, Delta, root_module, wall_delta
from rokuprof.profile import engine
from rokuprof.profile.tables import ProfileTables
from rokuprof.sentry.assemble import (
    Chunk,
    Group,
    Head,
    Layout,
    SizeEstimate,
    Written,
    new_uuid,
    split_group,
    write_group,
)
from rokuprof.sentry.build_report import BuildReport, Leftover
from rokuprof.sentry.frames import RunFrames, release_name
from rokuprof.sentry.sampling import Sampler
from rokuprof.sentry.settings import (
    ChunkSettings,
)
from rokuprof.sentry.side_measurements import Measure, SideValues
from rokuprof.timeline.lane import IDLE, Lane

#: Names a chunk's users import from here; each has its own home module.
__all__ = [
    "MEMORY_COUNTERS",
    "ChunkBuilder",
    "Flush",
    "delta_walls",
    "merge_memory",
]


def delta_walls(delta: Delta) -> tuple[dict[int, int], bool]:
    """Wall-self time per call path that has any in ``delta``, and whether it has memory ops."""
    wd = wall_delta(delta)
    return wd.walls, bool(wd.memory)


def merge_memory(a: Sequence[int], b: Sequence[int]) -> list[int]:
    """Two flat lists of :func:`delta_memory` rows as one, the rows of a call path in both
    added up."""
    if not b:
        return list(a)
    out = list(a)
    at = {out[i]: i for i in range(0, len(out), 6)}
    for j in range(0, len(b), 6):
        i = at.get(b[j])
        if i is None:
            at[b[j]] = len(out)
            out += b[j : j + 6]
        else:
            out[i + 1] += b[j + 1]
            out[i + 2] += b[j + 2]
            out[i + 3] += b[j + 3]
            out[i + 4] += b[j + 4]
            out[i + 5] += b[j + 5]
    return out


@dataclass(frozen=True)
class Flush:
    """The end of a run: the last chunks, and the report."""

    chunks: list[Chunk]
    report: BuildReport


#: A call path whose thread is not yet looked up (``None`` is a path without one).
_UNSEEN: Any = object()


class ChunkBuilder:
    """Deltas in, validated V2 chunks out; see the module docstring for the life cycle."""

    def __init__(
        self,
        tables: ProfileTables,
        start: float,
        *,
        header: Header | None = None,
        settings: ChunkSettings | None = None,
        profiler_id: str | None = None,
        new_id: Callable[[], str] = new_uuid,
        write: bool = True,
    ) -> None:
        if not math.isfinite(start):
            raise ValueError("start must be a finite epoch time in seconds")
        self.tables = tables
        self.settings = settings or ChunkSettings()
        #: False: hand out each cut window's :class:`Layout` (the placed samples) instead of a
        #: chunk, with no JSON written, no chunk check and no byte budget (a timeline's input)
        self.write = write
        self.origin = float(start)
        self.header: Header | None = None
        self._new_id = new_id
        self.profiler_id = profiler_id or new_id()
        self.sampler = Sampler(
            self.settings.wall_unit, self.settings.hz, engine.native_function("sampler_take")
        )
        self.hz = self.settings.hz
        self.report = BuildReport()
        #: samples of each call path in emitted chunks
        self.path_samples: dict[int, int] = {}
        #: samples of each call path dropped over the backlog limit
        self.dropped_samples: dict[int, int] = {}
        self._max_backlog = max(2, int(self.settings.max_backlog_seconds * self.hz))
        self._settle = max(0, math.ceil(self.settings.settle_seconds * self.hz))
        self._span = int(self.settings.chunk_seconds * self.hz)  # last slot - first slot
        self._window = 0  # grid index of the window being filled
        self._lanes: dict[int, Lane] = {}  # module ID -> lane
        self._threads: dict[int, int | None] = {}  # path -> module ID (None: no stack)
        self._last_slot = 0
        self._ready: deque[Group] = deque()  # cut windows' chunks, built when handed out
        self._frames = RunFrames(tables)  # frames and stacks made once per run
        self._estimate = SizeEstimate(tables)  # each path's share of a chunk's bytes, once
        self._heap: list[tuple[int, int]] = []  # (slot, live bytes) not yet in a chunk
        self.side = SideValues()  # vitals and marks not yet in a chunk
        self._memory = False
        self._finished = False
        self._end_slot: int | None = None  # the run's end, once finishing
        self._lone = 0  # busy samples the last cut carried as single ones
        if header is not None:
            self.set_header(header)

    # -- the live API -------------------------------------------------------------------------

    def set_header(self, header: Header) -> None:
        """The stream's header (known once decoded): release name and memory flag."""
        self.header = header
        self._memory = self._memory or header.memory_ops

    @property
    def release(self) -> str | None:
        return self.settings.release or release_name(self.header)

    def add(self, delta: Delta, arrival: float) -> None:
        """One delta of the profile tables (:meth:`ProfileTables.take_delta`) and the time its
        data arrived."""
        walls, memory = delta_walls(delta)
        self.add_wall(walls, arrival, live_bytes=delta.live_bytes, memory=memory)

    def update(self, arrival: float) -> None:
        """Take the tables' delta now (call paths only) and :meth:`add` it."""
        self.add(self.tables.take_delta(lines=False), arrival)

    def add_wall(
        self,
        walls: Mapping[int, int],
        arrival: float,
        *,
        live_bytes: int | None = None,
        memory: bool = False,
    ) -> None:
        """Lower-level :meth:`add`: wall-self differences per call path, in stream order."""
        self._check_open()
        slot = max(self._last_slot, self._slot(arrival))
        # Data describes time before its arrival: a window that ended less than the settling
        # time before it is cut only once this data is queued, so the cut can place it there.
        self._advance(slot - self._settle)
        sampler = self.sampler
        threads, lanes = self._threads, self._lanes
        items = []
        for path, wall in walls.items():
            module = threads.get(path, _UNSEEN)
            if module is _UNSEEN:
                module = self._thread_of(path)
            if module is None:
                self.report.unattributed_seconds += sampler.seconds(wall)
            else:
                items.append((module, path, wall))
        for module, path, n in sampler.take(items):
            lane = lanes.get(module)
            if lane is None:
                lane = self._lane(module)
            lane.push(path, n)
        self._advance(slot)
        self._last_slot = slot
        for lane in self._lanes.values():
            if lane.queued:  # this window's data, after what earlier windows left waiting
                lane.place(slot)
                if lane.queued > self._max_backlog:
                    self._drop(lane, lane.queued - self._max_backlog)
        self._memory = self._memory or memory
        if self._memory and live_bytes is not None:
            self._heap.append((slot, live_bytes))

    def add_measure(self, measure: Measure) -> None:
        """A vitals reading's or a mark's value, for the next chunk written."""
        self.side.add(measure, heap=self._memory)

    def ready(self, now: float | None = None) -> Iterator[Chunk]:
        """The chunks finished so far (each handed out once), built one at a time as the
        iterator gets to them, so memory holds one chunk whatever the number of threads. With
        ``now``, windows that ended more than ``settle_seconds`` before ``now`` are finished
        first (at this call); ``now`` must not be earlier than arrivals still to come."""
        if now is not None and not self._finished:
            self._advance(self._slot(now) - self._settle)
        return self._built()

    def _built(self) -> Iterator[Chunk]:
        while self._ready:
            group = self._ready.popleft()
            if not self.write:
                yield self._layout_of(group)  # type: ignore[misc]  # a Layout (see write)
                continue
            chunk = self._build(group)
            if chunk is not None:
                yield chunk

    def _layout_of(self, group: Group) -> Layout:
        """A cut window's group as its placed samples, counted as its chunk would be."""
        report = self.report
        report.chunks += 1
        report.samples += group.samples()
        for module, runs in group.threads:
            report.threads[str(module)] = self.tables.module_name(module)
            for _, path, n in runs:
                if path != IDLE:
                    report.busy_samples += n
                    self.path_samples[path] = self.path_samples.get(path, 0) + n
        threads = tuple((module, tuple(runs)) for module, runs in group.threads)
        return Layout(self.origin, self.hz, threads, tuple(group.heap))

    def finish(self, end: float | None = None, *, after_end: bool = False) -> Flush:
        """End of the run: place everything still waiting as late as it fits before the run's
        end, cut the last chunks and report what could not be placed or form a valid chunk.
        ``end`` is when the run ended (default: the last arrival); no sample lies after it,
        unless ``after_end``: then what does not fit before it is placed right after it."""
        chunks = list(self.finish_chunks(end, after_end=after_end))
        return Flush(chunks, self.report)

    def finish_chunks(
        self, end: float | None = None, *, after_end: bool = False
    ) -> Iterator[Chunk]:
        """:meth:`finish`, one chunk at a time: each window is cut when the iterator gets to
        it, so the windows a backlog still fills never sit in memory as chunks all at once.
        :attr:`report` is complete once the iterator is exhausted."""
        self._check_open()
        end_slot = self._last_slot if end is None else max(self._last_slot, self._slot(end))
        self._finished = True  # no more deltas, and ready(now) no longer cuts
        return self._finish(end_slot, after_end)

    def _finish(self, end_slot: int, after_end: bool) -> Iterator[Chunk]:
        yield from self.ready()
        while self._advance_one(end_slot):
            yield from self.ready()
        # The threads' last rounding samples, where the thread has room for them before the end
        # and where they would not be a lone sample (which no chunk carries).
        threads = self._threads

        def alone(module: int) -> bool:
            lane = self._lane(module)
            return not lane.queued and not lane.busy_samples()

        rounded = self.sampler.round_off(threads.get, lambda m: self._lane(m).room(end_slot), alone)
        for path, n in rounded:
            self._lane(threads[path]).push(path, n)
        self._end_slot = end_slot
        self._lone = 0
        if self._pending():
            self._cut(end_slot, spill=after_end)
            yield from self.ready()
        # What did not fit before the end goes on in further windows, right after the last
        # placed samples, for as long as a window still takes some of it (each lane's backlog
        # is bounded by max_backlog_seconds, so this ends); lone samples stay left over.
        while after_end and (waiting := self._waiting()) > self._lone:
            self._cut(end_slot, spill=True)
            yield from self.ready()
            if self._waiting() >= waiting:
                break
        self.report.unplaced_seconds = (self._waiting() - self._lone) / self.hz
        self._report_leftovers()
        yield from self.ready()

    # -- internals ----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._finished:
            raise RuntimeError("the chunk builder was already finished")

    def _slot(self, t: float) -> int:
        if not math.isfinite(t):
            raise ValueError(f"not a finite time: {t!r}")
        return max(0, math.floor((t - self.origin) * self.hz + 1e-6))

    def _time(self, slot: int) -> float:
        return self.origin + slot / self.hz

    def _first_slot(self, window: int) -> int:
        return window * (self._span + 1)

    def _last_slot_of(self, window: int) -> int:
        return self._first_slot(window) + self._span

    def _thread_of(self, path: int) -> int | None:
        """The module (thread) of a call path: its root's, which every node carries, so no
        stack is walked unless the path was defined under a caller not yet defined."""
        try:
            return self._threads[path]
        except KeyError:
            module = self._threads[path] = root_module(self.tables, path)
            return module

    def _lane(self, module: int) -> Lane:
        lane = self._lanes.get(module)
        if lane is None:
            lane = self._lanes[module] = Lane(self._first_slot(self._window))
        return lane

    def _waiting(self) -> int:
        return sum(lane.queued for lane in self._lanes.values())

    def _placed(self) -> bool:
        return any(lane.runs for lane in self._lanes.values())

    def _pending(self) -> bool:
        return self._placed() or self._waiting() > 0

    def _drop(self, lane: Lane, n: int) -> None:
        for path, count in lane.drop_newest(n):
            self.dropped_samples[path] = self.dropped_samples.get(path, 0) + count
        self.report.dropped_seconds += n / self.hz

    def _advance(self, slot: int) -> None:
        """Finish every window that ends before ``slot``."""
        while self._advance_one(slot):
            pass

    def _advance_one(self, slot: int) -> bool:
        """Finish the next window if it ends before ``slot``; false once none does."""
        if slot <= self._last_slot_of(self._window):
            return False
        if not self._placed() and all(lane.queued < 2 for lane in self._lanes.values()):
            # Nothing a cut could emit on the way: jump straight to the window of slot.
            self._window = slot // (self._span + 1)
            first = self._first_slot(self._window)
            for lane in self._lanes.values():
                lane.start_chunk(first)
            return False
        self._cut(None)
        return True

    def _cut(self, end_slot: int | None, *, spill: bool = False) -> None:
        """Finish the current window. ``end_slot`` (at the end of the run) places what waits
        before the run's end rather than before the window's last slot; with ``spill``, what
        then still waits is laid right after the placed samples, up to the window's end."""
        last = self._last_slot_of(self._window)
        limit = last if end_slot is None else min(last, end_slot)
        for lane in self._lanes.values():
            if lane.queued and limit > self._first_slot(self._window):
                lane.place(limit, push_back=True)
            if spill and lane.queued:
                lane.place(min(last, lane.next_slot + lane.queued))
            lane.close()
        if self._waiting():
            self.report.excess_windows += 1
        emit: list[tuple[int, Lane]] = []
        carried = False
        self._lone = 0
        for module, lane in sorted(self._lanes.items()):
            busy = lane.busy_samples()
            if busy >= 2:
                emit.append((module, lane))
            elif busy == 1:
                lane.unplace()
                self.report.carried_single_samples += 1
                self._lone += 1
                carried = True
        if emit:
            self._queue(emit)
        elif carried:
            self.report.carried_windows += 1
        self._window += 1
        first = self._first_slot(self._window)
        for lane in self._lanes.values():
            lane.start_chunk(first)

    def _queue(self, lanes: list[tuple[int, Lane]]) -> None:
        """Queue the cut window's threads as chunks of at most ``max_chunk_bytes`` (estimated
        from their samples, stacks and names; :meth:`_build` splits a group that still comes out
        larger). The heap measurement travels with the first."""
        budget = self.settings.max_chunk_bytes
        groups: list[list[tuple[int, list]]] = [[]]
        size = 0
        for module, lane in lanes:
            cost = self._estimate(module, lane.runs)
            if groups[-1] and size + cost > budget:
                groups.append([])
                size = 0
            groups[-1].append((module, lane.runs))
            size += cost
        if len(groups) > 1:
            self.report.split_windows += 1
        heap, self._heap, side = self._heap, [], self.side.take()
        for i, group in enumerate(groups):
            self._ready.append(Group(group, heap if i == 0 else [], self._end_slot, side))
            side = None

    def _build(self, group: Group) -> Chunk | None:
        """A queued group as a validated chunk: split in two (and queued again) when it came
        out over ``max_chunk_bytes`` (its threads in halves, or one thread's samples in two
        spans of time: :func:`~rokuprof.sentry.assemble.split_group`); ``None`` when rejected
        or over the run's byte cap (reported)."""
        report = self.report
        if report.capped_at is not None:
            report.capped_samples += group.samples()
            report.heap_values_dropped += len(group.heap)
            return None
        head = Head(self.profiler_id, self.release, self.settings.environment, self.origin, self.hz)
        written = write_group(
            group, self.tables, self._frames, head, self._new_id(), self.settings.max_chunk_bytes
        )
        if not written.checked:
            halves = split_group(group)
            assert halves is not None  # write_group checks a group it cannot split
            report.split_chunks += 1
            self._ready.extendleft(reversed(halves))
            return self._build(self._ready.popleft())
        if written.problems:
            report.rejected.append((written.samples, written.problems))
            report.heap_values_dropped += len(group.heap)
            return None
        cap = self.settings.max_session_chunk_bytes
        if report.chunk_bytes + len(written.data) > cap:
            report.capped_at = cap
            report.capped_samples += written.samples
            report.heap_values_dropped += len(group.heap)
            return None
        return self._count(written)

    def _count(self, written: Written) -> Chunk:
        """Count a chunk that is handed out in the report, and make it."""
        report = self.report
        report.chunks += 1
        report.samples += written.samples
        report.busy_samples += sum(written.path_samples.values())
        report.threads.update(written.names)
        report.chunk_bytes += len(written.data)
        report.largest_chunk = max(report.largest_chunk, len(written.data))
        start, end = written.start, written.end
        report.first = start if report.first is None else min(report.first, start)
        report.last = end if report.last is None else max(report.last, end)
        report.covered_seconds += end - start
        report.after_end_seconds += written.after_end_samples / self.hz
        for path, n in written.path_samples.items():
            self.path_samples[path] = self.path_samples.get(path, 0) + n
        return Chunk(
            data=written.data,
            index=report.chunks,
            chunk_id=written.chunk_id,
            start=start,
            end=end,
            samples=written.samples,
            threads=tuple(sorted(written.names)),
            layout=written.layout,
        )

    def _report_leftovers(self) -> None:
        report = self.report
        period = 1.0 / self.hz
        for module, lane in sorted(self._lanes.items()):
            if not lane.queued:
                continue
            functions = []
            for path, _ in lane.queue:
                stack = self.tables.stack(path)
                if stack:
                    functions.append(self.tables.string(stack[0].function_id))
            report.leftovers.append(
                Leftover(
                    thread_id=str(module),
                    thread_name=self.tables.module_name(module),
                    samples=lane.queued,
                    seconds=lane.queued * period,
                    functions=tuple(dict.fromkeys(functions)),
                )
            )
        report.remainder_seconds = self.sampler.pending_seconds()
        report.heap_values_dropped += len(self._heap)
        report.side_values_dropped += len(self.side) + self.side.dropped

    def leftover_paths(self) -> dict[int, int]:
        """Samples per call path still waiting (after :meth:`finish`: the leftovers)."""
        out: dict[int, int] = {}
        for lane in self._lanes.values():
            for path, n in lane.queue:
                out[path] = out.get(path, 0) + n
        return out
