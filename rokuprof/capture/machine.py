"""One app run's capture as a pure state machine: events in, actions out.

No asyncio, no files, no clock: every event carries its time, and the machine answers each with
the actions the shell (:mod:`rokuprof.capture.run`) must carry out, in order. The same events
always give the same actions, so the hardest behaviour of a capture (a run starting, stalling,
being stopped, cut by a limit, ending early, failing) is tested by feeding events.

Events: :class:`Received` (body bytes and their arrival), :class:`Tick` (time passes),
:class:`FreeSpace` (a reading of the output file system), :class:`Facts` (what ECP or the console
said, for ``session.json``), :class:`~rokuprof.capture.vitals.SideData` (vitals and marks, for
``session.json`` and the chunks), :class:`StopRequested` (with its :class:`StopCause`) and
:class:`StreamEnded` (with its :class:`EndKind`).

Actions: :class:`OpenSession` (create the session directory and archive),
:class:`Archive` (append bytes to the archive: always before anything else sees them),
:class:`WriteChunk`, :class:`WriteRecord` (``session.json``), :class:`Notify` (for views, logs and
metrics), :class:`CloseStream` (stop reading) and, last, :class:`Finished`.

The machine owns the decoder and tables (:class:`ProfileReader`), the chunk sink's timing, the
archive limits, the record, and the one classification of how the run ended: ``complete``,
``truncated``, ``interrupted`` or ``failed``, with one reason.
"""

from __future__ import annotations

import copy
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from rokuprof.capture.chunks import ChunkSink, ChunkSinkFactory, RunContext
from rokuprof.capture.limits import ArchiveGuard, Cut
from rokuprof.capture.record import (
    COMPLETE,
    FAILED,
    INTERRUPTED,
    TRUNCATED,
    SessionRecord,
    header_facts,
)
from rokuprof.capture.stop import StopCause
from rokuprof.capture.vitals import SideData
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.frames import release_name

if TYPE_CHECKING:
    from rokuprof.capture.config import CaptureConfig

#: Chunk bytes one tick builds at most; a window with more (many busy threads) is handed out
#: over the next ticks.
CHUNK_BYTES_PER_TICK = 16 * 1024 * 1024

# -- events --------------------------------------------------------------------------------


class EndKind(StrEnum):
    """How the stream ended, as ``session.json``'s error ``kind`` names it."""

    CLOSED = "closed"  # the body ended properly (EOF, its Content-Length, a chunked body's end)
    CUT_SHORT = "connection_closed"  # EOF inside the head, a Content-Length or a chunked body
    IDLE = "idle_timeout"  # no byte for the idle timeout
    LOST = "connection_lost"  # reset, unreachable
    PROTOCOL = "protocol"  # the answer stopped being readable (e.g. a broken chunked body)


@dataclass(frozen=True)
class Received:
    data: bytes = field(repr=False)
    at: float = 0.0  # Unix seconds of arrival


@dataclass(frozen=True)
class Tick:
    now: float


@dataclass(frozen=True)
class FreeSpace:
    free: int  # bytes an unprivileged writer may still use on the output file system


@dataclass(frozen=True)
class Facts:
    section: str  # a session.json section: "app" or "profiler"
    values: dict[str, object]


@dataclass(frozen=True)
class StopRequested:
    cause: StopCause
    at: float


@dataclass(frozen=True)
class StreamEnded:
    kind: EndKind
    message: str
    at: float


Event = Received | Tick | FreeSpace | Facts | SideData | StopRequested | StreamEnded

# -- actions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenSession:
    """Create the session directory and its archive, now (before the first :class:`Archive`)."""


@dataclass(frozen=True)
class Archive:
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class WriteChunk:
    data: bytes = field(repr=False)  # a Sentry V2 chunk's JSON


@dataclass(frozen=True)
class WriteRecord:
    record: SessionRecord  # a snapshot: later events do not change it


@dataclass(frozen=True)
class Notify:
    """Something a view, the log or metrics may show: ``session_start``, ``state`` (the
    header told who the app is) or ``message`` (``level`` and ``text``; ``detail`` is a
    traceback worth logging)."""

    what: str
    level: str = ""
    text: str = ""
    detail: str = ""


