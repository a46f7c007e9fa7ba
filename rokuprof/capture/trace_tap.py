"""The app trace of a device's runs (Roku OS 15.1+), captured beside the ``.bsprof``.

One :class:`TraceTap` per device loop, for as long as the loop runs. It enables tracing of the
sideloaded app (``POST /perfetto/enable/dev``), opens the trace socket *before* the app is
launched (a launch traced with no client connected is lost) and keeps it open across runs,
reconnecting with backoff when it breaks. Every payload that arrives is held for the run in
progress: **a run's trace is every byte that arrived after the previous run ended until this
one ended** (it may begin before the ``.bsprof`` stream connects). The bytes go to a spool file
as they arrive (:mod:`rokuprof.store.trace_spool`; memory holds at most :data:`FLUSH_BYTES`);
:meth:`TraceTap.settle` waits for the device to go quiet after a run, :meth:`TraceTap.take`
finishes the spool for the session to adopt.

It never costs the ``.bsprof`` capture anything: it runs as its own task, firmware without
tracing is one line and the end of the tap, and a broken or hostile socket is bounded (each
message, each run's bytes, each wait) with the reason said once and in ``session.json``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.backoff import backoff_delay
from rokuprof.device.ecp import EcpClient
from rokuprof.device.errors import DeviceError, HttpStatusError
from rokuprof.device.limits import (
    TRACE_MAX_MESSAGE_BYTES,
    TRACE_MAX_RUN_BYTES,
    TRACE_QUIET_SECONDS,
    TRACE_SETTLE_SECONDS,
)
from rokuprof.device.trace_socket import TraceSocket
from rokuprof.sentry.frame_measures import LiveFrameMeasures
from rokuprof.sentry.side_measurements import Measure
from rokuprof.store.trace_spool import TraceSpool
from rokuprof.units import size

NO_TRACING = "this device's firmware has no app tracing (Roku OS 15.1+): the .bsprof alone"
RETRY_BASE, RETRY_CAP = 0.5, 30.0  # seconds between reconnects: doubling, with jitter

# Why a run's trace ended where it did (session.json's ``trace.end_reason``).
END_RUN = "the run ended"
END_LIMIT = "the run's trace reached its byte limit: cut there, no more read until the next run"


#: Payload bytes held in memory before they are written to the spool.
FLUSH_BYTES = 1 << 20
#: With frames wanted, the bytes held are also written (and read) this often.
FLUSH_SECONDS = 1.0


@dataclass
class TraceRun:
    """What the trace socket delivered for one run: ``bytes`` of it in ``spool`` (finished,
    for the session to adopt; ``None`` when nothing came)."""

    spool: TraceSpool | None
    bytes: int
    messages: int
    end_reason: str
    dropped_bytes: int = 0  # arrived past the limit: not kept
    problems: list[str] = field(default_factory=list)  # socket failures during the run

    def to_json(self, file: str | None) -> dict[str, object]:
        return {
            "file": file,
            "bytes": self.bytes,
            "messages": self.messages,
            "end_reason": self.end_reason,
            "dropped_bytes": self.dropped_bytes,
            "problems": self.problems,
        }


class TraceTap:
    """Enable, connect, hold each run's trace (see the module docstring)."""

    def __init__(
        self,
        host: str,
        ecp_port: int,
        spool: Path,
        *,
        app_id: str = "dev",
        say: Callable[[str], None] = lambda text: None,
        ecp_timeout: float = 3.0,
        max_message: int = TRACE_MAX_MESSAGE_BYTES,
        max_run_bytes: int = TRACE_MAX_RUN_BYTES,
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
        frames: Callable[[list[Measure]], object] | None = None,
    ) -> None:
        self.host, self.ecp_port, self.app_id = host, ecp_port, app_id
        self.say = say
        self.ecp_timeout = ecp_timeout
        self.max_message, self.max_run_bytes = max_message, max_run_bytes
        self.clock, self.rand = clock, rand
        self.connected = asyncio.Event()  # the socket is open: a launch now is traced
        self.unsupported = False  # the firmware has no app tracing: the tap has ended
        self.last_data: float | None = None
        self.spool = TraceSpool(spool)
        #: given: the run's missed frames, read from the bytes as they are spooled, as
        #: measurements for its chunks (handed over at least every FLUSH_SECONDS)
        self.frames = frames
        self._live = LiveFrameMeasures() if frames is not None else None
        self._live_failure: str | None = None
        self._flushed_at = clock()
        self._spool_lock = asyncio.Lock()  # one write of the spool at a time
        self._pieces: list[bytes] = []  # not yet written to the spool
        self._pending = 0  # their bytes
        self._held = self._messages = self._dropped = 0
        self._spool_failed = False  # a write failed: the run's trace is not kept
        self._full = asyncio.Event()  # the run's limit is reached: closed until take()
        self._taken = asyncio.Event()
        self._problems: list[str] = []

    # -- the task ----------------------------------------------------------------------------

    async def run(self) -> None:
        """Until cancelled (or the firmware has no tracing): enable, connect, receive."""
        failures = 0
        while True:
            if self._full.is_set():
                await self._taken.wait()
                self._taken.clear()
            try:
                if not await self._enable():
                    return
                socket = TraceSocket(self.host, self.ecp_port, max_message=self.max_message)
                async with socket:
                    self.connected.set()
                    failures = 0
                    await self._receive(socket)
            except DeviceError as error:
                failures += 1
                self._problem(str(error))
            finally:
                self.connected.clear()
            if not self._full.is_set():
                delay = backoff_delay(max(failures, 1), RETRY_BASE, RETRY_CAP, self.rand())
                await asyncio.sleep(delay)

    async def _enable(self) -> bool:
        """Ask the device to trace the app's launches (again on every connect: a reboot
        clears the list); ``False`` when its firmware has none."""
        try:
            async with EcpClient(self.host, self.ecp_port, self.ecp_timeout) as ecp:
                answer = await ecp.enable_perfetto(self.app_id)
        except HttpStatusError as error:
            if error.status in (403,):
                raise
            self.unsupported = True
            self.say(f"{NO_TRACING} ({error})")
            return False
        if not answer.ok:
            raise DeviceError(f"enabling app tracing failed: {answer.error or 'no OK status'}")
        return True

    async def _receive(self, socket: TraceSocket) -> None:
        async for payload in socket.messages():
            self._messages += 1
            self.last_data = self.clock()
            if self._held + len(payload) > self.max_run_bytes:
                self._dropped += len(payload)
                self._full.set()
                self._problem(f"{END_LIMIT} ({size(self.max_run_bytes, exact=True)})")
                return  # closes the socket: nothing more is read for this run
            if self._spool_failed:
                self._dropped += len(payload)
                continue
            self._pieces.append(payload)
            self._held += len(payload)
            self._pending += len(payload)
            due = self.frames is not None and self.clock() - self._flushed_at >= FLUSH_SECONDS
            if self._pending >= FLUSH_BYTES or due:
                try:
                    measures = await self._write(self._spool_and_read)
                except OSError as exc:  # the disk: the rest of this run's trace is dropped
                    self._spool_failed = True
                    self._dropped += self._held
                    self._problem(f"cannot write the trace to {self.spool.path}: {exc}")
                    continue
                self.last_data = self.clock()  # busy until now: not yet quiet
                if self._live_failure is not None:
                    self._problem(self._live_failure)
                    self._live_failure = None
                if measures and self.frames is not None:
                    self.frames(measures)

    def _spool_and_read(self, pieces: list[bytes]) -> list[Measure]:
        """In a worker thread: the pieces to the spool, then read for missed frames (a failure
        of that reading ends it for the run, said once; the trace itself is kept)."""
        self._flushed_at = self.clock()
        self.spool.append(pieces)
        live = self._live
        if live is None:
            return []
        try:
            return live.feed(pieces)
        except Exception as exc:  # a bug in reading must not cost the trace
            self._live = None
            self._live_failure = f"reading its frames stopped: {type(exc).__name__}: {exc}"
            return []

    async def _write(self, how: Callable[[list[bytes]], object]) -> object:
        """The pieces held, handed to the spool in a worker thread (one write at a time)."""
        async with self._spool_lock:
            pieces, self._pieces, self._pending = self._pieces, [], 0
            return await asyncio.to_thread(how, pieces)

    def _problem(self, text: str) -> None:
        if text not in self._problems:
            self._problems.append(text)
            self.say(f"app trace: {text}")

    # -- the runs ----------------------------------------------------------------------------

    async def settle(
        self, quiet: float = TRACE_QUIET_SECONDS, limit: float = TRACE_SETTLE_SECONDS
    ) -> None:
        """After a run's ``.bsprof`` ended: wait until no message came for ``quiet`` seconds
        (the device's last packets of the run), ``limit`` seconds at most."""
        if not self.connected.is_set() or self.unsupported:
            return
        deadline = self.clock() + limit
        while (now := self.clock()) < deadline:
            since = now - (self.last_data if self.last_data is not None else -quiet)
            if since >= quiet and not self._spool_lock.locked():  # no message, no work
                return
            await asyncio.sleep(max(min(quiet - since, deadline - now), 0.01))

    async def take(self) -> TraceRun:
        """The run's trace: everything since the previous take, its spool finished (a spool
        that cannot be written is a problem of the run, and its bytes are not kept)."""
        full = self._full.is_set()
        problems = self._problems
        try:
            if self._spool_failed:
                raise OSError("an earlier write failed")
            written = await self._write(self.spool.finish)
        except OSError as exc:
            problems.append(
                f"cannot write the trace spool {self.spool.path}: {exc.strerror or exc}"
            )
            self._pieces, self._pending = [], 0
            await asyncio.to_thread(self.spool.discard)
            written = 0
        assert isinstance(written, int)
        run = TraceRun(
            self.spool if written else None,
            written,
            self._messages,
            END_LIMIT if full else END_RUN,
            self._dropped,
            list(problems),
        )
        self._held, self._messages, self._dropped = 0, 0, 0
        self._problems, self._spool_failed = [], False
        if self.frames is not None:
            self._live = LiveFrameMeasures()  # the next run's trace starts afresh
        if full:
            self._full.clear()
            self._taken.set()
        return run
