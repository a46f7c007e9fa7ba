"""Prometheus text exposition (format 0.0.4) over a tiny asyncio HTTP server, plus /healthz.

:func:`~rokuprof.daemon.exposition.render` turns metric families into text (no I/O, in
:mod:`rokuprof.daemon.exposition`); :class:`MetricsServer` serves ``GET /metrics``
(whatever its ``collect`` callable returns at that moment; a generator is driven to its return
value with the event loop free at each of its pauses) and ``GET /healthz`` (200 ``ok`` or 503
with the reason). Requests are bounded in size and time; one connection never blocks another.
The text of ``/metrics`` is rendered in a thread of its own (never queued behind the daemon's
file work), and requests that arrive while a scrape is being made share it, so a daemon with
thousands of devices answers promptly and a client asking in a loop costs one scrape at a time.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import ThreadPoolExecutor

from rokuprof.daemon.exposition import Family, render

__all__ = ["CONTENT_TYPE", "Family", "MetricsServer", "render"]

log = logging.getLogger(__name__)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MAX_HEAD = 8192
READ_TIMEOUT = 5.0


class MetricsServer:
    """``/metrics`` and ``/healthz`` on ``host:port`` (port 0 picks a free one: see ``port``)."""

    def __init__(
        self,
        collect: Callable[[], Iterable[Family] | Generator[None, None, Iterable[Family]]],
        health: Callable[[], tuple[bool, str]] = lambda: (True, "ok"),
        host: str = "127.0.0.1",
        port: int = 9464,
    ) -> None:
        self.collect = collect
        self.health = health
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._scrape: asyncio.Future[bytes] | None = None  # the scrape being made, shared
        self._renderer: ThreadPoolExecutor | None = None  # the thread /metrics is rendered in

    async def metrics_text(self) -> bytes:
        """The ``/metrics`` body now: collected (a generator in turns), rendered in a worker
        thread; a request that arrives meanwhile gets the same text."""
        if self._scrape is None or self._scrape.done():
            self._scrape = asyncio.ensure_future(self._make_scrape())
        return await asyncio.shield(self._scrape)

    async def _make_scrape(self) -> bytes:
        families = self.collect()
        if inspect.isgenerator(families):
            turns = families
            while True:
                try:
                    next(turns)
                except StopIteration as done:
                    families = done.value
                    break
                await asyncio.sleep(0)
        if self._renderer is None:
            self._renderer = ThreadPoolExecutor(1, thread_name_prefix="metrics")
        text = functools.partial(render, list(families))
        return (await asyncio.get_running_loop().run_in_executor(self._renderer, text)).encode()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None
        if self._renderer is not None:
            self._renderer.shutdown(wait=False, cancel_futures=True)
            self._renderer = None

    async def __aenter__(self) -> MetricsServer:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def respond(self, method: str, path: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for one request (no I/O)."""
        path = path.split("?", 1)[0]
        if method not in ("GET", "HEAD"):
            return 405, "text/plain", b"method not allowed\n"
        if path == "/metrics":
            families = self.collect()
            if inspect.isgenerator(families):
                raise TypeError("a collect in turns: ask metrics_text()")
            return 200, CONTENT_TYPE, render(families).encode("utf-8")
        if path == "/healthz":
            ok, reason = self.health()
            return (200 if ok else 503), "text/plain", (reason + "\n").encode("utf-8")
        if path == "/":
            return 200, "text/plain", b"rokuprof daemon: /metrics /healthz\n"
        return 404, "text/plain", b"not found\n"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT)
            parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
            if len(parts) != 3:
                status, ctype, body = 400, "text/plain", b"bad request\n"
            else:
                try:
                    if parts[0] in ("GET", "HEAD") and parts[1].split("?", 1)[0] == "/metrics":
                        status, ctype, body = 200, CONTENT_TYPE, await self.metrics_text()
                    else:
                        status, ctype, body = self.respond(parts[0], parts[1])
                except Exception:  # a bug in a collector must not kill the server
                    log.exception("metrics: cannot render")
                    status, ctype, body = 500, "text/plain", b"internal error\n"
            reason = {
                200: "OK",
                400: "Bad Request",
                404: "Not Found",
                405: "Method Not Allowed",
                500: "Internal Server Error",
                503: "Service Unavailable",
            }[status]
            payload = b"" if parts[0] == "HEAD" else body
            writer.write(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                + payload
            )
            await asyncio.wait_for(writer.drain(), READ_TIMEOUT)
        except (
            TimeoutError,
            asyncio.IncompleteReadError,
            asyncio.LimitOverrunError,
            ConnectionError,
        ):
            pass
        except asyncio.CancelledError:
            pass  # closing
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
