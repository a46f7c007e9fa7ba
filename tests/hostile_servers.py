"""Hostile peers on 127.0.0.1 for the device clients (tests and benchmarks/hostile_peers.py).

Each one answers on a Roku port the way a broken or malicious peer would: an ECP reply that never
ends or announces 300 MB, a reply or console that trickles one byte every 0.4-2 s, an XML entity
bomb, an SSDP responder that claims to be a thousand devices. Bodies are streamed from one small
buffer, so the peer itself never holds much memory. Loopback only.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import tracemalloc
from collections.abc import Awaitable, Callable

PIECE = 64 * 1024
FILLER = b"<x>" + b"A" * (PIECE - 7) + b"</x>"  # one 64 KiB piece of a never-ending document
assert len(FILLER) == PIECE

#: A classic entity bomb: a few hundred bytes that expand to ~3 GB in a naive parser.
ENTITY_BOMB = (
    b'<?xml version="1.0"?>\n<!DOCTYPE device-info [\n <!ENTITY a0 "bomb">\n'
    + b"".join(
        b' <!ENTITY a%d "%s">\n' % (i, b"".join(b"&a%d;" % (i - 1) for _ in range(10)))
        for i in range(1, 10)
    )
    + b"]>\n<device-info><serial-number>&a9;</serial-number></device-info>\n"
)

DEVICE_INFO = (
    b'<?xml version="1.0" encoding="UTF-8" ?>\n<device-info>\n'
    b"<serial-number>YN00HOSTILE1</serial-number>\n<model-name>Hostile</model-name>\n"
    b"</device-info>\n"
)


def trickle_delays(low: float = 0.4, high: float = 2.0, seed: int = 9) -> Callable[[], float]:
    """Gaps between trickled bytes: uniform in [low, high], reproducible."""
    rng = random.Random(seed)
    return lambda: rng.uniform(low, high)


class TcpPeer:
    """A TCP server on 127.0.0.1 port 0 whose connections run ``serve(reader, writer)``.

    Counts connections and bytes sent; on exit every connection is cut and its task ended.
    """

    def __init__(self) -> None:
        self.port = 0
        self.connections = 0
        self.sent = 0
        self._tasks: set[asyncio.Task] = set()
        self._server: asyncio.Server | None = None

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def send(self, writer: asyncio.StreamWriter, data: bytes) -> None:
        writer.write(data)
        await writer.drain()
        self.sent += len(data)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._tasks.add(asyncio.current_task())
        self.connections += 1
        try:
            await self.serve(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client gave up (or the peer is closing): what these peers are for
        finally:
            writer.close()
            with contextlib.suppress(OSError, asyncio.CancelledError):
                await writer.wait_closed()

    async def __aenter__(self):
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await asyncio.wait_for(self._server.wait_closed(), 5)


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """The request line and headers of one HTTP request (bounded: a test peer, not a server)."""
    return await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)


class EcpPeer(TcpPeer):
    """Answers every HTTP request on the ECP port with one hostile reply.

    ``mode``: ``endless`` (200 without a length, never ends), ``sized`` (``Content-Length: size``
    and that many bytes, streamed), ``chunked`` (a chunked body that never ends), ``trickle`` (a
    valid device-info, one byte every ``delay()`` seconds), ``body`` (``body`` at once).
    """

    def __init__(
        self,
        mode: str,
        *,
        size: int = 300_000_000,
        body: bytes = DEVICE_INFO,
        delay: Callable[[], float] | None = None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.size = size
        self.body = body
        self.delay = delay or trickle_delays()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        ok = b"HTTP/1.1 200 OK\r\nContent-Type: text/xml; charset=utf-8\r\n"
        start = b"<?xml version='1.0'?>\n<device-info>\n"
        if self.mode == "endless":
            await self.send(writer, ok + b"Connection: close\r\n\r\n" + start)
            while True:
                await self.send(writer, FILLER)
        elif self.mode == "sized":
            await self.send(writer, ok + b"Content-Length: %d\r\n\r\n" % self.size + start)
            left = self.size - len(start)
            while left > 0:
                piece = FILLER[: min(left, PIECE)]
                await self.send(writer, piece)
                left -= len(piece)
        elif self.mode == "chunked":
            await self.send(writer, ok + b"Transfer-Encoding: chunked\r\n\r\n")
            while True:
                await self.send(writer, b"%x\r\n%s\r\n" % (PIECE, FILLER))
        elif self.mode == "trickle":
            reply = ok + b"Content-Length: %d\r\n\r\n" % len(self.body) + self.body
            await trickle(self, writer, reply, self.delay)
        elif self.mode == "body":
            head = ok + b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(self.body)
            await self.send(writer, head + self.body)
        else:
            raise ValueError(self.mode)


class FloodingAnswer(TcpPeer):
    """An HTTP service (Sentry, Pyroscope) that takes each request whole, then answers 200 with
    a body that does not end: ``Content-Length: size`` (2 GiB) or, with ``size=None``, no length.

    It sends at most ``limit`` bytes of it (then holds the connection open), so a client that
    reads it all never costs more than that. ``gone`` holds, per connection, how many body bytes
    had been sent when the client closed it.
    """

    def __init__(self, size: int | None = 2 << 30, limit: int = 32 << 20) -> None:
        super().__init__()
        self.size = size
        self.limit = limit
        self.gone: list[int] = []

    def status_lines(self) -> bytes:
        """The answer's status line and any header but its framing."""
        return b"HTTP/1.1 200 OK"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await read_request(reader)).lower()
        length = head.partition(b"content-length:")[2].split(b"\r\n")[0].strip()
        await reader.readexactly(int(length or 0))
        framing = b"Content-Length: %d" % self.size if self.size else b"Connection: close"
        await self.send(writer, b"%s\r\n%s\r\n\r\n" % (self.status_lines(), framing))
        sent = 0
        try:
            while sent < self.limit:
                await self.send(writer, FILLER)
                sent += len(FILLER)
            await reader.read()  # held open until the client goes
        except ConnectionError:
            pass
        self.gone.append(sent)


