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

* Each call path's wall-self delta becomes whole samples at 101 Hz; remainders carry forward
  (:class:`~rokuprof.sentry.sampling.Sampler`), and at :meth:`ChunkBuilder.finish` a remainder of
  at least half a period becomes one last sample where the thread has room before the end, so
  ``samples x T`` per call path equals its wall-self total within one period (half a period
  where there was room).
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

import json
import math
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from rokuprof import __version__
from rokuprof.bsprof.model import Header
from rokuprof.profile.tables import Delta, ProfileTables, root_module
from rokuprof.sentry.chunkjson import Run, chunk_json, samples_json
from rokuprof.sentry.frames import FrameName, FrameTable, release_name
from rokuprof.sentry.sampling import (
    DEFAULT_WALL_UNIT,
    SAMPLE_RATE_HZ,
    Sampler,
    units_per_second,
)
from rokuprof.sentry.timeline import IDLE, Lane
from rokuprof.sentry.validate import MAX_CHUNK_BYTES, Problem, SampleFacts, validate_chunk

PLATFORM = "brightscript"
CLIENT_SDK = {"name": "rokuprof", "version": __version__}
#: The longest window of one chunk, as Sentry's SDKs cut them (Relay's own limit on a chunk's
#: sample span is :data:`~rokuprof.sentry.validate.MAX_SAMPLE_SPAN_SECONDS`, 66 s).
MAX_CHUNK_SECONDS = 60.0
#: The longest a window is held open for late data (:attr:`ChunkSettings.settle_seconds`).
MAX_SETTLE_SECONDS = 10.0
#: Measurement carrying the live heap (bytes) over time; Sentry's UI charts this name.
HEAP_MEASUREMENT = "memory_footprint"
#: This much busy time not fitting before the end of the run suggests a wrong wall-time unit.
UNPLACED_WARNING_SECONDS = 10.0
#: Default byte budget of one chunk (:attr:`ChunkSettings.max_chunk_bytes`): well under Relay's
#: 50 MiB, so a window with many busy threads is sent as several chunks instead of one rejected.
DEFAULT_CHUNK_BYTES = 8 * 1024 * 1024
#: The smallest budget: one thread's window always goes into one chunk (at 101 Hz and 60 s,
#: at most 6,060 samples: about 0.5 MB, and its stacks), so a budget must hold one.
MIN_CHUNK_BYTES = 1024 * 1024
#: Default cap on the chunk bytes of one run (:attr:`ChunkSettings.max_session_chunk_bytes`).
DEFAULT_SESSION_CHUNK_BYTES = 1024 * 1024 * 1024
#: What a sample costs in a chunk's JSON, before its thread ID's text (the estimate that
#: groups threads into chunks; ``{"timestamp":1795273445.0099010,"thread_id":"","stack_id":}``
#: plus a stack index and a comma).
SAMPLE_BYTES = 64


def delta_walls(delta: Delta) -> tuple[dict[int, int], bool]:
    """Wall-self time per call path that has any in ``delta``, and whether it has memory ops."""
    walls = {}
    memory = False
    for path, stats in delta.paths.items():
        if stats.wall:
            walls[path] = stats.wall
        if stats.alloc_count or stats.free_count or stats.free_realloc_count:
            memory = True
    return walls, memory


def new_uuid() -> str:
    """A random UUID as 32 lowercase hex digits (Sentry's id format)."""
    return uuid.uuid4().hex


