"""Archive limits: bytes kept after corrupt data, bytes per session, and the free-space floor.
Each ends the session with the limit named in session.json; the archive stays a prefix of what
the device sent."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from capture_helpers import Recorder, run_capture, sim
from daemon_helpers import cap_config
from waiting import until

from rokuprof.bsprof.grammar import build_header
from rokuprof.capture import DeviceCapture
from rokuprof.capture import loop as capture_loop
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.capture.loop import CaptureConfig
from rokuprof.capture.session import read_record
from rokuprof.simulator import SimulatedDevice
from rokuprof.simulator.app import SyntheticApp
from rokuprof.simulator.config import GARBAGE

KIB = 1024
MIB = 1024 * KIB


def socket_buffers() -> int:
    """The most a loopback connection holds in flight: the sender's largest send buffer and
    the receiver's largest (autotuned) receive buffer."""
    most = [int(Path(f"/proc/sys/net/ipv4/tcp_{k}mem").read_text().split()[2]) for k in "wr"]
    return sum(most)


class GarbageFlood:
    """A profiler port that sends a valid header, then corrupt bytes as fast as it can,
    forever (until the client closes)."""

    def __init__(self) -> None:
        app = SyntheticApp(sim().app_config(0))
        self.header = build_header(app.header(int(time.time() * 1000)))
        self.sent = bytearray()
        self.closed_by_peer = asyncio.Event()
        self.server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> GarbageFlood:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n")
            block = self.header + GARBAGE + os.urandom(64 * KIB)
            while True:
                writer.write(block)
                self.sent += block
                await writer.drain()
                block = os.urandom(64 * KIB)
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            self.closed_by_peer.set()
        finally:
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


async def test_after_corrupt_data_archiving_stops_at_its_limit(tmp_path: Path) -> None:
    limit = 256 * KIB
    async with GarbageFlood() as flood:
        config = CaptureConfig(
            host="127.0.0.1",
            out=tmp_path,
            profiler_port=flood.port,
            use_ecp=False,
            use_console=False,
            runs=1,
            archive_limits=ArchiveLimits(max_bytes_after_error=limit, min_free_bytes=0),
        )
        summary = await run_capture(DeviceCapture(config), timeout=20)
        await asyncio.wait_for(flood.closed_by_peer.wait(), 5)  # we hung up, not the device

    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "failed"
    [decoder] = [e for e in record["errors"] if e["kind"] == "decoder"]
    [cut] = [e for e in record["errors"] if e["kind"] == "limit"]
    assert cut["limit"] == "max_bytes_after_error"
    assert "256 KiB" in cut["message"] and "closed the connection" in record["end_reason"]
    archive = (session.path / "capture.bsprof").read_bytes()
    assert len(archive) == decoder["offset"] + limit  # exactly the limit past the bad byte
    assert bytes(flood.sent).startswith(archive)
    assert len(flood.sent) > len(archive)  # the device had more to give
    # we hung up at the limit: past the archive, the flood sent only what the two sockets'
    # buffers can hold (read on, it would send a GiB a second until the 20 s timeout)
    assert len(flood.sent) - len(archive) <= socket_buffers() + MIB


async def test_a_session_ends_at_its_byte_cap(tmp_path: Path) -> None:
    cap = 3000
    async with SimulatedDevice(sim(run_seconds=4.0)) as dev:
        limits = ArchiveLimits(max_session_bytes=cap, min_free_bytes=0)
        summary = await run_capture(
            DeviceCapture(cap_config(dev, tmp_path, runs=1, archive_limits=limits)), timeout=20
        )
        sent = dev.sent_bytes(0)
    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "truncated"
    assert [e["limit"] for e in record["errors"] if e["kind"] == "limit"] == ["max_session_bytes"]
    assert record["end_reason"].startswith("the archive reached max_session_bytes (2.93 KiB)")
    assert (session.path / "capture.bsprof").read_bytes() == sent[:cap]
    assert record["bytes"] == cap


async def test_below_the_free_space_floor_a_session_ends_and_the_next_waits(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(capture_loop, "LOW_SPACE_RECHECK", 0.05)
    free = {"bytes": 10 * 2**30}
    looks: list[int] = []  # the free space seen at each look

    def free_space(path) -> int:
        looks.append(free["bytes"])
        return free["bytes"]

    limits = ArchiveLimits(min_free_bytes=2**30, check_seconds=0.0)
    recorder = Recorder()
    async with SimulatedDevice(sim(runs=None, run_seconds=3.0, speed=1.0)) as dev:
        config = cap_config(dev, tmp_path, runs=2, archive_limits=limits, free_space=free_space)
        capture = DeviceCapture(config, observer=recorder)
        task = asyncio.create_task(capture.run())
        try:
            await until(lambda: capture.status.bytes > 500, 10)
            free["bytes"] = 2**29  # the disk fills up (512 MiB left, floor 1 GiB)
            await until(lambda: len(capture.summary.sessions) == 1, 10)
            await until(lambda: any("waiting for space" in m for m in recorder.messages), 10)
            seen = len(looks)
            await until(lambda: len(looks) >= seen + 5, 10)  # five more looks at the disk
            assert len(capture.summary.sessions) == 1  # no session while below the floor
            assert capture.status.state != "streaming"
            free["bytes"] = 5 * 2**30
            await asyncio.wait_for(task, 20)  # the second run is captured once there is room
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    first, second = (read_record(s.path) for s in capture.summary.sessions)
    assert first["status"] == "truncated"
    [cut] = [e for e in first["errors"] if e["kind"] == "limit"]
    assert cut["limit"] == "min_free_bytes"
    assert "512 MiB free" in cut["message"] and "below min_free_bytes (1 GiB)" in cut["message"]
    assert not any(e["kind"] == "limit" for e in second["errors"])
    assert sum("waiting for space" in m for m in recorder.messages) == 1  # said once