class ChallengeFlood(FloodingAnswer):
    """An Application Installer whose every answer is a 401 Digest challenge (a fresh nonce
    each time) with a body that does not end: ``Content-Length: size`` (1 GiB) or, with
    ``size=None``, no length. Like :class:`FloodingAnswer` it sends at most ``limit`` bytes of
    body per answer, then holds the connection open; ``gone`` holds, per connection, the body
    bytes sent when the client closed it."""

    def __init__(self, size: int | None = 1 << 30, limit: int = 32 << 20) -> None:
        super().__init__(size, limit)

    def status_lines(self) -> bytes:
        challenge = b'Digest realm="rokudev", nonce="%08x", qop="auth"' % self.connections
        return b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: %s" % challenge


async def trickle(
    peer: TcpPeer, writer: asyncio.StreamWriter, data: bytes, delay: Callable[[], float]
) -> None:
    """Send ``data`` one byte at a time, then keep sending spaces the same way, forever."""
    pos = 0
    while True:
        byte = data[pos : pos + 1] or b" "
        pos += 1
        await peer.send(writer, byte)
        await asyncio.sleep(delay())


class TricklingConsole(TcpPeer):
    """A debug console that never shows a prompt: one byte every ``delay()`` seconds, or with
    ``flood`` an endless stream of text as fast as the client reads."""

    TEXT = b"Roku debug console (hostile)\r\nstatus: running,cpu,mem,data_dest=network\r\n"

    def __init__(self, delay: Callable[[], float] | None = None, *, flood: bool = False) -> None:
        super().__init__()
        self.delay = delay or trickle_delays()
        self.flood = flood

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self.flood:
            await trickle(self, writer, self.TEXT * 1000, self.delay)
        while True:
            await self.send(writer, FILLER + b"\r\n")