class ChunkSettingsError(ValueError):
    """Settings that break the chunk rules; ``problems`` lists every one as (field, rule)."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{name} {rule}" for name, rule in problems))

    def named(self, names: Mapping[str, str]) -> list[str]:
        """One ``"<name>: <rule>"`` line per problem, each field named as its caller knows it
        (a config key, a command-line option); a field not in ``names`` keeps its own name."""
        return [f"{names.get(name, name)}: {rule}" for name, rule in self.problems]


@dataclass(frozen=True)
class ChunkSettings:
    """How chunks are made: the one owner of the chunk rules (the daemon's config, the commands
    and the capture build one and hand it on to the builder).

    ``wall_unit``: unit of the ``.bsprof`` wall-time field (``ns``, ``us``, ``ms`` or ``s``);
    Roku does not publish it, microseconds is the working assumption. ``chunk_seconds``: window
    of one chunk (at most 60, and room for two samples). ``release``: overrides
    ``<target name>@<target version>`` from the header. ``environment``: Sentry environment
    (``None`` leaves it out). ``max_backlog_seconds``: busy time a thread may have waiting
    beyond the wall time that has passed; more than that (a wrong wall unit, or a broken
    stream) is dropped and reported rather than laid out for hours. ``settle_seconds``: data
    arriving this long after a window ended may still be placed in it (it describes time before
    its arrival), so a window is cut that long after its end. ``max_chunk_bytes``: a window
    whose threads would make a larger chunk is sent as several chunks, each with some of its
    threads (one thread's window is never split). ``max_session_chunk_bytes``: the chunk bytes
    one run may produce; past it no more chunks are made (reported; the raw archive keeps
    everything).

    Every broken rule is reported at once (:class:`ChunkSettingsError`, a ``ValueError``), each
    as the field's name and its rule, so a caller can name the field its own way.
    """

    wall_unit: str = DEFAULT_WALL_UNIT
    chunk_seconds: float = MAX_CHUNK_SECONDS
    release: str | None = None
    environment: str | None = "production"
    hz: int = SAMPLE_RATE_HZ
    max_backlog_seconds: float = 3600.0
    settle_seconds: float = 1.0
    max_chunk_bytes: int = DEFAULT_CHUNK_BYTES
    max_session_chunk_bytes: int = DEFAULT_SESSION_CHUNK_BYTES

    def __post_init__(self) -> None:
        problems = chunk_problems(self)
        if problems:
            raise ChunkSettingsError(problems)


def chunk_problems(settings: ChunkSettings) -> list[tuple[str, str]]:
    """Every chunk rule ``settings`` breaks, as (field, rule ending in what it got)."""
    s = settings
    problems = []
    try:
        units_per_second(s.wall_unit if isinstance(s.wall_unit, str) else repr(s.wall_unit))
    except ValueError as exc:
        problems.append(("wall_unit", str(exc)))
    hz_ok = isinstance(s.hz, int) and not isinstance(s.hz, bool) and s.hz > 0
    if not hz_ok:
        problems.append(("hz", f"must be a whole number above 0, got {_got(s.hz)}"))
    if not (_number(s.chunk_seconds) and 0 < s.chunk_seconds <= MAX_CHUNK_SECONDS):
        problems.append(
            (
                "chunk_seconds",
                f"must be a number of seconds above 0 and at most {MAX_CHUNK_SECONDS:g} (the "
                f"longest Sentry chunk), got {_got(s.chunk_seconds)}",
            )
        )
    elif hz_ok and int(s.chunk_seconds * s.hz) < 2:
        problems.append(
            (
                "chunk_seconds",
                f"must hold two samples at {s.hz} Hz (at least {2 / s.hz:.3g} s), "
                f"got {_got(s.chunk_seconds)}",
            )
        )
    if not (_whole(s.max_chunk_bytes) and MIN_CHUNK_BYTES <= s.max_chunk_bytes <= MAX_CHUNK_BYTES):
        problems.append(
            (
                "max_chunk_bytes",
                f"must be a whole number of bytes from {MIN_CHUNK_BYTES} to {MAX_CHUNK_BYTES} "
                f"(Sentry's limit), got {_got(s.max_chunk_bytes)}",
            )
        )
    if not (_whole(s.max_session_chunk_bytes) and s.max_session_chunk_bytes > 0):
        problems.append(
            (
                "max_session_chunk_bytes",
                f"must be a whole number of bytes above 0, got {_got(s.max_session_chunk_bytes)}",
            )
        )
    if not (_number(s.max_backlog_seconds) and s.max_backlog_seconds > 0):
        problems.append(
            ("max_backlog_seconds", f"must be a number above 0, got {_got(s.max_backlog_seconds)}")
        )
    if not (_number(s.settle_seconds) and 0 <= s.settle_seconds <= MAX_SETTLE_SECONDS):
        problems.append(
            (
                "settle_seconds",
                f"must be a number from 0 to {MAX_SETTLE_SECONDS:g}, got {_got(s.settle_seconds)}",
            )
        )
    if s.release is not None and not (isinstance(s.release, str) and s.release.strip()):
        problems.append(("release", f"must be a non-empty name, got {_got(s.release)}"))
    environment = s.environment
    if environment is not None and not (
        isinstance(environment, str)
        and environment.strip()
        and not any(c in environment for c in "/\n\r\t")
    ):
        problems.append(
            (
                "environment",
                f"must be a non-empty name without slashes or newlines, got {_got(environment)}",
            )
        )
    return problems


def _number(value: object) -> bool:
    """A finite int or float (not a bool, nor an int too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _got(value: object) -> str:
    """A value as a rule's message shows it: numbers as written (61 and 61.0 alike), text
    quoted and cut short."""
    if _number(value):
        return f"{value:g}"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


@dataclass(frozen=True)
class Layout:
    """A chunk's samples as the builder placed them: per thread (module ID) runs of
    ``(slot, path, count)`` (path :data:`~rokuprof.sentry.timeline.IDLE` for idle samples; a
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
class Leftover:
    """Samples of one thread in no chunk when the run ended: no room before its end, or too
    few for a valid chunk."""

    thread_id: str
    thread_name: str
    samples: int
    seconds: float
    functions: tuple[str, ...]

    def describe(self) -> str:
        return (
            f"thread {self.thread_name} ({self.thread_id}): {self.samples} sample(s), "
            f"{self.seconds * 1000:.1f} ms in {', '.join(self.functions)}"
        )


@dataclass
class BuildReport:
    """What a run produced, and everything that did not make it into a chunk."""

    chunks: int = 0
    samples: int = 0  # all samples in emitted chunks, idle ones included
    busy_samples: int = 0
    threads: dict[str, str] = field(default_factory=dict)  # thread id -> name, as emitted
    first: float | None = None  # first sample timestamp
    last: float | None = None  # last sample timestamp
    covered_seconds: float = 0.0  # sum of chunk durations
    carried_windows: int = 0  # windows whose data was too small and moved to a later chunk
    carried_single_samples: int = 0  # single busy samples carried to the next window
    excess_windows: int = 0  # windows that ended with busy time still waiting (busy > wall)
    leftovers: list[Leftover] = field(default_factory=list)
    remainder_seconds: float = 0.0  # sub-period rounding left unsampled (|each path| < T/2)
    unattributed_seconds: float = 0.0  # wall time on paths the stream never defined
    unplaced_seconds: float = 0.0  # busy time that did not fit before the end, in no chunk
    after_end_seconds: float = 0.0  # busy time that did not fit before the end, placed after it
    dropped_seconds: float = 0.0  # busy time over the backlog limit, not sent
    rejected: list[tuple[int, list[Problem]]] = field(default_factory=list)  # (samples, why)
    heap_values_dropped: int = 0
    chunk_bytes: int = 0  # bytes of the emitted chunks
    largest_chunk: int = 0  # bytes of the largest one
    split_windows: int = 0  # windows sent as several chunks (over max_chunk_bytes)
    capped_samples: int = 0  # samples in no chunk: the run's chunks reached their byte cap
    capped_at: int | None = None  # max_session_chunk_bytes, once it was reached

    @property
    def leftover_samples(self) -> int:
        return sum(x.samples for x in self.leftovers)

    def describe(self) -> list[str]:
        """Human-readable lines about carries, leftovers and anything lost."""
        lines = []
        if self.carried_windows or self.carried_single_samples:
            lines.append(
                f"carried: {self.carried_single_samples} single sample(s) moved to a later "
                f"chunk; {self.carried_windows} window(s) too small for a chunk of their own"
            )
        if self.excess_windows:
            lines.append(
                f"carried: busy time exceeded wall time in {self.excess_windows} window(s) "
                "and moved into the next"
            )
        late = self.after_end_seconds + self.unplaced_seconds
        warning = (
            " (more busy time than wall time: is the wall-time unit right?)"
            if late > UNPLACED_WARNING_SECONDS
            else ""
        )
        if self.after_end_seconds:
            lines.append(
                f"placed after the end: {self.after_end_seconds:.2f} s of busy time did not fit "
                "before the end of the run (its data came late) and lies after it" + warning
            )
        if self.unplaced_seconds:
            lines.append(
                f"not placed: {self.unplaced_seconds:.2f} s of busy time did not fit before the "
                "end of the run" + ("" if self.after_end_seconds else warning)
            )
        for leftover in self.leftovers:
            lines.append("left over (in no chunk): " + leftover.describe())
        if self.dropped_seconds:
            lines.append(
                f"dropped: {self.dropped_seconds:.1f} s of busy time that ran more than the "
                "backlog limit ahead of wall time (is the wall-time unit right?)"
            )
        if self.unattributed_seconds:
            lines.append(
                f"not sampled: {self.unattributed_seconds:.3f} s of wall time on undefined "
                "call paths"
            )
        for samples, problems in self.rejected:
            lines.append(
                f"rejected by validation ({samples} samples lost): " + "; ".join(map(str, problems))
            )
        if self.heap_values_dropped:
            lines.append(f"heap measurements not sent: {self.heap_values_dropped} value(s)")
        if self.split_windows:
            lines.append(
                f"split: {self.split_windows} window(s) had too many busy threads for one chunk "
                "and were sent as several"
            )
        if self.capped_at is not None:
            lines.append(
                f"chunk bytes capped: the run's chunks reached {self.capped_at} bytes "
                f"(max_session_chunk_bytes); {self.capped_samples} later sample(s) are in no "
                "chunk (the raw archive has them all)"
            )
        return lines


@dataclass(frozen=True)
class _Group:
    """Threads of one cut window that go into one chunk: ``(module, placed runs)`` each, the
    heap values it carries and the run's end slot (once finishing)."""

    threads: list[tuple[int, list[tuple[int, int, int]]]]
    heap: list[tuple[int, int]]
    end_slot: int | None

    def samples(self) -> int:
        return sum(n for _, runs in self.threads for _, _, n in runs)


@dataclass(frozen=True)
class Flush:
    """The end of a run: the last chunks, and the report."""

    chunks: list[Chunk]
    report: BuildReport


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
    ) -> None:
        if not math.isfinite(start):
            raise ValueError("start must be a finite epoch time in seconds")
        self.tables = tables
        self.settings = settings or ChunkSettings()
        self.origin = float(start)
        self.header: Header | None = None
        self._new_id = new_id
        self.profiler_id = profiler_id or new_id()
        self.sampler = Sampler(self.settings.wall_unit, self.settings.hz)
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
        self._ready: deque[_Group] = deque()  # cut windows' chunks, built when handed out
        self._frames: dict[FrameName, dict[str, object]] = {}  # made once per run
        self._heap: list[tuple[int, int]] = []  # (slot, live bytes) not yet in a chunk
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
        for path, wall in walls.items():
            module = self._thread_of(path)
            if module is None:
                self.report.unattributed_seconds += sampler.seconds(wall)
                continue
            n = sampler.take(path, wall)
            if n:
                self._lane(module).push(path, n)
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
            chunk = self._build(self._ready.popleft())
            if chunk is not None:
                yield chunk

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
        room: dict[int, int] = {}  # module -> free slots before the end for rounded-off samples

        def has_room(path: int) -> bool:
            module = self._thread_of(path)
            if module is None:
                return False
            left = room.get(module)
            if left is None:
                left = self._lane(module).room(end_slot)
            room[module] = max(0, left - 1)
            return left > 0

        for path, n in self.sampler.round_off(has_room):
            self._lane(self._threads[path]).push(path, n)
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
        heap, self._heap = self._heap, []
        for i, group in enumerate(groups):
            self._ready.append(_Group(group, heap if i == 0 else [], self._end_slot))

    def _estimate(self, module: int, runs: list[tuple[int, int, int]]) -> int:
        """Bytes a thread's runs add to a chunk: its samples, and for each path a stack (its
        depth, up to the limit) and the leaf's frame (its names' lengths; frames shared with
        other stacks count again). O(1) per path: no stack is walked."""
        tables = self.tables
        limit = tables.limits.max_stack_depth
        tid = len(str(module))
        cost = 0
        for path in {path for _, path, _ in runs if path != IDLE}:
            node = tables.node(path)
            if node is not None:
                names = len(tables.string(node.function_id)) + 3 * len(tables.string(node.file_id))
                cost += 8 * min(node.depth + 1, limit) + names + 96
        return cost + sum(n for _, _, n in runs) * (SAMPLE_BYTES + tid)

    def _build(self, group: _Group) -> Chunk | None:
        """A queued group as a validated chunk: split in two (and queued again) when it came
        out over ``max_chunk_bytes`` with more than one thread; ``None`` when rejected or over
        the run's byte cap (reported)."""
        report = self.report
        if report.capped_at is not None:
            report.capped_samples += group.samples()
            report.heap_values_dropped += len(group.heap)
            return None
        built = self._emit(group)
        if built is None:
            return None
        data, count, finish = built
        cap = self.settings.max_session_chunk_bytes
        if len(data) > self.settings.max_chunk_bytes and len(group.threads) > 1:
            half = len(group.threads) // 2
            self._ready.extendleft(
                (
                    _Group(group.threads[half:], [], group.end_slot),
                    _Group(group.threads[:half], group.heap, group.end_slot),
                )
            )
            return self._build(self._ready.popleft())
        if report.chunk_bytes + len(data) > cap:
            report.capped_at = cap
            report.capped_samples += count
            report.heap_values_dropped += len(group.heap)
            return None
        return finish()

    def _emit(self, group: _Group):
        """Write and validate a group's chunk; ``(data, samples, finish)`` where ``finish()``
        counts it in the report and returns the :class:`Chunk`, or ``None`` when rejected."""
        tables = self.tables
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
        frames = FrameTable(tables, self._frames)
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
                self._time(min(slot for slot, _, _ in thread_runs)),
                self._time(max(slot + n - 1 for slot, _, n in thread_runs)),
            )
        chunk_id = self._new_id()
        head: dict = {
            "version": "2",
            "platform": PLATFORM,
            "profiler_id": self.profiler_id,
            "chunk_id": chunk_id,
            "client_sdk": dict(CLIENT_SDK),
        }
        if self.release:
            head["release"] = self.release
        if self.settings.environment:
            head["environment"] = self.settings.environment
        profile = {
            "frames": frames.frames,
            "stacks": stacks,
            "samples": [],  # written straight from the runs
            "thread_metadata": {tid: {"name": name} for tid, name in sorted(names.items())},
        }
        measurements = None
        if group.heap:
            measurements = {
                HEAP_MEASUREMENT: {
                    "unit": "byte",
                    "values": [
                        {"timestamp": self._time(slot), "value": value}
                        for slot, value in group.heap
                    ],
                }
            }
        data = chunk_json(head, profile, samples_json(runs, self.origin, self.hz), measurements)
        if len(data) > self.settings.max_chunk_bytes and len(threads) > 1:
            return data, count, lambda: None  # _build splits it: not validated, not counted
        payload = {**head, "profile": profile}
        if measurements is not None:
            payload["measurements"] = measurements
        problems = validate_chunk(payload, size=len(data), samples=SampleFacts(count, busy, spans))
        if problems:
            self.report.rejected.append((count, problems))
            self.report.heap_values_dropped += len(group.heap)
            return None

        def finish() -> Chunk:
            report = self.report
            report.chunks += 1
            report.samples += count
            report.busy_samples += sum(path_samples.values())
            report.threads.update(names)
            report.chunk_bytes += len(data)
            report.largest_chunk = max(report.largest_chunk, len(data))
            start = min(first for first, _ in spans.values())
            end = max(last for _, last in spans.values())
            report.first = start if report.first is None else min(report.first, start)
            report.last = end if report.last is None else max(report.last, end)
            report.covered_seconds += end - start
            for path, n in path_samples.items():
                self.path_samples[path] = self.path_samples.get(path, 0) + n
            if group.end_slot is not None:
                report.after_end_seconds += (
                    sum(
                        n
                        for _, _, lane_runs in threads
                        for slot, path, n in lane_runs
                        if path != IDLE and slot >= group.end_slot
                    )
                    / self.hz
                )
            return Chunk(
                data=data,
                index=report.chunks,
                chunk_id=chunk_id,
                start=start,
                end=end,
                samples=count,
                threads=tuple(sorted(names)),
                layout=Layout(
                    self.origin,
                    self.hz,
                    tuple((module, tuple(lane_runs)) for _, module, lane_runs in threads),
                    tuple(group.heap),
                ),
            )

        return data, count, finish

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

    def leftover_paths(self) -> dict[int, int]:
        """Samples per call path still waiting (after :meth:`finish`: the leftovers)."""
        out: dict[int, int] = {}
        for lane in self._lanes.values():
            for path, n in lane.queue:
                out[path] = out.get(path, 0) + n
        return out
