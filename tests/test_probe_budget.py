"""The fleet's probe budget (rokuprof/capture/probes.py): at most ``limit`` turns at once and
``rate`` a second (time from a scripted clock), first come first served; a withdrawn, closed or
cancelled wait gives its turn to the next."""

from __future__ import annotations

import asyncio

import pytest
from scripted_clock import ScriptedClock
from waiting import until

from rokuprof.capture.probes import ProbeBudget


async def settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_at_most_limit_turns_at_once_then_first_come_first_served() -> None:
    budget = ProbeBudget(limit=2, rate=1000.0, clock=ScriptedClock())
    tickets = [budget.ticket() for _ in range(5)]
    assert [t.done() for t in tickets] == [True, True, False, False, False]
    assert budget.busy == 2 and budget.waiting == 3 and budget.waited == 3
    budget.release()
    assert [t.done() for t in tickets] == [True, True, True, False, False]  # the oldest first
    budget.release()
    budget.release()
    assert all(t.done() and t.result() for t in tickets) and budget.busy == 2


async def test_the_rate_holds_whatever_the_free_slots_and_time_refills_it() -> None:
    clock = ScriptedClock()
    budget = ProbeBudget(limit=100, rate=20.0, clock=clock)  # a burst of 20, then 20 a second
    first = [budget.ticket() for _ in range(20)]
    late = budget.ticket()
    assert all(t.result() for t in first) and not late.done()
    for _ in first:
        budget.release()  # slots free, but no token: still waits
    armed = budget._timer  # the budget's timer for the next token
    assert armed is not None
    await until(lambda: budget._timer is not armed, 2, step=0.005)  # it fired: and re-armed,
    assert not late.done() and budget._timer is not None  # as the scripted time has not moved
    clock.advance(0.06)  # a token's worth (and a little: a float sum)
    await asyncio.wait_for(late, 1.0)
    assert late.result() is True


async def test_withdrawn_and_closed_waits_end_without_a_turn_and_pass_it_on() -> None:
    budget = ProbeBudget(limit=1, rate=1000.0, clock=ScriptedClock())
    owner = object()
    held = budget.ticket()
    turns: list[bool] = []

    async def wait_turn(who: object | None) -> None:
        async with budget.turn(who) as granted:
            turns.append(granted)

    withdrawn = asyncio.ensure_future(wait_turn(owner))
    nxt = budget.ticket()
    await settle()
    budget.withdraw(owner)  # its loop was asked to stop
    await withdrawn
    assert turns == [False] and held.result() and not nxt.done()
    budget.release()  # the held turn ends: the withdrawn one is skipped, the next goes
    assert nxt.result() is True
    later = budget.ticket()
    budget.close()
    assert later.result() is False and budget.ticket().result() is False


async def test_a_cancelled_wait_gives_its_turn_to_the_next() -> None:
    budget = ProbeBudget(limit=1, rate=1000.0, clock=ScriptedClock())
    held = budget.ticket()

    async def probe() -> None:
        async with budget.turn():
            await asyncio.Event().wait()  # holds the turn until cancelled

    cancelled = asyncio.ensure_future(probe())
    nxt = budget.ticket()
    await settle()
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    assert held.result()
    budget.release()
    assert nxt.result() is True and budget.busy == 1 and budget.waiting == 0


def test_a_budget_needs_a_slot_and_a_rate() -> None:
    with pytest.raises(ValueError):
        ProbeBudget(limit=0)
    with pytest.raises(ValueError):
        ProbeBudget(rate=0.0)


async def test_a_turn_handed_back_early_is_given_on_once() -> None:
    budget = ProbeBudget(limit=1, rate=1000.0, clock=ScriptedClock())
    owner = object()
    entered = asyncio.Event()
    leave = asyncio.Event()

    async def connect_then_stream() -> None:
        async with budget.turn(owner) as granted:
            assert granted
            entered.set()
            await leave.wait()  # the device answered: it streams on, without the turn

    task = asyncio.ensure_future(connect_then_stream())
    await entered.wait()
    nxt = budget.ticket()
    assert not nxt.done()
    budget.hand_back(owner)
    budget.hand_back(owner)  # once only
    assert nxt.result() is True and budget.busy == 1
    leave.set()
    await task
    assert budget.busy == 1  # the block's end does not hand it back again
