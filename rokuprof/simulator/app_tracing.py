"""App tracing on the simulated device (Roku OS 15.1+): the enable command, the trace's
WebSocket on the ECP port, and each traced run's trace sent as the run goes.

* ``POST /perfetto/enable/<channel>``: the channel joins the enabled list (no disable; the
  list lasts until the device stops) and the answer lists them all (:mod:`.tracing`). A run of
  the dev app is traced when ``dev`` was enabled by the time the app starts running (the
  sideloaded app waits for its profiler client: that is when); enabling while it runs takes
  effect at its next launch. ``DeviceConfig.app_tracing`` False (older firmware): 404.
* ``GET /perfetto-session`` with a WebSocket upgrade: one client at a time (a second is refused
  with ``409 Conflict`` while the first is connected). The handshake and the frames are the
  ``websockets`` library's sans-IO server (``ServerProtocol``) fed from the ECP connection's
  streams: incoming messages are bounded (:data:`MAX_INCOMING`), pings are answered, a close is
  echoed and the connection closed. The device sends nothing until a traced run starts, and
  keeps the socket open after it (the client decides when to go).
* A traced run's trace (:mod:`.trace_gen`) is made as the app runs, step by step with the
  ``.bsprof`` stream, and goes out in binary messages of ``trace_message_bytes`` (cut across
  packets; the run's last one shorter). A client that connects mid-run gets the trace from
  there (clock snapshot and tracks again, names interned again); while none is connected the
  run's trace is lost. A client that falls :data:`MAX_BACKLOG` bytes behind is dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from websockets.protocol import State
from websockets.server import ServerProtocol

from rokuprof.simulator.http import Request, response
from rokuprof.simulator.tcp import PEER_ERRORS
from rokuprof.simulator.trace_gen import TraceClock, TraceGenerator
from rokuprof.simulator.tracing import (
    MAX_CHANNELS,
    TraceRecord,
    channel_of,
    enable_xml,
)

if TYPE_CHECKING:
    from rokuprof.simulator.app import SyntheticApp
    from rokuprof.simulator.config import DeviceConfig
    from rokuprof.simulator.runs import RunRecord

log = logging.getLogger(__name__)

TRACED_CHANNEL = "dev"  # the sideloaded app: the one the simulator runs
MAX_INCOMING = 64 * 1024  # bytes of one message from the client
READ_BYTES = 64 * 1024
MAX_BACKLOG = 4 * 1024 * 1024  # bytes waiting for a slow client before it is dropped
DRAIN_TIMEOUT = 5.0  # seconds a client may take to take what was written to it
CLOSE_TIMEOUT = 2.0  # seconds for the client's side of a close
TEXT = {"Content-Type": "text/plain"}


class TraceClient:
    """One connected ``/perfetto-session`` WebSocket: the trace bytes it is sent go out in
    binary messages of ``size`` bytes (and a shorter one at the end of each run)."""

    def __init__(self, ws: ServerProtocol, writer: asyncio.StreamWriter, number: int, size: int):
        self.ws, self.writer, self.number, self.size = ws, writer, number, size
        self.alive = True
        self.dropped: str | None = None  # why the device dropped it
        self.received = 0  # frames the client sent (pings, a close, data: ignored)
        self.done = asyncio.Event()
        self._pending = bytearray()  # trace bytes not yet a whole message

    def send(self, data: bytes) -> list[bytes]:
        """Add trace bytes; the payloads of the messages that went out."""
        if not self._open():
            return []
        self._pending += data
        n = self.size
        payloads = [
            bytes(self._pending[i : i + n]) for i in range(0, len(self._pending) - n + 1, n)
        ]
        del self._pending[: n * len(payloads)]
        return self._send(payloads)

    def flush(self) -> list[bytes]:
        """The end of a run: what is left goes out as a shorter message."""
        if not self._open() or not self._pending:
            return []
        payload = bytes(self._pending)
        self._pending.clear()
        return self._send([payload])

    def close(self) -> None:
        """The device goes away: a close frame (1001, going away)."""
        if self._open():
            self.ws.send_close(1001, "device stopping")
            self.write_out()

    async def serve(self, reader: asyncio.StreamReader) -> None:
        """Read the client's frames until it closes or goes (or is dropped)."""
        ws = self.ws
        try:
            while self.alive:
                data = await reader.read(READ_BYTES)
                if not data:
                    ws.receive_eof()
                    self.write_out()
                    return
                ws.receive_data(data)
                self.received += len(ws.events_received())
                eof = self.write_out()
                async with asyncio.timeout(DRAIN_TIMEOUT):
                    await self.writer.drain()
                if eof or ws.state is State.CLOSED:
                    return
                if ws.close_expected():  # the close handshake: wait for the client's EOF
                    with contextlib.suppress(TimeoutError, *PEER_ERRORS):
                        async with asyncio.timeout(CLOSE_TIMEOUT):
                            while await reader.read(READ_BYTES):
                                pass
                    return
        except TimeoutError:
            self._drop("the client stopped reading")
        finally:
            self.alive = False
            self.done.set()

    # -- internals ---------------------------------------------------------------------------

    def _open(self) -> bool:
        if self.alive and self.writer.is_closing():
            self.alive = False
        return self.alive and self.ws.state is State.OPEN

    def _send(self, payloads: list[bytes]) -> list[bytes]:
        for payload in payloads:
            self.ws.send_binary(payload)
        self.write_out()
        if self.writer.transport.get_write_buffer_size() > MAX_BACKLOG:
            self._drop(f"the client fell {MAX_BACKLOG:,} bytes behind")
        return payloads

    def write_out(self) -> bool:
        """Write what the protocol has to send; True when it asked to close the connection."""
        eof = False
        closing = self.writer.is_closing()  # gone or dropped: what is left goes nowhere
        for chunk in self.ws.data_to_send():
            if not chunk:
                eof = True
            elif not closing:
                self.writer.write(chunk)
        if eof and not closing and self.writer.can_write_eof():
            with contextlib.suppress(OSError):
                self.writer.write_eof()
        return eof

    def _drop(self, why: str) -> None:
        log.debug("trace client %d dropped: %s", self.number, why)
        self.dropped, self.alive = why, False
        self.writer.transport.abort()


