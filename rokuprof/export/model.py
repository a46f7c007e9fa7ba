"""What every exporter is fed: the profile tables and the synthetic timeline, as plain data.

:func:`build_input` takes a fed :class:`~rokuprof.sentry.convert.OfflineConverter` (the converter
``rokuprof convert`` uses) and returns an :class:`ExportInput`:

* **call paths** with their exact counters, straight from the profile tables (the numbers
  ``inspect`` adds up per function), the live heap at the end per allocating path, and the
  line-level CPU of each path's leaf;
* **the timeline** (:class:`~rokuprof.timeline.Timeline`): the 101 Hz synthetic samples the same
  converter lays out for its Sentry chunks, built from the placed windows with no chunk written
  (:meth:`OfflineConverter.layouts`), so that every timeline view shows exactly what the chunks
  show, for the whole run (the Sentry byte budgets bound what is sent, not the timeline); plus
  the live-heap values the chunks carry.

Frames are deduplicated by ``(function, file, definition line)``; a call path's thread is the
executable module of its root, as in the chunks. Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise

from rokuprof.bsprof.model import Header
from rokuprof.export.interning import Interner
from rokuprof.path_model import PathNode
from rokuprof.profile.protocol import TablesView
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import ProfileTables
from rokuprof.sentry.convert import ConversionSummary, OfflineConverter
from rokuprof.sentry.sampling import WALL_UNITS
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.timeline import IDLE, Timeline, TimelineBuilder

__all__ = [
    "IDLE",
    "WALL_UNIT_NAMES",
    "CallPath",
    "ExportInput",
    "Frame",
    "RunInfo",
    "Timeline",
    "build_input",
    "frame_label",
    "function_key",
    "input_from_bytes",
]

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
class AggregateInput:
    """A capture's call paths and run facts, without a timeline: all that pprof, folded, diff
    and the gate read (built from the tables alone by :mod:`rokuprof.export.aggregate`)."""

    run: RunInfo
    threads: dict[int, str]  # module ID -> name
    frames: list[Frame]
    paths: list[CallPath]  # sorted by path ID
    summary: ConversionSummary


@dataclass
class ExportInput(AggregateInput):
    """Everything an exporter needs (see the module docstring): the aggregates and the
    timeline laid out from them."""

    timeline: Timeline
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
    header = reader.header
    origin = header.start_ms / 1000 if header is not None else None

    def stack_of(path: int) -> tuple[int, ...]:
        return tuple(frames.node_id(tables, node) for node in tables.stack(path))

    building = TimelineBuilder(settings.hz, origin, stack_of, tables.module_name)
    for layout in converter.layouts(progress):
        building.add_window(layout.threads, layout.heap)
    if header is not None:
        building.add_memory(converter.memory_ops())
    threads = building.threads
    timeline = building.release()  # the per-path stack map goes before the paths are built
    summary = converter.summary
    assert summary is not None

    paths = call_paths(tables, frames, threads)
    run = run_info(summary, header, settings)
    return ExportInput(
        run,
        threads,
        frames.items,
        paths,
        summary,
        timeline=timeline,
        reader=reader,
        settings=settings,
    )


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
        has_stats = stats is not None  # (all-zero counters read as 0 either way)
        n_live, live_bytes = live.get(pid, (0, 0))
        thread = stack[-1].module
        threads.setdefault(thread, tables.module_name(thread))
        paths.append(
            CallPath(
                id=pid,
                thread=thread,
                frames=tuple(frames.node_id(tables, node) for node in stack),
                lines=_call_lines(stack),
                cpu=stats.cpu if has_stats else 0,
                wall=stats.wall if has_stats else 0,
                calls=stats.calls if has_stats else 0,
                alloc_count=stats.alloc_count if has_stats else 0,
                alloc_bytes=stats.alloc_bytes if has_stats else 0,
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
