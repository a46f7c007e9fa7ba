"""Holding a run's bytes while the output disk is full: the policy, pure (no I/O, no clock).

When a write of the archive (or of a chunk or ``session.json``) fails for lack of space
(``ENOSPC``, ``EDQUOT``), the run does not end: the shell keeps what it could not write in
memory, stops reading the stream (TCP backpressure: the device's own buffer holds the rest) and
tries the write again after a backoff (:data:`FIRST_RETRY` doubling to :data:`LONGEST_RETRY`)
while retention frees space. :class:`SpaceHold` says when to try again and when to give up:
after ``hold_seconds`` without a write going through, or when what is held passes the budget
(:func:`hold_budget`). Then the session ends ``truncated`` as before, saying why.
"""

from __future__ import annotations

import errno

from rokuprof.units import size

FIRST_RETRY = 0.1  # seconds before the first retry of a write the full disk refused
LONGEST_RETRY = 2.0  # the backoff doubles up to this
NO_SPACE = frozenset({errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)})


def no_space(error: BaseException) -> bool:
    """Whether ``error`` is a write refused for lack of space (the one failure that holds)."""
    return isinstance(error, OSError) and error.errno in NO_SPACE


def hold_budget(hold_bytes: int, max_bytes_after_error: int) -> int:
    """Bytes a run may hold in memory while the disk is full: the larger of the two."""
    return max(hold_bytes, max_bytes_after_error)


class SpaceHold:
    """One run's hold: when it began, when to retry next, and when it is over.

    :meth:`blocked` when a write fails for lack of space (the first starts the hold),
    :meth:`retry_at` for the next attempt, :meth:`give_up` for why the hold must end (``None``:
    keep holding), :meth:`cleared` when a write went through."""

    def __init__(self, seconds: float, budget: int) -> None:
        self.seconds = seconds
        self.budget = budget
        self.since: float | None = None  # when the hold began; None: not holding
        self.held = 0  # bytes held in memory now
        self.most_held = 0
        self.episodes = 0
        self._delay = FIRST_RETRY
        self._next = 0.0

    @property
    def holding(self) -> bool:
        return self.since is not None

    def blocked(self, held: int, now: float) -> None:
        """A write failed for lack of space; ``held`` bytes wait in memory now."""
        if self.since is None:
            self.since = now
            self.episodes += 1
            self._delay = FIRST_RETRY
        else:
            self._delay = min(self._delay * 2, LONGEST_RETRY)
        self._next = now + self._delay
        self.hold(held)

    def hold(self, held: int) -> None:
        """``held`` bytes wait in memory now (more arrived, or some were written)."""
        self.held = held
        self.most_held = max(self.most_held, held)

    def retry_at(self) -> float | None:
        """When to try the write again (``None``: not holding)."""
        return None if self.since is None else self._next

    def give_up(self, now: float) -> str | None:
        """Why the hold must end now, or ``None`` to keep holding."""
        if self.since is None:
            return None
        if self.held > self.budget:
            return (
                f"the disk stayed full while {size(self.held, exact=True)} waited in memory, "
                f"more than the hold budget ({size(self.budget, exact=True)})"
            )
        if now - self.since >= self.seconds:
            return f"the disk stayed full for {self.seconds:g} s (hold_seconds)"
        return None

    def cleared(self, now: float) -> float:
        """A write went through and nothing is held: the hold is over; returns its length."""
        began, self.since = self.since, None
        self.held = 0
        return 0.0 if began is None else max(0.0, now - began)
