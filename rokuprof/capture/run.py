"""One app run: the asyncio shell around :class:`~rokuprof.capture.machine.RunMachine`.

:class:`RunCapture` owns one connected :class:`~rokuprof.device.stream.ProfilerStream`. It turns
what happens into the machine's events and carries out the actions the machine answers with:

* every body byte goes from the transport's ``data_received`` straight into the machine, whose
  :class:`~rokuprof.capture.machine.Archive` action is written to the archive in that same
  callback (no byte read from the socket waits in user space: a ``kill -9`` loses nothing that
  left the kernel), and the session directory is created the same way at the first byte;
* a ticker sends :class:`~rokuprof.capture.machine.Tick` when the machine asks for one (deltas
  for the chunk sink, ready chunks, the progress record), with a free-space reading;
* the stream's end (EOF, idle timeout, reset, an unreadable answer) and a stop request (its
  :class:`~rokuprof.capture.stop.StopCause`) are events too; the machine handles them in a
  worker thread (the last delta, the last chunks and the report can be much work for a stream
  with thousands of threads), with the stream closed first so nothing else touches it meanwhile,
  and the loop carries out its actions: other devices, ``/metrics`` and signals keep their
  latency;
* chunks and ``session.json`` are written in order by one writer task, off the event loop.

The tasks run in :class:`asyncio.TaskGroup` s: the run is over when the stream is (the machine
closes it when it ends the run for any other reason), which ends the group.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rokuprof.capture.chunks import ChunkSinkFactory
from rokuprof.capture.held import ArchiveHold
from rokuprof.capture.limits import Cut
from rokuprof.capture.machine import (
    Action,
    Archive,
    CloseStream,
    EndKind,
    Event,
    Facts,
    Finished,
    FreeSpace,
    Notify,
    OpenSession,
    Received,
    RunMachine,
    RunPlan,
    StopRequested,
    StreamEnded,
    Tick,
    WriteChunk,
    WriteRecord,
)
from rokuprof.capture.record import SessionRecord
from rokuprof.capture.run_writes import RunWrites
from rokuprof.capture.session import SessionFiles
from rokuprof.capture.status import CaptureObserver, CaptureStatus
from rokuprof.capture.stop import StopCause
from rokuprof.capture.vitals import SideData
from rokuprof.device.errors import DeviceError, DeviceTimeout, HttpStatusError, ProtocolError
from rokuprof.device.stream import ConnectionLost, ProfilerStream

if TYPE_CHECKING:
    from rokuprof.capture.config import CaptureConfig

log = logging.getLogger(__name__)


class NoData(DeviceError):
    """The connection ended before the device sent a single body byte (no run to record)."""


class _StreamOver(Exception):
    """Raised by the task that saw the stream end: ends the task group of the run."""


class RunCapture:
    """Capture one run from an open stream (see the module docstring)."""

    def __init__(
        self,
        stream: ProfilerStream,
        settings: CaptureConfig,
        status: CaptureStatus,
        observer: CaptureObserver,
        stop: asyncio.Event,
        *,
        identify: Callable[[], Awaitable[tuple[str, dict[str, object]]]],
        sink_factory: ChunkSinkFactory | None = None,
        extra_info: Callable[[], dict[str, dict[str, object]]] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.stream = stream
        self.settings = settings
        self.status = status
        self.observer = observer
        self.stop = stop  # an asyncio.Event, or a StopRequest that also knows its cause
        self.identify = identify
        self.sink_factory = sink_factory
        self.extra_info = extra_info
        self.clock = clock
        self.machine: RunMachine | None = None
        self.files: SessionFiles | None = None
        self.record: SessionRecord | None = None  # the final record, once the run is over
        self._pending: SessionFiles | None = None  # named, created at the first body byte
        self._nudge = asyncio.Event()  # the machine's wishes changed: the ticker looks again
        self._failure: BaseException | None = None  # raised by run() once the tasks are done
        self._no_session_error: DeviceError | None = None
        self._ending: asyncio.Future[list[Action]] | None = None  # the end, in a worker thread
        self._end_done = False  # its actions were carried out
        # A write refused for lack of space holds the run (capture/held.py)
        self._hold = ArchiveHold(settings.archive_limits, stream, clock, self._say, self._fail)
        self._writes = RunWrites(self._hold, self._on_chunk)  # chunks, session.json: in order

    @property
    def reader(self):
        return None if self.machine is None else self.machine.reader

    @property
    def cut(self) -> Cut | None:
        """The archive limit that ended the run, if one did."""
        return None if self.machine is None else self.machine.cut

    # -- the run -----------------------------------------------------------------------------

    async def run(self) -> tuple[SessionRecord, Path]:
        """Capture until the run ends; return the final record and the session directory.

        Raises :class:`NoData` when the connection ends before any body byte,
        :class:`HttpStatusError` / :class:`ProtocolError` when the answer is not a profile at
        all (both before a session exists), and what writing the archive raised (e.g. a full
        disk: the session then stays ``streaming`` for the caller to close).
        """
        try:
            # Who the device is, before reading: unread bytes wait in the kernel (the stream
            # reads nothing until it is asked to deliver).
            device_dir, device = await self.identify()
            self._start(device_dir, device)
            await self._race()
            if self._failure is not None:
                raise self._failure
            if self.record is None:
                if self._no_session_error is not None:
                    raise self._no_session_error
                raise NoData(self._no_data_text())
            return self.record, self.files.path
        except asyncio.CancelledError:
            await asyncio.shield(self._finish_now(StopCause.REQUESTED))
            raise
        finally:
            self.stream.close()
            if self.files is not None:  # after an error (e.g. disk full): never leak the file
                try:
                    await self.files.archive.close()
                except OSError as error:
                    log.warning("closing the archive of %s failed: %s", self.files.name, error)

    def _start(self, device_dir: str, device: dict[str, object]) -> None:
        s = self.settings
        self._pending = SessionFiles(s.out, device_dir, self.stream.connected_at)
        self.machine = RunMachine(
            RunPlan(
                session=self._pending.name,
                profiler_id=self._pending.profiler_id,
                device=device,
                start=self.stream.connected_at,
                settings=s,
            ),
            self.sink_factory,
        )
        self.stream.deliver(self._on_body)

    def _no_data_text(self) -> str:
        end = self.machine.end if self.machine is not None else None
        text = "the stream ended before any data"
        if end is not None and end[0] is not EndKind.CLOSED:
            text += f" ({end[1]})"
        return text

    async def _race(self) -> None:
        """Run the tasks of the run until the stream is over; the writer finishes last."""
        try:
            async with asyncio.TaskGroup() as group:
                group.create_task(self._write_loop())
                try:
                    async with asyncio.TaskGroup() as race:
                        race.create_task(self._watch_end())
                        race.create_task(self._watch_stop())
                        race.create_task(self._tick_loop())
                except* _StreamOver:
                    pass
                if self._failure is not None:  # the archive failed: the caller closes it
                    self._writes.put(Finished(None))
                elif not self.machine.ended or self._ending is not None:  # the run is over
                    await self._end(StreamEnded(EndKind.CLOSED, "the stream ended", self.clock()))
        except BaseExceptionGroup as group:  # one failure is enough to say (a full disk)
            raise group.exceptions[0] from None

    # -- events in ---------------------------------------------------------------------------

    def side(self, event: SideData) -> bool:
        """Vitals or a mark for the session (its record and next chunk); ``False`` when no
        session is open or the run is ending."""
        machine = self.machine
        if machine is None or not machine.open or machine.ended or self._ending is not None:
            return False
        self._apply(event)
        return True

    def _on_body(self, data: bytes) -> None:
        """Called from the transport's ``data_received``: bytes are archived before it returns."""
        self._apply(Received(data, self.clock()))

    def _apply(self, event: Event) -> None:
        machine = self.machine
        if isinstance(event, StopRequested | StreamEnded | Tick):
            for fact in self._facts():
                machine.handle(fact)
        was_open = machine.open
        self._carry_out(machine.handle(event), was_open)

    async def _end(self, event: StopRequested | StreamEnded) -> None:
        """End the run by ``event`` in a worker thread (once, whoever asks first; the others
        wait for it), then carry out its actions here. The stream is closed first: no byte
        arrives, and no tick runs, while the thread has the machine."""
        machine = self.machine
        if self._ending is None and self._hold.holding:
            # Held bytes: an ended stream waits for space (up to the hold), a stop tries once
            await self._hold.drain(self.files.archive, wait=isinstance(event, StreamEnded))
            if self._failure is not None:
                return
        if self._ending is None:
            if machine.ended:
                return
            for fact in self._facts():
                machine.handle(fact)
            self.stream.close()
            self.status.tables = None  # views stop reading the tables the thread finishes
            self._ending = asyncio.ensure_future(asyncio.to_thread(machine.handle, event))
        actions = await asyncio.shield(self._ending)
        if not self._end_done:
            self._end_done = True
            self._carry_out(actions, True)

    def _carry_out(self, actions: list[Action], was_open: bool) -> None:
        machine = self.machine
        for action in actions:
            self._execute(action)
        status = self.status
        status.bytes = machine.archived
        status.entries = machine.reader.entry_count
        status.last_data = self.stream.last_data
        if machine.open != was_open:
            self._nudge.set()

    def _facts(self) -> list[Facts]:
        if self.extra_info is None:
            return []
        return [Facts(section, values) for section, values in self.extra_info().items()]

    async def _watch_end(self) -> None:
        try:
            await self.stream.wait_end(self.settings.idle_timeout)
        except DeviceTimeout as error:
            await self._ended(EndKind.IDLE, error)
        except ConnectionLost as error:
            await self._ended(EndKind.LOST, error)
        except (HttpStatusError, ProtocolError) as error:
            if not self.machine.open:
                self._no_session_error = error  # not a profile at all: no session
            await self._ended(EndKind.PROTOCOL, error)
        except DeviceError as error:
            await self._ended(EndKind.LOST, error)
        except Exception as error:  # what archiving raised in the callback (e.g. a full disk)
            self._failure = error
        else:
            problem = self.stream.response.eof_problem()
            if problem:
                await self._ended(EndKind.CUT_SHORT, problem)
            else:
                await self._ended(EndKind.CLOSED, "the device closed the stream")
        raise _StreamOver

    async def _ended(self, kind: EndKind, error: Exception | str) -> None:
        if self._failure is None:
            await self._end(StreamEnded(kind, str(error), self.clock()))

    async def _watch_stop(self) -> None:
        await self.stop.wait()
        cause = getattr(self.stop, "cause", None) or StopCause.REQUESTED
        await self._end(StopRequested(cause, self.clock()))

    async def _tick_loop(self) -> None:
        machine = self.machine
        while not machine.ended and self._ending is None:
            due = machine.next_tick()
            retry = self._hold.retry_at()
            if retry is not None:
                due = retry if due is None else min(due, retry)
            wait = None if due is None else max(0.0, due - self.clock())
            self._nudge.clear()
            try:
                async with asyncio.timeout(wait):
                    await self._nudge.wait()
                continue  # the machine's wishes changed: look again
            except TimeoutError:
                pass
            if self._ending is not None:  # a worker thread is ending the run
                return
            if retry is not None and self.clock() >= retry:
                self._hold.retry(self.files.archive)
                if self._failure is not None:
                    return
            began = time.perf_counter()
            self._free_space()
            self._apply(Tick(self.clock()))
            status = self.status
            status.live_heap_bytes = machine.reader.tables.live_bytes
            status.worst_tick_seconds = max(status.worst_tick_seconds, time.perf_counter() - began)

    def _free_space(self) -> None:
        if not self.settings.archive_limits.min_free_bytes:
            return
        try:
            free = self.settings.free_space(Path(self.settings.out))
        except OSError:
            return  # cannot tell: the writes will say
        self.machine.handle(FreeSpace(free))

    # -- actions out -------------------------------------------------------------------------

    def _execute(self, action: Action) -> None:
        """Carry out one action now: archive writes and notices at once, files in order."""
        match action:
            case Archive(data):
                if self._hold.write(self.files.archive, data, self.files.name):
                    self._nudge.set()  # held: the ticker retries
            case OpenSession():
                self._open_session()
            case WriteChunk() | WriteRecord() | Finished():
                self._writes.put(action)
            case Notify(what, level, text, detail):
                self._notify(what, level, text, detail)
            case CloseStream():
                self.stream.close()

    def _say(self, level: str, text: str) -> None:
        self.observer.on_message(self.status, level, text)

    def _fail(self, error: OSError) -> None:
        """The full-disk hold gave up: the run ends by ``error`` (truncated, saying why)."""
        if self._failure is None:
            self._failure = error
        self.stream.fail(error)

    def _open_session(self) -> None:
        files = self._pending
        files.create_now()  # no suspension: directory, archive and first bytes at once
        self.files = self._writes.files = files
        st = self.status
        st.session, st.session_path = files.name, files.path
        st.bytes = st.entries = st.chunks = st.live_heap_bytes = 0
        st.tables = self.machine.reader.tables
        st.app = ""

    def _notify(self, what: str, level: str, text: str, detail: str) -> None:
        if what == "session_start":
            self.observer.on_session_start(self.status)
        elif what == "state":
            self.status.app = self.machine.app
            self.observer.on_state(self.status)
        else:
            if detail:
                log.error("%s\n%s", text, detail)
            self.observer.on_message(self.status, level, text)

    async def _write_loop(self) -> None:
        await self._writes.loop()
        self.record = self._writes.record

    def _on_chunk(self, files: SessionFiles, path: Path) -> None:
        self.status.chunks = files.chunks_written
        self.observer.on_chunk(self.status, path)

    async def _finish_now(self, cause: StopCause) -> None:
        """Cancelled: end the run here and write what it has (chunks, the final record)."""
        if self._hold.holding and self.files is not None:
            self._hold.retry(self.files.archive)  # held bytes: one more try
        if self._ending is not None:  # a worker thread was ending it: its actions, once
            pending = [] if self._end_done else await self._ending
            self._end_done = True
        elif self.machine is None or self.machine.ended:
            pending = []
        else:
            pending = self.machine.handle(StopRequested(cause, self.clock()))
        await self._writes.flush(pending)
        if self._writes.record is not None:
            self.record = self._writes.record
