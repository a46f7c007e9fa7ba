"""The per-device capture loop: wait for an app run, capture it, wait for the next one.

One :class:`DeviceCapture` per device; it keeps no global state and never blocks the event loop,
so a daemon can run many side by side. It stops when its stop trigger is set (an
:class:`asyncio.Event` or :class:`~rokuprof.capture.signals.StopRequest` it is given, or
:meth:`DeviceCapture.request_stop` with a :class:`~rokuprof.capture.stop.StopCause`), after
``runs`` runs, or after ``duration`` seconds; a run in progress is then finished as
``interrupted``, and the cause is what the summary and the log say.

While waiting it tries to connect to the profiler port every ``poll_interval`` seconds: a
profiled app does not start until a client connects, so this bounds the delay the capture adds
to an app's start. A device that does not answer at all is retried with capped backoff.

The device's state (:class:`~rokuprof.capture.status.DeviceState`) says what is known:
``unreachable`` (ECP does not answer, checked every ``ecp_recheck`` seconds while the profiler
port refuses, or the profiler port times out), ``refused`` (no profiled app runs), ``waiting``
(connected, no data yet), ``busy`` (503: another client has the stream), ``streaming`` (from the
run's first byte), ``paused`` (the console's ``bsprof-status``, asked every ``console_poll``
seconds while a run streams). ECP limited mode is said once, with the setting to change.

The device's one display name is its directory name (:func:`device_dir`): the ``device_dir``
override, else its serial number from ECP ``device-info``, else ``host_name`` (the daemon's
``<host>-<port>`` for a host several devices share) or the host; a ``name_claim`` (the
daemon's) may change it, so that two live devices reporting one serial never share it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import shlex
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from rokuprof.backoff import backoff_delay
from rokuprof.bsprof.model import Limits
from rokuprof.capture.chunks import ChunkSinkFactory, sentry_sink_factory
from rokuprof.capture.exports import export_finished_run, export_formats
from rokuprof.capture.limits import ArchiveLimits, floor_message, free_bytes
from rokuprof.capture.record import SessionRecord
from rokuprof.capture.run import NoData, RunCapture, RunSettings
from rokuprof.capture.session import safe_name
from rokuprof.capture.signals import StopRequest
from rokuprof.capture.status import (
    CaptureObserver,
    CaptureStatus,
    DeviceState,
    NullObserver,
    idle_state,
)
from rokuprof.capture.stop import StopCause
from rokuprof.capture.tasks import alongside, cancel
from rokuprof.device.console import BsprofStatus, ConsoleClient
from rokuprof.device.constants import CONSOLE_PORT, ECP_PORT, PROFILER_PORT
from rokuprof.device.control import ControlResult, control
from rokuprof.device.ecp import ActiveApp, DeviceInfo, EcpClient
from rokuprof.device.errors import (
    ECP_SETTING_PATH,
    DeviceError,
    DeviceTimeout,
    DeviceUnavailable,
    HttpStatusError,
    LimitedModeError,
)
from rokuprof.device.hosts import url_host
from rokuprof.device.stream import ProfilerStream
from rokuprof.sentry.chunk import ChunkSettings
from rokuprof.store.files import sweep_tmp

UNREACHABLE_BACKOFF = 30.0  # seconds: the longest wait between connects to an unreachable device
LOW_SPACE_RECHECK = 5.0  # seconds between free-space checks while below the floor

log = logging.getLogger(__name__)


class Connect(Protocol):
    """Opens a device's profiler stream (:meth:`ProfilerStream.open`, or a test's script)."""

    def __call__(
        self, host: str, port: int, *, connect_timeout: float
    ) -> Awaitable[ProfilerStream]: ...


@dataclass(frozen=True)
class CaptureConfig:
    """Everything one device's capture loop needs."""

    host: str
    out: Path = Path("rokuprof-data")
    profiler_port: int = PROFILER_PORT
    ecp_port: int = ECP_PORT
    console_port: int = CONSOLE_PORT
    chunk_settings: ChunkSettings = field(default_factory=ChunkSettings)  # how chunks are made
    delta_seconds: float = 1.0
    poll_interval: float = 0.25  # between connect attempts while no app runs
    max_backoff: float = 2.0  # after answers that are not a profile
    connect_timeout: float = 2.0
    idle_timeout: float = 120.0  # a run ends as truncated after this long without a byte
    ecp_timeout: float = 3.0
    use_ecp: bool = True
    use_console: bool = True  # ask the debug console for the profiler status during runs
    console_poll: float = 3.0  # seconds between bsprof-status queries while a run streams
    ecp_recheck: float = 10.0  # seconds between ECP checks while the profiler port refuses
    runs: int | None = None  # stop after this many runs
    duration: float | None = None  # stop after this many seconds
    device_dir: str | None = None  # overrides the serial number / host as directory name
    host_name: str | None = None  # the name while no serial is known (default: the host)
    chunks: bool = True  # build Sentry chunks (else only the archive and session.json)
    exports: tuple[str, ...] = ()  # formats written into the session directory at a run's end
    limits: Limits = field(default_factory=Limits)  # bounds on what a stream may make us hold
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)  # bytes on the disk
    free_space: Callable[[Path], int] = free_bytes  # bytes free on a path's file system
    name_claim: Callable[[str], str] | None = None  # the name wanted -> the name to use

    def __post_init__(self) -> None:
        for name in (
            "delta_seconds",
            "poll_interval",
            "connect_timeout",
            "idle_timeout",
            "console_poll",
            "ecp_recheck",
        ):
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
            chunks=self.chunk_settings,
            delta_seconds=self.delta_seconds,
            idle_timeout=self.idle_timeout,
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
    failure: str = ""  # why the loop ended by an error (``watch``: its one error line)


