"""Offline conversion of a ``.bsprof`` file into Sentry chunks, with the live chunk builder.

A file has no arrival times, so the converter makes them up: it decodes the file in slices cut at
fixed byte offsets of the stream (every :data:`SLICE_BYTES` from its start, twice as far apart
each time :data:`MAX_SLICES` slices or :data:`MAX_SLICE_ENTRIES` call paths are held, when
neighbours merge), takes the tables' delta after each slice, and hands the deltas to the same
:class:`~rokuprof.sentry.chunk.ChunkBuilder` a live capture uses, with arrival times spread over
the run by byte position:

* **footer present**: between the run's start (header) and end (footer) timestamps;
* **footer missing** (a run cut short, or a footer whose end is not after the start or more than
  :data:`MAX_RUN_SECONDS` after it): from the start over as long as the run's busiest thread was
  busy, since the run lasted at least that long and a thread is never busy for longer than the
  run.

The slices depend on the stream's bytes alone, never on its size being known or on how it is
read: a file, standard input and a session directory convert identically, read in any pieces.
Decoding happens once (:meth:`OfflineConverter.feed`); the samples are laid out when
:meth:`OfflineConverter.chunks` runs, once the end of the run is known, and the chunks come out
one at a time as they are made. Pure: bytes in, chunks out.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

from rokuprof.bsprof.model import Limits
from rokuprof.path_model import root_module
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.assemble import Chunk, Layout, new_uuid
from rokuprof.sentry.build_report import BuildReport
from rokuprof.sentry.chunk import ChunkBuilder, merge_memory
from rokuprof.sentry.sampling import DEFAULT_WALL_UNIT, units_per_second
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.sentry.side_measurements import Measure
from rokuprof.timefmt import utc_iso

MIN_SLICE_BYTES = 4096
TARGET_SLICES = 1000
#: The first slices' size; it doubles whenever the slices held are merged.
SLICE_BYTES = MIN_SLICE_BYTES
#: Slices held before neighbours merge (even, so merged slices stay on the doubled grid).
MAX_SLICES = 2 * TARGET_SLICES
#: (call path, wall) pairs the slices may hold (16 bytes each) before neighbours are merged.
MAX_SLICE_ENTRIES = 2_000_000
#: (call path, memory counters) rows the slices may hold (48 bytes each) before the rows of
#: neighbouring slices merge into the later one (the slices' wall times stay as they are).
MAX_MEMORY_ENTRIES = 250_000

MAX_RUN_SECONDS = 31 * 24 * 3600  # a longer "run" means a broken footer
PLAUSIBLE_START = (946_684_800, 4_102_444_800)  # 2000-01-01 .. 2100-01-01, epoch seconds

TIMING_FOOTER = "footer"
TIMING_BUSIEST = "busiest thread"


def default_slice_bytes(total_bytes: int | None) -> int:
    """About :data:`TARGET_SLICES` slices per file, none smaller than 4 KiB (recovery's catch-up;
    the offline converter's slices never depend on the file's size)."""
    if not total_bytes:
        return 16 * 1024
    return max(MIN_SLICE_BYTES, -(-total_bytes // TARGET_SLICES))


@dataclass(frozen=True, slots=True)
class _Slice:
    """What changed in one slice. Call paths and their wall-self differences are kept side by
    side in machine-word arrays (a twelfth of a dict's memory), since every slice of the file is
    kept until its end is known."""

    offset: int  # bytes of the file read when the slice ended
    paths: Sequence[int]
    walls: Sequence[int]
    live_bytes: int
    memory: bool
    #: per call path with memory operations in the slice: its ID, then the differences of the
    #: :data:`~rokuprof.path_model.MEMORY_COUNTERS` (six numbers a row)
    ops: Sequence[int] = ()

    @classmethod
    def of(cls, offset: int, walls: dict, live_bytes: int, memory: bool, ops=()) -> _Slice:
        ops = _packed(ops) if ops else ()
        return cls(offset, _packed(walls.keys()), _packed(walls.values()), live_bytes, memory, ops)

    def wall_map(self) -> dict[int, int]:
        return dict(zip(self.paths, self.walls, strict=True))

    def ops_map(self) -> dict[int, list[int]]:
        """The memory rows: call path -> its ``MEMORY_COUNTERS`` differences (the columns
        sliced out and zipped back into rows: C-level passes, no per-row Python)."""
        ops = self.ops
        rows = zip(ops[1::6], ops[2::6], ops[3::6], ops[4::6], ops[5::6], strict=True)
        return dict(zip(ops[0::6], map(list, rows), strict=True))


def _packed(values: Iterable[int]) -> Sequence[int]:
    """Unsigned 64-bit integers in an array; a list if one does not fit (a hostile stream's
    counters in the pure-Python tables are unbounded)."""
    values = list(values)
    try:
        return array("Q", values)
    except OverflowError:
        return values


def _iso(t: float) -> str:
    try:
        return utc_iso(t)
    except (OverflowError, OSError, ValueError):
        return f"{t:.3f}"


@dataclass
class ConversionSummary:
    """What a conversion read and produced."""

    status: str  # complete | incomplete | corrupt
    problem: str | None  # why it is not complete
    warnings: list[str]
    bytes_read: int
    entries: int
    timing: str | None  # TIMING_FOOTER or TIMING_BUSIEST (None: no header)
    run_start: float | None
    run_end: float | None
    wall_unit: str
    report: BuildReport = field(default_factory=BuildReport)

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    def no_chunk_reason(self) -> str:
        """Why a conversion produced no chunk, for the one line that says so."""
        if self.entries == 0 or self.run_start is None:
            return "no profile data was decoded"
        samples = self.report.samples + sum(x.samples for x in self.report.leftovers)
        why = (
            f"the wall times, read as {self.wall_unit}, add up to {samples} sample(s) at "
            "101 Hz: too few for a chunk"
        )
        if self.wall_unit != DEFAULT_WALL_UNIT:
            why += (
                f"; is --wall-unit {self.wall_unit} right? (the usual unit is {DEFAULT_WALL_UNIT})"
            )
        return why

    def lines(self) -> list[str]:
        """The summary as short lines of text."""
        r = self.report
        out = [f"read {self.bytes_read:,} bytes, {self.entries:,} entries: {self.status}"]
        if self.problem:
            out.append(f"  {self.problem} (converted what was decoded)")
        out.extend(f"  warning: {w}" for w in self.warnings)
        if self.run_start is not None and self.run_end is not None:
            how = (
                "start and end from header and footer"
                if self.timing == TIMING_FOOTER
                else "no usable footer: end = start + busiest thread's busy time"
            )
            out.append(
                f"run {_iso(self.run_start)} to {_iso(self.run_end)} "
                f"({self.run_end - self.run_start:.1f} s; {how}); wall unit {self.wall_unit}"
            )
        threads = ", ".join(f"{name} ({tid})" for tid, name in sorted(r.threads.items()))
        out.append(
            f"chunks: {r.chunks}, samples: {r.samples:,} ({r.busy_samples:,} busy), "
            f"threads: {len(r.threads)}" + (f" [{threads}]" if threads else "")
        )
        if r.first is not None and r.last is not None:
            out.append(
                f"time covered: {_iso(r.first)} to {_iso(r.last)} "
                f"({r.last - r.first:.1f} s, {r.covered_seconds:.1f} s inside chunks)"
            )
        out.extend(r.describe())
        if not (r.leftovers or r.rejected):
            out.append("left over: nothing (every sample is in a chunk)")
        return out


class OfflineConverter:
    """A whole ``.bsprof`` file, fed in pieces (split anywhere), converted into chunks; the
    chunks are a function of the bytes alone. ``total_bytes`` is accepted and ignored (callers
    pass it for their progress display); ``slice_bytes`` is the first slices' size."""

    def __init__(
        self,
        settings: ChunkSettings | None = None,
        *,
        total_bytes: int | None = None,
        slice_bytes: int | None = None,
        profiler_id: str | None = None,
        new_id: Callable[[], str] = new_uuid,
        limits: Limits | None = None,
        max_slice_entries: int = MAX_SLICE_ENTRIES,
        max_slices: int = MAX_SLICES,
    ) -> None:
        del total_bytes  # the result must not depend on whether the size is known
        self.settings = settings or ChunkSettings()
        self.reader = ProfileReader(limits)
        self.slice_bytes = slice_bytes or SLICE_BYTES
        if self.slice_bytes < 1:
            raise ValueError("slice_bytes must be positive")
        if max_slices < 2:
            raise ValueError("max_slices must be at least 2")
        self.max_slices = max_slices
        self.profiler_id = profiler_id
        self.new_id = new_id
        self.received = 0
        self._next_cut = self.slice_bytes
        self._slices: list[_Slice] = []
        self._entries = 0  # (path, wall) pairs held by the slices
        self._memory_entries = 0  # (path, memory counters) rows held by the slices
        self.max_slice_entries = max_slice_entries
        self.max_memory_entries = MAX_MEMORY_ENTRIES
        self._memory_limit = 0  # more rows than this (or the budget) merge
        self._span: tuple[float, float, int, int] | None = None  # see slice_time()
        self._closed = False
        self.summary: ConversionSummary | None = None

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        """The next bytes of the file."""
        if self._closed:
            raise RuntimeError("feed() after close()")
        view = memoryview(data)
        while view:
            room = self._next_cut - self.received
            part = view[:room]
            self.reader.feed(part)
            self.received += len(part)
            view = view[room:]
            if self.received == self._next_cut:
                self._record()
                self._next_cut += self.slice_bytes

    def close(self) -> None:
        """The end of the file."""
        if not self._closed:
            self._closed = True
            self.reader.close()
            self._record()

    @property
    def slices(self) -> int:
        return len(self._slices)

    def _record(self) -> None:
        """What changed since the previous slice: wall per path, memory operations, live heap."""
        delta = self.reader.tables.take_walls()
        walls, ops = delta.walls, delta.memory
        self._slices.append(_Slice.of(self.received, walls, delta.live_bytes, bool(ops), ops))
        self._entries += len(walls)
        self._memory_entries += len(ops) // 6
        while len(self._slices) > 1 and (
            self._entries > self.max_slice_entries or len(self._slices) >= self.max_slices
        ):
            self._coarsen()
        if self._memory_entries > max(self.max_memory_entries, self._memory_limit):
            # Down to half the budget; rows of distinct call paths do not shrink by merging, so
            # the next pass waits until twice as many are held (each row merged O(1) times).
            while self._memory_entries > self.max_memory_entries // 2 and self._coarsen_memory():
                pass
            self._memory_limit = 2 * self._memory_entries

    def _coarsen_memory(self) -> bool:
        """Merge the memory rows of each pair of neighbouring slices that hold some into the
        later one: coarser times for memory operations, nothing else changes (the chunks are
        those of a stream without them). False when one slice holds them all."""
        held = [i for i, s in enumerate(self._slices) if s.ops]
        if len(held) < 2:
            return False
        for a, b in zip(held[0::2], held[1::2], strict=False):
            early, late = self._slices[a], self._slices[b]
            self._slices[b] = replace(late, ops=_packed(merge_memory(early.ops, late.ops)))
            self._slices[a] = replace(early, ops=())
        self._memory_entries = sum(len(s.ops) // 6 for s in self._slices)
        return True

    def _coarsen(self) -> None:
        """Merge each pair of neighbouring slices (and cut twice as far apart from now on): a
        long file, or one whose every slice changes many call paths, is laid out at a coarser
        grain rather than held in ever more memory. Deterministic: it depends on the bytes
        only (slices are cut at offsets of the stream, whatever pieces it arrives in)."""
        merged = []
        for i in range(0, len(self._slices) - 1, 2):
            a, b = self._slices[i], self._slices[i + 1]
            walls = a.wall_map()
            for path, wall in zip(b.paths, b.walls, strict=True):
                walls[path] = walls.get(path, 0) + wall
            ops = merge_memory(a.ops, b.ops)
            merged.append(_Slice.of(b.offset, walls, b.live_bytes, a.memory or b.memory, ops))
        if len(self._slices) % 2:
            merged.append(self._slices[-1])
        self._slices = merged
        self._entries = sum(len(s.paths) for s in merged)
        self._memory_entries = sum(len(s.ops) // 6 for s in merged)
        self.slice_bytes *= 2

    def _busiest_thread_seconds(self, units: int) -> float:
        tables = self.reader.tables
        per_thread: dict[int, int] = {}
        for s in self._slices:
            for path, wall in zip(s.paths, s.walls, strict=True):
                module = root_module(tables, path)
                if module is not None:
                    per_thread[module] = per_thread.get(module, 0) + wall
        return max(per_thread.values(), default=0) / units

    def chunks(
        self,
        progress: Callable[[int, int], None] | None = None,
        measures: Iterable[Measure] = (),
    ) -> Iterator[Chunk]:
        """Lay out the samples and yield the chunks, in order; :attr:`summary` is complete once
        the iterator is exhausted. ``progress(done, total)`` is called per slice. ``measures``
        (an app trace's frames, in time order) go into the chunk made once the layout has
        passed their time, as a live run's vitals do."""
        return self._laid_out(progress, write=True, measures=measures)

    def layouts(self, progress: Callable[[int, int], None] | None = None) -> Iterator[Layout]:
        """:meth:`chunks` without the chunks: each cut window's placed samples (the
        :class:`~rokuprof.sentry.assemble.Layout` its chunk would carry), no JSON written and no
        Sentry byte budget applied, so the whole run is laid out however long it is (the
        timeline's input, :func:`~rokuprof.export.model.build_input`)."""
        return self._laid_out(progress, write=False)

    def _laid_out(
        self,
        progress: Callable[[int, int], None] | None,
        *,
        write: bool,
        measures: Iterable[Measure] = (),
    ) -> Iterator:
        self.close()
        reader = self.reader
        header = reader.header
        summary = self.summary = conversion_summary(
            reader, self.settings, self.received, self._busiest_thread_seconds
        )
        if header is None or summary.run_start is None or summary.run_end is None:
            return
        start, end = summary.run_start, summary.run_end
        builder = ChunkBuilder(
            reader.tables,
            start,
            header=header,
            settings=self.settings,
            profiler_id=self.profiler_id,
            new_id=self.new_id,
            write=write,
        )
        summary.report = builder.report
        body_start = header.header_size
        body_end = max(self._slices[-1].offset, body_start + 1)
        self._span = (start, end, body_start, body_end)
        total = len(self._slices)
        waiting = sorted(measures, key=lambda m: m.timestamp)
        taken = 0
        for i, s in enumerate(self._slices, 1):
            arrival = self.slice_time(s.offset)
            while taken < len(waiting) and waiting[taken].timestamp <= arrival:
                builder.add_measure(waiting[taken])
                taken += 1
            builder.add_wall(s.wall_map(), arrival, live_bytes=s.live_bytes, memory=s.memory)
            yield from builder.ready()
            if progress is not None:
                progress(i, total)
        for measure in waiting[taken:]:  # at the very end of the run: its last chunk
            builder.add_measure(measure)
        yield from builder.finish_chunks(end)

    def slice_time(self, offset: int) -> float:
        """The arrival time given to the data decoded up to ``offset`` (the end of a slice),
        spread over the run by byte position; only once :meth:`chunks` has run."""
        if self._span is None:
            raise RuntimeError("slice_time() before chunks()")
        start, end, body_start, body_end = self._span
        fraction = min(1.0, max(0.0, (offset - body_start) / (body_end - body_start)))
        return start + (end - start) * fraction

    def memory_ops(self) -> Iterator[tuple[float, dict[int, list[int]]]]:
        """Once :meth:`chunks` has run: per slice with memory operations, its arrival time (as
        the chunks and their live heap have it) and, per call path, the differences of its
        :data:`~rokuprof.path_model.MEMORY_COUNTERS` in the slice. The stream carries no time
        for a memory operation: the slice it arrived in is the finest there is."""
        if self._span is None:
            return
        yield from ((self.slice_time(s.offset), s.ops_map()) for s in self._slices if s.ops)


def conversion_summary(
    reader: ProfileReader,
    settings: ChunkSettings,
    bytes_read: int,
    busiest_thread_seconds: Callable[[int], float],
) -> ConversionSummary:
    """What a closed reader's stream says about its run (status, warnings, start and end),
    without laying anything out: the one rule for the run's length, shared by the conversion and
    the outputs that need no timeline. ``busiest_thread_seconds(units per second)`` is asked
    only when there is no usable footer."""
    summary = ConversionSummary(
        status=reader.status,
        problem=reader.problem(),
        warnings=list(reader.warnings),
        bytes_read=bytes_read,
        entries=reader.entry_count,
        timing=None,
        run_start=None,
        run_end=None,
        wall_unit=settings.wall_unit,
    )
    header = reader.header
    if header is None:
        return summary
    start = header.start_ms / 1000
    if not PLAUSIBLE_START[0] <= start < PLAUSIBLE_START[1]:
        summary.warnings.append(
            f"the run start in the header ({header.start_ms} ms since 1970) is implausible: "
            "sample times will be too"
        )
    footer = reader.footer
    if footer is not None and 0 < footer.end_ms - header.start_ms <= MAX_RUN_SECONDS * 1000:
        end = footer.end_ms / 1000
        summary.timing = TIMING_FOOTER
    else:
        if footer is not None:
            summary.warnings.append(
                f"footer end time ({footer.end_ms} ms) is not a plausible end of a run "
                f"starting at {header.start_ms} ms: ignored"
            )
        end = start + busiest_thread_seconds(units_per_second(settings.wall_unit))
        summary.timing = TIMING_BUSIEST
    summary.run_start, summary.run_end = start, end
    return summary


def convert_bytes(
    data: bytes, settings: ChunkSettings | None = None, **options
) -> tuple[list[Chunk], ConversionSummary]:
    """Convert a whole file held in memory: ``(chunks, summary)``."""
    converter = OfflineConverter(settings, total_bytes=len(data), **options)
    converter.feed(data)
    chunks = list(converter.chunks())
    assert converter.summary is not None
    return chunks, converter.summary
