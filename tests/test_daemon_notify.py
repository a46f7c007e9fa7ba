"""sd_notify over a real AF_UNIX datagram socket (path and abstract namespace)."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from pathlib import Path

import pytest

from rokuprof.daemon.notify import SEND_TIMEOUT, Notifier, notify, watchdog_interval


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


class Enough(Exception):
    """Ends the watchdog after the scripted number of waits."""


@pytest.mark.parametrize(
    ("health", "pinged"),
    [
        ([True] * 5, [True] * 5),
        ([False] * 5, []),
        ([True, False, False, True, True], [True] * 3),  # unhealthy: silent, then again
    ],
)
async def test_watchdog_pings_at_half_the_interval_while_healthy(
    tmp_path: Path, health: list[bool], pinged: list[bool]
) -> None:
    """Counted by events, not by sleeping: a ping (or not) before each wait of half
    ``WATCHDOG_USEC``, over a real datagram socket."""
    path = str(tmp_path / "wd.sock")
    script, waits = iter(health), []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == len(health):
            raise Enough

    with receiver(path) as sock:
        sock.setblocking(False)
        env = {"NOTIFY_SOCKET": path, "WATCHDOG_USEC": "100000"}  # ping every 0.05 s
        with pytest.raises(Enough):
            await Notifier(env).watchdog(lambda: next(script), sleep)
        pings = []
        while True:
            try:
                pings.append(sock.recv(64))
            except BlockingIOError:
                break
    assert waits == [0.05] * len(health)
    assert pings == [b"WATCHDOG=1"] * len(pinged)


async def test_without_a_watchdog_it_returns_at_once() -> None:
    waits = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    await Notifier({"NOTIFY_SOCKET": "/nowhere"}).watchdog(sleep=sleep)
    assert waits == []


def test_a_full_receiver_queue_does_not_block(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="rokuprof.daemon.notify")
    path = str(tmp_path / "full.sock")
    env = {"NOTIFY_SOCKET": path}
    with receiver(path):  # never read
        results = []
        while len(results) < 5000 and (not results or results[-1]):
            results.append(notify("STATUS=" + "x" * 4000, env))
    assert results[0] and not results[-1]
    # gave up quickly instead of blocking: the send timed out after the module's short bound
    assert caplog.records[-1].getMessage() == "sd_notify failed: timed out"
    assert SEND_TIMEOUT <= 0.1
