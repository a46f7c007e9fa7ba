"""What a Perfetto app trace holds once read: tracks (threads), slices, flows, clocks (pure).

Times are the trace clock's nanoseconds. A slice still open when the trace ended has
``end is None``: it is never summed; :meth:`Slice.lower_bound` gives the least it lasted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

#: Perfetto's builtin clocks (``BuiltinClock``) a Roku trace's snapshots carry.
CLOCK_REALTIME = 1
CLOCK_BOOTTIME = 6


@dataclass(slots=True)
class Track:
    """A timeline of slices: a thread (``tid`` set) or a named track."""

    uuid: int
    name: str
    pid: int | None = None
    tid: int | None = None


@dataclass(slots=True)
class Slice:
    """One slice (or an instant: ``instant`` true, ``end == start``) on a track. ``depth`` is
    its nesting on the track (0 at the top); ``parent`` the index of the slice it nests in."""

    track: int
    name: str
    start: int
    end: int | None
    depth: int
    parent: int | None
    args: dict[str, object] = field(default_factory=dict)
    instant: bool = False

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def duration(self) -> int:
        """Nanoseconds; only for a finished slice."""
        if self.end is None:
            raise ValueError(f"slice {self.name!r} never ended: it has no duration")
        return self.end - self.start

    def lower_bound(self, trace_end: int) -> int:
        """The least this slice lasted: its duration, or up to the end of the trace."""
        return (self.end if self.end is not None else max(trace_end, self.start)) - self.start


@dataclass
class Trace:
    """A trace as read so far: see :class:`~rokuprof.trace.reader.TraceReader`."""

    tracks: dict[int, Track] = field(default_factory=dict)
    slices: list[Slice] = field(default_factory=list)
    #: flow arrows between slices, by index: (from, to), in the order they were read
    flows: list[tuple[int, int]] = field(default_factory=list)
    #: each clock snapshot: clock ID -> its time (ns) at the same moment
    clock_snapshots: list[dict[int, int]] = field(default_factory=list)
    #: the clock the trace's timestamps are in (a snapshot may say; BOOTTIME otherwise)
    trace_clock: int = CLOCK_BOOTTIME
    packets: int = 0
    bytes_read: int = 0
    #: chunks the tracing service says it lost (``trace_stats``), and packets marked as
    #: following a loss (``previous_packet_dropped``)
    lost_chunks: int = 0
    loss_marks: int = 0
    #: packets skipped because they needed interned names the trace never sent
    skipped_packets: int = 0
    #: slice ends with no slice open on their track
    unmatched_ends: int = 0
    #: what was wrong or cut, one line each, naming where
    problems: list[str] = field(default_factory=list)
    #: a reason the trace could not be read past some byte (``None``: read to its end)
    error: str | None = None
    #: bytes held at the end that never made a whole packet
    trailing_bytes: int = 0

    @property
    def first_ts(self) -> int | None:
        return min((s.start for s in self.slices), default=None)

    @property
    def last_ts(self) -> int | None:
        """The latest time the trace shows (a slice's end, or its start if it never ended)."""
        return max((s.end if s.end is not None else s.start for s in self.slices), default=None)

    def wall_offset_ns(self) -> int | None:
        """Add to a trace timestamp for Unix wall time (ns), from the first snapshot holding
        both the trace's clock and REALTIME; ``None`` without one."""
        for snapshot in self.clock_snapshots:
            if CLOCK_REALTIME in snapshot and self.trace_clock in snapshot:
                return snapshot[CLOCK_REALTIME] - snapshot[self.trace_clock]
        return None

    def thread_name(self, track: int) -> str:
        t = self.tracks.get(track)
        return t.name if t is not None else f"track {track}"

    def children(self) -> list[list[int]]:
        """Per slice, the indexes of the slices directly inside it."""
        out: list[list[int]] = [[] for _ in self.slices]
        for i, s in enumerate(self.slices):
            if s.parent is not None:
                out[s.parent].append(i)
        return out
