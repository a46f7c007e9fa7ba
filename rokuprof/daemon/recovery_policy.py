"""What start-up does with one crashed session, and when its conversion is over budget (pure).

Recovery must never loop. A session whose conversion raised or went over its budget is *set
aside*: its ``session.json`` gets a ``recovery_failed`` entry and no later start converts it
again. A conversion that kills the process (out of memory, ``kill -9``, systemd's start timeout)
cannot record anything, so a marker file (``recovering.json``, the attempt number) is written
before each conversion and removed after it: a start that finds the marker knows the previous
process died converting that session, and after ``max_attempts`` such deaths sets it aside.

Everything here takes plain data (the record, the marker's content, a clock, a memory reading),
so the rules are tested without files or processes; :mod:`rokuprof.daemon.recovery` does the I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from rokuprof.store.layout import SessionStatus

#: Errors that mean the run never finished its chunks (a crash; a capture loop that failed).
UNFINISHED_KINDS = ("crash", "capture")
#: ``session.json`` key of a session set aside, and the ``errors`` kind that goes with it.
FAILED_KEY = "recovery_failed"
FAILED_KIND = "recovery"


@dataclass(frozen=True)
class RecoveryBudget:
    """What converting one crashed session may cost at start-up (``[recovery]``)."""

    max_seconds: float = 300.0  # wall time of one session's conversion
    max_memory: int = 4 << 30  # growth of the daemon's resident memory during it (bytes)
    max_attempts: int = 2  # conversions of a session the process may die in before set aside


class Action(StrEnum):
    NOTHING = "nothing"  # not a crashed session waiting for its conversion
    CONVERT = "convert"
    SET_ASIDE = "set-aside"  # the process died converting it ``max_attempts`` times
    CLEAR = "clear"  # a marker left after the session was recovered or set aside: remove it


@dataclass(frozen=True)
class Plan:
    action: Action
    attempt: int = 0  # of a conversion: 1 for the first
    reason: str = ""  # of a set-aside


def needs_catch_up(record: Mapping) -> bool:
    """A session closed after a crash (or a failed loop) whose archive was not converted yet and
    that was not set aside."""
    if record.get("status") != SessionStatus.INTERRUPTED:
        return False
    if "recovered" in record or FAILED_KEY in record:
        return False
    errors = record.get("errors")
    return isinstance(errors, list) and any(
        isinstance(e, Mapping) and e.get("kind") in UNFINISHED_KINDS for e in errors
    )


def attempts_of(marker: Mapping) -> int:
    """Conversions a marker says were started (an unreadable marker: one)."""
    value = marker.get("attempt", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def plan_session(record: Mapping, marker: Mapping | None, budget: RecoveryBudget) -> Plan:
    """What to do with a session given its ``session.json`` and its marker (``None``: no marker;
    ``{}``: a marker that cannot be read)."""
    if not needs_catch_up(record):
        return Plan(Action.CLEAR if marker is not None else Action.NOTHING)
    if marker is None:
        return Plan(Action.CONVERT, attempt=1)
    done = attempts_of(marker)
    if done < budget.max_attempts:
        return Plan(Action.CONVERT, attempt=done + 1)
    started = marker.get("started")
    last = f", the last one started {started}" if isinstance(started, str) else ""
    return Plan(
        Action.SET_ASIDE,
        reason=f"the daemon died during {done} conversion(s) of this session (out of memory,"
        f" killed, or systemd's start timeout){last}",
    )


def over_budget(budget: RecoveryBudget, seconds: float, grown: int | None) -> str | None:
    """Why a conversion that has run ``seconds`` and grown memory by ``grown`` bytes (``None``:
    unknown) is over ``budget``, or ``None``."""
    if seconds > budget.max_seconds:
        return f"over its time budget: {seconds:.3g} s, the budget is {budget.max_seconds:g} s"
    if grown is not None and grown > budget.max_memory:
        return (
            f"over its memory budget: memory grew by {grown / 2**20:.0f} MiB,"
            f" the budget is {budget.max_memory / 2**20:.0f} MiB"
        )
    return None


class OverBudget(Exception):
    """A conversion went over its :class:`RecoveryBudget`."""


class BudgetWatch:
    """Measures one conversion against ``budget`` from the moment it is made: :meth:`check`
    raises :class:`OverBudget`. ``clock`` gives seconds, ``memory`` the resident bytes (or
    ``None`` where they cannot be read)."""

    def __init__(
        self,
        budget: RecoveryBudget,
        clock: Callable[[], float],
        memory: Callable[[], int | None],
    ) -> None:
        self.budget = budget
        self.clock = clock
        self.memory = memory
        self.started = clock()
        self.base = memory()

    def check(self) -> None:
        now = self.memory() if self.base is not None else None
        grown = now - self.base if now is not None and self.base is not None else None
        reason = over_budget(self.budget, self.clock() - self.started, grown)
        if reason is not None:
            raise OverBudget(reason)


def mark_failed(record: dict, kind: str, message: str, at: str) -> dict:
    """Record in ``record`` (a ``session.json``) that its recovery failed: ``kind`` is
    ``"error"``, ``"budget"`` or ``"killed"``; later starts skip it (:func:`needs_catch_up`)."""
    record[FAILED_KEY] = {"at": at, "reason": kind, "message": message}
    record.setdefault("errors", []).append({"kind": FAILED_KIND, "message": message})
    return record


def describe_error(exc: BaseException) -> str:
    """``MemoryError``, ``RuntimeError: boom``: one line, at most 500 characters."""
    text = " ".join(str(exc).split())
    line = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    return line if len(line) <= 500 else line[:497] + "..."
