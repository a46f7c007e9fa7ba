"""The rules a device's supervisor follows (pure: times and random draws are inputs, no clock, no
I/O), in the style of :mod:`rokuprof.store.delivery`: :class:`Restarts` says how long to wait
before a failed capture loop starts again, :class:`RepeatFilter` whether a message the device
keeps sending is logged again. :class:`rokuprof.daemon.devices.DeviceSlot` awaits what they say.
"""

from __future__ import annotations

from dataclasses import dataclass

from rokuprof.backoff import backoff_delay

#: A message said again within this many seconds is not logged again.
REPEAT_LOG_SECONDS = 300.0


@dataclass
class Restarts:
    """Capped exponential backoff with full jitter between restarts of a capture loop; a loop
    that ran longer than the cap before failing starts the count again (it was healthy)."""

    base: float = 1.0
    cap: float = 60.0
    failures: int = 0  # failures in a row
    total: int = 0  # restarts ever

    def __post_init__(self) -> None:
        if not (self.base > 0 and self.cap > 0):
            raise ValueError("restart backoff: base and cap must be > 0")

    def after_failure(self, ran: float, draw: float) -> float:
        """Seconds to wait before the next loop: ``ran`` is how long the failed loop ran,
        ``draw`` a uniform number in [0, 1) (the jitter)."""
        if ran > self.cap:
            self.failures = 0
        self.failures += 1
        self.total += 1
        return backoff_delay(self.failures, self.base, self.cap, draw)


@dataclass
class RepeatFilter:
    """Says a message once, then again only when it changes or ``window`` seconds have passed
    (a device that keeps answering the same thing is logged once in a while)."""

    window: float = REPEAT_LOG_SECONDS
    _last: str = ""
    _at: float = 0.0
    _said: bool = False

    def admit(self, text: str, now: float) -> bool:
        """Whether ``text``, arriving at ``now`` (seconds on any monotonic clock), is logged."""
        if self._said and text == self._last and now - self._at < self.window:
            return False
        self._last, self._at, self._said = text, now, True
        return True