class RunTrace:
    """One run's trace on its way out: the shell's side of :class:`TraceGenerator`. Without a
    generator (the run is not traced) every call does nothing."""

    def __init__(self, tracing: AppTracing, app: SyntheticApp, gen: TraceGenerator | None):
        self.tracing, self.app, self.gen = tracing, app, gen
        self.record: TraceRecord | None = None
        self._client: TraceClient | None = None
        self._at = 0.0  # app time the trace was made up to
        if gen is not None:
            app.key_log = []

    def step(self, clock: float) -> None:
        """The app ran up to app time ``clock``."""
        if self.gen is not None:
            client = self._client_now()
            self._send(client, self.gen.advance(clock))
            self._at = clock

    def finish(self, clock: float) -> None:
        """The app exited at app time ``clock``: the rest of its trace, all of it sent."""
        if self.gen is None:
            return
        client = self._client_now()
        self._send(client, self.gen.finish(clock))
        if client is not None:
            self._note(client, client.flush())
        self._at = clock
        assert self.record is not None
        self.record.keys = self.gen.keys

    def _client_now(self) -> TraceClient | None:
        """The keys the app took go to the trace; then the connected client: the trace
        starts over for a new one, and pauses without one."""
        gen, log_ = self.gen, self.app.key_log
        assert gen is not None
        if log_:
            for at, key, bursts in log_:
                gen.key(at, key, bursts)
            log_.clear()
        client = self.tracing.client
        client = client if client is not None and client.alive else None
        if client is not self._client:
            self._client = client
            if client is not None:
                gen.restart(self._at)
            else:
                gen.pause()
        return client

    def _send(self, client: TraceClient | None, data: bytes) -> None:
        if client is not None and data:
            self._note(client, client.send(data))

    def _note(self, client: TraceClient, payloads: list[bytes]) -> None:
        if self.record is not None:
            self.record.note(client.number, payloads, self.tracing.config.keep_bytes)


