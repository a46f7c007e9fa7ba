"""The fleet's budget of probes: how many devices not known to answer are tried, at once and
per second.

A daemon may be given thousands of devices, many of them off or not there. Each such device's
capture loop backs off (:mod:`rokuprof.capture.device_machine`), but their connects and ECP
queries must not all run together: each holds a socket (a file descriptor) until its timeout,
and costs the event loop about a millisecond of CPU (an ECP query through httpx more), so a few
thousand at once starve everything else the daemon does (``/metrics``, a signal, the devices
that stream). So every capture loop of a daemon shares one :class:`ProbeBudget`: a loop whose
device is *silent* (nothing has answered yet, or it is ``unreachable``) takes a turn for each
connect or ECP query, waiting in line (first come, first served) while ``limit`` are in flight
or the ``rate`` (turns a second, with a burst of one second's worth) is spent. A device that
answers never waits for a turn: an app waiting for its client is not kept waiting behind silent
devices. With ``N`` silent devices each is therefore probed about every ``max(30, N / rate)``
seconds, and they cost at most ``rate`` probes a second, whatever ``N``.

A wait ends with a turn (``True``), or without one (``False``) when the waiter is withdrawn (its
loop was asked to stop) or the budget is closed (the daemon stops); cancelling a waiting task
gives its turn to the next. The time comes from ``clock`` (monotonic seconds).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator, Callable

#: Probes in flight at once, fleet-wide (each holds one socket for at most its timeout).
DEFAULT_PROBES = 64
#: Probes started per second, fleet-wide (about 5-10 % of a core for refused ones, measured).
DEFAULT_PROBE_RATE = 50.0


class ProbeBudget:
    """At most ``limit`` probes at once and ``rate`` a second (see the module docstring)."""

    def __init__(
        self,
        limit: int = DEFAULT_PROBES,
        rate: float = DEFAULT_PROBE_RATE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if limit < 1 or not rate > 0:
            raise ValueError("a probe budget needs at least one slot and a rate above 0")
        self.limit = limit
        self.rate = rate
        self.clock = clock
        self.burst = max(1.0, rate)  # tokens: one second's worth
        self.tokens = self.burst
        self._stamp: float | None = None  # when tokens were last counted
        self.busy = 0  # turns in progress
        self.closed = False
        self.waited = 0  # probes that had to wait for a turn
        self._line: deque[asyncio.Future[bool]] = deque()  # waiters, oldest first
        self._waiting = 0  # of them, those still waiting
        self._owners: dict[int, asyncio.Future[bool]] = {}  # id(owner) -> its waiting ticket
        self._held: set[int | None] = set()  # id(owner) of the turns granted and not handed back
        self._timer: asyncio.TimerHandle | None = None  # when the next token comes

    @property
    def waiting(self) -> int:
        return self._waiting

    def _token(self) -> bool:
        """Take a token if one is there (refilled at ``rate`` since the last count)."""
        now = self.clock()
        if self._stamp is not None:
            self.tokens = min(self.burst, self.tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def ticket(self) -> asyncio.Future[bool]:
        """A future that becomes ``True`` when a turn is this caller's (at once when one is
        free, a token is there and nobody waits), ``False`` when withdrawn or closed. Hand a
        ``True`` one back with :meth:`release`."""
        fut: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        if self.closed:
            fut.set_result(False)
        elif not self._waiting and self.busy < self.limit and self._token():
            self.busy += 1
            fut.set_result(True)
        else:
            self.waited += 1
            self._waiting += 1
            fut.add_done_callback(self._cancelled)
            self._line.append(fut)
            self._pump()
        return fut

    def _cancelled(self, fut: asyncio.Future[bool]) -> None:
        if fut.cancelled():  # a waiting task was cancelled: it left the line
            self._waiting -= 1

    def _answer(self, fut: asyncio.Future[bool], granted: bool) -> None:
        """End a wait in the line."""
        if not fut.done():
            self._waiting -= 1
            fut.set_result(granted)

    def withdraw(self, waiter: asyncio.Future[bool] | object) -> None:
        """The waiter (a ticket, or the owner of a :meth:`turn`) no longer wants a turn: its
        ticket ends ``False`` (a turn it was given already stays its own until released)."""
        fut = waiter if isinstance(waiter, asyncio.Future) else self._owners.get(id(waiter))
        if fut is not None:  # a ticket not done yet is one in the line
            self._answer(fut, False)

    def release(self) -> None:
        """A turn ended: the next in line may go."""
        self.busy = max(0, self.busy - 1)
        self._pump()

    def _pump(self) -> None:
        """Give turns to the first in line while slots and tokens allow; else wait for one."""
        while self._line and self.busy < self.limit and not self.closed:
            if self._line[0].done():  # withdrawn or cancelled
                self._line.popleft()
                continue
            if not self._token():
                if self._timer is None:
                    delay = max(0.001, (1.0 - self.tokens) / self.rate)
                    self._timer = asyncio.get_running_loop().call_later(delay, self._tick)
                return
            self.busy += 1
            self._answer(self._line.popleft(), True)

    def _tick(self) -> None:
        self._timer = None
        self._pump()

    def close(self) -> None:
        """No more turns: every waiter's ticket ends ``False``, and so do later ones."""
        self.closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        while self._line:
            self.withdraw(self._line.popleft())

    @contextlib.asynccontextmanager
    async def turn(self, owner: object | None = None) -> AsyncIterator[bool]:
        """Wait for a turn; yield whether it is ours (``False``: withdrawn or closed); hand it
        back at the end, also when the wait is cancelled after the turn was given. An
        ``owner``'s wait can be withdrawn with :meth:`withdraw` ``(owner)``, and its turn
        handed back early with :meth:`hand_back` ``(owner)``."""
        fut = self.ticket()
        key = id(owner) if owner is not None else None
        if key is not None:
            self._owners[key] = fut
        try:
            granted = await fut
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled() and fut.result():
                self.release()
            raise
        finally:
            if key is not None and self._owners.get(key) is fut:
                del self._owners[key]
        if granted and key is not None:
            self._held.add(key)
        try:
            yield granted
        finally:
            if granted and (key is None or key in self._held):
                self._held.discard(key)
                self.release()

    def hand_back(self, owner: object) -> None:
        """``owner``'s turn ends now, before its block does (its device answered)."""
        if id(owner) in self._held:
            self._held.discard(id(owner))
            self.release()
