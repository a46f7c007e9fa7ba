"""The profiler stream (TCP 8090): connect, ``GET /bsprof/channel.bsprof``, read the body.

:class:`ProfilerStream` is the asyncio shell over the sans-IO HTTP response reader
(:class:`~rokuprof.device.response.ResponseReader`): connect with a timeout, TCP keepalive,
read with an idle timeout. The HTTP head is bounded in bytes and in total time: its first byte
must come within ``answer_timeout`` of the connect, and once it has arrived the head must be
complete within ``head_timeout`` (see :mod:`rokuprof.device.limits`), so a device cannot hold a
capture loop (and a socket) by accepting and saying nothing, or by trickling a head.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable

from rokuprof.device.constants import PROFILER_PATH, PROFILER_PORT
from rokuprof.device.errors import (
    DeviceError,
    DeviceTimeout,
    DeviceUnavailable,
)
from rokuprof.device.limits import STREAM_ANSWER_TIMEOUT, STREAM_HEAD_TIMEOUT
from rokuprof.device.response import ResponseReader, build_request

READ_SIZE = 64 * 1024
BUFFER_BYTES = 256 * 1024  # body bytes read() may hold before reading pauses


class ConnectionLost(DeviceError):
    """The connection broke (reset, unreachable) before the device ended the body."""


def set_keepalive(
    sock: socket.socket | None, idle: int = 30, interval: int = 10, count: int = 3
) -> None:
    """Enable TCP keepalive (a backstop for a device that vanishes without a reset)."""
    if sock is None:
        return
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for name, value in (
            ("TCP_KEEPIDLE", idle),
            ("TCP_KEEPINTVL", interval),
            ("TCP_KEEPCNT", count),
        ):
            option = getattr(socket, name, None)
            if option is not None:
                sock.setsockopt(socket.IPPROTO_TCP, option, value)


class ProfilerStream:
    """One connection to a device's profiler port, for one app run.

    Built on a transport callback, so nothing read from the socket waits in user space unless a
    caller asks for it: reading starts paused; :meth:`read` reads as its caller consumes (at
    most :data:`BUFFER_BYTES` buffered), and :meth:`deliver` hands every body byte to a
    callback from inside ``data_received``, so a capture can archive it before anything else
    runs (a ``kill -9`` then loses nothing that left the kernel). :meth:`wait_end` waits for the
    end of a delivered stream; both raise the same errors as :meth:`read`.
    """

    def __init__(self, host: str, port: int, *, head_timeout: float = STREAM_HEAD_TIMEOUT) -> None:
        self.host = host
        self.port = port
        self.response = ResponseReader(f"the profiler port {host}:{port}")
        self.connected_at = time.time()
        self.received = 0  # raw bytes from the socket (head included)
        self.last_data: float | None = None  # monotonic time of the last raw byte
        self.eof = False
        self.head_timeout = head_timeout
        self._head_deadline: float | None = None  # monotonic: the answer's, then its head's
        self._transport: asyncio.Transport | None = None
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._paused = False
        self._held = False  # the consumer cannot take bytes now (a full disk): no idle timer
        self._sink: Callable[[bytes], None] | None = None
        self._error: BaseException | None = None  # raised by read()/wait_end()
        self._ended = False  # EOF, the body's end, an error, or closed by us
        self._wake = asyncio.Event()

    @classmethod
    async def open(
        cls,
        host: str,
        port: int = PROFILER_PORT,
        *,
        connect_timeout: float = 2.0,
        path: str = PROFILER_PATH,
        head_timeout: float = STREAM_HEAD_TIMEOUT,
        answer_timeout: float = STREAM_ANSWER_TIMEOUT,
    ) -> ProfilerStream:
        """Connect and send the GET; :class:`DeviceUnavailable` when nothing listens."""
        stream = cls(host, port, head_timeout=head_timeout)
        stream._head_deadline = time.monotonic() + connect_timeout + answer_timeout
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await asyncio.wait_for(
                loop.create_connection(lambda: _Protocol(stream), host, port), connect_timeout
            )
        except TimeoutError as error:
            raise DeviceUnavailable(
                f"connect to {host}:{port} timed out after {connect_timeout:g} s"
            ) from error
        except OSError as error:
            raise DeviceUnavailable(
                f"cannot connect to {host}:{port}: {error.strerror or error}"
            ) from error
        stream.connected_at = time.time()
        set_keepalive(transport.get_extra_info("socket"))
        if stream._ended and stream._error is not None:  # reset as it connected
            transport.close()
            raise ConnectionLost(
                f"{host}:{port} dropped the connection before the request was sent"
            ) from stream._error
        transport.write(build_request(host, port, path))  # a few bytes: the kernel takes them
        return stream

    # -- the transport's side ------------------------------------------------------------

    def _connected(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        transport.pause_reading()  # nothing leaves the kernel until a caller wants it
        self._paused = True

    def _data(self, data: bytes) -> None:
        if self._ended:
            return
        deadline = self._head_deadline
        if self.received == 0:
            self._head_deadline = time.monotonic() + self.head_timeout
        self.received += len(data)
        self.last_data = time.monotonic()
        try:
            body = self.response.feed(data)
        except DeviceError as error:
            self._end(error)
            return
        if self.response.in_body:
            self._head_deadline = None
        if body:
            if self._sink is not None:
                try:
                    self._sink(body)
                except BaseException as error:  # the consumer failed (e.g. disk full)
                    self._end(error)
                    return
            else:
                self._buffer.append(body)
                self._buffered += len(body)
                if self._buffered >= BUFFER_BYTES:
                    self._pause()
        if self.response.state == "done":
            self._end(None)
        elif self._sink is None or self._head_deadline != deadline:
            self._wake.set()  # a delivered body's bytes wake no one: wait_end sees last_data

    def _eof(self) -> None:
        self.eof = True
        self._end(None)

    def _lost(self, error: Exception | None) -> None:
        if error is not None and not self._ended:
            self._end(
                ConnectionLost(
                    f"connection to {self.host}:{self.port} lost: "
                    f"{getattr(error, 'strerror', None) or error}"
                )
            )
        self._end(None)

    def _end(self, error: BaseException | None) -> None:
        if not self._ended:
            self._ended = True
            self._error = error
            if self._transport is not None:
                self._transport.close()
        self._wake.set()

    def _pause(self) -> None:
        if not self._paused and self._transport is not None and not self._ended:
            self._transport.pause_reading()
            self._paused = True

    def _resume(self) -> None:
        if self._paused and self._transport is not None and not self._ended:
            self._paused = False
            self._transport.resume_reading()

    # -- the caller's side ---------------------------------------------------------------

    def hold(self) -> None:
        """Stop reading until :meth:`release` (the kernel's and the device's buffers keep what
        follows: TCP backpressure); the idle timeout does not run meanwhile."""
        self._held = True
        self._pause()

    def release(self) -> None:
        """Read again after :meth:`hold`; the idle timeout starts afresh."""
        if self._held:
            self._held = False
            self.last_data = time.monotonic()
            self._resume()
            self._wake.set()

    def fail(self, error: BaseException) -> None:
        """End the stream with ``error`` (raised by :meth:`wait_end`)."""
        self._end(error)

    @property
    def transport(self) -> asyncio.Transport | None:
        return self._transport

    async def read(self, idle_timeout: float | None = None) -> bytes:
        """The next body bytes; ``b""`` once the body has ended (EOF or its announced length).

        Raises :class:`DeviceTimeout` after ``idle_timeout`` seconds without a byte, or when an
        HTTP head is not complete ``head_timeout`` seconds after its first byte;
        :class:`ConnectionLost` if the connection breaks; :class:`HttpStatusError` or
        :class:`ProtocolError` for an answer that is not a profile.
        """
        if self._sink is not None:
            raise RuntimeError("the stream's bytes are delivered to a callback")
        while not self._buffer:
            if self._ended:
                self._raise_error()
                return b""
            self._resume()
            await self._wait(idle_timeout)
        data = b"".join(self._buffer)
        self._buffer.clear()
        self._buffered = 0
        return data

    def deliver(self, sink: Callable[[bytes], None]) -> None:
        """From now on, give every body byte to ``sink`` as it leaves the kernel (bytes
        :meth:`read` buffered first). An exception from ``sink`` ends the stream and is raised
        by :meth:`wait_end`."""
        self._sink = sink
        if self._buffer:
            data = b"".join(self._buffer)
            self._buffer.clear()
            self._buffered = 0
            try:
                sink(data)
            except BaseException as error:
                self._end(error)
                return
        self._resume()

    async def wait_end(self, idle_timeout: float | None = None) -> None:
        """Wait until a delivered stream ends: return at its proper end, raise as :meth:`read`
        does otherwise (an idle or head timeout closes the connection)."""
        while not self._ended:
            if not self._held:
                self._resume()
            await self._wait(None if self._held else idle_timeout)
        self._raise_error()

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error

    async def _wait(self, idle_timeout: float | None) -> None:
        """Wait for news from the transport, within the idle and head deadlines (measured from
        the last byte, not from this call)."""
        now = time.monotonic()
        since = self._since(now)
        waits: list[tuple[float, str]] = []
        if idle_timeout is not None:
            waits.append((since + idle_timeout - now, "idle"))
        if self._head_deadline is not None:
            waits.append((self._head_deadline - now, "head"))
        wait, which = min(waits) if waits else (None, "")
        self._wake.clear()
        try:
            if wait is not None and wait <= 0:
                raise TimeoutError
            await asyncio.wait_for(self._wake.wait(), wait)
        except TimeoutError:
            if which == "idle" and self._since(now) > since:
                return  # bytes came meanwhile (delivered ones wake no one): wait from them
            if which == "head" and not self.received:
                error: DeviceError = DeviceTimeout(
                    f"the profiler port {self.host}:{self.port} accepted the connection but "
                    "did not answer in time; gave up"
                )
            elif which == "head":
                error = DeviceTimeout(
                    f"the profiler port {self.host}:{self.port}: HTTP response head not "
                    f"complete within {self.head_timeout:g} s of its first byte; gave up"
                )
            else:
                error = DeviceTimeout(
                    f"no data from {self.host}:{self.port} for {idle_timeout:g} s"
                )
            self._end(error)

    def _since(self, now: float) -> float:
        return self.last_data if self.last_data is not None else now

    def close(self) -> None:
        """Stop reading and close the connection (what arrives afterwards is not read)."""
        if not self._ended:
            self._ended = True
        if self._transport is not None:
            self._transport.close()
        self._wake.set()

    async def aclose(self) -> None:
        self.close()
        await asyncio.sleep(0)  # let the transport run its close callbacks

    async def __aenter__(self) -> ProfilerStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _Protocol(asyncio.Protocol):
    """Hands a :class:`ProfilerStream` what its transport reports."""

    def __init__(self, stream: ProfilerStream) -> None:
        self.stream = stream

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.stream._connected(transport)  # type: ignore[arg-type]

    def data_received(self, data: bytes) -> None:
        self.stream._data(data)

    def eof_received(self) -> bool:
        self.stream._eof()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.stream._lost(exc)
