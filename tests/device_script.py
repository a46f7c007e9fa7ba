"""Scripted inputs for the device machine's tests: the capture config's fields it reads, and a
random source that plays given numbers."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.capture.limits import ArchiveLimits

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
