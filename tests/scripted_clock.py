"""A clock the test moves: what the code under test reads as "now" is what the test said, so
timing rules are asserted exactly."""

from __future__ import annotations


class ScriptedClock:
    """A clock (call it for the time) that stands still until the test moves it."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        """Move the clock ``seconds`` forward."""
        self.now += seconds
