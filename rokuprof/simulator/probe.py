"""Tiny raw clients for poking at a simulated device in tests (not the real rokuprof clients,
which live in :mod:`rokuprof.device`). Every call has a timeout."""

from __future__ import annotations

import asyncio
import contextlib
import socket

from rokuprof.device.constants import PROFILER_PATH


async def http(
    host: str, port: int, method: str, path: str, timeout: float = 5.0
) -> tuple[int, dict[str, str], bytes]:
    """One request with ``Connection: close``; returns (status, headers, body read to EOF)."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(
                f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
                "Content-Length: 0\r\nConnection: close\r\n\r\n".encode()
            )
            data = await reader.read()
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(lines[0].split()[1]), headers, body


async def open_stream(
    host: str, port: int, timeout: float = 5.0
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, int]:
    """Connect to the profiler port, send the GET, read the response head; returns
    (reader, writer, status) with the reader at the first body byte."""
    async with asyncio.timeout(timeout):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(f"GET {PROFILER_PATH} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode())
        head = await reader.readuntil(b"\r\n\r\n")
    return reader, writer, int(head.split()[1])


async def read_stream(host: str, port: int, timeout: float = 10.0) -> bytes:
    """A whole profiler stream body (until the device closes)."""
    reader, writer, status = await open_stream(host, port, timeout)
    try:
        if status != 200:
            raise ConnectionError(f"profiler answered {status}")
        async with asyncio.timeout(timeout):
            return await reader.read()
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError):
            await writer.wait_closed()


async def ssdp_search(
    host: str, port: int, target: str = "roku:ecp", timeout: float = 2.0
) -> tuple[bytes, tuple[str, int]]:
    """Send one unicast ``M-SEARCH`` to ``host:port``; return the first reply and its sender."""
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setblocking(False)
    try:
        sock.bind(("127.0.0.1", 0))
        request = (
            "M-SEARCH * HTTP/1.1\r\nHost: 239.255.255.250:1900\r\n"
            f'Man: "ssdp:discover"\r\nST: {target}\r\nMX: 1\r\n\r\n'
        ).encode()
        await loop.sock_sendto(sock, request, (host, port))
        async with asyncio.timeout(timeout):
            return await loop.sock_recvfrom(sock, 65536)
    finally:
        sock.close()


class ConsoleSession:
    """A debug-console session: ``await s.command("bsprof-status")`` -> reply lines."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.banner: list[str] = []

    @classmethod
    async def open(cls, host: str, port: int, timeout: float = 5.0) -> ConsoleSession:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(host, port)
            session = cls(reader, writer)
            session.banner = await session._until_prompt()
        return session

    async def _until_prompt(self) -> list[str]:
        """The lines before the next prompt (``>`` alone, after a line break)."""
        data = await self.reader.readuntil(b"\n>")
        text = data[:-1].decode()
        return [line for line in text.split("\r\n") if line]

    async def command(self, line: str, timeout: float = 5.0) -> list[str]:
        self.writer.write(line.encode() + b"\r\n")
        async with asyncio.timeout(timeout):
            return await self._until_prompt()

    async def close(self) -> None:
        with contextlib.suppress(ConnectionError):
            self.writer.write(b"quit\r\n")
            await self.writer.drain()
        self.writer.close()
        with contextlib.suppress(ConnectionError):
            await self.writer.wait_closed()
