"""The per-device capture loop: wait for an app run, capture it, wait for the next one.

One :class:`DeviceCapture` per device; it keeps no global state and never blocks the event loop,
so a daemon can run many side by side. It stops when its stop trigger is set (an
:class:`asyncio.Event` it is given, or :meth:`DeviceCapture.request_stop`), after ``runs`` runs,
or after ``duration`` seconds; a run in progress is then finished as ``interrupted``.

While waiting it tries to connect to the profiler port every ``poll_interval`` seconds: a
profiled app does not start until a client connects, so this bounds the delay the capture adds
to an app's start. The device is identified by ECP ``device-info`` (its serial number names the
device directory; without ECP the host does).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof.bsprof.model import Limits
from rokuprof.capture.chunks import ChunkSinkFactory, sentry_sink_factory
from rokuprof.capture.exports import export_finished_run, export_formats
from rokuprof.capture.limits import ArchiveLimits, floor_message, free_bytes
from rokuprof.capture.run import NoData, RunCapture, RunSettings
from rokuprof.capture.session import SessionRecord, safe_name
from rokuprof.capture.status import (
    FINISHED,
    STOPPED,
    STREAMING,
    WAITING,
    CaptureObserver,
    CaptureStatus,
    NullObserver,
)
from rokuprof.device.console import DEFAULT_CONSOLE_PORT, BsprofStatus, ConsoleClient
from rokuprof.device.control import ControlResult, control
from rokuprof.device.ecp import DEFAULT_ECP_PORT, ActiveApp, DeviceInfo, EcpClient
from rokuprof.device.errors import DeviceError, LimitedModeError
from rokuprof.device.stream import DEFAULT_PROFILER_PORT, ProfilerStream
from rokuprof.store.files import sweep_tmp

UNREACHABLE_BACKOFF = 30.0  # seconds: the longest wait between connects to an unreachable device
LOW_SPACE_RECHECK = 5.0  # seconds between free-space checks while below the floor

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CaptureConfig:
    """Everything one device's capture loop needs."""

    host: str
    out: Path = Path("rokuprof-data")
    profiler_port: int = DEFAULT_PROFILER_PORT
    ecp_port: int = DEFAULT_ECP_PORT
    console_port: int = DEFAULT_CONSOLE_PORT
    chunk_seconds: float = 60.0
    delta_seconds: float = 1.0
    poll_interval: float = 0.25  # between connect attempts while no app runs
    max_backoff: float = 2.0  # after answers that are not a profile
    connect_timeout: float = 2.0
    idle_timeout: float = 120.0  # a run ends as truncated after this long without a byte
    ecp_timeout: float = 3.0
    use_ecp: bool = True
    use_console: bool = True  # ask the debug console for the profiler status at each run
    runs: int | None = None  # stop after this many runs
    duration: float | None = None  # stop after this many seconds
    environment: str | None = None
    release: str | None = None
    device_dir: str | None = None  # overrides the serial number / host as directory name
    chunks: bool = True  # build Sentry chunks (else only the archive and session.json)
    exports: tuple[str, ...] = ()  # formats written into the session directory at a run's end
    limits: Limits = field(default_factory=Limits)  # bounds on what a stream may make us hold
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)  # bytes on the disk
    free_space: Callable[[Path], int] = free_bytes  # bytes free on a path's file system

    def __post_init__(self) -> None:
        if not 0 < self.chunk_seconds <= 60:
            raise ValueError("chunk_seconds must be in (0, 60] (Sentry chunks hold at most 60 s)")
        for name in ("delta_seconds", "poll_interval", "connect_timeout", "idle_timeout"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0")
        if self.runs is not None and self.runs < 1:
            raise ValueError("runs must be >= 1")
        if self.duration is not None and self.duration <= 0:
            raise ValueError("duration must be > 0")
        object.__setattr__(self, "exports", export_formats(self.exports))

    def run_settings(self) -> RunSettings:
        return RunSettings(
            out=Path(self.out),
            chunk_seconds=self.chunk_seconds,
            delta_seconds=self.delta_seconds,
            idle_timeout=self.idle_timeout,
            environment=self.environment,
            release=self.release,
            limits=self.limits,
            archive_limits=self.archive_limits,
            free_space=self.free_space,
        )


@dataclass
class CapturedSession:
    record: SessionRecord
    path: Path


@dataclass
class CaptureSummary:
    """What a capture loop did, for the command's final report."""

    host: str
    device: str
    sessions: list[CapturedSession] = field(default_factory=list)
    stop_reason: str = ""
    problems: list[str] = field(default_factory=list)


class DeviceCapture:
    """The capture loop of one device (see the module docstring)."""

    def __init__(
        self,
        config: CaptureConfig,
        *,
        observer: CaptureObserver | None = None,
        sink_factory: ChunkSinkFactory | None = None,
        stop: asyncio.Event | None = None,
    ) -> None:
        self.config = config
        self.observer = observer or NullObserver()
        if sink_factory is None and config.chunks:
            sink_factory = sentry_sink_factory(config.chunk_seconds)
        self.sink_factory = sink_factory
        self.external_stop = stop
        self.status = CaptureStatus(host=config.host)
        self.summary = CaptureSummary(config.host, "")
        self.device_info: DeviceInfo | None = None
        self._stop = asyncio.Event()
        self._identify_task: asyncio.Task | None = None
        self._ecp_problem = ""
        self._ecp_limited = False
        self._swept: set[str] = set()
        self._last_warning = ""
        self._cuts = 0  # runs in a row that an archive limit ended
        self._low_space = ""  # the free-space warning last given

    def request_stop(self, reason: str = "stopped") -> None:
        """Ask the loop to stop (a run in progress is finished as ``interrupted``)."""
        if not self._stop.is_set():
            self.summary.stop_reason = self.summary.stop_reason or reason
            self._stop.set()

    # -- for a live view's keys: the device's profiler, on request ----------------------------

    async def profiler_command(self, action: str) -> ControlResult:
        """``status``, ``pause`` or ``resume`` on the device's debug console, within the ECP
        timeout; raises :class:`~rokuprof.device.errors.DeviceError` when that fails."""
        cfg = self.config
        return await control(cfg.host, action, cfg.console_port, cfg.ecp_timeout)

    # -- device identity ---------------------------------------------------------------------

    async def _query_device_info(self) -> DeviceInfo | None:
        cfg = self.config
        if not cfg.use_ecp:
            return None
        try:
            async with EcpClient(cfg.host, cfg.ecp_port, cfg.ecp_timeout) as ecp:
                info = await ecp.device_info()
        except LimitedModeError as error:
            self._ecp_limited = True
            self._problem(str(error))
            return None
        except DeviceError as error:
            self._problem(f"no device info from ECP ({error}); the device directory is the host")
            return None
        self.device_info = info
        self._set_device()
        self.observer.on_state(self.status)
        return info

    def _problem(self, text: str) -> None:
        if text != self._ecp_problem:
            self._ecp_problem = text
            self.summary.problems.append(text)
            self.status.message = text
            self.observer.on_message(self.status, "warning", text)

    def _start_identify(self) -> None:
        if self.device_info is None and (self._identify_task is None or self._identify_task.done()):
            self._identify_task = asyncio.ensure_future(self._query_device_info())

    def _device_dir(self) -> str:
        if self.config.device_dir:
            return safe_name(self.config.device_dir)
        if self.device_info is not None and self.device_info.serial:
            return safe_name(self.device_info.serial)
        return safe_name(self.config.host)

    def _set_device(self) -> None:
        self.status.device = self.summary.device = self._device_dir()
        if self.device_info is not None:
            self.status.device_name = self.device_info.name

    async def _identify(self) -> tuple[str, dict[str, object]]:
        """Wait (bounded) for the identity query; return the device dir and its description."""
        task = self._identify_task
        if task is not None and not task.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), self.config.ecp_timeout + 1)
        self._set_device()
        if self.status.device not in self._swept:  # leftovers of a crash in this device's dir
            self._swept.add(self.status.device)
            with contextlib.suppress(OSError):
                await asyncio.to_thread(sweep_tmp, Path(self.config.out) / self.status.device)
        device: dict[str, object] = {"dir": self.status.device, "host": self.config.host}
        info = self.device_info
        if info is not None:
            device.update(
                serial=info.serial,
                name=info.name,
                model=" ".join(p for p in (info.model_name, info.model_number) if p),
                software=info.software,
                developer_enabled=info.developer_enabled,
                ecp_mode=info.ecp_mode,
            )
        return self.status.device, device

    async def _query_active_app(self) -> ActiveApp | None:
        cfg = self.config
        if not cfg.use_ecp or self._ecp_limited:
            return None
        with contextlib.suppress(DeviceError):
            async with EcpClient(cfg.host, cfg.ecp_port, cfg.ecp_timeout) as ecp:
                return await ecp.active_app()
        return None

    async def _query_profiler_status(self) -> BsprofStatus | None:
        cfg = self.config
        if not cfg.use_console:
            return None
        try:
            async with ConsoleClient(cfg.host, cfg.console_port, timeout=cfg.ecp_timeout) as c:
                status = await c.bsprof_status()
        except DeviceError:
            return None
        if status is not None and status.state == "paused":
            text = (
                "the profiler is paused (bsprof_pause_on_start?): little is recorded until "
                f"`rokuprof control {cfg.host} resume`"
            )
            self.status.message = text
            self.observer.on_message(self.status, "warning", text)
        return status

    async def _space_to_write(self) -> bool:
        """Whether the output file system has at least ``min_free_bytes`` free (a warning
        when it has not, said once per episode)."""
        cfg = self.config
        floor = cfg.archive_limits.min_free_bytes
        if not floor:
            return True
        try:
            free = await asyncio.to_thread(cfg.free_space, Path(cfg.out))
        except OSError:
            return True  # cannot tell: the writes will say
        if free >= floor:
            self._low_space = ""
            return True
        if not self._low_space:
            self._low_space = text = (
                floor_message(free, cfg.archive_limits, Path(cfg.out)) + ": waiting for space"
            )
            self.status.message = text
            self.observer.on_message(self.status, "warning", text)
        return False

    # -- the loop ----------------------------------------------------------------------------

    def _set_state(self, state: str) -> None:
        self.status.state = state
        self.observer.on_state(self.status)

    async def _sleep(self, seconds: float) -> None:
        """Sleep, waking early on stop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)

    async def _watch_triggers(self) -> None:
        waits = []
        if self.external_stop is not None:
            waits.append(asyncio.ensure_future(self.external_stop.wait()))
        if self.config.duration is not None:
            waits.append(asyncio.ensure_future(asyncio.sleep(self.config.duration)))
        if not waits:
            return
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            ext = waits[0] if self.external_stop is not None else None
            self.request_stop("stopped" if ext in done else "duration reached")
        finally:
            for w in waits:
                w.cancel()

    async def run(self) -> CaptureSummary:
        """Run until stopped; return what was captured."""
        triggers = asyncio.ensure_future(self._watch_triggers())
        self._set_device()
        self._start_identify()
        try:
            await self._loop()
        finally:
            triggers.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await triggers
            if self._identify_task is not None:
                self._identify_task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await self._identify_task
            self._set_state(STOPPED)
        return self.summary

    async def _loop(self) -> None:
        cfg = self.config
        backoff = cfg.poll_interval
        unreachable = 0  # connect attempts in a row that timed out or found no route
        self._set_state(WAITING)
        while not self._stop.is_set():
            if not await self._space_to_write():
                await self._sleep(LOW_SPACE_RECHECK)
                continue
            try:
                stream = await ProfilerStream.open(
                    cfg.host, cfg.profiler_port, connect_timeout=cfg.connect_timeout
                )
            except DeviceError as error:
                # Refused: the device is up and no app runs; keep polling (an app waits for us).
                # Timeout or no route: the device is off or away; back off, capped, with jitter.
                if isinstance(error.__cause__, ConnectionRefusedError):
                    unreachable = 0
                    await self._sleep(cfg.poll_interval)
                else:
                    unreachable += 1
                    ceiling = min(
                        UNREACHABLE_BACKOFF, cfg.poll_interval * 2 ** min(unreachable, 20)
                    )
                    await self._sleep(random.uniform(cfg.poll_interval, ceiling))
                continue
            unreachable = 0
            outcome = await self._capture_run(stream)
            if outcome is None:  # not a run: back off a little, up to max_backoff
                backoff = min(cfg.max_backoff, backoff * 2)
                await self._sleep(random.uniform(cfg.poll_interval, backoff))
                self._set_state(WAITING)
                continue
            backoff = cfg.poll_interval
            if self._cuts:  # a device that runs into a limit again and again: slow down
                await self._sleep(min(UNREACHABLE_BACKOFF, cfg.poll_interval * 2**self._cuts))
            if cfg.runs is not None and len(self.summary.sessions) >= cfg.runs:
                self.request_stop(f"--runs {cfg.runs} reached")
                break
            if not self._stop.is_set():
                self._set_state(WAITING)

    async def _capture_run(self, stream: ProfilerStream) -> CapturedSession | None:
        """Capture one connected stream; ``None`` if it turned out not to be a run."""
        self.status.run_started = time.monotonic()
        self._start_identify()
        app_task = asyncio.ensure_future(self._query_active_app())
        console_task = asyncio.ensure_future(self._query_profiler_status())
        side_tasks = (app_task, console_task)

        def extra_info() -> dict[str, dict[str, object]]:
            """What the side queries found, by session.json section."""
            out: dict[str, dict[str, object]] = {}
            app = _result(app_task)
            if app is not None:
                out["app"] = {"ecp": app.to_json()}
            profiler = _result(console_task)
            if profiler is not None:
                out["profiler"] = {"console_status": profiler.to_json()}
            return out

        capture = RunCapture(
            stream,
            self.config.run_settings(),
            self.status,
            self.observer,
            self._stop,
            identify=self._identify,
            sink_factory=self.sink_factory,
            extra_info=extra_info,
        )
        self._set_state(STREAMING)
        try:
            record, path = await capture.run()
        except DeviceError as error:
            text = str(error)
            quiet = isinstance(error, NoData) and self._stop.is_set()
            if not quiet and text != self._last_warning:  # say a repeated problem once
                self._last_warning = self.status.message = text
                self.observer.on_message(self.status, "warning", text)
            return None
        finally:
            await stream.aclose()
            for task in side_tasks:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
            if capture.record is None:
                self.status.run_started = None
        if self.config.exports:
            await self._export(capture, record)
        self._last_warning = ""
        self._cuts = min(self._cuts + 1, 20) if capture.cut is not None else 0
        session = CapturedSession(record, path)
        self.summary.sessions.append(session)
        self.status.runs_done = len(self.summary.sessions)
        self.status.last_status = record.status
        self.status.state = FINISHED
        self.observer.on_session_end(self.status, record, path)
        return session

    async def _export(self, capture: RunCapture, record: SessionRecord) -> None:
        """The end-of-run exports (a worker thread; a failure is recorded, never raised)."""
        outcome = await export_finished_run(
            capture.files, record, self.config.exports, limits=self.config.limits
        )
        for message in outcome.errors.values():
            self.observer.on_message(self.status, "warning", message)


def _result(task: asyncio.Task):
    """A finished task's result, else ``None``."""
    if task.done() and not task.cancelled() and task.exception() is None:
        return task.result()
    return None