class TricklingStreamHead(TcpPeer):
    """A profiler port whose HTTP head never ends: one header byte every ``delay()`` seconds."""

    def __init__(self, delay: Callable[[], float] | None = None) -> None:
        super().__init__()
        self.delay = delay or trickle_delays()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await trickle(self, writer, b"HTTP/1.1 200 OK\r\nX-Padding: ", self.delay)


def ssdp_reply(usn: str, location: str) -> bytes:
    return (
        "HTTP/1.1 200 OK\r\nCache-Control: max-age=3600\r\nST: roku:ecp\r\n"
        f"USN: {usn}\r\nExt: \r\nServer: Roku/12.0.0 UPnP/1.0\r\nLOCATION: {location}\r\n\r\n"
    ).encode()


class SsdpFlood(asyncio.DatagramProtocol):
    """Answers every datagram with ``count`` search replies, each with a new USN, from
    ``host`` (a loopback address)."""

    def __init__(self, count: int, ecp_port: int = 8060, host: str = "127.0.0.1") -> None:
        self.count = count
        self.ecp_port = ecp_port
        self.host = host
        self.replies = 0
        self.port = 0
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        if not data.startswith(b"M-SEARCH") or self.transport is None:
            return
        for _ in range(self.count):
            self.replies += 1
            usn = f"uuid:roku:ecp:YN{self.replies:010d}"
            reply = ssdp_reply(usn, f"http://{self.host}:{self.ecp_port}/")
            self.transport.sendto(reply, addr)

    async def __aenter__(self) -> SsdpFlood:
        loop = asyncio.get_running_loop()
        await loop.create_datagram_endpoint(lambda: self, local_addr=(self.host, 0))
        assert self.transport is not None
        self.port = self.transport.get_extra_info("sockname")[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.transport is not None:
            self.transport.close()


class SsdpCrowd(asyncio.DatagramProtocol):
    """One M-SEARCH to it (127.0.0.1) is answered from ``count`` loopback addresses
    (127.0.1.2, 127.0.1.3, ...: 127.0.0.0/8 is all loopback), each reply naming its own
    address, with a USN of its own and ECP on ``ecp_port`` (where nothing listens)."""

    def __init__(self, count: int, ecp_port: int = 9) -> None:
        assert count <= 250 * 200
        self.addresses = [f"127.0.{1 + i // 250}.{2 + i % 250}" for i in range(count)]
        self.ecp_port = ecp_port
        self.searches = 0
        self.port = 0
        self.transport: asyncio.DatagramTransport | None = None
        self._senders: list[asyncio.DatagramTransport] = []

    def connection_made(self, transport) -> None:
        self.transport = transport

    def datagram_received(self, data: bytes, addr) -> None:
        if not data.startswith(b"M-SEARCH"):
            return
        self.searches += 1
        for i, (host, sender) in enumerate(zip(self.addresses, self._senders, strict=True)):
            usn = f"uuid:roku:ecp:CROWD{i:05d}"
            sender.sendto(ssdp_reply(usn, f"http://{host}:{self.ecp_port}/"), addr)

    async def __aenter__(self) -> SsdpCrowd:
        loop = asyncio.get_running_loop()
        for host in self.addresses:
            sender, _ = await loop.create_datagram_endpoint(
                asyncio.DatagramProtocol, local_addr=(host, 0)
            )
            self._senders.append(sender)
        await loop.create_datagram_endpoint(lambda: self, local_addr=("127.0.0.1", 0))
        assert self.transport is not None
        self.port = self.transport.get_extra_info("sockname")[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        for sender in self._senders:
            sender.close()
        if self.transport is not None:
            self.transport.close()


async def timed(coro: Awaitable) -> tuple[float, object]:
    """Run ``coro``; return (seconds taken, its result or the exception it raised)."""
    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        result: object = await coro
    except Exception as error:  # the point is to look at it
        result = error
    return loop.time() - start, result


async def measured(coro) -> tuple[float, object, int]:
    """(seconds, result or exception, peak bytes of Python allocations) of ``coro``."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        elapsed, result = await timed(coro)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return elapsed, result, peak
