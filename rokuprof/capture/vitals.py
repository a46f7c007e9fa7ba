"""Device vitals and marks during a run, as pure policy and state (no I/O).

While a run streams, the app's CPU % and memory come from ``chanperf`` once every
``vitals_interval`` seconds: on the debug console (one connection kept across polls), or from ECP
``/query/chanperf`` when the console cannot be reached (or is not to be used).
:class:`VitalsState` says where to ask next (:meth:`~VitalsState.route`) and, after each answer,
when to ask again (:meth:`~VitalsState.answered`); it also keeps the run's summary for
``session.json`` (``"vitals"``). Our choices:

* "not available" (the app was built without ``run_as_process=1``): no reading, and the next
  question in :data:`NOT_AVAILABLE_INTERVAL` seconds (the answer will not change during a run;
  asking now and then costs nothing and notices a device that changes its mind);
* the console unreachable: ECP answers until the console is tried again, every
  :data:`CONSOLE_RETRY` seconds; ECP in limited mode (403): ECP is not asked again during the run;
  nothing left to ask: polling ends for the run;
* ``unavailable`` says why a run has no readings (ECP limited first: "ECP is in limited mode",
  with why the console could not be reached when it was tried); once one came it is ``null``.

:class:`Marks` keeps a run's named moments for ``session.json`` (``"marks"``), at most
:data:`MAX_MARKS` (past that only counted). :class:`SideData` carries either to the run machine,
which puts it in the record and its measurements in the next chunk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum

from rokuprof.sentry.side_measurements import Measure

NOT_AVAILABLE_INTERVAL = 10.0  # seconds between questions once the device said "not available"
CONSOLE_RETRY = 30.0  # seconds on ECP before the console is tried again
MAX_MARKS = 1000  # marks kept in session.json per run (more are counted)
MAX_LABEL = 200  # characters of a mark's label kept in session.json

CONSOLE = "console"
ECP = "ecp"
LIMITED = "ECP is in limited mode"
NOT_AVAILABLE = (
    "the device has no CPU or memory figures for this app (chanperf: not available; "
    "the app's manifest needs run_as_process=1)"
)


class Outcome(StrEnum):
    """What one ``chanperf`` question gave."""

    READING = "reading"
    NOT_AVAILABLE = "not_available"  # the device has no figures for this app
    UNREACHABLE = "unreachable"  # no connection (refused, timed out connecting, went away)
    LIMITED = "limited"  # ECP answered 403
    FAILED = "failed"  # an answer we could not use, or no answer in time


@dataclass(frozen=True, slots=True)
class Reading:
    """One ``chanperf`` answer: when (Unix seconds), the app's CPU % and memory in bytes."""

    time: float
    cpu_percent: int | None
    mem_bytes: int | None

    def to_json(self) -> dict[str, object]:
        return {
            "time": round(self.time, 3),
            "cpu_percent": self.cpu_percent,
            "mem_bytes": self.mem_bytes,
        }

    def figures(self) -> tuple[float, int | None, int | None]:
        return self.time, self.cpu_percent, self.mem_bytes

    def line(self) -> str:
        """Its line in ``vitals.jsonl`` (newline included)."""
        return json.dumps(self.to_json(), separators=(", ", ": ")) + "\n"


#: The fields of :class:`VitalsState` that sum up a run (``session.json``'s ``"vitals"``).
_SUMMARY = ("source", "readings", "max_cpu_percent", "max_mem_bytes", "unavailable")


@dataclass
class VitalsState:
    """Where to ask for vitals, when, and what a run's answers sum up to."""

    interval: float
    use_console: bool = True
    use_ecp: bool = True
    source: str | None = None  # where the last reading came from
    readings: int = 0
    max_cpu_percent: int | None = None
    max_mem_bytes: int | None = None
    unavailable: str | None = None
    last: Reading | None = None
    ecp_limited: bool = False
    console_retry_at: float = float("-inf")  # before this, the console is not asked
    console_why: str = ""  # why the console could not be reached, when it could not

    def route(self, now: float) -> str | None:
        """Where to ask now: :data:`CONSOLE`, :data:`ECP`, or ``None`` (nowhere left)."""
        ecp = self.use_ecp and not self.ecp_limited
        if self.use_console and (now >= self.console_retry_at or not ecp):
            return CONSOLE
        return ECP if ecp else None

    def answered(
        self,
        source: str,
        outcome: Outcome,
        now: float,
        reading: Reading | None = None,
        why: str = "",
    ) -> float | None:
        """Take one answer from ``source``; return the seconds until the next question, or
        ``None``: no more questions this run."""
        if outcome is Outcome.READING and reading is not None:
            self._add(source, reading)
            if source == CONSOLE:
                self.console_retry_at = float("-inf")
            return self.interval
        if outcome is Outcome.NOT_AVAILABLE:
            self._no_reading(NOT_AVAILABLE)
            return NOT_AVAILABLE_INTERVAL
        if outcome is Outcome.LIMITED:
            self.ecp_limited = True
            self._no_reading(self._limited_why())
            if not self.use_console:
                return None
            return max(0.0, self.console_retry_at - now)
        if source == CONSOLE and outcome is Outcome.UNREACHABLE:
            self.console_retry_at = now + CONSOLE_RETRY
            self.console_why = f"the debug console cannot be reached ({why or 'no reason'})"
            self._no_reading(self._limited_why() if self.ecp_limited else self.console_why)
            return 0.0 if self.route(now) == ECP else self.interval
        self._no_reading(why or None)
        return self.interval

    def _add(self, source: str, reading: Reading) -> None:
        self.source = source
        self.readings += 1
        self.unavailable = None
        self.last = reading
        if reading.cpu_percent is not None:
            self.max_cpu_percent = max(self.max_cpu_percent or 0, reading.cpu_percent)
        if reading.mem_bytes is not None:
            self.max_mem_bytes = max(self.max_mem_bytes or 0, reading.mem_bytes)

    def _limited_why(self) -> str:
        return f"{LIMITED}; {self.console_why}" if self.console_why else LIMITED

    def _no_reading(self, why: str | None) -> None:
        if self.readings == 0 and why:
            self.unavailable = why

    def summary(self) -> dict[str, object]:
        """``session.json``'s ``"vitals"``."""
        return {name: getattr(self, name) for name in _SUMMARY}


@dataclass
class Marks:
    """A run's named moments: ``{"label", "time", "offset"}`` each (``offset``: seconds since
    the session's ``start``), at most ``limit`` kept, the rest counted in ``dropped``."""

    start: float
    limit: int = MAX_MARKS
    items: list[dict[str, object]] = field(default_factory=list)
    dropped: int = 0

    def add(self, label: str, when: float) -> dict[str, object] | None:
        """Keep a mark and return it; past the limit, count it and return ``None``."""
        if len(self.items) >= self.limit:
            self.dropped += 1
            return None
        mark = {
            "label": label[:MAX_LABEL],
            "time": round(when, 6),
            "offset": round(when - self.start, 6),
        }
        self.items.append(mark)
        return mark

    def record(self) -> dict[str, object]:
        """The record's fields: a copy of the kept marks, and the count of the others."""
        return {"marks": list(self.items), "marks_dropped": self.dropped}


@dataclass(frozen=True)
class SideData:
    """For the run machine: ``session.json`` fields to set (``record``) and measurements for
    the next chunk."""

    record: dict[str, object]
    measures: tuple[Measure, ...] = ()
