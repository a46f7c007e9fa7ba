"""Reconnects, end to end on loopback: a device that refuses (up, no app running) is polled every
``poll_interval``; one that does not answer at all (off, away) is retried with capped exponential
backoff and jitter. The loop is given a seeded random source, so the waits it asks for are exact;
the gaps measured between its connects are never shorter than those waits."""

from __future__ import annotations

import asyncio
import itertools
import random
import socket
import time
from pathlib import Path

import pytest

from rokuprof.backoff import backoff_delay
from rokuprof.capture.device_machine import UNREACHABLE_BACKOFF, ConnectFailed, Wake
from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.device.stream import ProfilerStream

POLL = 0.02


async def attempts(
    port: int, tmp_path: Path, count: int, rand=random.random
) -> tuple[list[float], list[bool], list[float]]:
    """The capture loop's first ``count`` connects to ``port``: when each began, whether it was
    refused, and the wait the loop asked for after it."""
    times: list[float] = []
    refused: list[bool] = []
    waits: list[float] = []
    config = CaptureConfig(
        host="127.0.0.1",
        out=tmp_path,
        profiler_port=port,
        poll_interval=POLL,
        connect_timeout=0.05,
        use_ecp=False,
        use_console=False,
    )

    async def connect(*args, **kwargs):
        times.append(time.monotonic())
        if len(times) > count:
            capture.request_stop()
        return await ProfilerStream.open(*args, **kwargs)

    capture = DeviceCapture(config, connect=connect, rand=rand)
    handle = capture.machine.handle

    def seen(event):
        actions = handle(event)
        if isinstance(event, ConnectFailed):
            refused.append(event.refused)
            waits.extend(a.at - event.at for a in actions if isinstance(a, Wake))
        return actions

    capture.machine.handle = seen
    await asyncio.wait_for(capture.run(), 20)
    return times[:count], refused[:count], waits[:count]


def assert_waited(times: list[float], waits: list[float]) -> None:
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert all(gap >= wait - 1e-6 for gap, wait in zip(gaps, waits, strict=False)), (gaps, waits)


async def test_a_refusing_port_is_polled_every_poll_interval(tmp_path: Path) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens: connections are refused at once
    times, refused, waits = await attempts(port, tmp_path, 20)
    assert refused == [True] * 20
    assert waits == pytest.approx([POLL] * 20)
    assert_waited(times, waits)


async def test_silence_backs_off_exponentially_with_the_given_jitter(tmp_path: Path) -> None:
    hole = socket.socket()  # listens, never accepts: once its queue is full, SYNs go unanswered
    hole.bind(("127.0.0.1", 0))
    hole.listen(0)
    filler = socket.create_connection(hole.getsockname(), timeout=1)
    try:
        times, refused, waits = await attempts(
            hole.getsockname()[1], tmp_path, 5, random.Random(5).random
        )
    finally:
        filler.close()
        hole.close()
    assert refused == [False] * 5
    draws = random.Random(5)
    want = [
        backoff_delay(n + 1, POLL, UNREACHABLE_BACKOFF, draws.random(), floor=POLL)
        for n in range(1, 6)
    ]
    assert waits == pytest.approx(want)
    assert max(waits[:2]) < 0.07 < 0.2 < max(waits)  # without backoff every wait would be 0.02
    assert_waited(times, waits)
