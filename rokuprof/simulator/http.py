"""Just enough HTTP/1.1 for the simulated device: read one request, write one response.

The device's HTTP servers (ECP and the profiler stream) are hand-written on asyncio streams;
this module holds the request parsing and response writing they share.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

MAX_HEAD_BYTES = 16 * 1024
MAX_BODY_BYTES = 64 * 1024

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    503: "Service Unavailable",
}


class BadRequest(Exception):
    """The peer sent something that is not an HTTP/1.x request."""


@dataclass
class Request:
    method: str
    target: str
    version: str
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names
    body: bytes = b""
    head: bytes = field(default=b"", repr=False)  # the request line and headers as received

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]

    @property
    def keep_alive(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return connection == "keep-alive"
        return connection != "close"


async def read_request(
    reader: asyncio.StreamReader,
    timeout: float,
    max_body: int = MAX_BODY_BYTES,
    writer: asyncio.StreamWriter | None = None,
) -> Request | None:
    """The next request on ``reader``; ``None`` when the peer closed before sending one. A body
    longer than ``max_body`` is refused (the installer takes larger ones than ECP). Given the
    ``writer``, ``Expect: 100-continue`` is answered before the body is read (curl waits a
    second for it otherwise).

    Raises :class:`BadRequest` for malformed input and ``TimeoutError`` when the head does not
    arrive within ``timeout`` seconds.
    """
    try:
        async with asyncio.timeout(timeout):
            head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if not exc.partial.strip():
            return None
        raise BadRequest("connection closed inside the request head") from None
    except asyncio.LimitOverrunError:
        raise BadRequest("request head too long") from None
    if len(head) > MAX_HEAD_BYTES:
        raise BadRequest("request head too long")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split()
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise BadRequest(f"bad request line {lines[0]!r}")
    request = Request(parts[0].upper(), parts[1], parts[2], head=head)
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise BadRequest(f"bad header line {line!r}")
        request.headers[name.strip().lower()] = value.strip()
    length = request.headers.get("content-length", "0")
    if not length.isdigit() or int(length) > max_body:
        raise BadRequest(f"bad Content-Length {length!r}")
    if int(length):
        if writer is not None and request.headers.get("expect", "").lower() == "100-continue":
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        async with asyncio.timeout(timeout):
            request.body = await reader.readexactly(int(length))
    return request


def response_head(status: int, headers: dict[str, str]) -> bytes:
    """Status line and headers, ending with the blank line."""
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Unknown')}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def response(status: int, body: bytes, headers: dict[str, str], keep_alive: bool) -> bytes:
    """A whole response with ``Content-Length``."""
    all_headers = dict(headers)
    all_headers["Content-Length"] = str(len(body))
    all_headers["Connection"] = "keep-alive" if keep_alive else "close"
    return response_head(status, all_headers) + body
