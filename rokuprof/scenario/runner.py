"""Carry out a scenario against a remote (an ECP client) on a clock.

Every action has a planned offset from the scenario's start (:meth:`Scenario.actions`): the
runner sleeps until ``start + offset`` on the injected clock, then acts. Offsets are measured
from the plan, not from the previous action, so the time a key press takes does not add up
over a run: a late action goes at once and the ones after it are back on the plan as soon as
the plan allows. A trailing wait is slept too. Device errors propagate: the caller decides.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol

from rokuprof.scenario.model import Scenario

DEV_APP = "dev"


class Remote(Protocol):
    """What the runner needs of a device: key presses and a launch (EcpClient has both)."""

    async def keypress(self, key: str) -> None: ...

    async def launch(
        self, app_id: str = DEV_APP, params: Mapping[str, str] | None = None
    ) -> None: ...


async def run_scenario(
    scenario: Scenario,
    remote: Remote,
    *,
    on_mark: Callable[[str, float], None],
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    clock: Callable[[], float] = time.time,
) -> None:
    """Run ``scenario``'s steps in order on ``remote``; ``on_mark(label, clock())`` for marks."""
    start = clock()

    async def until(offset: float) -> None:
        delay = start + offset - clock()
        if delay > 0:
            await sleep(delay)

    for action in scenario.actions():
        await until(action.at)
        if action.kind == "keypress":
            await remote.keypress(action.value)
        elif action.kind == "launch":
            await remote.launch(DEV_APP, action.params)
        else:
            on_mark(action.value, clock())
    await until(scenario.planned_seconds())
