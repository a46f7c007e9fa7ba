"""Writing one run's profiler stream to its client: random splits, byte accounting and faults."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import random
import socket
import struct
import termios
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from rokuprof.simulator.config import Fault
from rokuprof.simulator.runs import CLIENT_GONE, CUT, STALLED, RunRecord
from rokuprof.simulator.tcp import close_writer

OPEN, HELD, DEAD = "open", "held", "dead"


async def wait_acknowledged(sock, clock: Callable[[], float], timeout: float = 1.0) -> None:
    """Wait until the kernel send queue of ``sock`` is empty (Linux ``SIOCOUTQ``), so that a
    reset does not discard bytes the device counts as sent; at most ``timeout`` seconds of
    ``clock`` (monotonic)."""
    deadline = clock() + timeout
    while clock() < deadline:
        try:
            raw = fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0\0\0\0")
        except OSError:
            return
        if struct.unpack("i", raw)[0] == 0:
            return
        await asyncio.sleep(0.002)


@dataclass(eq=False)
class StreamOutput:
    """The device side of one profiler connection.

    ``send`` writes bytes split at random places (so a client sees varints and strings cut
    anywhere), records every byte in the run record and applies the run's faults when their
    byte count is reached. Once the connection is gone, later data is dropped, as a device
    does when its client disappears. ``rng`` draws the splits and ``clock`` (monotonic
    seconds) times stalls: both are inputs, so a test replays a stream exactly.
    """

    writer: asyncio.StreamWriter
    record: RunRecord
    faults: list[Fault]  # kept in the order they fire
    rng: random.Random
    _: KW_ONLY
    clock: Callable[[], float]
    max_pieces: int = 4
    keep_bytes: bool = True
    state: str = field(init=False, default=OPEN)
    held: bytearray = field(init=False, default_factory=bytearray)
    resume_at: float = field(init=False, default=float("inf"))

    def __post_init__(self) -> None:
        self.faults = sorted(self.faults, key=lambda f: f.after_bytes)
        sock = self.writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def alive(self) -> bool:
        return self.state != DEAD

    async def send(self, data: bytes, *, split: bool = True) -> None:
        view = memoryview(data)
        if self.state == HELD:
            if self.clock() < self.resume_at:
                self.held += view
                return
            self.state = OPEN
            view = memoryview(bytes(self.held) + bytes(view))
            self.held.clear()
        while self.state == OPEN:
            fault = self.faults[0] if self.faults else None
            if fault is not None and fault.after_bytes <= self.record.bytes_sent + len(view):
                n = max(0, fault.after_bytes - self.record.bytes_sent)
                await self._write(view[:n], split)
                view = view[n:]
                self.faults.pop(0)
                if self.state == OPEN:
                    await self._fire(fault)
                continue
            await self._write(view, split)
            return
        if self.state == HELD:
            self.held += view

    async def hold_until_resumed(self) -> None:
        """At app exit: wait for a timed stall to end (so its data still goes out)."""
        if self.state == HELD and self.resume_at != float("inf"):
            await asyncio.sleep(max(0.0, self.resume_at - self.clock()))
            await self.send(b"")

    async def cut(self, reset: bool) -> None:
        """Drop the connection now: RST when ``reset``, else an orderly close (FIN)."""
        if self.state == DEAD:
            return
        self.record.faults_fired.append("reset" if reset else "close")
        await self._drop(reset, CUT)

    async def close(self) -> None:
        """Normal end of the stream (after the footer), or the end of a run that stalled."""
        if self.state == DEAD:
            return
        if self.state == HELD:
            self.record.status = STALLED
        self.state = DEAD
        await self._flush()
        await close_writer(self.writer)

    async def abort(self) -> None:
        self.state = DEAD
        self.writer.transport.abort()
        await close_writer(self.writer)

    # -- internals ---------------------------------------------------------------------------

    async def _write(self, data: memoryview, split: bool) -> None:
        if not data:
            return
        pieces = [data]
        if split and len(data) > 1 and self.max_pieces > 1:
            count = self.rng.randint(0, min(self.max_pieces - 1, len(data) - 1))
            cuts = sorted(self.rng.sample(range(1, len(data)), count))
            pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
        for i, piece in enumerate(pieces):
            if self.writer.is_closing():
                await self._gone()
                return
            self.writer.write(piece)
            self.record.bytes_sent += len(piece)
            if self.keep_bytes:
                self.record.data += piece
            try:
                await self.writer.drain()
            except (ConnectionError, OSError):
                await self._gone()
                return
            if i + 1 < len(pieces):
                await asyncio.sleep(0)  # let the pieces travel as separate segments

    async def _fire(self, fault: Fault) -> None:
        self.record.faults_fired.append(fault.kind)
        if fault.kind == "garbage":
            await self._write(memoryview(fault.data), split=False)
        elif fault.kind == "stall":
            self.state = HELD
            if fault.stall_seconds is not None:
                self.resume_at = self.clock() + fault.stall_seconds
        else:
            await self._drop(fault.kind == "reset", CUT)

    async def _drop(self, reset: bool, status: str) -> None:
        self.state = DEAD
        self.record.status = status
        writer = self.writer
        sock = writer.get_extra_info("socket")
        await self._flush()
        if reset and sock is not None:
            await wait_acknowledged(sock, self.clock)
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
        await close_writer(writer)

    async def _flush(self, timeout: float = 2.0) -> None:
        """Drain what is buffered, but never wait long for a client that does not read."""
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            await asyncio.wait_for(self.writer.drain(), timeout)

    async def _gone(self) -> None:
        self.state = DEAD
        self.record.status = CLIENT_GONE
        await close_writer(self.writer)
