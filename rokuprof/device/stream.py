"""The profiler stream (TCP 8090): connect, ``GET /bsprof/channel.bsprof``, read the body.

:class:`ResponseReader` is the sans-IO part: feed it what the socket gives, it returns the body
bytes. It is tolerant of what a device may send: an HTTP/1.0 or 1.1 status line with any
headers, no ``Content-Length`` (the body ends when the device closes), a ``Content-Length``, a
chunked body, or no HTTP response at all (the body starts with the ``.bsprof`` magic, or with
anything else that is not ``HTTP/``; the decoder then judges it). A status other than 200 is an
:class:`~rokuprof.device.errors.HttpStatusError`.

:class:`ProfilerStream` is the asyncio shell: connect with a timeout, TCP keepalive, read with
an idle timeout. The HTTP head is bounded in bytes and in total time: once its first byte has
arrived it must be complete within ``head_timeout`` (see :mod:`rokuprof.device.limits`), so a
device cannot hold a capture loop by trickling a head.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time

from rokuprof import __version__
from rokuprof.device.errors import (
    DeviceError,
    DeviceTimeout,
    DeviceUnavailable,
    HttpStatusError,
    ProtocolError,
)
from rokuprof.device.limits import STREAM_HEAD_TIMEOUT, STREAM_MAX_HEAD_BYTES

DEFAULT_PROFILER_PORT = 8090
PROFILER_PATH = "/bsprof/channel.bsprof"
MAX_HEAD_BYTES = STREAM_MAX_HEAD_BYTES
READ_SIZE = 64 * 1024

_HTTP = b"HTTP/"


class ConnectionLost(DeviceError):
    """The connection broke (reset, unreachable) before the device ended the body."""


class _Chunked:
    """Decoder of ``Transfer-Encoding: chunked`` bodies (sizes, data, CRLFs, trailers)."""

    def __init__(self) -> None:
        self._buf = b""
        self._left = 0  # data bytes left in the current chunk
        self._state = "size"  # size | data | crlf | trailer | done
        self.done = False

    def feed(self, data: bytes) -> bytes:
        buf = self._buf + data
        out = bytearray()
        pos = 0
        while pos < len(buf) and not self.done:
            if self._state == "data":
                take = min(self._left, len(buf) - pos)
                out += buf[pos : pos + take]
                pos += take
                self._left -= take
                if self._left == 0:
                    self._state = "crlf"
                continue
            nl = buf.find(b"\n", pos)
            if nl < 0:
                if len(buf) - pos > 1024:
                    raise ProtocolError("chunked body: line too long")
                break
            line = buf[pos:nl].strip()
            pos = nl + 1
            if self._state == "crlf":
                if line:
                    raise ProtocolError("chunked body: missing CRLF after chunk data")
                self._state = "size"
            elif self._state == "size":
                try:
                    size = int(line.split(b";")[0], 16)
                except ValueError as error:
                    raise ProtocolError(f"chunked body: bad chunk size {line[:20]!r}") from error
                if size < 0:
                    raise ProtocolError("chunked body: negative chunk size")
                if size == 0:
                    self._state = "trailer"
                else:
                    self._left = size
                    self._state = "data"
            elif not line:  # trailer: ends at an empty line
                self.done = True
        self._buf = buf[pos:] if not self.done else b""
        return bytes(out)


class ResponseReader:
    """Sans-IO reader of the profiler port's answer (see the module docstring)."""

    def __init__(self, where: str = "the device") -> None:
        self.where = where
        self.http: bool | None = None  # None until known
        self.status: int | None = None
        self.reason = ""
        self.version = ""
        self.headers: dict[str, str] = {}
        self.content_length: int | None = None
        self.body_bytes = 0
        self.ignored_bytes = 0  # bytes after a Content-Length body or a chunked body's end
        self._head = b""
        self._chunked: _Chunked | None = None
        self.state = "start"  # start | head | body | done

    @property
    def in_body(self) -> bool:
        return self.state in ("body", "done")

    def feed(self, data: bytes) -> bytes:
        """Take bytes from the socket; return the body bytes among them."""
        if self.state == "done":
            self.ignored_bytes += len(data)
            return b""
        if self.state in ("start", "head"):
            buf = self._head + data
            if self.state == "start":
                if buf[: len(_HTTP)].upper() == _HTTP[: len(buf)]:
                    if len(buf) < len(_HTTP):
                        self._head = buf
                        return b""
                    self.state = "head"
                    self.http = True
                else:
                    self.http = False
                    self.status = 200
                    self.state = "body"
                    self._head = b""
                    return self._body(buf)
            rest = self._read_head(buf)
            if rest is None:
                return b""
            return self._body(rest)
        return self._body(data)

    def eof_problem(self) -> str | None:
        """Called at EOF: what was cut short, or ``None`` if the answer ended properly."""
        if self.state == "start":
            return None if not self._head else "the device closed the connection mid-status line"
        if self.state == "head":
            return "the device closed the connection inside the HTTP response head"
        if self.state == "body":
            if self.content_length is not None:
                return (
                    f"the device closed the connection after {self.body_bytes} of "
                    f"{self.content_length} body bytes (Content-Length)"
                )
            if self._chunked is not None:
                return "the device closed the connection inside a chunked body"
        return None

    def _read_head(self, buf: bytes) -> bytes | None:
        ends = [i for i in (buf.find(b"\r\n\r\n"), buf.find(b"\n\n")) if i >= 0]
        if not ends:
            if len(buf) > MAX_HEAD_BYTES:
                raise ProtocolError(f"{self.where}: HTTP response head over {MAX_HEAD_BYTES} bytes")
            self._head = buf
            return None
        end = min(ends)
        sep = 4 if buf[end : end + 4] == b"\r\n\r\n" else 2
        head = buf[:end].decode("latin-1")
        rest = buf[end + sep :]
        self._head = b""
        lines = head.replace("\r\n", "\n").split("\n")
        parts = lines[0].split(None, 2)
        if len(parts) < 2 or not parts[1].isdigit():
            raise ProtocolError(f"{self.where}: unreadable HTTP status line {lines[0][:80]!r}")
        self.version = parts[0]
        self.status = int(parts[1])
        self.reason = parts[2].strip() if len(parts) > 2 else ""
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if colon:
                self.headers[name.strip().lower()] = value.strip()
        if self.status != 200:
            raise HttpStatusError(
                f"{self.where} answered {self.status} {self.reason}".rstrip()
                + f" to GET {PROFILER_PATH} (expected 200: is a profiled app with "
                "bsprof_data_dest=network starting?)",
                self.status,
            )
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            self._chunked = _Chunked()
        elif "content-length" in self.headers:
            try:
                self.content_length = int(self.headers["content-length"])
            except ValueError:
                self.content_length = None  # unreadable: read until the device closes
            if self.content_length is not None and self.content_length < 0:
                self.content_length = None
        self.state = "body"
        if self.content_length == 0:
            self.state = "done"
        return rest

    def _body(self, data: bytes) -> bytes:
        if self._chunked is not None:
            out = self._chunked.feed(data)
            if self._chunked.done:
                self.state = "done"
        elif self.content_length is not None:
            left = self.content_length - self.body_bytes
            out = data[:left]
            self.ignored_bytes += len(data) - len(out)
            if len(out) == left:
                self.state = "done"
        else:
            out = data
        self.body_bytes += len(out)
        return out


