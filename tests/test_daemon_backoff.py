"""Reconnects: a device that refuses (up, no app running) is polled quickly; one that does not
answer at all (off, away) is retried with capped exponential backoff and jitter."""

from __future__ import annotations

import asyncio
import itertools
import random
import socket
import time
from pathlib import Path

import pytest

import rokuprof.capture.loop as loop
from rokuprof.capture.loop import CaptureConfig, DeviceCapture


async def attempts_in(
    port: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seconds: float
) -> list[float]:
    """Times of the capture loop's connect attempts to ``port`` during ``seconds``."""
    times: list[float] = []
    original = loop.ProfilerStream.open

    async def spy(*args, **kwargs):
        times.append(time.monotonic())
        return await original(*args, **kwargs)

    monkeypatch.setattr(loop.ProfilerStream, "open", spy)
    config = CaptureConfig(
        host="127.0.0.1",
        out=tmp_path,
        profiler_port=port,
        poll_interval=0.02,
        connect_timeout=0.05,
        use_ecp=False,
        use_console=False,
        duration=seconds,
    )
    await asyncio.wait_for(DeviceCapture(config).run(), seconds + 5)
    return times


async def test_refused_is_polled_and_silence_backs_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    refused_port = closed.getsockname()[1]
    closed.close()  # nothing listens: connections are refused at once
    refused = await attempts_in(refused_port, tmp_path, monkeypatch, 1.0)

    random.seed(5)  # the jitter's draws: the same every time
    hole = socket.socket()  # listens, never accepts: once its queue is full, SYNs go unanswered
    hole.bind(("127.0.0.1", 0))
    hole.listen(0)
    filler = socket.create_connection(hole.getsockname(), timeout=1)
    try:
        silent = await attempts_in(hole.getsockname()[1], tmp_path, monkeypatch, 1.5)
    finally:
        filler.close()
        hole.close()
    assert len(refused) >= 20  # every 20 ms or so
    assert 4 <= len(silent) <= 12
    gaps = [b - a for a, b in itertools.pairwise(silent)]
    assert max(gaps) > 0.2 > max(gaps[:2])  # without backoff every gap would be ~0.07 s
