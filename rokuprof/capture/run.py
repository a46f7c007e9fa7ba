"""One app run: stream -> raw archive -> decoder/tables -> chunk sink -> session directory.

:class:`RunCapture` owns one connected :class:`~rokuprof.device.stream.ProfilerStream`. It
creates the session directory when the first body byte arrives, writes every byte to the archive
before decoding it, gives the chunk sink a delta every ``delta_seconds``, writes ready chunks
every ``chunk_seconds`` and, when the run ends, finishes everything and writes the final
``session.json``:

* ``complete``: the stream reached its footer;
* ``failed``: the decoder found corrupt data (its offset and message are in ``errors``), or the
  answer was not a profile; after corrupt data the bytes are still archived, up to
  ``max_bytes_after_error``, then the connection is closed;
* ``interrupted``: the stop trigger fired during the run;
* ``truncated``: the run ended early (device closed or reset the connection, idle timeout), or
  an archive limit ended it (``max_session_bytes``, ``min_free_bytes``; see
  :mod:`rokuprof.capture.limits`; the limit is the ``limit`` of its ``errors`` entry).

The archive is written before anything else looks at the bytes, so it is always a prefix of what
the device sent, whatever goes wrong afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.bsprof.model import Limits
from rokuprof.capture.chunks import ChunkSink, ChunkSinkFactory, RunContext
from rokuprof.capture.limits import ArchiveGuard, ArchiveLimits, Cut, free_bytes
from rokuprof.capture.session import (
    COMPLETE,
    FAILED,
    INTERRUPTED,
    TRUNCATED,
    SessionFiles,
    SessionRecord,
)
from rokuprof.capture.status import CaptureObserver, CaptureStatus
from rokuprof.device.errors import DeviceError, DeviceTimeout, HttpStatusError, ProtocolError
from rokuprof.device.stream import ConnectionLost, ProfilerStream
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.chunk import ChunkSettings
from rokuprof.sentry.frames import release_name

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSettings:
    """The knobs of one run's capture (a subset of the capture config)."""

    out: Path
    chunk_seconds: float = 60.0
    delta_seconds: float = 1.0
    idle_timeout: float = 120.0
    environment: str | None = None
    release: str | None = None
    limits: Limits = field(default_factory=Limits)  # bounds on what a stream may make us hold
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    free_space: Callable[[Path], int] = free_bytes  # bytes free on a path's file system


class NoData(DeviceError):
    """The connection ended before the device sent a single body byte (no run to record)."""


