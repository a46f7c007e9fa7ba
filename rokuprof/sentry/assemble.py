"""One chunk from the samples the builder placed: its JSON written straight from the runs,
checked as Sentry's ingestion would, and the :class:`Chunk` handed out (pure: no I/O).

:class:`~rokuprof.sentry.chunk.ChunkBuilder` decides *where* samples go (windows, lanes,
carries); this module turns one cut window's threads (a :class:`Group`) into bytes.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace
from functools import cached_property

from rokuprof import __version__
from rokuprof.profile.tables import ProfileTables
from rokuprof.sentry.chunkjson import Run, chunk_json, samples_json
from rokuprof.sentry.frames import (
    FRAME_TEXT_LIMIT,
    MAX_REMEMBERED_STACKS,
    FrameTable,
    RunFrames,
)
from rokuprof.sentry.validate import Problem, SampleFacts, validate_chunk
from rokuprof.timeline.lane import IDLE

PLATFORM = "brightscript"
CLIENT_SDK = {"name": "rokuprof", "version": __version__}
#: Measurement carrying the live heap (bytes) over time; Sentry's UI charts this name.
HEAP_MEASUREMENT = "memory_footprint"
#: What a sample costs in a chunk's JSON, before its thread ID's text (the estimate that
#: groups threads into chunks; ``{"timestamp":1795273445.0099010,"thread_id":"","stack_id":}``
#: plus a stack index and a comma).
SAMPLE_BYTES = 64
#: Call paths whose share of a chunk's bytes :class:`SizeEstimate` remembers (as many as
#: :class:`~rokuprof.sentry.frames.RunFrames` remembers stacks).
MAX_REMEMBERED_PATHS = MAX_REMEMBERED_STACKS

#: A thread's placed samples: runs of ``(slot, path, count)``.
Runs = list[tuple[int, int, int]]


def new_uuid() -> str:
    """A random UUID as 32 lowercase hex digits (Sentry's id format)."""
    return uuid.uuid4().hex


@dataclass(frozen=True)
class Layout:
    """A chunk's samples as the builder placed them: per thread (module ID) runs of
    ``(slot, path, count)`` (path :data:`~rokuprof.timeline.lane.IDLE` for idle samples; a
    sample's timestamp is ``origin + slot / hz``), and the heap values ``(slot, bytes)``."""

    origin: float
    hz: int
    threads: tuple[tuple[int, tuple[tuple[int, int, int], ...]], ...]
    heap: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Chunk:
    """One V2 profile chunk, ready to spool or send."""

    data: bytes  # the payload as compact UTF-8 JSON
    index: int  # 1, 2, ... in the order the run produced them
    chunk_id: str
    start: float  # first sample timestamp
    end: float  # last sample timestamp
    samples: int
    threads: tuple[str, ...]  # thread ids
    #: the placed samples the JSON was written from (what a reader of the chunk would find,
    #: without parsing it): see :class:`Layout`
    layout: Layout | None = field(default=None, repr=False, compare=False)

    @property
    def duration(self) -> float:
        return self.end - self.start

    @cached_property
    def payload(self) -> dict:
        """The chunk as a JSON object (read from :attr:`data` when first asked for: the builder
        writes the JSON text straight from its runs)."""
        return json.loads(self.data)


@dataclass(frozen=True)
class Group:
    """Threads of one cut window that go into one chunk: ``(module, placed runs)`` each, the
    heap values it carries, the run's end slot (once finishing) and the other measurements it
    carries (:class:`~rokuprof.sentry.side_measurements.SideValues`, JSON-ready)."""

    threads: list[tuple[int, Runs]]
    heap: list[tuple[int, int]]
    end_slot: int | None
    side: dict[str, object] | None = None

    def samples(self) -> int:
        return sum(n for _, runs in self.threads for _, _, n in runs)


@dataclass(frozen=True)
class Head:
    """What every chunk of a run says about the run, and where its samples' clock starts."""

    profiler_id: str
    release: str | None
    environment: str | None
    origin: float  # slot 0 as epoch seconds
    hz: int

    def time(self, slot: int) -> float:
        return self.origin + slot / self.hz


@dataclass(frozen=True)
class Written:
    """A group's chunk as JSON, before it is counted: ``problems`` when Sentry would refuse
    it; ``checked`` false when it came out over the byte budget and was not checked (the
    builder splits it)."""

    data: bytes
    chunk_id: str
    samples: int
    names: dict[str, str]  # thread id -> name
    spans: dict[str, tuple[float, float]]  # thread id -> first and last sample time
    path_samples: dict[int, int]  # busy samples per call path
    after_end_samples: int  # busy samples at or after the run's end slot
    layout: Layout
    problems: list[Problem]
    checked: bool = True

    @property
    def start(self) -> float:
        return min(first for first, _ in self.spans.values())

    @property
    def end(self) -> float:
        return max(last for _, last in self.spans.values())


class SizeEstimate:
    """Bytes a thread's runs add to a chunk: its samples, and for each path a stack (its depth,
    up to the limit) and the leaf's frame (its names' lengths as written, at most
    :data:`~rokuprof.sentry.frames.FRAME_TEXT_LIMIT` characters each; frames shared with other
    stacks count again). O(1) per path: no stack is walked, and a path's share is worked out
    once per run (remembered for up to :data:`MAX_REMEMBERED_PATHS` paths, then afresh: the
    estimate is the same either way). An estimate: a group whose chunk still comes out over the
    budget is split (:func:`split_group`)."""

    __slots__ = ("_paths", "tables")

    def __init__(self, tables: ProfileTables) -> None:
        self.tables = tables
        self._paths: dict[int, int] = {}

    def __call__(self, module: int, runs: Runs) -> int:
        known = self._paths
        cost = 0
        for path in {path for _, path, _ in runs if path != IDLE}:
            share = known.get(path)
            if share is None:
                share = self._path_bytes(path)
                if share is not None:
                    if len(known) >= MAX_REMEMBERED_PATHS:
                        known.clear()
                    known[path] = share
            cost += share or 0
        return cost + sum(n for _, _, n in runs) * (SAMPLE_BYTES + len(str(module)))

    def _path_bytes(self, path: int) -> int | None:
        tables = self.tables
        node = tables.node(path)
        if node is None:  # not (yet) defined: counts nothing
            return None
        # a frame's text as written: each field cut to FRAME_TEXT_LIMIT characters
        function = min(len(tables.string(node.function_id)), FRAME_TEXT_LIMIT)
        names = function + 3 * min(len(tables.string(node.file_id)), FRAME_TEXT_LIMIT)
        return 8 * min(node.depth + 1, tables.limits.max_stack_depth) + names + 96


def split_group(group: Group) -> tuple[Group, Group] | None:
    """A group whose chunk came out over the byte budget as two that each can form a valid
    chunk: its threads in two halves; or one thread's samples in two spans of time, cut at its
    middle busy sample with at least two busy samples on each side (Sentry drops a thread with
    fewer). The first span ends with an idle sample at the slot the second starts at (as a
    window's last busy run ends at the next window's first slot), so every busy sample keeps its
    period. ``None`` when the group cannot be split. The heap values and other measurements go
    with the first. Linear in runs."""
    if len(group.threads) > 1:
        half = len(group.threads) // 2
        return (
            Group(group.threads[:half], group.heap, group.end_slot, group.side),
            Group(group.threads[half:], [], group.end_slot),
        )
    if not group.threads:
        return None
    module, runs = group.threads[0]
    total = sum(n for _, path, n in runs if path != IDLE)
    if total < 4:
        return None
    want = total // 2  # busy samples in the first span
    busy = 0
    for i, (slot, path, n) in enumerate(runs):
        if path == IDLE:
            continue
        if busy + n < want:
            busy += n
            continue
        k = want - busy  # samples of this run in the first span (0 < k <= n)
        first = [*runs[:i], (slot, path, k)]
        rest = runs[i + 1 :]
        if k < n:
            rest = [(slot + k, path, n - k), *rest]
        nxt = rest[0] if rest else None
        if nxt is not None and nxt[1] != IDLE:  # close the first span's busy run
            first.append((nxt[0], IDLE, 1))
        return (
            Group([(module, first)], group.heap, group.end_slot, group.side),
            Group([(module, rest)], [], group.end_slot),
        )
    return None


def write_group(
    group: Group,
    tables: ProfileTables,
    run_frames: RunFrames,
    head: Head,
    chunk_id: str,
    max_bytes: int,
) -> Written:
    """Write a group's chunk and check it (unless it is over ``max_bytes`` and
    :func:`split_group` can split it: the caller splits such a group rather than send it; one
    that cannot be split is checked against Sentry's own limit)."""
    threads = [(str(module), module, runs) for module, runs in group.threads]
    names = {tid: tables.module_name(module) for tid, module, _ in threads}
    # Frames and stacks are numbered in order of first use, in the samples' order (by time,
    # then thread id): a path's first use is its earliest (slot, thread id) of any run.
    first_use: dict[int, tuple[int, str]] = {}
    for tid, _, lane_runs in threads:
        for slot, path, _n in lane_runs:
            seen = first_use.get(path)
            if seen is None or (slot, tid) < seen:
                first_use[path] = (slot, tid)
    frames = FrameTable(run_frames)
    stack_of = {
        path: frames.stack_id(path)
        for path in sorted(first_use, key=lambda path: (*first_use[path], path))
    }
    stacks = frames.stacks
    runs: list[tuple[str, list[Run]]] = []
    busy: dict[str, int] = {}
    spans: dict[str, tuple[float, float]] = {}
    path_samples: dict[int, int] = {}
    count = 0
    for tid, _, lane_runs in threads:
        thread_runs = [(slot, stack_of[path], n) for slot, path, n in lane_runs]
        runs.append((tid, thread_runs))
        busy[tid] = sum(n for _, sid, n in thread_runs if stacks[sid])
        for _, path, n in lane_runs:
            if path != IDLE:
                path_samples[path] = path_samples.get(path, 0) + n
        count += sum(n for _, _, n in thread_runs)
        spans[tid] = (
            head.time(min(slot for slot, _, _ in thread_runs)),
            head.time(max(slot + n - 1 for slot, _, n in thread_runs)),
        )
    top: dict = {
        "version": "2",
        "platform": PLATFORM,
        "profiler_id": head.profiler_id,
        "chunk_id": chunk_id,
        "client_sdk": dict(CLIENT_SDK),
    }
    if head.release:
        top["release"] = head.release
    if head.environment:
        top["environment"] = head.environment
    profile = {
        "frames": frames.frames,
        "stacks": stacks,
        "samples": [],  # written straight from the runs
        "thread_metadata": {tid: {"name": name} for tid, name in sorted(names.items())},
    }
    measurements = None
    if group.heap:
        values = [{"timestamp": head.time(slot), "value": value} for slot, value in group.heap]
        measurements = {HEAP_MEASUREMENT: {"unit": "byte", "values": values}}
    if group.side:
        measurements = {**(measurements or {}), **group.side}
    data = chunk_json(top, profile, samples_json(runs, head.origin, head.hz), measurements)
    after_end = 0
    if group.end_slot is not None:
        after_end = sum(
            n
            for _, _, lane_runs in threads
            for slot, path, n in lane_runs
            if path != IDLE and slot >= group.end_slot
        )
    layout = Layout(
        head.origin,
        head.hz,
        tuple((module, tuple(lane_runs)) for _, module, lane_runs in threads),
        tuple(group.heap),
    )
    written = Written(data, chunk_id, count, names, spans, path_samples, after_end, layout, [])
    if len(data) > max_bytes and split_group(group) is not None:
        return replace(written, checked=False)
    payload = {**top, "profile": profile}
    if measurements is not None:
        payload["measurements"] = measurements
    written.problems.extend(
        validate_chunk(payload, size=len(data), samples=SampleFacts(count, busy, spans))
    )
    return written