def device_dir(config: CaptureConfig, info: DeviceInfo | None) -> str:
    """The device's one display name, used for its directory, in logs and in metrics: the
    ``device_dir`` override, else the serial number ECP gave, else ``host_name`` or the host."""
    if config.device_dir:
        return safe_name(config.device_dir)
    if info is not None and info.serial:
        return safe_name(info.serial)
    return safe_name(config.host_name or config.host)


def control_command(config: CaptureConfig, action: str) -> str:
    """The ``rokuprof control`` command line that reaches this device's console as the loop
    does (its port named when it is not the default)."""
    words = ["rokuprof", "control", config.host, action]
    if config.console_port != CONSOLE_PORT:
        words += ["--console-port", str(config.console_port)]
    return shlex.join(words)


class DeviceCapture:
    """The capture loop of one device (see the module docstring)."""

    def __init__(
        self,
        config: CaptureConfig,
        *,
        observer: CaptureObserver | None = None,
        sink_factory: ChunkSinkFactory | None = None,
        stop: asyncio.Event | StopRequest | None = None,
        connect: Connect | None = None,
    ) -> None:
        self.config = config
        self.connect: Connect = connect or ProfilerStream.open  # tests script a device with it
        self.observer = observer or NullObserver()
        if sink_factory is None and config.chunks:
            sink_factory = sentry_sink_factory(config.chunk_settings)
        self.sink_factory = sink_factory
        self.external_stop = stop
        self.stop = StopRequest()  # the one stop trigger of this loop and its runs
        self.status = CaptureStatus(host=config.host, device=self._claimed_name(None))
        self.summary = CaptureSummary(config.host, self.status.device)
        self.device_info: DeviceInfo | None = None
        self._ecp_task: asyncio.Task | None = None
        self._ecp_up: bool | None = None  # whether ECP answered when last asked
        self._ecp_error = ""  # why it did not
        self._ecp_checked = -1e9  # time.monotonic() of the last ECP check
        self._swept: set[str] = set()
        self._cuts = 0  # runs in a row that an archive limit ended
        self._profiler_state = ""  # the console's last word in this run: running / paused
        self._run_console: BsprofStatus | None = None  # its first status of the run
        self._run_app: ActiveApp | None = None
        self.current_run: RunCapture | None = None  # the run in progress, or the one that failed

    def request_stop(self, cause: StopCause | str = StopCause.REQUESTED, text: str = "") -> None:
        """Ask the loop to stop (a run in progress is finished as ``interrupted``); the first
        cause is the one recorded (``text``: how the summary says it, if not the cause's way)."""
        cause = StopCause(cause)
        if not self.stop.requested:
            self.summary.stop_reason = text or self._stop_text(cause)
        self.stop.request(cause)

    def _stop_text(self, cause: StopCause) -> str:
        cfg = self.config
        if cause is StopCause.RUNS and cfg.runs is not None:
            return f"--runs {cfg.runs} reached"
        if cause is StopCause.DURATION and cfg.duration is not None:
            return f"--duration {cfg.duration:g} s reached"
        return cause.describe()

    # -- for a live view's keys: the device's profiler, on request ----------------------------

    async def profiler_command(self, action: str) -> ControlResult:
        """``status``, ``pause`` or ``resume`` on the device's debug console, within the ECP
        timeout; raises :class:`~rokuprof.device.errors.DeviceError` when that fails."""
        cfg = self.config
        result = await control(cfg.host, action, cfg.console_port, cfg.ecp_timeout)
        if result.status is not None:
            self._on_profiler(result.status.state)
        elif not result.no_session and action in ("pause", "resume"):
            self._on_profiler("paused" if action == "pause" else "running")
        return result

    # -- what the device says: state, notes --------------------------------------------------

    def _set_state(self, state: DeviceState, detail: str = "") -> None:
        st = self.status
        if st.state == state and st.detail == detail:
            return
        st.state, st.detail = state, detail
        self.observer.on_state(st)

    def _say(self, cause: str, text: str, *, problem: bool = False) -> None:
        """A note that lasts while its cause does: said (logged) once, and again if it changes."""
        if self.status.note(cause, text):
            if problem:
                self.summary.problems.append(text)
            self.observer.on_message(self.status, "warning", text)

    def _on_profiler(self, state: str) -> None:
        """The console's word on the profiler of the running app (``running`` or ``paused``)."""
        self._profiler_state = state
        st = self.status
        if not st.state.in_run:
            return  # remembered for the run's first byte
        if state == "paused":
            self._set_state(
                DeviceState.PAUSED,
                f"resume with `{control_command(self.config, 'resume')}` (or the r key)",
            )
        elif st.state is DeviceState.PAUSED:
            self._set_state(DeviceState.STREAMING)

    # -- device identity and ECP -------------------------------------------------------------

    def _check_ecp(self, *, now: bool = False) -> None:
        """Ask ECP for the device's identity, in the background, when it is due."""
        cfg = self.config
        if not cfg.use_ecp or (self._ecp_task is not None and not self._ecp_task.done()):
            return
        due = time.monotonic() - self._ecp_checked >= cfg.ecp_recheck
        if now or due or self._ecp_up is None:
            self._ecp_checked = time.monotonic()
            self._ecp_task = asyncio.ensure_future(self._query_device_info())

    async def _query_device_info(self) -> DeviceInfo | None:
        cfg = self.config
        try:
            async with EcpClient(cfg.host, cfg.ecp_port, cfg.ecp_timeout) as ecp:
                info = await ecp.device_info()
        except (DeviceUnavailable, DeviceTimeout) as error:
            self._ecp_up, self._ecp_error = False, str(error)
            return None
        except LimitedModeError as error:  # 403: it answers, but will not say who it is
            self._ecp_up, self._ecp_error = True, str(error)
            self._set_ecp_mode("limited", str(error))
            return None
        except DeviceError as error:  # it answers, with something we cannot use
            self._ecp_up, self._ecp_error = True, str(error)
            return None
        self._ecp_up, self._ecp_error = True, ""
        self._set_ecp_mode(info.ecp_mode)
        if self.device_info is None:
            self.device_info = info
            self.status.clear_note("ecp")
            self._set_device()
            self.observer.on_state(self.status)
        return info

    def _set_ecp_mode(self, mode: str, text: str = "") -> None:
        self.status.ecp_mode = mode
        if mode != "limited":
            self.status.clear_note("limited")
            return
        self._say(
            "limited",
            text
            or (
                f"ECP on {self.config.host} is in limited mode: some device queries are refused. "
                f"To allow them, set {ECP_SETTING_PATH} to 'Permissive' on the device."
            ),
            problem=True,
        )

    def _claimed_name(self, info: DeviceInfo | None) -> str:
        """:func:`device_dir`, as ``name_claim`` lets this device use it."""
        name = device_dir(self.config, info)
        claim = self.config.name_claim
        return claim(name) if claim is not None else name

    def _set_device(self) -> None:
        self.status.device = self.summary.device = self._claimed_name(self.device_info)
        if self.device_info is not None:
            self.status.device_name = self.device_info.name

    async def _identify(self) -> tuple[str, dict[str, object]]:
        """Wait (bounded) for the identity query; return the device dir and its description."""
        cfg = self.config
        task = self._ecp_task
        if self.device_info is None and task is not None and not task.done():
            await asyncio.wait({task}, timeout=cfg.ecp_timeout + 1)
        self._set_device()
        if cfg.use_ecp and self.device_info is None:
            why = self._ecp_error or "no answer in time"
            named = "" if cfg.device_dir else f"; the device is named {self.status.device}"
            self._say("ecp", f"no device info from ECP ({why}){named}", problem=True)
        if self.status.device not in self._swept:  # leftovers of a crash in this device's dir
            self._swept.add(self.status.device)
            with contextlib.suppress(OSError):
                await asyncio.to_thread(sweep_tmp, cfg.out, self.status.device)  # no link
        device: dict[str, object] = {"dir": self.status.device, "host": cfg.host}
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

    async def _query_active_app(self) -> None:
        cfg = self.config
        if not cfg.use_ecp or (self.status.limited and self.device_info is None):
            return  # ECP refuses even device-info: it would refuse this too
        with contextlib.suppress(DeviceError):
            async with EcpClient(cfg.host, cfg.ecp_port, cfg.ecp_timeout) as ecp:
                self._run_app = await ecp.active_app()

    async def _query_profiler_status(self) -> BsprofStatus | None:
        cfg = self.config
        try:
            async with ConsoleClient(cfg.host, cfg.console_port, timeout=cfg.ecp_timeout) as c:
                return await c.bsprof_status()
        except DeviceError:
            return None

    async def _space_to_write(self) -> bool:
        """Whether the output file system has at least ``min_free_bytes`` free (a note while
        it has not, said once per episode)."""
        cfg = self.config
        floor = cfg.archive_limits.min_free_bytes
        if not floor:
            return True
        try:
            free = await asyncio.to_thread(cfg.free_space, Path(cfg.out))
        except OSError:
            return True  # cannot tell: the writes will say
        if free >= floor:
            self.status.clear_note("space")
            return True
        if "space" not in self.status.notes:
            text = floor_message(free, cfg.archive_limits, Path(cfg.out)) + ": waiting for space"
            self._say("space", text)
        return False

    # -- the loop ----------------------------------------------------------------------------

    async def _sleep(self, seconds: float) -> None:
        """Sleep, waking early on stop."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stop.wait(), seconds)

    async def _stop_on(self, trigger: asyncio.Event | StopRequest) -> None:
        await trigger.wait()
        self.request_stop(getattr(trigger, "cause", None) or StopCause.REQUESTED)

    async def _stop_after(self, seconds: float) -> None:
        await asyncio.sleep(seconds)
        self.request_stop(StopCause.DURATION)

    async def run(self) -> CaptureSummary:
        """Run until stopped; return what was captured."""
        triggers = []
        if self.external_stop is not None:
            triggers.append(self._stop_on(self.external_stop))
        if self.config.duration is not None:
            triggers.append(self._stop_after(self.config.duration))
        self._set_device()
        cfg = self.config
        where = f"{url_host(cfg.host)}:{cfg.profiler_port}"
        self._set_state(DeviceState.STARTING, f"polling {where}")
        try:
            async with alongside(*triggers):
                await self._loop()
        finally:
            await cancel(self._ecp_task)
            self._set_state(DeviceState.STOPPED, self.summary.stop_reason)
        return self.summary

    async def _loop(self) -> None:
        cfg = self.config
        unreachable = 0  # connect attempts in a row that timed out or found no route
        not_runs = 0  # connects in a row that were not a run
        while not self.stop.requested:
            if not await self._space_to_write():
                await self._sleep(LOW_SPACE_RECHECK)
                continue
            self._check_ecp()
            try:
                stream = await self.connect(
                    cfg.host, cfg.profiler_port, connect_timeout=cfg.connect_timeout
                )
            except DeviceError as error:
                # Refused: the device is up and no app runs; keep polling (an app waits for us).
                # Timeout or no route: the device is off or away; back off, capped, with jitter.
                refused = isinstance(error.__cause__, ConnectionRefusedError)
                unreachable = 0 if refused else unreachable + 1
                self._idle(refused, str(error))
                delay = cfg.poll_interval
                if not refused:
                    delay = backoff_delay(
                        unreachable + 1,
                        cfg.poll_interval,
                        UNREACHABLE_BACKOFF,
                        random.random(),
                        floor=cfg.poll_interval,
                    )
                await self._sleep(delay)
                continue
            unreachable = 0
            if self.status.state is not DeviceState.BUSY:  # busy until it says otherwise
                self._set_state(DeviceState.WAITING)
            session = await self._capture_run(stream)
            if session is None:  # not a run: back off a little, up to max_backoff
                not_runs += 1
                rand = random.random()
                delay = backoff_delay(
                    not_runs + 1, cfg.poll_interval, cfg.max_backoff, rand, floor=cfg.poll_interval
                )
                await self._sleep(delay)
                continue
            not_runs = 0
            if self._cuts:  # a device that runs into a limit again and again: slow down
                await self._sleep(
                    backoff_delay(self._cuts + 1, cfg.poll_interval, UNREACHABLE_BACKOFF)
                )
            if cfg.runs is not None and len(self.summary.sessions) >= cfg.runs:
                self.request_stop(StopCause.RUNS)

    def _idle(self, refused: bool, error: str) -> None:
        """The state after a connect to the profiler port failed (``refused`` or not)."""
        state = idle_state(refused, self._ecp_up if self.config.use_ecp else None)
        if state is DeviceState.UNREACHABLE:
            self._set_state(state, error if not refused else self._ecp_error)
        else:
            self._set_state(state)

    def _not_a_run(self, error: DeviceError) -> None:
        """A connect that did not become a run: busy (503), or said once as a note."""
        if isinstance(error, HttpStatusError) and error.status == 503:
            self._set_state(DeviceState.BUSY)
        elif not (isinstance(error, NoData) and self.stop.requested):
            self._say("answer", str(error))

    async def _capture_run(self, stream: ProfilerStream) -> CapturedSession | None:
        """Capture one connected stream; ``None`` if it turned out not to be a run."""
        self.status.run_started = time.monotonic()
        self._check_ecp(now=self.device_info is None)
        self._profiler_state = ""
        self._run_console = self._run_app = None

        def extra_info() -> dict[str, dict[str, object]]:
            """What the side queries found, by session.json section."""
            out: dict[str, dict[str, object]] = {}
            if self._run_app is not None:
                out["app"] = {"ecp": self._run_app.to_json()}
            if self._run_console is not None:
                out["profiler"] = {"console_status": self._run_console.to_json()}
            return out

        capture = RunCapture(
            stream,
            self.config.run_settings(),
            self.status,
            _RunObserver(self),
            self.stop,  # type: ignore[arg-type]  # is_set() and wait(), as an asyncio.Event
            identify=self._identify,
            sink_factory=self.sink_factory,
            extra_info=extra_info,
        )
        self.current_run = capture
        side = [self._query_active_app()]
        if self.config.use_console:
            side.append(self._poll_console())
        try:
            async with alongside(*side):
                record, path = await capture.run()
        except DeviceError as error:
            self.current_run = None
            self._not_a_run(error)
            return None
        finally:
            await stream.aclose()
            if capture.record is None:
                self.status.run_started = None
        self.current_run = None
        if self.config.exports:
            await self._export(capture, record)
        self._cuts = min(self._cuts + 1, 20) if capture.cut is not None else 0
        session = CapturedSession(record, path)
        self.summary.sessions.append(session)
        st = self.status
        st.runs_done = len(self.summary.sessions)
        st.last_status = record.status
        st.state, st.detail = DeviceState.FINISHED, ""
        self.observer.on_session_end(st, record, path)
        return session

    def _run_started(self) -> None:
        """The run's first byte arrived: it streams (or is paused, as the console said)."""
        st = self.status
        st.last_data = time.monotonic()
        st.clear_note("answer")
        if self._profiler_state == "paused":
            st.state = DeviceState.STREAMING  # in a run now: shown as paused at once
            self._on_profiler("paused")
        else:
            self._set_state(DeviceState.STREAMING)

    async def _poll_console(self) -> None:
        """While a stream is connected: the console's profiler status every ``console_poll``
        seconds (each query bounded by the ECP timeout)."""
        while True:
            status = await self._query_profiler_status()
            if status is not None:
                self._run_console = self._run_console or status
                self._on_profiler(status.state)
            await asyncio.sleep(self.config.console_poll)

    async def _export(self, capture: RunCapture, record: SessionRecord) -> None:
        """The end-of-run exports (a worker thread; a failure is recorded, never raised)."""
        outcome = await export_finished_run(
            capture.files,
            record,
            self.config.exports,
            settings=self.config.chunk_settings,
            limits=self.config.limits,
        )
        for message in outcome.errors.values():
            self.observer.on_message(self.status, "warning", message)


class _RunObserver:
    """The loop's observer as a run sees it: the run's first byte also sets the state."""

    def __init__(self, capture: DeviceCapture) -> None:
        self.capture = capture
        self.observer = capture.observer

    def on_state(self, status: CaptureStatus) -> None:
        self.observer.on_state(status)

    def on_session_start(self, status: CaptureStatus) -> None:
        self.observer.on_session_start(status)
        self.capture._run_started()

    def on_chunk(self, status: CaptureStatus, path: Path) -> None:
        self.observer.on_chunk(status, path)

    def on_session_end(self, status: CaptureStatus, record: SessionRecord, path: Path) -> None:
        self.observer.on_session_end(status, record, path)

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None:
        self.observer.on_message(status, level, text)
