"""One supervised capture loop per device, and what the daemon counts about it.

A :class:`DeviceSlot` runs the same :class:`~rokuprof.capture.loop.DeviceCapture` as
``rokuprof watch``. If the loop ever ends by an error (a bug), the slot logs it and starts a new
loop after a capped exponential backoff with full jitter; a device's trouble stays its own. The
rules (when to restart, when a repeated message is said again) are pure
(:mod:`rokuprof.daemon.supervision`); the slot's clocks and random source are its inputs.

Logs and metrics name a device as its directory does (the rule: :mod:`rokuprof.daemon.naming`);
the config's name is also the ``name`` field.
A device's state is logged when it changes, not again while it lasts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.capture.config import device_dir
from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.capture.probes import ProbeBudget
from rokuprof.capture.record import SessionRecord
from rokuprof.capture.status import CaptureStatus, DeviceState
from rokuprof.capture.stop import StopCause
from rokuprof.daemon.recovery import close_session
from rokuprof.daemon.supervision import RepeatFilter, Restarts
from rokuprof.store.layout import SessionStatus
from rokuprof.views.live_log import state_line

log = logging.getLogger(__name__)

#: States worth a warning in the daemon's log (the others are information).
WARNING_STATES = frozenset({DeviceState.UNREACHABLE, DeviceState.BUSY, DeviceState.PAUSED})
#: States in which nothing has answered (yet): any other state means the device answers.
SILENT_STATES = frozenset({DeviceState.STARTING, DeviceState.UNREACHABLE, DeviceState.STOPPED})


@dataclass
class DeviceCounters:
    bytes_done: int = 0  # bytes of finished sessions
    entries_done: int = 0
    chunks_written: int = 0
    sessions: Counter = field(default_factory=Counter)  # final status -> count
    live: bool = False  # a session is open
    last_error: str = ""
    last_error_at: float | None = None
    restarts: int = 0


class DeviceSlot:
    """A device's capture loop, supervised, with its counters (also its capture observer)."""

    def __init__(
        self,
        label: str,
        config: CaptureConfig,
        *,
        on_chunk: Callable[[Path], None] = lambda path: None,
        source: str = "config",
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        rand: Callable[[], float] = random.random,
        probes: ProbeBudget | None = None,
    ) -> None:
        self.label = label
        self.clock = clock  # of :meth:`last_answer`, the restarts' backoff, repeated messages
        self.wall_clock = wall_clock  # when the last error was (a metric: seconds since 1970)
        self.rand = rand  # uniform in [0, 1): the jitter of restarts and of the loop's backoff
        self.probes = probes  # the fleet's budget of probes of silent devices
        self._answered_at: float | None = None
        self._state_seen = DeviceState.STARTING
        self.config = config
        self.source = source  # "config" or "discovery"
        self.on_chunk_written = on_chunk
        self.restarts = Restarts(backoff_base, backoff_cap)
        self._repeats = RepeatFilter()
        self.counters = DeviceCounters()
        self.capture: DeviceCapture | None = None
        self.task: asyncio.Task | None = None
        self._stop = asyncio.Event()
        self._unfinished: list[tuple[Path, str]] = []  # sessions a failed loop left open
        self._logged_state = ""
        self._logged_name = ""

    # -- figures -----------------------------------------------------------------------------

    @property
    def status(self) -> CaptureStatus | None:
        return self.capture.status if self.capture is not None else None

    @property
    def state(self) -> DeviceState:
        return DeviceState(self.status.state) if self.status is not None else DeviceState.STARTING

    @property
    def name(self) -> str:
        """The device's display name: its directory name (:mod:`rokuprof.daemon.naming`)."""
        st = self.status
        return st.device if st is not None and st.device else device_dir(self.config, None)

    def _log(self, level: int, message: str, *args: object) -> None:
        """A line about this device: its display name first; its config name as a field."""
        extra = {"device": self.name, "device_label": self.label}
        st = self.status
        shown = st.label if st is not None and st.label else self.label
        log.log(level, "%s: " + message, shown, *args, extra=extra)

    def bytes_total(self) -> int:
        st, c = self.status, self.counters
        return c.bytes_done + (st.bytes if c.live and st is not None else 0)

    def entries_total(self) -> int:
        st, c = self.status, self.counters
        return c.entries_done + (st.entries if c.live and st is not None else 0)

    def last_answer(self) -> float | None:
        """When the device was last known to answer (``clock`` time): now, unless its state
        is one of :data:`SILENT_STATES`; ``None`` if it never did."""
        return self._answered_at if self.state in SILENT_STATES else self.clock()

    def ecp_answered(self) -> bool:
        """Whether the device's ECP has answered its capture loop (said who it is, or refused
        to in limited mode): an SSDP reply alone does not make a device."""
        capture = self.capture
        return capture is not None and (
            capture.device_info is not None or capture.machine.ecp_up is True
        )

    def active_session(self) -> Path | None:
        st = self.status
        if st is not None and self.counters.live and DeviceState(st.state).in_run:
            return st.session_path
        return None

    # -- observer ----------------------------------------------------------------------------

    def on_state(self, status: CaptureStatus) -> None:
        previous, self._state_seen = self._state_seen, status.state
        if status.state not in SILENT_STATES or previous not in SILENT_STATES:
            self._answered_at = self.clock()  # it answers, or did until now
        if status.device and status.device != self._logged_name:
            if self._logged_name:
                self._log(logging.INFO, "ECP says this is %s (%s)", status.device, self.label)
            self._logged_name = status.device
        if status.state in (self._logged_state, DeviceState.WAITING, DeviceState.STARTING):
            return  # said when it began; a connect's "waiting" lasts until its answer
        line = state_line(status, self._logged_state)
        self._logged_state = status.state
        if line is not None:
            level = logging.WARNING if status.state in WARNING_STATES else logging.INFO
            self._log(level, "%s", line)

    def on_session_start(self, status: CaptureStatus) -> None:
        self.counters.live = True
        self._log(logging.INFO, "session %s started", status.session)

    def on_chunk(self, status: CaptureStatus, path: Path) -> None:
        self.counters.chunks_written += 1
        self.on_chunk_written(path)

    def on_session_end(self, status: CaptureStatus, record: SessionRecord, path: Path) -> None:
        c = self.counters
        c.live = False
        c.bytes_done += record.bytes
        c.entries_done += record.entries
        c.sessions[record.status] += 1
        level = logging.INFO if record.status == SessionStatus.COMPLETE else logging.WARNING
        self._log(
            level,
            "session %s %s: %d bytes, %d entries, %d chunks (%s)",
            record.session,
            record.status,
            record.bytes,
            record.entries,
            record.chunks,
            record.end_reason,
        )
        if record.status == SessionStatus.FAILED:
            self._error(f"session {record.session} failed: {record.end_reason}")

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None:
        if level in ("warning", "error"):
            self._error(text)
        if not self._repeats.admit(text, self.clock()):
            return  # a device that keeps answering the same thing is logged once in a while
        self._log(logging.ERROR if level == "error" else logging.WARNING, "%s", text)

    def _error(self, text: str) -> None:
        self.counters.last_error = text
        self.counters.last_error_at = self.wall_clock()

    # -- supervision -------------------------------------------------------------------------

    async def _close_unfinished(self) -> None:
        """Close sessions a failed loop left ``streaming`` (retried while the disk refuses)."""
        for path, reason in list(self._unfinished):
            try:
                closed = await asyncio.to_thread(close_session, path, reason=reason, kind="capture")
            except OSError as exc:
                self._log(logging.ERROR, "cannot close session %s yet: %s", path.name, exc)
                continue
            self._unfinished.remove((path, reason))
            if closed:
                self.counters.sessions[SessionStatus.INTERRUPTED] += 1
                self._log(logging.WARNING, "session %s closed as interrupted", path.name)

    def start(self) -> asyncio.Task:
        self.task = asyncio.create_task(self._supervise(), name=f"capture {self.label}")
        return self.task

    def request_stop(self, cause: StopCause = StopCause.REQUESTED) -> None:
        self._stop.set()
        if self.capture is not None:
            self.capture.request_stop(cause)

    async def _supervise(self) -> None:
        while not self._stop.is_set():
            self.capture = DeviceCapture(
                self.config, observer=self, rand=self.rand, probes=self.probes
            )
            if self._stop.is_set():
                break
            started = self.clock()
            try:
                await self.capture.run()
            except Exception as exc:  # disk full, or a bug: keep every device going
                if isinstance(exc, OSError):
                    self._log(logging.ERROR, "the capture stopped: %s", exc)
                else:
                    log.exception("%s: the capture loop failed", self.name)
                self._error(f"capture loop failed: {exc.__class__.__name__}: {exc}")
                if self.status is not None and self.status.session_path is not None:
                    # closed only if its session.json is missing or still says "streaming"
                    reason = f"the capture stopped during the run: {exc}"
                    self._unfinished.append((self.status.session_path, reason))
                self.counters.live = False
            await self._close_unfinished()
            if self._stop.is_set():
                break
            delay = self.restarts.after_failure(self.clock() - started, self.rand())
            self.counters.restarts = self.restarts.total
            self._log(logging.WARNING, "restarting the capture loop in %.1f s", delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
