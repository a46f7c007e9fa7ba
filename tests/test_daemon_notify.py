"""sd_notify over a real AF_UNIX datagram socket (path and abstract namespace)."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from rokuprof.daemon.notify import Notifier, notify, watchdog_interval


def receiver(address: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(address)
    sock.settimeout(2.0)
    return sock


def test_notify_to_a_path_socket(tmp_path: Path) -> None:
    path = str(tmp_path / "notify.sock")
    with receiver(path) as sock:
        assert notify("READY=1\nSTATUS=capturing 2 devices", {"NOTIFY_SOCKET": path})
        assert sock.recv(4096) == b"READY=1\nSTATUS=capturing 2 devices"


def test_notify_to_an_abstract_socket() -> None:
    name = f"rokuprof-test-{uuid.uuid4().hex}"
    with receiver("\0" + name) as sock:
        assert Notifier({"NOTIFY_SOCKET": "@" + name}).stopping("draining uploads")
        assert sock.recv(4096) == b"STOPPING=1\nSTATUS=draining uploads"


def test_without_systemd_nothing_is_sent(tmp_path: Path) -> None:
    assert not notify("READY=1", {})
    assert not notify("READY=1", {"NOTIFY_SOCKET": "vsock:2:1"})
    assert not notify("READY=1", {"NOTIFY_SOCKET": str(tmp_path / "absent.sock")})


def test_watchdog_interval() -> None:
    assert watchdog_interval({"WATCHDOG_USEC": "10000000"}) == 5.0
    pid = str(os.getpid())
    assert watchdog_interval({"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": pid}) == 1.0
    assert watchdog_interval({"WATCHDOG_USEC": "2000000", "WATCHDOG_PID": "1"}) is None
    assert watchdog_interval({"WATCHDOG_USEC": "x"}) is None
    assert watchdog_interval({}) is None


@pytest.mark.parametrize("healthy", [True, False])
async def test_watchdog_pings_at_half_the_interval_while_healthy(
    tmp_path: Path, healthy: bool
) -> None:
    path = str(tmp_path / "wd.sock")
    with receiver(path) as sock:
        sock.setblocking(False)
        env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "100000"}  # ping every 0.05 s
        task = asyncio.create_task(Notifier(env).watchdog(lambda: healthy))
        await asyncio.sleep(0.28)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        pings = []
        while True:
            try:
                pings.append(sock.recv(64))
            except BlockingIOError:
                break
    if healthy:
        assert 3 <= len(pings) <= 7 and set(pings) == {b"WATCHDOG=1"}
    else:
        assert pings == []


def test_a_full_receiver_queue_does_not_block(tmp_path: Path) -> None:
    path = str(tmp_path / "full.sock")
    env = {"NOTIFY_SOCKET": path}
    with receiver(path):  # never read
        results = []
        while len(results) < 5000 and (not results or results[-1]):
            t0 = time.monotonic()
            results.append(notify("STATUS=" + "x" * 4000, env))
    assert results[0] and not results[-1]
    assert time.monotonic() - t0 < 0.5  # gave up quickly instead of blocking