@dataclass(frozen=True)
class CloseStream:
    """Stop reading: the run ends now."""


@dataclass(frozen=True)
class Finished:
    """The run is over. ``record`` is ``None`` when no body byte ever arrived (no session)."""

    record: SessionRecord | None
    cause: str = ""  # without a session: why the stream ended


Action = OpenSession | Archive | WriteChunk | WriteRecord | Notify | CloseStream | Finished


# -- the machine ---------------------------------------------------------------------------


@dataclass(frozen=True)
class RunPlan:
    """What the machine knows before the first byte: the session's names, and the capture's
    settings (the one :class:`~rokuprof.capture.config.CaptureConfig` the options or the
    config file made; the machine reads its output directory, delta interval, limits and chunk
    settings)."""

    session: str
    profiler_id: str
    device: dict[str, object]
    start: float  # Unix seconds: when the stream connected
    settings: CaptureConfig

    @property
    def where(self) -> Path:
        """The output directory, for messages."""
        return Path(self.settings.out)

    @property
    def record_seconds(self) -> float:
        """How often session.json is rewritten while the run goes on: once a chunk window."""
        return self.settings.chunk_settings.chunk_seconds


class RunMachine:
    """The capture of one run (see the module docstring)."""

    def __init__(
        self,
        plan: RunPlan,
        sink_factory: ChunkSinkFactory | None = None,
        reader: ProfileReader | None = None,
    ) -> None:
        self.plan = plan
        self.sink_factory = sink_factory
        self.reader = reader if reader is not None else ProfileReader(plan.settings.limits)
        self.record: SessionRecord | None = None
        self.sink: ChunkSink | None = None
        self.archived = 0
        self.chunks = 0
        self.cut: Cut | None = None
        self.stop_cause: StopCause | None = None
        self.end: tuple[EndKind, str] | None = None
        self.ended = False
        self.footer_arrival: float | None = None  # Unix seconds: live, the run ends there
        self._now = plan.start
        self._free: int | None = None
        self._facts: dict[str, dict[str, object]] = {}
        self._next_delta = self._next_record = 0.0
        self.guard = ArchiveGuard(
            plan.settings.archive_limits, self._free_space, plan.where, clock=lambda: self._now
        )

    # -- what the shell asks -------------------------------------------------------------

    @property
    def open(self) -> bool:
        """A session exists (a body byte arrived)."""
        return self.record is not None

    def next_tick(self) -> float | None:
        """When the machine next wants a :class:`Tick` (Unix seconds), ``None``: not now."""
        if self.record is None or self.ended:
            return None
        return min(self._next_delta, self._next_record)

    @property
    def app(self) -> str:
        header = self.reader.header
        return "" if header is None else f"{header.target_name} {header.target_version}".strip()

    # -- events --------------------------------------------------------------------------

    def handle(self, event: Event) -> list[Action]:
        """The actions ``event`` calls for, in the order they must be carried out."""
        if self.ended:
            return []
        match event:
            case Received(data, at):
                return self._received(data, at)
            case Tick(now):
                self._advance(now)
                return self._tick()
            case FreeSpace(free):
                self._free = free
                return []
            case Facts(section, values):
                self._facts.setdefault(section, {}).update(values)
                if self.record is not None:
                    getattr(self.record, section).update(values)
                return []
            case SideData(fields, measures):  # vitals, marks: in the record and the next chunk
                actions: list[Action] = []
                for name, value in fields.items() if self.record is not None else ():
                    setattr(self.record, name, value)
                measure = getattr(self.sink, "measure", None)  # None: the sink takes none
                for m in measures:
                    self._sink_call("add a measurement", actions, measure, m)
                return actions
            case StopRequested(cause, at):
                self.stop_cause = cause
                self._advance(at)
                return self._finish()
            case StreamEnded(kind, message, at):
                self.end = (kind, message)
                self._advance(at)
                return self._finish()
        raise TypeError(f"not a run event: {event!r}")

    def _advance(self, at: float) -> None:
        self._now = max(self._now, at)

    def _free_space(self) -> int:
        return self._free if self._free is not None else 1 << 62  # not read yet: no floor

    # -- bytes ---------------------------------------------------------------------------

    def _received(self, data: bytes, at: float) -> list[Action]:
        self._advance(at)
        actions: list[Action] = []
        first = self.record is None
        if first:
            actions.append(OpenSession())
            self._open()
        room = self.guard.room(self.archived, self._error_offset())
        if room is not None and len(data) > room:
            data = data[:room]
        if data:
            actions.append(Archive(data))
            self.archived += len(data)
            self._decode(data, actions)
        if first:
            actions.append(WriteRecord(self._snapshot()))
            actions.append(Notify("session_start"))
        cut = self.guard.check(self.archived, self._error_offset())
        if cut is not None:
            self.cut = cut
            actions.append(Notify("message", "warning", cut.message))
            actions += self._finish()
        return actions

    def _open(self) -> None:
        plan = self.plan
        self.record = SessionRecord(
            session=plan.session,
            profiler_id=plan.profiler_id,
            device=dict(plan.device),
            start=plan.start,
            environment=plan.settings.chunk_settings.environment,
            release=plan.settings.chunk_settings.release,
        )
        for section, values in self._facts.items():
            getattr(self.record, section).update(values)
        self._next_delta = self._now + plan.settings.delta_seconds
        self._next_record = self._now + plan.record_seconds

    def _error_offset(self) -> int | None:
        error = self.reader.error
        return None if error is None else error.offset

    def _decode(self, data: bytes, actions: list[Action]) -> None:
        reader = self.reader
        if reader.error is not None:
            return  # corrupt: the bytes are archived (within the limit), no longer decoded
        had_header = reader.header is not None
        try:
            reader.feed(data)  # after the footer: trailing bytes, counted by the decoder
        except Exception as error:  # a decoder bug must not cost the raw capture
            self._bug("decoder", "decode the stream", error, actions)
            return
        if reader.footer is not None and self.footer_arrival is None:
            self.footer_arrival = self._now
        if not had_header and reader.header is not None:
            self._on_header(actions)

    def _on_header(self, actions: list[Action]) -> None:
        header, rec, plan = self.reader.header, self.record, self.plan
        rec.app.update(name=header.target_name, version=header.target_version)
        chunks = plan.settings.chunk_settings
        rec.release = chunks.release or release_name(header)  # as the chunks say
        rec.profiler.update(header_facts(header))
        actions.append(Notify("state"))
        if self.sink_factory is None:
            return
        context = RunContext(
            profiler_id=rec.profiler_id,
            tables=self.reader.tables,
            header=header,
            start=rec.start,
            device=rec.device,
        )
        self.sink = self._sink_call("create the chunk builder", actions, self.sink_factory, context)

    # -- time ----------------------------------------------------------------------------

    def _data_time(self) -> float:
        """The time of data taken now: never after the footer arrived (the run's end)."""
        now = self._now
        return now if self.footer_arrival is None else min(now, self.footer_arrival)

    def _tick(self) -> list[Action]:
        if self.record is None:
            return []
        actions: list[Action] = []
        now, plan = self._now, self.plan
        if now >= self._next_delta:
            self._next_delta = max(self._next_delta + plan.settings.delta_seconds, now)
            self._add_delta(actions)
            self._ready_chunks(actions)  # a window's chunk, as soon as time passed its end
        if now >= self._next_record:
            self._next_record = max(self._next_record + plan.record_seconds, now)
            actions.append(WriteRecord(self._snapshot()))
        return actions

    # -- chunks --------------------------------------------------------------------------

    def _sink_call(self, what: str, actions: list[Action], call: Callable, *args: object):
        """A chunk-sink call; a failure there ends chunk building, never the raw capture."""
        if call is None:
            return None
        try:
            return call(*args)
        except Exception as error:
            self._bug("chunks", what, error, actions)
            self.sink = None
            return None

    def _bug(self, kind: str, what: str, error: Exception, actions: list[Action]) -> None:
        message = f"could not {what}: {error.__class__.__name__}: {error}"
        self.record.add_error(kind, message)
        actions.append(Notify("message", "error", message, detail=traceback.format_exc()))

    def _add_delta(self, actions: list[Action]) -> None:
        if self.sink is None:
            return
        delta = self.reader.tables.take_walls()
        self._sink_call("add a delta", actions, self.sink.add, delta, self._data_time())

    def _ready_chunks(self, actions: list[Action]) -> None:
        """The chunks ready by now, up to :data:`CHUNK_BYTES_PER_TICK` (the sink builds them
        one at a time; the rest wait for the next tick), so one tick's work and memory stay
        bounded however many threads a window has."""
        if self.sink is None:
            return
        chunks = self._sink_call("build chunks", actions, self._take_ready, self._data_time())
        self._emit(chunks or [], actions)

    def _take_ready(self, now: float) -> list[bytes]:
        taken: list[bytes] = []
        spent = 0
        for data in self.sink.ready(now):
            taken.append(data)
            spent += len(data)
            if spent >= CHUNK_BYTES_PER_TICK:
                break
        return taken

    def _emit(self, chunks: list[bytes], actions: list[Action]) -> None:
        for chunk in chunks:
            self.chunks += 1
            actions.append(WriteChunk(chunk))

    # -- the end -------------------------------------------------------------------------

    def _snapshot(self) -> SessionRecord:
        rec = self.record
        rec.bytes = self.archived
        rec.entries = self.reader.entry_count
        rec.chunks = self.chunks
        return copy.deepcopy(rec)

    def _finish(self) -> list[Action]:
        self.ended = True
        if self.record is None:
            cause = self.end[1] if self.end is not None else ""
            return [CloseStream(), Finished(None, cause)]
        actions: list[Action] = [CloseStream()]
        reader, rec = self.reader, self.record
        reader.close()
        end = self._data_time()  # when the footer arrived, for a complete run
        self._add_delta(actions)
        if self.sink is not None:
            result = self._sink_call("finish the chunks", actions, self.sink.finish, end)
            if result is not None:
                chunks, report = result
                rec.chunk_report = dict(report or {})
                self._emit(chunks, actions)
        rec.end = end
        rec.warnings = list(reader.warnings)
        if reader.footer is not None:
            rec.profiler["end_ms"] = reader.footer.end_ms
            if reader.footer.trailing_bytes:
                rec.warnings.append(
                    f"{reader.footer.trailing_bytes} bytes after the footer were archived "
                    "but not decoded"
                )
        self._classify(rec)
        final = self._snapshot()
        actions += [WriteRecord(final), Finished(final)]
        return actions

    def _classify(self, rec: SessionRecord) -> None:
        """The one place that says how the run ended, and why."""
        reader, cut, end = self.reader, self.cut, self.end
        if end is not None and end[0] is not EndKind.CLOSED:
            rec.add_error(str(end[0]), end[1])
        if cut is not None:
            rec.add_error("limit", cut.message, limit=cut.limit)
        problem = reader.problem() or "nothing was lost"
        if reader.error is not None:
            error = reader.error
            rec.add_error("decoder", error.message, offset=error.offset, type=error.kind)
            rec.status = FAILED
            rec.end_reason = f"corrupt data at byte {error.offset}: {error.message}"
            if cut is not None:
                rec.end_reason += f"; {cut.message}"
        elif cut is not None:
            rec.status = cut.status
            rec.end_reason = f"{cut.message}; {problem}"
        elif end is not None and end[0] is EndKind.PROTOCOL and not reader.complete:
            rec.status = FAILED
            rec.end_reason = f"the answer could not be read: {end[1]}"
        elif reader.complete:
            rec.status = COMPLETE
            rec.end_reason = "the device sent the whole profile and closed the stream"
        elif self.stop_cause is not None:
            rec.status = INTERRUPTED
            rec.end_reason = f"{self.stop_cause.describe()} during the run; {problem}"
        else:
            rec.status = TRUNCATED
            cause = end[1] if end is not None else "the run ended"
            rec.end_reason = f"{cause}; {problem}"