def build_request(host: str, port: int, path: str = PROFILER_PATH) -> bytes:
    shown = f"[{host}]" if ":" in host else host
    return (
        f"GET {path} HTTP/1.1\r\nHost: {shown}:{port}\r\nUser-Agent: rokuprof/{__version__}\r\n"
        "Accept: */*\r\nConnection: close\r\n\r\n"
    ).encode("ascii")


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
    """One connection to a device's profiler port, for one app run."""

    def __init__(
        self,
        host: str,
        port: int,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        head_timeout: float = STREAM_HEAD_TIMEOUT,
    ) -> None:
        self.host = host
        self.port = port
        self._reader = reader
        self._writer = writer
        self.response = ResponseReader(f"the profiler port {host}:{port}")
        self.connected_at = time.time()
        self.received = 0  # raw bytes from the socket (head included)
        self.eof = False
        self.head_timeout = head_timeout
        self._head_deadline: float | None = None  # monotonic; set at the answer's first byte

    @classmethod
    async def open(
        cls,
        host: str,
        port: int = DEFAULT_PROFILER_PORT,
        *,
        connect_timeout: float = 2.0,
        path: str = PROFILER_PATH,
        head_timeout: float = STREAM_HEAD_TIMEOUT,
    ) -> ProfilerStream:
        """Connect and send the GET; :class:`DeviceUnavailable` when nothing listens."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, limit=READ_SIZE * 2), connect_timeout
            )
        except TimeoutError as error:
            raise DeviceUnavailable(
                f"connect to {host}:{port} timed out after {connect_timeout:g} s"
            ) from error
        except OSError as error:
            raise DeviceUnavailable(
                f"cannot connect to {host}:{port}: {error.strerror or error}"
            ) from error
        stream = cls(host, port, reader, writer, head_timeout=head_timeout)
        set_keepalive(writer.get_extra_info("socket"))
        try:
            writer.write(build_request(host, port, path))
            await asyncio.wait_for(writer.drain(), connect_timeout)
        except BaseException as error:
            writer.close()  # cancelled or failed: the caller never gets the stream to close
            if not isinstance(error, OSError | TimeoutError):
                raise
            raise ConnectionLost(
                f"{host}:{port} dropped the connection before the request was sent"
            ) from error
        return stream

    async def read(self, idle_timeout: float | None = None) -> bytes:
        """The next body bytes; ``b""`` once the body has ended (EOF or its announced length).

        Raises :class:`DeviceTimeout` after ``idle_timeout`` seconds without a byte, or when an
        HTTP head is not complete ``head_timeout`` seconds after its first byte;
        :class:`ConnectionLost` if the connection breaks; :class:`HttpStatusError` or
        :class:`ProtocolError` for an answer that is not a profile.
        """
        while True:
            if self.eof or self.response.state == "done":
                return b""
            wait, in_head = idle_timeout, self._head_deadline is not None
            if in_head:
                left = self._head_deadline - time.monotonic()
                wait = left if wait is None else min(wait, left)
            try:
                if wait is not None and wait <= 0:
                    raise TimeoutError
                data = await asyncio.wait_for(self._reader.read(READ_SIZE), wait)
            except TimeoutError as error:
                if in_head and (idle_timeout is None or wait < idle_timeout):
                    raise DeviceTimeout(
                        f"the profiler port {self.host}:{self.port}: HTTP response head not "
                        f"complete within {self.head_timeout:g} s of its first byte; gave up"
                    ) from error
                raise DeviceTimeout(
                    f"no data from {self.host}:{self.port} for {idle_timeout:g} s"
                ) from error
            except OSError as error:
                raise ConnectionLost(
                    f"connection to {self.host}:{self.port} lost: {error.strerror or error}"
                ) from error
            if not data:
                self.eof = True
                return b""
            if self.received == 0:
                self._head_deadline = time.monotonic() + self.head_timeout
            self.received += len(data)
            body = self.response.feed(data)
            if self.response.in_body:
                self._head_deadline = None
            if body:
                return body

    async def aclose(self) -> None:
        writer = self._writer
        if writer.is_closing():
            return
        writer.close()
        with contextlib.suppress(OSError, TimeoutError):
            await asyncio.wait_for(writer.wait_closed(), 1.0)

    async def __aenter__(self) -> ProfilerStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
