"""A loopback Sentry for ``benchmarks/soak.py`` whose answer is the soak's current ``mode``:

* ``accept``: 200 (the chunk id is counted as accepted: a second 200 for it is a duplicate);
* ``500``: a server error;
* ``429``: rate limited, with ``Retry-After``;
* ``hang``: no answer; the connection is held until the client gives up (closes it) or
  ``hang_cap`` seconds pass;
* ``close``: the answer's head and half its body, then the connection is closed (Sentry may
  have kept the chunk: counted as ``closed_mid``, not as accepted).

It keeps counts only (chunk ids and how often each was answered 200), not bodies, so it can run
for hours. Requests are bounded: a head of at most 64 KiB, a body of at most 64 MiB, each read
within ``read_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
from collections import Counter

from rokuprof.sentry.envelope import Envelope

KEY = "0123456789abcdef0123456789abcdef"
PROJECT = "42"
MODES = ("accept", "500", "429", "hang", "close")
MAX_HEAD = 64 * 1024
MAX_BODY = 64 << 20
ACCEPT_BODY = b'{"id":"ok"}'


class CyclingSentry:
    """See the module docstring. ``mode`` may be changed at any time; it applies to the
    requests that arrive after."""

    def __init__(self, *, retry_after: float = 3.0, hang_cap: float = 120.0) -> None:
        self.mode = "accept"
        self.retry_after = retry_after
        self.hang_cap = hang_cap
        self.read_timeout = 30.0
        self.port = 0
        self.answers: Counter = Counter()  # mode -> requests answered (or held) that way
        self.accepted: Counter = Counter()  # chunk_id -> 200 answers
        self.closed_mid: Counter = Counter()  # chunk_id -> answers cut mid-way
        self.unreadable = 0  # requests whose envelope was not a profile chunk
        self.hangs_given_up = 0  # held requests the client closed
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()

    @property
    def dsn(self) -> str:
        return f"http://{KEY}@127.0.0.1:{self.port}/{PROJECT}"

    def duplicates(self) -> int:
        return sum(n - 1 for n in self.accepted.values() if n > 1)

    async def __aenter__(self) -> CyclingSentry:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, limit=MAX_HEAD)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            while True:
                body = await asyncio.wait_for(self._read(reader), self.read_timeout)
                if body is None:
                    break
                mode = self.mode
                self.answers[mode] += 1
                chunk_id = self._chunk_id(body)
                if mode == "hang":
                    await self._hold(reader)
                    break
                if mode == "close":
                    self.closed_mid[chunk_id] += 1
                    head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(ACCEPT_BODY)}\r\n\r\n"
                    writer.write(head.encode() + ACCEPT_BODY[:5])
                    await writer.drain()
                    break
                if mode == "accept":
                    self.accepted[chunk_id] += 1
                    status, headers, text = 200, {}, ACCEPT_BODY
                elif mode == "429":
                    status, text = 429, b'{"detail":"rate limited"}'
                    headers = {"Retry-After": f"{self.retry_after:g}"}
                else:
                    status, headers, text = 500, {}, b'{"detail":"internal error"}'
                head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(text)}"]
                head += [f"{k}: {v}" for k, v in headers.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + text)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except (TimeoutError, ValueError):
            pass  # a request that did not arrive in time, or not HTTP: drop the connection
        except asyncio.CancelledError:
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _read(self, reader: asyncio.StreamReader) -> bytes | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        length = 0
        gzipped = False
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            if name == "content-length":
                length = int(value)
            elif name == "content-encoding":
                gzipped = value == "gzip"
        if not 0 <= length <= MAX_BODY:
            raise ValueError("body too long")
        body = await reader.readexactly(length)
        return gzip.decompress(body) if gzipped else body

    def _chunk_id(self, body: bytes) -> str:
        try:
            return str(Envelope.from_bytes(body).profile_chunk()["chunk_id"])
        except Exception:  # any unreadable body: counted, the soak says how many
            self.unreadable += 1
            return "?"

    async def _hold(self, reader: asyncio.StreamReader) -> None:
        """No answer until the client closes the connection (or ``hang_cap`` seconds)."""
        with contextlib.suppress(TimeoutError, ConnectionError):
            async with asyncio.timeout(self.hang_cap):
                while await reader.read(4096):
                    pass
                self.hangs_given_up += 1
