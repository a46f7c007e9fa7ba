"""The scenario runner on a scripted clock: every press, launch and mark at its exact time."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from scripted_clock import ScriptedClock

from rokuprof.device.errors import LimitedModeError
from rokuprof.scenario import parse_scenario, run_scenario


class RecordingRemote:
    """A remote that notes what it was asked and when (on the scripted clock); a key press
    takes ``press_seconds`` of that clock, as a round trip to a device would."""

    def __init__(self, clock: ScriptedClock, press_seconds: float = 0.0) -> None:
        self.clock = clock
        self.press_seconds = press_seconds
        self.calls: list[tuple[float, str, object]] = []
        self.fail_on: str | None = None

    async def keypress(self, key: str) -> None:
        if key == self.fail_on:
            raise LimitedModeError("127.0.0.1", "ECP command not allowed in Limited mode.")
        self.calls.append((self.clock(), "keypress", key))
        self.clock.advance(self.press_seconds)

    async def launch(self, app_id: str = "dev", params: Mapping[str, str] | None = None) -> None:
        self.calls.append((self.clock(), f"launch {app_id}", dict(params or {})))


class Harness:
    def __init__(self, press_seconds: float = 0.0) -> None:
        self.clock = ScriptedClock(1000.0)
        self.remote = RecordingRemote(self.clock, press_seconds)
        self.sleeps: list[float] = []
        self.marks: list[tuple[str, float]] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.clock.advance(seconds)

    async def run(self, *steps: dict) -> None:
        scenario = parse_scenario({"steps": list(steps)}, "s.toml")
        await run_scenario(
            scenario,
            self.remote,
            on_mark=lambda label, when: self.marks.append((label, when)),
            sleep=self.sleep,
            clock=self.clock,
        )


async def test_steps_run_in_order_at_their_planned_times() -> None:
    h = Harness()
    await h.run(
        {"launch": {"contentId": "42", "mediaType": "episode"}},
        {"wait": 2},
        {"press": "Down", "repeat": 3, "interval": 0.25},
        {"mark": "scrolled"},
        {"text": "a z"},
        {"press": "Select"},
        {"wait": 1.5},
    )
    assert h.remote.calls == [
        (1000.0, "launch dev", {"contentId": "42", "mediaType": "episode"}),
        (1002.0, "keypress", "Down"),
        (1002.25, "keypress", "Down"),
        (1002.5, "keypress", "Down"),
        (1002.5, "keypress", "Lit_a"),
        (1002.5, "keypress", "Lit_ "),
        (1002.5, "keypress", "Lit_z"),
        (1002.5, "keypress", "Select"),
    ]
    assert h.marks == [("scrolled", 1002.5)]
    assert h.sleeps == [2.0, 0.25, 0.25, 1.5]  # the trailing wait is slept too
    assert h.clock() == 1004.0


async def test_slow_presses_do_not_push_the_plan_back() -> None:
    """Each press takes 0.125 s: the intervals are measured from the plan, so the sleeps
    shrink by that much and the run still ends on time."""
    h = Harness(press_seconds=0.125)
    await h.run({"press": "Up", "repeat": 4, "interval": 1.0}, {"wait": 2}, {"mark": "end"})
    assert [t for t, _, _ in h.remote.calls] == [1000.0, 1001.0, 1002.0, 1003.0]
    assert h.sleeps == [0.875, 0.875, 0.875, 1.875]
    assert h.marks == [("end", 1005.0)]


async def test_a_press_slower_than_its_interval_goes_late_and_the_next_catches_up() -> None:
    h = Harness(press_seconds=1.5)
    await h.run({"press": "Down", "repeat": 3, "interval": 1.0}, {"wait": 3}, {"mark": "m"})
    assert [t for t, _, _ in h.remote.calls] == [1000.0, 1001.5, 1003.0]
    assert h.sleeps == [0.5]  # 1004.5 -> 1005.0: back on the plan
    assert h.marks == [("m", 1005.0)]


async def test_device_errors_propagate_and_stop_the_scenario() -> None:
    h = Harness()
    h.remote.fail_on = "Select"
    with pytest.raises(LimitedModeError):
        await h.run({"press": "Down"}, {"press": "Select"}, {"mark": "never"})
    assert h.remote.calls == [(1000.0, "keypress", "Down")]
    assert h.marks == []
