"""The profiler stream's HTTP response, sans I/O: :class:`ResponseReader` takes what the socket
gives and returns the body bytes.

It is tolerant of what a device may send: an HTTP/1.0 or 1.1 status line with any headers, no
``Content-Length`` (the body ends when the device closes), a ``Content-Length``, a chunked body,
or no HTTP response at all (the body starts with the ``.bsprof`` magic, or with anything else
that is not ``HTTP/``; the decoder then judges it). A status other than 200 is an
:class:`~rokuprof.device.errors.HttpStatusError`. The asyncio shell is
:class:`rokuprof.device.stream.ProfilerStream`.
"""

from __future__ import annotations

from rokuprof import __version__
from rokuprof.device.constants import PROFILER_PATH
from rokuprof.device.errors import HttpStatusError, ProtocolError
from rokuprof.device.limits import STREAM_MAX_HEAD_BYTES

MAX_HEAD_BYTES = STREAM_MAX_HEAD_BYTES
_HTTP = b"HTTP/"


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