class RunCapture:
    """Capture one run from an open stream (see the module docstring)."""

    def __init__(
        self,
        stream: ProfilerStream,
        settings: RunSettings,
        status: CaptureStatus,
        observer: CaptureObserver,
        stop: asyncio.Event,
        *,
        identify: Callable[[], Awaitable[tuple[str, dict[str, object]]]],
        sink_factory: ChunkSinkFactory | None = None,
        extra_info: Callable[[], dict[str, dict[str, object]]] | None = None,
    ) -> None:
        self.stream = stream
        self.settings = settings
        self.status = status
        self.observer = observer
        self.stop = stop
        self.identify = identify
        self.sink_factory = sink_factory
        self.extra_info = extra_info
        self.reader = ProfileReader(settings.limits)
        self.files: SessionFiles | None = None
        self.record: SessionRecord | None = None
        self.sink: ChunkSink | None = None
        self.stopped = False
        self._end_error: tuple[str, str] | None = None  # (kind, message) of an early end
        self._end_reason = ""
        self._protocol_failed = False
        self._stop_waiter: asyncio.Future | None = None
        self.guard: ArchiveGuard | None = None
        self.cut: Cut | None = None  # the archive limit that ended the run, if one did
        self.footer_arrival: float | None = None  # Unix seconds: live, the run ends there

    # -- the run -----------------------------------------------------------------------------

    async def run(self) -> tuple[SessionRecord, Path]:
        """Capture until the run ends; return the final record and the session directory.

        Raises :class:`NoData` when the connection ends before any body byte,
        :class:`HttpStatusError` / :class:`ProtocolError` when the answer is not a profile at
        all (both before a session exists).
        """
        self._stop_waiter = asyncio.ensure_future(self.stop.wait())
        try:
            # Who the device is, before reading: unread bytes wait in the kernel, and from the
            # first read on every byte is archived before the next await (kill -9 safe).
            identity = await self.identify()
            first = await self._read()
            if not first:
                raise NoData(
                    "the stream ended before any data"
                    + (f" ({self._end_error[1]})" if self._end_error else "")
                )
            await self._open_session(identity, first)
            await self._stream_until_end()
            return await self._finish()
        except asyncio.CancelledError:
            if self.record is not None:
                self.stopped = True
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._finish())
            raise
        finally:
            self._stop_waiter.cancel()
            if self.files is not None:  # after an error (e.g. disk full): never leak the file
                with contextlib.suppress(Exception):
                    await self.files.archive.close()

    async def _read(self) -> bytes:
        """Next body bytes; ``b""`` at the end (reason kept), on stop, or on an early end."""
        if self.stop.is_set():
            self.stopped = True
            return b""
        if self.cut is not None:
            return b""
        read = asyncio.ensure_future(self.stream.read(self.settings.idle_timeout))
        try:
            done, _ = await asyncio.wait(
                {read, self._stop_waiter}, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            read.cancel()
            raise
        if read not in done:
            read.cancel()
            with contextlib.suppress(asyncio.CancelledError, DeviceError):
                await read
            self.stopped = True
            self._end_reason = "stopped by the user"
            return b""
        try:
            data = read.result()
        except DeviceTimeout as error:
            self._end_error = ("idle_timeout", str(error))
            return b""
        except ConnectionLost as error:
            self._end_error = ("connection_lost", str(error))
            return b""
        except (HttpStatusError, ProtocolError) as error:
            if self.record is None:
                raise  # not a profile at all: no session
            self._end_error = ("protocol", str(error))  # e.g. a broken chunked body
            self._protocol_failed = True
            return b""
        if not data:
            problem = self.stream.response.eof_problem()
            if problem:
                self._end_error = ("connection_closed", problem)
            else:
                self._end_reason = "the device closed the stream"
        return data

    async def _open_session(self, identity: tuple[str, dict[str, object]], first: bytes) -> None:
        device_dir, device = identity
        start = self.stream.connected_at
        files = SessionFiles(self.settings.out, device_dir, start)
        await files.create()  # no suspension: directory, archive and first bytes at once
        self.files = files
        out = self.settings.out
        self.guard = ArchiveGuard(
            self.settings.archive_limits, lambda: self.settings.free_space(out), out
        )
        self.record = SessionRecord(
            session=files.name,
            profiler_id=files.profiler_id,
            device=device,
            start=start,
            environment=self.settings.environment or ChunkSettings().environment,
            release=self.settings.release,
        )
        st = self.status
        st.session, st.session_path = files.name, files.path
        st.bytes = st.entries = st.chunks = st.live_heap_bytes = 0
        st.tables = self.reader.tables
        st.app = ""
        await self._take(first)
        await files.write_record(self.record)
        self.observer.on_session_start(st)

    def _error_offset(self) -> int | None:
        error = self.reader.error
        return None if error is None else error.offset

    async def _take(self, data: bytes) -> None:
        """Archive first (within the archive limits), then decode."""
        archive = self.files.archive
        room = self.guard.room(archive.bytes, self._error_offset())
        if room is not None and len(data) > room:
            data = data[:room]
        await archive.write(data)
        self.status.bytes = archive.bytes
        self._decode(data)
        cut = self.guard.check(archive.bytes, self._error_offset())
        if cut is not None and self.cut is None:
            self.cut = cut
            self.observer.on_message(self.status, "warning", cut.message)

    def _decode(self, data: bytes) -> None:
        if self.reader.error is None and self.reader.status != "complete":
            had_header = self.reader.header is not None
            self.reader.feed(data)
            self.status.entries = self.reader.entry_count
            if self.reader.footer is not None:
                self.footer_arrival = time.time()
            if not had_header and self.reader.header is not None:
                self._on_header()
        elif self.reader.status == "complete":
            self.reader.feed(data)  # trailing bytes after the footer: counted by the decoder

    def _on_header(self) -> None:
        header = self.reader.header
        self.status.app = f"{header.target_name} {header.target_version}".strip()
        self.record.app = {"name": header.target_name, "version": header.target_version}
        self.record.release = self.settings.release or release_name(header)  # as the chunks say
        self.record.profiler = {
            "format_version": header.version,
            "line_data": header.line_data,
            "memory_ops": header.memory_ops,
            "requested_sample_ratio": header.requested_sample_ratio,
            "actual_sample_ratio": header.actual_sample_ratio,
            "start_ms": header.start_ms,
            "vendor": header.vendor,
            "model": header.model,
            "firmware": header.firmware,
            "supplemental": header.supplemental,
        }
        self.observer.on_state(self.status)
        if self.sink_factory is None:
            return
        context = RunContext(
            profiler_id=self.record.profiler_id,
            tables=self.reader.tables,
            header=header,
            start=self.record.start,
            environment=self.settings.environment,
            release=self.settings.release,
            device=self.record.device,
        )
        self._guard(
            "create the chunk builder", lambda: setattr(self, "sink", self.sink_factory(context))
        )

    async def _pump(self) -> None:
        while data := await self._read():
            await self._take(data)

    async def _stream_until_end(self) -> None:
        loop = asyncio.get_running_loop()
        pump = asyncio.ensure_future(self._pump())
        s = self.settings
        next_delta = loop.time() + s.delta_seconds
        next_chunk = loop.time() + s.chunk_seconds
        try:
            while not pump.done():
                wait = max(0.0, min(next_delta, next_chunk) - loop.time())
                await asyncio.wait({pump}, timeout=wait)
                now = loop.time()
                if now >= next_delta:
                    next_delta = max(next_delta + s.delta_seconds, now)
                    self._add_delta()
                    await self._write_ready()  # a window's chunk, as soon as data passed it
                if now >= next_chunk:
                    next_chunk = max(next_chunk + s.chunk_seconds, now)
                    await self._write_ready()
                    await self.files.write_record(self._progress_record())
            await pump
        except BaseException:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump
            raise

    # -- chunks ------------------------------------------------------------------------------

    def _guard(self, what: str, action: Callable[[], object]) -> object:
        """Run a chunk-sink call; a failure there must not stop the raw capture."""
        try:
            return action()
        except Exception as error:  # a bug in the builder: keep capturing bytes
            log.exception("chunk builder failed to %s", what)
            self.sink = None
            message = f"could not {what}: {error.__class__.__name__}: {error}"
            self.record.add_error("chunks", message)
            self.observer.on_message(self.status, "error", message)
            return None

    def _now(self) -> float:
        """The time of data taken now: never after the footer arrived (the run's end)."""
        now = time.time()
        return now if self.footer_arrival is None else min(now, self.footer_arrival)

    def _add_delta(self) -> None:
        tables = self.reader.tables
        self.status.live_heap_bytes = tables.live_bytes
        if self.sink is None:
            return
        delta = tables.take_delta(lines=False)
        arrival = self._now()
        self._guard("add a delta", lambda: self.sink.add(delta, arrival))

    async def _write_chunks(self, chunks: list[bytes]) -> None:
        for chunk in chunks:
            path = await self.files.write_chunk(chunk)
            self.status.chunks = self.files.chunks_written
            self.observer.on_chunk(self.status, path)

    async def _write_ready(self) -> None:
        if self.sink is None:
            return
        now = self._now()
        chunks = self._guard("build chunks", lambda: self.sink.ready(now))
        await self._write_chunks(chunks or [])

    # -- the end -----------------------------------------------------------------------------

    def _progress_record(self) -> SessionRecord:
        rec = self.record
        rec.bytes = self.files.archive.bytes
        rec.entries = self.reader.entry_count
        rec.chunks = self.files.chunks_written
        if self.extra_info is not None:
            for section, values in self.extra_info().items():
                getattr(rec, section).update(values)
        return rec

    async def _finish(self) -> tuple[SessionRecord, Path]:
        files, rec, reader = self.files, self.record, self.reader
        with contextlib.suppress(Exception):
            await self.stream.aclose()
        await files.archive.close()
        reader.close()
        end = self._now()  # when the footer arrived, for a complete run
        self._add_delta()
        if self.sink is not None:
            result = self._guard("finish the chunks", lambda: self.sink.finish(end))
            if result is not None:
                chunks, report = result
                rec.chunk_report = dict(report or {})
                await self._write_chunks(chunks)
        rec.end = end
        self._progress_record()
        rec.warnings = list(reader.warnings)
        if reader.footer is not None:
            rec.profiler["end_ms"] = reader.footer.end_ms
            if reader.footer.trailing_bytes:
                rec.warnings.append(
                    f"{reader.footer.trailing_bytes} bytes after the footer were archived "
                    "but not decoded"
                )
        if self._end_error is not None:
            kind, message = self._end_error
            rec.add_error(kind, message)
        if self.cut is not None:
            rec.add_error("limit", self.cut.message, limit=self.cut.limit)
        if reader.error is not None:
            rec.add_error(
                "decoder", reader.error.message, offset=reader.error.offset, type=reader.error.kind
            )
            rec.status = FAILED
            rec.end_reason = f"corrupt data at byte {reader.error.offset}: {reader.error.message}"
            if self.cut is not None:
                rec.end_reason += f"; {self.cut.message}"
        elif self.cut is not None:
            rec.status = self.cut.status
            rec.end_reason = f"{self.cut.message}; {reader.problem() or 'nothing was lost'}"
        elif self._protocol_failed and not reader.complete:
            rec.status = FAILED
            rec.end_reason = f"the answer could not be read: {self._end_error[1]}"
        elif reader.complete:
            rec.status = COMPLETE
            rec.end_reason = "the device sent the whole profile and closed the stream"
        elif self.stopped:
            rec.status = INTERRUPTED
            rec.end_reason = "stopped by the user during the run; " + (reader.problem() or "")
        else:
            rec.status = TRUNCATED
            cause = self._end_error[1] if self._end_error else self._end_reason
            rec.end_reason = f"{cause}; {reader.problem()}"
        await files.write_record(rec)
        return rec, files.path
