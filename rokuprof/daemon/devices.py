"""One supervised capture loop per device, and what the daemon counts about it.

A :class:`DeviceSlot` runs the same :class:`~rokuprof.capture.loop.DeviceCapture` as
``rokuprof watch``. If the loop ever ends by an error (a bug), the slot logs it and starts a new
loop after a capped exponential backoff with full jitter; a device's trouble stays its own.
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

from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.capture.session import SessionRecord
from rokuprof.capture.status import STREAMING, CaptureStatus
from rokuprof.daemon.recovery import close_session

log = logging.getLogger(__name__)

REPEAT_LOG_SECONDS = 300.0


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
    ) -> None:
        self.label = label
        self.config = config
        self.source = source  # "config" or "discovery"
        self.on_chunk_written = on_chunk
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.counters = DeviceCounters()
        self.capture: DeviceCapture | None = None
        self.task: asyncio.Task | None = None
        self._stop = asyncio.Event()
        self._last_message = ""
        self._last_message_at = 0.0
        self._unfinished: list[tuple[Path, str]] = []  # sessions a failed loop left open

    # -- figures -----------------------------------------------------------------------------

    @property
    def status(self) -> CaptureStatus | None:
        return self.capture.status if self.capture is not None else None

    @property
    def state(self) -> str:
        return self.status.state if self.status is not None else "starting"

    def bytes_total(self) -> int:
        st, c = self.status, self.counters
        return c.bytes_done + (st.bytes if c.live and st is not None else 0)

    def entries_total(self) -> int:
        st, c = self.status, self.counters
        return c.entries_done + (st.entries if c.live and st is not None else 0)

    def active_session(self) -> Path | None:
        st = self.status
        if st is not None and self.counters.live and st.state == STREAMING:
            return st.session_path
        return None

    # -- observer ----------------------------------------------------------------------------

    def on_state(self, status: CaptureStatus) -> None:
        pass

    def on_session_start(self, status: CaptureStatus) -> None:
        self.counters.live = True
        log.info("%s: session %s started", self.label, status.session)

    def on_chunk(self, status: CaptureStatus, path: Path) -> None:
        self.counters.chunks_written += 1
        self.on_chunk_written(path)

    def on_session_end(self, status: CaptureStatus, record: SessionRecord, path: Path) -> None:
        c = self.counters
        c.live = False
        c.bytes_done += record.bytes
        c.entries_done += record.entries
        c.sessions[record.status] += 1
        level = logging.INFO if record.status == "complete" else logging.WARNING
        log.log(
            level,
            "%s: session %s %s: %d bytes, %d entries, %d chunks (%s)",
            self.label,
            record.session,
            record.status,
            record.bytes,
            record.entries,
            record.chunks,
            record.end_reason,
        )
        if record.status == "failed":
            self._error(f"session {record.session} failed: {record.end_reason}")

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None:
        if level in ("warning", "error"):
            self._error(text)
        now = time.monotonic()
        if text == self._last_message and now - self._last_message_at < REPEAT_LOG_SECONDS:
            return  # a device that keeps answering the same thing is logged once in a while
        self._last_message, self._last_message_at = text, now
        log.log(logging.ERROR if level == "error" else logging.WARNING, "%s: %s", self.label, text)

    def _error(self, text: str) -> None:
        self.counters.last_error = text
        self.counters.last_error_at = time.time()

    # -- supervision -------------------------------------------------------------------------

    async def _close_unfinished(self) -> None:
        """Close sessions a failed loop left ``streaming`` (retried while the disk refuses)."""
        for path, reason in list(self._unfinished):
            try:
                closed = await asyncio.to_thread(close_session, path, reason=reason, kind="capture")
            except OSError as exc:
                log.error("%s: cannot close session %s yet: %s", self.label, path.name, exc)
                continue
            self._unfinished.remove((path, reason))
            if closed:
                self.counters.sessions["interrupted"] += 1
                log.warning("%s: session %s closed as interrupted", self.label, path.name)

    def start(self) -> asyncio.Task:
        self.task = asyncio.create_task(self._supervise(), name=f"capture {self.label}")
        return self.task

    def request_stop(self, reason: str = "the daemon is stopping") -> None:
        self._stop.set()
        if self.capture is not None:
            self.capture.request_stop(reason)

    async def _supervise(self) -> None:
        failures = 0
        while not self._stop.is_set():
            self.capture = DeviceCapture(self.config, observer=self)
            if self._stop.is_set():
                break
            started = time.monotonic()
            try:
                await self.capture.run()
            except Exception as exc:  # disk full, or a bug: keep every device going
                if isinstance(exc, OSError):
                    log.error("%s: the capture stopped: %s", self.label, exc)
                else:
                    log.exception("%s: the capture loop failed", self.label)
                self._error(f"capture loop failed: {exc.__class__.__name__}: {exc}")
                if self.status is not None and self.status.session_path is not None:
                    # closed only if its session.json is missing or still says "streaming"
                    reason = f"the capture stopped during the run: {exc}"
                    self._unfinished.append((self.status.session_path, reason))
                self.counters.live = False
            await self._close_unfinished()
            if self._stop.is_set():
                break
            if time.monotonic() - started > self.backoff_cap:
                failures = 0
            failures += 1
            self.counters.restarts += 1
            ceiling = min(self.backoff_cap, self.backoff_base * 2 ** min(failures - 1, 20))
            delay = random.uniform(0, ceiling)
            log.warning("%s: restarting the capture loop in %.1f s", self.label, delay)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
