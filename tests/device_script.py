"""A Roku device, scripted: what tests of the parts that talk to one play instead of a device.

* For the device machine (test_device_machine, test_device_machine_sequences): the capture
  config's fields it reads (``Rules``) and a random source that plays given numbers (``Draws``).
* For the run machine's shell (test_capture_run_shell): ``ScriptedStream``, a profiler stream in
  process that plays scripted bytes into the delivery callback.
* For the stream client (test_device_stream): ``ScriptedDevice``, a loopback TCP server that
  answers a connection with scripted pieces."""

from __future__ import annotations

import asyncio
import socket
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.capture.limits import ArchiveLimits
from rokuprof.device.response import ResponseReader

POLL = 0.25


@dataclass(frozen=True)
class Rules:
    """The capture config's fields the machine reads (CaptureConfig's defaults, no floor)."""

    host: str = "192.168.1.20"
    out: Path = Path("/data")
    profiler_port: int = 8090
    console_port: int = 8080
    poll_interval: float = POLL
    max_backoff: float = 2.0
    ecp_recheck: float = 10.0
    use_ecp: bool = True
    runs: int | None = None
    archive_limits: ArchiveLimits = field(default_factory=lambda: ArchiveLimits(min_free_bytes=0))


class Draws:
    """A scripted random source: the given numbers in turn (then 0.5), each one remembered."""

    def __init__(self, *numbers: float) -> None:
        self.numbers = list(numbers)
        self.drawn: list[float] = []

    def __call__(self) -> float:
        value = self.numbers.pop(0) if self.numbers else 0.5
        self.drawn.append(value)
        return value


class ScriptedDevice:
    """A loopback TCP server that answers one connection with scripted pieces."""

    def __init__(self, pieces: list[bytes], *, stall: bool = False, reset: bool = False) -> None:
        self.pieces = pieces
        self.stall = stall
        self.reset = reset
        self.requests: list[bytes] = []
        self.server: asyncio.Server | None = None
        self._release = asyncio.Event()
        self._handlers: set[asyncio.Task] = set()

    async def __aenter__(self) -> ScriptedDevice:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._release.set()
        self.server.close()
        await asyncio.wait_for(self.server.wait_closed(), 5)
        await asyncio.wait_for(asyncio.gather(*self._handlers, return_exceptions=True), 5)

    @property
    def port(self) -> int:
        return self.server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._handlers.add(asyncio.current_task())
        self.requests.append(await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5))
        for piece in self.pieces:
            writer.write(piece)
            await writer.drain()
            await asyncio.sleep(0.001)
        if self.stall:
            await asyncio.wait_for(self._release.wait(), 10)
        if self.reset:
            await asyncio.sleep(0.05)  # let the client read what was sent before the reset
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return
        writer.close()
        await writer.wait_closed()


class ScriptedStream:
    """Stands in for ProfilerStream: plays ``script`` (``(delay, bytes)`` steps, then an end
    or an error) into the delivery callback, and records what the archive held right after
    each callback returned."""

    def __init__(self, script: list, end: BaseException | None = None, hold: bool = False):
        self.script, self.end_error, self.hold = script, end, hold
        self.connected_at = time.time()
        self.last_data: float | None = None
        self.response = ResponseReader()
        self.response.state = "body"
        self.closed = asyncio.Event()
        self.played = asyncio.Event()  # every step of the script was delivered
        self.archive_after_callback: list[int] = []
        self.archive: Path | None = None
        self._player: asyncio.Task | None = None

    def deliver(self, sink) -> None:
        self._player = asyncio.get_running_loop().create_task(self._play(sink))

    async def _play(self, sink) -> None:
        for delay, data in self.script:
            await asyncio.sleep(delay)
            if self.closed.is_set():
                return
            self.last_data = time.monotonic()
            sink(data)
            files = sorted(self.archive.glob("*/*/capture.bsprof"))
            self.archive_after_callback.append(files[0].stat().st_size if files else -1)
        self.played.set()
        if not self.hold:
            self.closed.set()

    async def wait_end(self, idle_timeout: float | None = None) -> None:
        await self.closed.wait()
        if self.end_error is not None:
            raise self.end_error

    def close(self) -> None:
        self.closed.set()

    async def aclose(self) -> None:
        self.close()