class AppTracing:
    """The device's app tracing: enabled channels, the one socket client, traced runs."""

    def __init__(self, config: DeviceConfig, started_at: float, notify: Callable[[], None]):
        self.config, self.started_at, self.notify = config, started_at, notify
        self.enabled: list[str] = []  # channels enabled, in order
        self.client: TraceClient | None = None
        self.sessions = 0  # sockets accepted
        self.refused = 0  # upgrades refused while a client was connected

    @property
    def available(self) -> bool:
        """Whether this firmware has app tracing (Roku OS 15.1+)."""
        return self.config.app_tracing

    def enable(self, path: str) -> tuple[int, bytes]:
        """``POST /perfetto/enable/<channel>``: (status, body)."""
        channel = channel_of(path)
        if not self.available or channel is None:
            return 404, b""
        started = int(self.config.clock() * 1000)
        error = ""
        if channel not in self.enabled:
            if len(self.enabled) < MAX_CHANNELS:
                self.enabled.append(channel)
            else:
                error = f"at most {MAX_CHANNELS} channels can be enabled"
        ended = int(self.config.clock() * 1000)
        return 200, enable_xml(self.enabled, started, ended, error)

    async def serve_socket(
        self,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        headers: dict[str, str],
    ) -> None:
        """A request for ``/perfetto-session`` on an ECP connection, which it takes over."""
        if not self.available:
            writer.write(response(404, b"", {**headers, **TEXT}, keep_alive=False))
            return
        if self.client is not None and self.client.alive:
            self.refused += 1
            body = b"another client has the trace socket\n"
            writer.write(response(409, body, {**headers, **TEXT}, keep_alive=False))
            return
        ws = ServerProtocol(max_size=MAX_INCOMING, logger=log)
        ws.receive_data(request.head)
        events = ws.events_received()
        if events:
            answer = ws.accept(events[0])
            for name, value in headers.items():
                answer.headers[name] = value
            ws.send_response(answer)
        client = TraceClient(ws, writer, self.sessions + 1, self.config.trace_message_bytes)
        client.write_out()
        async with asyncio.timeout(DRAIN_TIMEOUT):
            await writer.drain()
        if ws.state is not State.OPEN:
            return  # refused by the protocol (not an upgrade, a bad key...): answered
        self.sessions += 1
        self.client = client
        self.notify()
        try:
            await client.serve(reader)
        finally:
            if self.client is client:
                self.client = None
            self.notify()

    def run_started(self, record: RunRecord, app: SyntheticApp, t0: float) -> RunTrace:
        """The dev app starts running at monotonic ``t0``: its trace if the channel is
        enabled (a :class:`RunTrace` that does nothing otherwise)."""
        if not self.available or TRACED_CHANNEL not in self.enabled:
            return RunTrace(self, app, None)
        cfg, config = self.config, app.config
        boot_ns = max(0, round((t0 - self.started_at) * 1e9))  # BOOTTIME: the device's uptime
        start_ms = record.start_ms if record.start_ms is not None else int(cfg.clock() * 1000)
        gen = TraceGenerator(
            app.model,
            TraceClock(boot_ns, start_ms),
            seed=cfg.trace_seed(record.index),
            run_index=record.index,
            app_name=config.name,
            names=config.names,
            slower=config.slower,
        )
        trace = RunTrace(self, app, gen)
        trace.record = record.trace = TraceRecord(TRACED_CHANNEL, boot_ns, start_ms)
        return trace

    async def stop(self) -> None:
        """The device stops: the client is told (a close frame) and given a moment."""
        client = self.client
        if client is not None and client.alive:
            client.close()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(CLOSE_TIMEOUT / 2):
                    await client.done.wait()
