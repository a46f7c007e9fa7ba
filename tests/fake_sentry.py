"""A fake Sentry on loopback for tests: takes envelopes over HTTP, records them, and answers
what the test scripts (200, 429 with ``Retry-After`` and/or ``X-Sentry-Rate-Limits``, 500, 413,
or no answer at all), optionally after a delay (a slow Sentry: ``FakeSentry(delay=0.2)`` or
``Reply(delay=...)``). It counts how many requests it holds at once (``most_at_once``).

::

    async with FakeSentry() as sentry:
        sentry.script(Reply(429, {"Retry-After": "1"}), Reply(500))   # then 200s
        uploader = Uploader(spool, Dsn.parse(sentry.dsn))
        ...
        sentry.chunk_ids()          # chunk ids of every envelope answered 2xx
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rokuprof.sentry.envelope import Envelope

KEY = "0123456789abcdef0123456789abcdef"
PROJECT = "42"


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"id":"ok"}'
    hang: bool = False  # never answer (the client must time out)
    delay: float | None = None  # seconds before answering (None: the server's default)


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() when the whole request had arrived
    status: int | None = None
    answered_at: float | None = None  # time.monotonic() when the answer was written

    def envelope(self) -> Envelope:
        return Envelope.from_bytes(self.body)

    def chunk(self) -> dict:
        return self.envelope().profile_chunk()


Policy = Callable[[Request], Reply]


class FakeSentry:
    """See the module docstring."""

    def __init__(self, policy: Policy | None = None, *, delay: float = 0.0) -> None:
        self.policy = policy or (lambda request: Reply())
        self.delay = delay
        self.holding = 0  # requests received and not answered yet
        self.most_at_once = 0
        self.requests: list[Request] = []
        self._script: list[Reply] = []
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task] = set()
        self._closing = asyncio.Event()
        self.port = 0
        self.arrived = asyncio.Event()

    @property
    def dsn(self) -> str:
        return f"http://{KEY}@127.0.0.1:{self.port}/{PROJECT}"

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order (then the policy)."""
        self._script.extend(replies)

    def accepted(self) -> list[Request]:
        return [r for r in self.requests if r.status is not None and 200 <= r.status < 300]

    def chunk_ids(self) -> list[str]:
        return [r.chunk()["chunk_id"] for r in self.accepted()]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 5.0) -> None:
        """Wait (bounded) until ``predicate()`` holds, re-checked on each request."""
        deadline = time.monotonic() + timeout
        while not predicate():
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("fake Sentry: condition not reached in time")
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), min(left, 0.2))

    async def __aenter__(self) -> FakeSentry:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        self._closing.set()
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        for task in list(self._handlers):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._handlers.add(task)
        try:
            while not self._closing.is_set():
                request = await self._read_request(reader)
                if request is None:
                    break
                reply = self._script.pop(0) if self._script else self.policy(request)
                self.requests.append(request)
                if reply.hang:
                    self.arrived.set()
                    await self._closing.wait()
                    break
                delay = self.delay if reply.delay is None else reply.delay
                if delay > 0:
                    self.holding += 1
                    self.most_at_once = max(self.most_at_once, self.holding)
                    self.arrived.set()
                    try:
                        await asyncio.sleep(delay)
                    finally:
                        self.holding -= 1
                request.status = reply.status
                head = [f"HTTP/1.1 {reply.status} X", f"Content-Length: {len(reply.body)}"]
                head += [f"{k}: {v}" for k, v in reply.headers.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + reply.body)
                request.answered_at = time.monotonic()
                await writer.drain()
                self.arrived.set()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # closing: end quietly (asyncio logs a cancelled client_connected_cb task)
        finally:
            self._handlers.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _read_request(self, reader: asyncio.StreamReader) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, path, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        if headers.get("content-encoding") == "gzip":
            body = gzip.decompress(body)
        return Request(method, path, headers, body, time.monotonic())


def rate_limited(seconds: float, categories: str = "profile_chunk") -> Reply:
    """A 429 carrying both ``Retry-After`` and ``X-Sentry-Rate-Limits``."""
    return Reply(
        429,
        {
            "Retry-After": f"{seconds:g}",
            "X-Sentry-Rate-Limits": f"{seconds:g}:{categories}:organization:quota",
        },
        json.dumps({"detail": "rate limited"}).encode(),
    )
