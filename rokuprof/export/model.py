"""What every exporter is fed: the profile tables and the synthetic timeline, as plain data.

:func:`build_input` takes a fed :class:`~rokuprof.sentry.convert.OfflineConverter` (the converter
``rokuprof convert`` uses) and returns an :class:`ExportInput`:

* **call paths** with their exact counters, straight from the profile tables (the numbers
  ``inspect`` adds up per function), the live heap at the end per allocating path, and the
  line-level CPU of each path's leaf;
* **the timeline**: the 101 Hz synthetic samples of the Sentry chunks the same converter lays out,
  read back from those chunks, so that every timeline view shows exactly what the chunks show;
  plus the live-heap values the chunks carry.

Frames are deduplicated by ``(function, file, definition line)``; a call path's thread is the
executable module of its root, as in the chunks. Pure: no I/O, no clock.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

from rokuprof.bsprof.model import Header
from rokuprof.export.interning import Interner
from rokuprof.path_model import PathNode
from rokuprof.profile.protocol import TablesView
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import ProfileTables
from rokuprof.sentry.assemble import HEAP_MEASUREMENT, Chunk, Layout
from rokuprof.sentry.convert import ConversionSummary, OfflineConverter
from rokuprof.sentry.sampling import WALL_UNITS
from rokuprof.sentry.settings import ChunkSettings

#: Stack index of an idle sample in :attr:`Timeline.stacks`.
IDLE = 0

WALL_UNIT_NAMES = {"ns": "nanoseconds", "us": "microseconds", "ms": "milliseconds", "s": "seconds"}


@dataclass(frozen=True, slots=True)
class Frame:
    """One function: its name, its file as the device names it, and the line it starts at
    (0 = unknown)."""

    function: str
    file: str
    line: int


@dataclass(frozen=True, slots=True)
class CallPath:
    """One call path (a node of the call tree) and its exact counters."""

    id: int  # the .bsprof path ID
    thread: int  # executable module ID of its root
    frames: tuple[int, ...]  # indexes into ExportInput.frames, leaf first
    lines: tuple[int, ...]  # per frame: the leaf's definition line, else the call site's line
    cpu: int = 0
    wall: int = 0
    calls: int = 0
    alloc_count: int = 0
    alloc_bytes: int = 0
    live_count: int = 0  # allocations of this path still live at the end
    live_bytes: int = 0
    line_cpu: tuple[tuple[int, int, int], ...] = ()  # (source line, cpu, wall) of the leaf
    line_alloc: tuple[tuple[int, int, int], ...] = ()  # (source line, count, bytes) of the leaf


@dataclass
class Timeline:
    """The synthetic samples: per thread, runs of equal stacks on a grid of ``1/hz`` slots."""

    hz: int
    origin: float | None  # epoch seconds of slot 0 (the run start); None without a header
    stacks: list[tuple[int, ...]] = field(default_factory=lambda: [()])  # frame indexes, leaf first
    runs: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)  # thread -> runs
    heap: list[tuple[int, int]] = field(default_factory=list)  # (slot, live bytes)
    #: memory operations by when they arrived: (slot, call path ID -> the differences of
    #: :data:`~rokuprof.sentry.chunk.MEMORY_COUNTERS`), slots increasing, on the live heap's steps
    memory: list[tuple[int, dict[int, list[int]]]] = field(default_factory=list)

    @property
    def period_us(self) -> float:
        return 1e6 / self.hz

    def last_slot(self) -> int:
        """One past the last sample of any thread (0 when there are none)."""
        return max((r[-1][0] + r[-1][2] for r in self.runs.values() if r), default=0)

    def samples(self, thread: int) -> int:
        return sum(n for _, _, n in self.runs.get(thread, ()))


@dataclass
class RunInfo:
    """The run as the header and footer describe it, and how complete the input was."""

    status: str  # complete | incomplete | corrupt
    problem: str | None
    warnings: list[str]
    app: str | None  # target name
    app_version: str | None
    vendor: str | None
    model: str | None
    firmware: str | None
    start: float | None  # epoch seconds
    end: float | None
    wall_unit: str  # ns | us | ms | s
    line_data: bool
    memory_ops: bool

    @property
    def wall_unit_name(self) -> str:
        return WALL_UNIT_NAMES[self.wall_unit]

    @property
    def units_per_second(self) -> int:
        return WALL_UNITS[self.wall_unit]

    @property
    def duration(self) -> float:
        if self.start is None or self.end is None:
            return 0.0
        return max(0.0, self.end - self.start)


@dataclass
class ExportInput:
    """Everything an exporter needs (see the module docstring)."""

    run: RunInfo
    threads: dict[int, str]  # module ID -> name
    frames: list[Frame]
    paths: list[CallPath]  # sorted by path ID
    timeline: Timeline
    summary: ConversionSummary
    reader: ProfileReader
    settings: ChunkSettings = field(default_factory=ChunkSettings)  # the chunks' (release, ...)

    def thread_order(self) -> list[int]:
        """Threads in module-ID order."""
        return sorted(self.threads)


def frame_label(frame: Frame) -> str:
    """One text naming a frame where a format has only a name: ``function (file:line)``."""
    where = f"{frame.file}:{frame.line}" if frame.line else frame.file
    return f"{frame.function} ({where})"


def function_key(inp: ExportInput, thread: int, frame: int) -> tuple[str, str, str]:
    """The key ``inspect`` aggregates by: ``(module name, function, file)``."""
    f = inp.frames[frame]
    return (inp.threads.get(thread, f"<module {thread}>"), f.function, f.file)


class Frames(Interner[Frame]):
    __slots__ = ("_of_node",)

    def __init__(self) -> None:
        super().__init__()
        self._of_node: dict[tuple[int, int, int], int] = {}  # string IDs and line -> frame

    def node_id(self, tables: ProfileTables, node: PathNode) -> int:
        """The frame of a path element, its names looked up once per (function, file, line)."""
        key = (node.function_id, node.file_id, node.line)
        fid = self._of_node.get(key)
        if fid is None:
            fid = self._of_node[key] = self.id(_node_frame(tables, node))
        return fid


def _node_frame(tables: ProfileTables, node: PathNode) -> Frame:
    return Frame(tables.string(node.function_id), tables.string(node.file_id), node.line)


def _call_lines(stack: tuple[PathNode, ...]) -> tuple[int, ...]:
    """Per frame (leaf first): the leaf's definition line; a caller's line where it made the call
    (its definition line + the callee's line offset - 1), or its definition line when the stream
    has no line data."""
    lines = [stack[0].line]
    for callee, caller in pairwise(stack):
        offset = callee.caller_line_offset
        lines.append(caller.line + offset - 1 if offset and caller.line else caller.line)
    return tuple(lines)


class _TimelineReader:
    """Reads the samples of Sentry chunks back into per-thread runs: from the layout the
    builder placed them by (:class:`~rokuprof.sentry.assemble.Layout`, run by run) when the chunk
    has one, else from its JSON, sample by sample; both give the same timeline."""

    def __init__(
        self, timeline: Timeline, frames: Frames, threads: dict[int, str], tables: ProfileTables
    ) -> None:
        self.t = timeline
        self.frames = frames
        self.threads = threads
        self.tables = tables
        self._stack_ids: dict[tuple[int, ...], int] = {(): IDLE}
        self._path_stacks: dict[int, int] = {IDLE: IDLE}

    def add(self, chunk: Chunk) -> None:
        if chunk.layout is not None:
            self._add_layout(chunk.layout)
        else:
            self._add_json(chunk)

    def _stack_id(self, key: tuple[int, ...]) -> int:
        sid = self._stack_ids.get(key)
        if sid is None:
            sid = self._stack_ids[key] = len(self.t.stacks)
            self.t.stacks.append(key)
        return sid

    def _path_stack(self, path: int) -> int:
        sid = self._path_stacks.get(path)
        if sid is None:
            tables = self.tables
            key = tuple(self.frames.node_id(tables, node) for node in tables.stack(path))
            sid = self._path_stacks[path] = self._stack_id(key)
        return sid

    def _add_run(self, thread: int, slot: int, sid: int, n: int) -> None:
        lane = self.t.runs.get(thread)
        if lane is None:
            lane = self.t.runs[thread] = []
        if lane:
            first, last_sid, count = lane[-1]
            if last_sid == sid and first + count == slot:
                lane[-1] = (first, sid, count + n)
                return
        lane.append((slot, sid, n))

    def _add_layout(self, layout: Layout) -> None:
        t = self.t
        assert t.origin is not None
        origin, hz = t.origin, t.hz
        base, step = layout.origin, layout.hz

        def read_back(slot: int) -> int:  # as a reader of the JSON reads the sample's slot
            return round((base + slot / step - origin) * hz)

        shift = (base - origin) * hz
        exact = step == hz and abs(shift - round(shift)) < 0.01  # every slot moves alike
        # Number frames, stacks and threads in the order the chunk's JSON has them: stacks by
        # their first sample (time, then thread ID as text), threads by their ID as text,
        # lanes by their first sample.
        first_use: dict[int, tuple[int, str]] = {}
        for module, runs in layout.threads:
            tid = str(module)
            for slot, path, _ in runs:
                seen = first_use.get(path)
                if seen is None or (slot, tid) < seen:
                    first_use[path] = (slot, tid)
        for path in sorted(first_use, key=lambda path: (*first_use[path], path)):
            self._path_stack(path)
        for module, _ in sorted(layout.threads, key=lambda thread: str(thread[0])):
            self.threads.setdefault(module, self.tables.module_name(module))
        lanes = sorted((t for t in layout.threads if t[1]), key=lambda t: (t[1][0][0], str(t[0])))
        for module, runs in lanes:
            for slot, path, n in runs:
                sid = self._path_stack(path)
                if exact:
                    self._add_run(module, slot + round(shift), sid, n)
                else:
                    for i in range(n):
                        self._add_run(module, read_back(slot + i), sid, 1)
        t.heap.extend((read_back(slot), value) for slot, value in layout.heap)

    def _add_json(self, chunk: Chunk) -> None:
        t = self.t
        assert t.origin is not None
        payload = chunk.payload
        profile = payload["profile"]
        frame_ids = [
            self.frames.id(Frame(f.get("function", ""), f.get("abs_path", ""), f.get("lineno", 0)))
            for f in profile["frames"]
        ]
        stack_ids = [self._stack_id(tuple(frame_ids[i] for i in s)) for s in profile["stacks"]]
        for tid, meta in profile["thread_metadata"].items():
            self.threads.setdefault(int(tid), meta.get("name", tid))
        origin, hz = t.origin, t.hz
        for s in profile["samples"]:
            slot = round((s["timestamp"] - origin) * hz)
            self._add_run(int(s["thread_id"]), slot, stack_ids[s["stack_id"]], 1)
        heap = payload.get("measurements", {}).get(HEAP_MEASUREMENT)
        if heap:
            t.heap.extend(
                (round((v["timestamp"] - origin) * hz), v["value"]) for v in heap["values"]
            )


def _memory_buckets(timeline: Timeline, converter: OfflineConverter) -> None:
    """The converter's memory operations per slice on the timeline's slots, where the chunk
    builder puts the live heap of the same slice (its slot: the arrival's, never earlier than the
    previous one's); slices that land on one slot are one bucket."""
    assert timeline.origin is not None
    origin, hz, last = timeline.origin, timeline.hz, 0
    for at, ops in converter.memory_ops():
        slot = last = max(last, math.floor((at - origin) * hz + 1e-6))
        if timeline.memory and timeline.memory[-1][0] == slot:
            into = timeline.memory[-1][1]
            for path, row in ops.items():
                old = into.get(path)
                into[path] = row if old is None else [a + b for a, b in zip(old, row, strict=True)]
        else:
            timeline.memory.append((slot, ops))


def build_input(
    converter: OfflineConverter, *, progress: Callable[[int, int], None] | None = None
) -> ExportInput:
    """Lay out the converter's chunks and gather everything the exporters need. Consumes the
    converter (its chunks are read here); ``progress(done, total)`` as in
    :meth:`OfflineConverter.chunks`."""
    reader = converter.reader
    tables = reader.tables
    settings = converter.settings
    frames = Frames()
    threads: dict[int, str] = {}
    timeline = Timeline(settings.hz, None)
    reading = _TimelineReader(timeline, frames, threads, tables)
    for chunk in converter.chunks(progress):
        if timeline.origin is None:
            assert reader.header is not None  # no header, no chunks
            timeline.origin = reader.header.start_ms / 1000
        reading.add(chunk)
    del reading  # its per-path stack map is as large as the paths: gone before they are built
    header = reader.header
    if header is not None:
        timeline.origin = header.start_ms / 1000
        _memory_buckets(timeline, converter)
    summary = converter.summary
    assert summary is not None

    paths = call_paths(tables, frames, threads)
    run = run_info(summary, header, settings)
    return ExportInput(run, threads, frames.items, paths, timeline, summary, reader, settings)


def call_paths(tables: TablesView, frames: Frames, threads: dict[int, str]) -> list[CallPath]:
    """Every defined call path with its exact counters, sorted by path ID, straight from the
    tables; the threads of their roots are added to ``threads`` (every name as the tables have
    it). Takes the tables' line delta (the line CPU since the previous line delta)."""
    line_cpu: dict[int, list[tuple[int, int, int]]] = {}
    for (pid, offset), (cpu, wall) in tables.take_delta(lines=True).line_cpu.items():
        line_cpu.setdefault(pid, []).append((tables.line_number(pid, offset), cpu, wall))
    line_alloc: dict[int, list[tuple[int, int, int]]] = {}
    for (pid, offset), (count, size) in tables.line_alloc.items():
        line_alloc.setdefault(pid, []).append((tables.line_number(pid, offset), count, size))
    live = {pid: (n, size) for pid, n, size in tables.leak_sites()}
    snapshot = tables.snapshot()
    paths: list[CallPath] = []
    for pid in sorted(snapshot.keys() | live.keys()):
        stack = tables.stack(pid)
        if not stack:
            continue  # counters of undefined paths: in the totals, in no function
        stats = snapshot.pop(pid, None)  # each path's counters freed once read
        n_live, live_bytes = live.get(pid, (0, 0))
        thread = stack[-1].module
        threads.setdefault(thread, tables.module_name(thread))
        paths.append(
            CallPath(
                id=pid,
                thread=thread,
                frames=tuple(frames.node_id(tables, node) for node in stack),
                lines=_call_lines(stack),
                cpu=stats.cpu if stats else 0,
                wall=stats.wall if stats else 0,
                calls=stats.calls if stats else 0,
                alloc_count=stats.alloc_count if stats else 0,
                alloc_bytes=stats.alloc_bytes if stats else 0,
                live_count=n_live,
                live_bytes=live_bytes,
                line_cpu=tuple(sorted(line_cpu.get(pid, ()))),
                line_alloc=tuple(sorted(line_alloc.get(pid, ()))),
            )
        )
    for thread in threads:
        threads[thread] = tables.module_name(thread)
    return paths


def run_info(summary: ConversionSummary, header: Header | None, settings: ChunkSettings) -> RunInfo:
    """The run as the header, the footer and the conversion's summary describe it."""
    return RunInfo(
        status=summary.status,
        problem=summary.problem,
        warnings=list(summary.warnings),
        app=header.target_name if header else None,
        app_version=header.target_version if header else None,
        vendor=header.vendor if header else None,
        model=header.model if header else None,
        firmware=header.firmware if header else None,
        start=summary.run_start,
        end=summary.run_end,
        wall_unit=settings.wall_unit,
        line_data=bool(header and header.line_data),
        memory_ops=bool(header and header.memory_ops),
    )


def input_from_bytes(data: bytes, **converter_options) -> ExportInput:
    """A whole ``.bsprof`` file held in memory, ready to export (options: those of
    :class:`OfflineConverter`, e.g. ``settings=ChunkSettings(wall_unit="ms")``)."""
    converter = OfflineConverter(total_bytes=len(data), **converter_options)
    converter.feed(data)
    return build_input(converter)
