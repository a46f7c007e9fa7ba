"""Helpers for the capture loop's tests against the simulated device (test_capture_loop,
test_capture_hostile, test_capture_limits): a quick device, an observer that remembers what the
loop said, a bounded run."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from rokuprof.capture.loop import CaptureSummary, DeviceCapture
from rokuprof.capture.status import NullObserver
from rokuprof.simulator import DeviceConfig


def sim(**kw) -> DeviceConfig:
    """A quick device: app time runs 4x faster than real time unless a test needs real time."""
    base = dict(run_seconds=2.0, runs=1, run_gap=0.1, seed=3, burst_ticks=(2, 10), speed=4.0)
    return DeviceConfig(**(base | kw))


class Recorder(NullObserver):
    """Remembers when chunks were written and in which state."""

    def __init__(self) -> None:
        self.chunks: list[tuple[float, str, Path]] = []
        self.messages: list[str] = []
        self.states: list[str] = []

    def on_state(self, status) -> None:
        if not self.states or self.states[-1] != status.state:
            self.states.append(status.state)

    def on_chunk(self, status, path) -> None:
        self.chunks.append((time.monotonic(), status.state, path))

    def on_message(self, status, level, text) -> None:
        self.messages.append(text)


async def run_capture(capture: DeviceCapture, timeout: float = 15) -> CaptureSummary:
    return await asyncio.wait_for(capture.run(), timeout)
