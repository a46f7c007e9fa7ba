"""The asyncio shell that asks the device for the app's vitals while a run streams, and takes
the run's marks.

:class:`RunExtras` is what a device's capture loop keeps for them: per session it polls (once the
session is open), appends each reading to ``vitals.jsonl`` (a line each, never rewritten), and
hands readings and marks to the run (:meth:`~rokuprof.capture.run.RunCapture.side`: the record
and the next chunk).

:class:`VitalsPoller` asks ``chanperf`` on one debug-console connection kept open across
questions (opened again after a failure), or ECP ``/query/chanperf``, each question bounded by
the ECP timeout; where and when is :class:`~rokuprof.capture.vitals.VitalsState`'s to say. Every
answer goes to ``on_answer`` with the state (and the reading, if one came).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rokuprof.capture.vitals import CONSOLE, Marks, Outcome, Reading, SideData, VitalsState
from rokuprof.device.chanperf import ChanPerf
from rokuprof.device.console import ConsoleClient
from rokuprof.device.ecp import EcpClient
from rokuprof.device.errors import (
    DeviceError,
    DeviceTimeout,
    DeviceUnavailable,
    LimitedModeError,
)
from rokuprof.sentry.side_measurements import mark_measure, vitals_measures
from rokuprof.store.files import opener

if TYPE_CHECKING:
    from rokuprof.capture.config import CaptureConfig
    from rokuprof.capture.run import RunCapture
    from rokuprof.capture.status import CaptureObserver, CaptureStatus

Answer = tuple[Outcome, Reading | None, str]


class VitalsPoller:
    """Asks for vitals until :class:`VitalsState` says there is nowhere left to ask (or the
    task is cancelled: the capture's side tasks end with the run)."""

    def __init__(
        self,
        host: str,
        state: VitalsState,
        on_answer: Callable[[VitalsState, Reading | None], None],
        *,
        console_port: int,
        ecp_port: int,
        timeout: float,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.host = host
        self.state = state
        self.on_answer = on_answer
        self.console_port = console_port
        self.ecp_port = ecp_port
        self.timeout = timeout
        self.clock = clock
        self.sleep = sleep
        self.questions = 0
        self._console: ConsoleClient | None = None
        self._ecp: EcpClient | None = None

    async def run(self) -> None:
        try:
            while (source := self.state.route(self.clock())) is not None:
                asked = self.clock()
                self.questions += 1
                if source == CONSOLE:
                    outcome, reading, why = await self._ask_console()
                else:
                    outcome, reading, why = await self._ask_ecp()
                delay = self.state.answered(source, outcome, self.clock(), reading, why)
                self.on_answer(self.state, reading)
                if delay is None:
                    return
                await self.sleep(max(0.0, asked + delay - self.clock()) if delay else 0.0)
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        console, self._console = self._console, None
        ecp, self._ecp = self._ecp, None
        if console is not None:
            await console.aclose()
        if ecp is not None:
            await ecp.aclose()

    def _reading(self, perf: ChanPerf | None) -> Answer:
        if perf is None:
            return Outcome.NOT_AVAILABLE, None, ""
        mem = None if perf.mem_kib is None else perf.mem_kib * 1024
        return Outcome.READING, Reading(self.clock(), perf.cpu_percent, mem), ""

    async def _ask_console(self) -> Answer:
        try:
            if self._console is None:
                console = ConsoleClient(self.host, self.console_port, timeout=self.timeout)
                await console.connect()
                self._console = console
            return self._reading(await self._console.chanperf())
        except DeviceError as error:
            console, self._console = self._console, None  # a fresh connection next time
            if console is not None:
                await console.aclose(polite=False)
            kind = Outcome.UNREACHABLE if isinstance(error, DeviceUnavailable) else Outcome.FAILED
            return kind, None, str(error)

    async def _ask_ecp(self) -> Answer:
        if self._ecp is None:
            self._ecp = EcpClient(self.host, self.ecp_port, self.timeout)
        try:
            return self._reading(await self._ecp.chanperf())
        except LimitedModeError as error:
            return Outcome.LIMITED, None, str(error)
        except (DeviceUnavailable, DeviceTimeout) as error:
            return Outcome.UNREACHABLE, None, str(error)
        except DeviceError as error:
            return Outcome.FAILED, None, str(error)


class VitalsFile:
    """``vitals.jsonl``, opened at the first reading and appended a line at a time (a write of
    a few dozen bytes: cheap on the event loop). A failed write stops the file, said once."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file = None
        self.failed = False

    def append(self, reading: Reading) -> str:
        """Append one reading; return a problem to say (once), else ``""``."""
        if self.failed:
            return ""
        try:
            if self._file is None:
                # owner-only (the capture's file mode), never through a link
                self._file = open(self.path, "a", encoding="utf-8", opener=opener)  # noqa: SIM115
            self._file.write(reading.line())
            self._file.flush()
        except OSError as error:
            self.failed = True
            self.close()
            return f"vitals: cannot write {self.path}: {error.strerror or error}; readings stop"
        return ""

    def close(self) -> None:
        file, self._file = self._file, None
        if file is not None:
            with contextlib.suppress(OSError):
                file.close()


class RunExtras:
    """A device's vitals and marks, one session at a time (see the module docstring)."""

    def __init__(
        self, config: CaptureConfig, status: CaptureStatus, observer: CaptureObserver
    ) -> None:
        self.config = config
        self.status = status
        self.observer = observer
        self.session_open = asyncio.Event()
        self.marks: Marks | None = None
        self._marks_of: RunCapture | None = None  # the run whose session the marks are of
        self.state: VitalsState | None = None
        self._file: VitalsFile | None = None

    @property
    def polls(self) -> bool:
        cfg = self.config
        return cfg.vitals_interval > 0 and (cfg.use_console or cfg.use_ecp)

    def mark(self, run: RunCapture | None, label: str, when: float | None) -> bool:
        """A mark in the open session of ``run``: kept in ``session.json`` ``"marks"`` (at most
        :data:`~rokuprof.capture.vitals.MAX_MARKS`, the rest counted) and sent with the next
        chunk; ``False`` when no session is open (or it is ending)."""
        if run is None or run.machine is None or not run.machine.open:
            return False
        when = run.clock() if when is None else when
        start = run.machine.plan.start
        if self.marks is None or self._marks_of is not run:
            self.marks, self._marks_of = Marks(start), run
        kept = self.marks.add(label, when)
        measures = () if kept is None else (mark_measure(label, when, start),)
        return run.side(SideData(self.marks.record(), measures))

    async def poll(self, run: RunCapture) -> None:
        """Once the session is open: the app's vitals every ``vitals_interval`` seconds."""
        cfg = self.config
        self.status.vitals = None
        try:
            await self.session_open.wait()
            self.state = VitalsState(cfg.vitals_interval, cfg.use_console, cfg.use_ecp)
            poller = VitalsPoller(
                cfg.host,
                self.state,
                lambda state, reading: self._answered(run, state, reading),
                console_port=cfg.console_port,
                ecp_port=cfg.ecp_port,
                timeout=cfg.ecp_timeout,
                clock=run.clock,
            )
            await poller.run()
        finally:  # the run is over (this task is cancelled with it)
            self.session_open.clear()
            self.status.vitals = None
            if self._file is not None:
                self._file.close()
                self._file = None

    def _answered(self, run: RunCapture, state: VitalsState, reading: Reading | None) -> None:
        measures = () if reading is None else tuple(vitals_measures(*reading.figures()))
        if not run.side(SideData({"vitals": state.summary()}, measures)) or reading is None:
            return
        self.status.vitals = reading
        if self._file is None and run.files is not None:
            self._file = VitalsFile(run.files.dir.vitals)
        if self._file is not None and (problem := self._file.append(reading)):
            self.observer.on_message(self.status, "warning", problem)
