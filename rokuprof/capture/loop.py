"""The per-device capture loop: the asyncio shell around
:class:`~rokuprof.capture.device_machine.DeviceMachine`.

One :class:`DeviceCapture` per device; it keeps no global state and never blocks the event loop,
so a daemon can run many side by side. The machine decides when to connect, what the device's
state is, when to ask ECP and what to say; this shell awaits and carries out what it asks (sleep,
connect, query ECP in the background, capture a run with
:class:`~rokuprof.capture.run.RunCapture`, poll the console while a run streams) and tells it
what happened, with times from its ``clock`` and jitter from its ``rand``.

It stops when its stop trigger is set (an :class:`asyncio.Event` or
:class:`~rokuprof.capture.signals.StopRequest` it is given, or :meth:`DeviceCapture.request_stop`
with a :class:`~rokuprof.capture.stop.StopCause`), after ``runs`` runs, or after ``duration``
seconds; a run in progress is then finished as ``interrupted``, and the cause is what the summary
and the log say. The device's display name is :func:`~rokuprof.capture.config.device_dir`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Protocol

import rokuprof.capture.device_machine as dm
from rokuprof.capture.chunks import ChunkSinkFactory, sentry_sink_factory
from rokuprof.capture.config import (
    CaptureConfig,
    CapturedSession,
    CaptureSummary,
    device_names,
    device_record,
)
from rokuprof.capture.ecp_queries import ask_active_app, ask_device_info
from rokuprof.capture.exports import export_finished_run
from rokuprof.capture.probes import ProbeBudget
from rokuprof.capture.record import SessionRecord
from rokuprof.capture.run import NoData, RunCapture
from rokuprof.capture.signals import StopRequest
from rokuprof.capture.status import CaptureObserver, CaptureStatus, NullObserver
from rokuprof.capture.stop import StopCause
from rokuprof.capture.tasks import alongside, cancel
from rokuprof.capture.trace_tap import TraceTap
from rokuprof.capture.vitals import SideData
from rokuprof.capture.vitals_poll import RunExtras
from rokuprof.device.console import BsprofStatus, ConsoleClient
from rokuprof.device.control import ControlResult, control
from rokuprof.device.ecp import ActiveApp, DeviceInfo
from rokuprof.device.errors import (
    DeviceError,
    HttpStatusError,
)
from rokuprof.device.stream import ProfilerStream
from rokuprof.sentry.side_measurements import Measure
from rokuprof.store.files import sweep_tmp
from rokuprof.store.trace_spool import spool_path

LOW_SPACE_RECHECK = dm.LOW_SPACE_RECHECK  # seconds between free-space reads below the floor

Step = dm.Wake | dm.Connect | dm.StopLoop | None  # what the loop does next


class Connect(Protocol):
    """Opens a device's profiler stream (:meth:`ProfilerStream.open`, or a test's script)."""

    def __call__(
        self, host: str, port: int, *, connect_timeout: float
    ) -> Awaitable[ProfilerStream]: ...


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
        clock: Callable[[], float] = time.monotonic,
        rand: Callable[[], float] = random.random,
        probes: ProbeBudget | None = None,
        timer: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.config = config
        self.timer = timer  # waits out ``duration`` (tests pass one they release)
        self.probes = probes  # shared by a fleet's loops: silent devices' connects and queries
        self.connect: Connect = connect or ProfilerStream.open  # tests script a device with it
        self.observer = observer or NullObserver()
        if sink_factory is None and config.chunks:
            sink_factory = sentry_sink_factory(config.chunk_settings)
        self.sink_factory = sink_factory
        self.external_stop = stop
        self.clock = clock  # monotonic: the machine's times, the status's run_started, last_data
        self.machine = dm.DeviceMachine(config, rand, space_recheck=LOW_SPACE_RECHECK)
        self.stop = StopRequest()  # the one stop trigger of this loop and its runs
        self.status, self.summary = CaptureStatus(config.host), CaptureSummary(config.host, "")
        self.device_info: DeviceInfo | None = None
        self._set_device()
        self._ecp_task: asyncio.Task | None = None
        self._swept: set[str] = set()
        self._run_console: BsprofStatus | None = None  # the console's first status of the run
        self._run_app: ActiveApp | None = None
        self.current_run: RunCapture | None = None  # the run in progress, or the one that failed
        self.extras = RunExtras(config, self.status, self.observer)
        self.trace_tap = (
            TraceTap(
                config.host,
                config.ecp_port,
                spool_path(config.out, f"{config.host}-{config.ecp_port}"),
                say=lambda text: self._say("trace", text),
                ecp_timeout=config.ecp_timeout,
                max_run_bytes=config.trace_max_run_bytes,
                clock=clock,
                rand=rand,
                frames=self._frame_measures if config.chunks else None,
            )
            if config.trace
            else None
        )

    def request_stop(self, cause: StopCause | str = StopCause.REQUESTED, text: str = "") -> None:
        """Ask the loop to stop (a run in progress is finished as ``interrupted``); the first
        cause is the one recorded (``text``: how the summary says it, if not the cause's way)."""
        cause = StopCause(cause)
        if not self.stop.requested:
            self.summary.stop_reason = text or self._stop_text(cause)
        self.stop.request(cause)
        if self.probes is not None:
            self.probes.withdraw(self)  # no longer waits for a turn to connect

    def _stop_text(self, cause: StopCause) -> str:
        cfg = self.config
        if cause is StopCause.RUNS and cfg.runs is not None:
            return f"--runs {cfg.runs} reached"
        if cause is StopCause.DURATION and cfg.duration is not None:
            return f"--duration {cfg.duration:g} s reached"
        return cause.describe()

    async def profiler_command(self, action: str) -> ControlResult:
        """``status``, ``pause`` or ``resume`` on the device's debug console (a live view's
        keys), within the ECP timeout; raises :class:`~rokuprof.device.errors.DeviceError`
        when that fails."""
        cfg = self.config
        result = await control(cfg.host, action, cfg.console_port, cfg.ecp_timeout)
        if result.status is not None:
            self._apply(dm.ConsoleSaid(result.status.state))
        elif not result.no_session and action in ("pause", "resume"):
            self._apply(dm.ConsoleSaid("paused" if action == "pause" else "running"))
        return result

    # -- the machine's actions ---------------------------------------------------------------

    def _apply(self, event: dm.Event) -> Step:
        """Tell the machine ``event``; carry out what it asks at once; return the next step."""
        step: Step = None
        st = self.status
        for action in self.machine.handle(event):
            match action:
                case dm.SetState(state, detail, announce):
                    st.state, st.detail = state, detail
                    if announce:
                        self.observer.on_state(st)
                case dm.Say(cause, text, problem):
                    self._say(cause, text, problem=problem)
                case dm.Unsay(cause):
                    st.clear_note(cause)
                case dm.SetEcpMode(mode):
                    st.ecp_mode = mode
                case dm.QueryEcp():
                    self._ecp_task = asyncio.ensure_future(self._query_device_info())
                case dm.Wake() | dm.Connect() | dm.StopLoop():
                    step = action
        return step

    def _say(self, cause: str, text: str, *, problem: bool = False) -> None:
        """A note that lasts while its cause does: said (logged) once, and again if it changes."""
        if self.status.note(cause, text):
            if problem:
                self.summary.problems.append(text)
            self.observer.on_message(self.status, "warning", text)

    # -- device identity and ECP -------------------------------------------------------------

    def _probe(self, *, main: bool) -> contextlib.AbstractAsyncContextManager[bool]:
        """A turn of the fleet's probes while silent; ``main``: the connect a stop withdraws."""
        if self.probes is None or not self.machine.silent:
            return contextlib.nullcontext(True)
        return self.probes.turn(self if main else None)

    async def _query_device_info(self) -> None:
        try:
            answer, info = await ask_device_info(self.config, self.clock, self._probe(main=False))
        except Exception:
            self._apply(dm.EcpAnswered(self.clock(), None))  # no word: ask again when due
            raise
        first = info is not None and self.device_info is None
        if first:
            self.device_info = info
        self._apply(answer)
        if first:
            self._set_device()
            self.observer.on_state(self.status)

    def _set_device(self) -> None:
        name, label = device_names(self.config, self.device_info)
        self.status.device = self.summary.device = name
        self.status.label = self.summary.label = label
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
            why = self.machine.ecp_error or "no answer in time"
            named = "" if cfg.device_dir else f"; the device is named {self.status.device}"
            self._say("ecp", f"no device info from ECP ({why}){named}", problem=True)
        if self.status.device not in self._swept:  # leftovers of a crash in this device's dir
            self._swept.add(self.status.device)
            with contextlib.suppress(OSError):
                await asyncio.to_thread(sweep_tmp, cfg.out, self.status.device)  # no link
        return self.status.device, device_record(self.status.device, cfg.host, self.device_info)

    async def _query_active_app(self) -> None:
        if not self.config.use_ecp or (self.status.limited and self.device_info is None):
            return  # ECP refuses even device-info: it would refuse this too
        self._run_app = await ask_active_app(self.config)

    async def _free_space(self) -> int | None:
        """The output file system's free bytes, when the machine wants them (``None``: not
        wanted, or cannot tell: the writes will say)."""
        if not self.machine.wants_free_space:
            return None
        try:
            return await asyncio.to_thread(self.config.free_space, Path(self.config.out))
        except OSError:
            return None

    # -- the loop ----------------------------------------------------------------------------

    async def _sleep(self, seconds: float) -> None:
        """Sleep, waking early on stop."""
        if seconds > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.stop.wait(), seconds)

    async def _stop_on(self, trigger: asyncio.Event | StopRequest) -> None:
        await trigger.wait()
        self.request_stop(getattr(trigger, "cause", None) or StopCause.REQUESTED)

    async def _stop_after(self, seconds: float) -> None:
        await self.timer(seconds)
        self.request_stop(StopCause.DURATION)

    async def run(self) -> CaptureSummary:
        """Run until stopped; return what was captured."""
        triggers = []
        if self.external_stop is not None:
            triggers.append(self._stop_on(self.external_stop))
        if self.config.duration is not None:
            triggers.append(self._stop_after(self.config.duration))
        if self.trace_tap is not None:
            triggers.append(self.trace_tap.run())
        self._set_device()
        step = self._apply(dm.Started(self.clock()))
        try:
            async with alongside(*triggers):
                await self._loop(step)
        finally:
            await cancel(self._ecp_task)
            self._apply(dm.Stopped(self.summary.stop_reason))
        return self.summary

    async def _loop(self, step: Step) -> None:
        while not self.stop.requested:
            match step:
                case dm.Wake(at):
                    await self._sleep(at - self.clock())
                    if self.stop.requested:
                        return
                    step = self._apply(dm.Tick(self.clock(), await self._free_space()))
                case dm.Connect():
                    step = await self._attempt()
                case dm.StopLoop(cause):
                    self.request_stop(cause)
                case _:
                    raise AssertionError(f"the device machine left the loop no step: {step!r}")

    async def _attempt(self) -> Step:
        """One connect to the profiler port, and the run it may become."""
        cfg = self.config
        async with self._probe(main=True) as granted:  # a silent device: until it answers
            if not granted:  # stopped while waiting for a turn
                return dm.Wake(self.clock() + cfg.poll_interval)
            try:
                stream = await self.connect(
                    cfg.host, cfg.profiler_port, connect_timeout=cfg.connect_timeout
                )
            except DeviceError as error:
                refused = isinstance(error.__cause__, ConnectionRefusedError)
                return self._apply(dm.ConnectFailed(self.clock(), refused, str(error)))
            self._apply(dm.Connected(self.clock()))
            return await self._capture_run(stream)  # its first byte hands the turn back

    async def _capture_run(self, stream: ProfilerStream) -> Step:
        """Capture one connected stream (a session, or not a run); the machine's next step."""
        self.status.run_started = self.clock()
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
            self.config,
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
        side += [self.extras.poll(capture)] if self.extras.polls else []  # vitals
        try:
            async with alongside(*side):
                record, path = await capture.run()
        except DeviceError as error:
            self.current_run = None
            busy = isinstance(error, HttpStatusError) and error.status == 503
            quiet = isinstance(error, NoData) and self.stop.requested
            return self._apply(dm.NotARun(self.clock(), str(error), busy=busy, quiet=quiet))
        finally:
            await stream.aclose()
            if capture.record is None:
                self.status.run_started = None
        self.current_run = None
        if self.trace_tap is not None:
            await self._keep_trace(capture, record)
        if self.config.exports:
            await self._export(capture, record)
        session = CapturedSession(record, path)
        self.summary.sessions.append(session)
        st = self.status
        st.runs_done = len(self.summary.sessions)
        st.last_status = record.status
        step = self._apply(dm.RunEnded(self.clock(), cut=capture.cut is not None))
        self.observer.on_session_end(st, record, path)
        return step

    def _run_started(self) -> None:
        """The run's first byte arrived: it streams (or is paused, as the console said)."""
        if self.probes is not None:
            self.probes.hand_back(self)  # it answers: no longer a probe
        self.status.last_data = self.clock()
        self.extras.session_open.set()
        self._apply(dm.RunStarted(self.clock()))

    def mark(self, label: str, when: float | None = None) -> bool:
        """A named moment of the open session: :meth:`RunExtras.mark` (vitals_poll.py)."""
        return self.extras.mark(self.current_run, label, when)

    async def _poll_console(self) -> None:
        """While a stream is connected: the console's profiler status every ``console_poll``
        seconds (each query bounded by the ECP timeout)."""
        cfg = self.config
        while True:
            try:
                async with ConsoleClient(cfg.host, cfg.console_port, timeout=cfg.ecp_timeout) as c:
                    status = await c.bsprof_status()
            except DeviceError:
                status = None
            if status is not None:
                self._run_console = self._run_console or status
                self._apply(dm.ConsoleSaid(status.state))
            await asyncio.sleep(cfg.console_poll)

    def _frame_measures(self, measures: list[Measure]) -> None:
        """The app trace's missed frames, for the open run's next chunks (a run not open yet,
        or ending, takes none: ``rokuprof convert`` of the session still has them all)."""
        run = self.current_run
        if run is not None:
            run.side(SideData({}, tuple(measures)))

    async def _keep_trace(self, capture: RunCapture, record: SessionRecord) -> None:
        """The run's app trace into its session (``trace.perfetto-trace``) and what became of
        it into ``session.json``; a failure is recorded, never raised."""
        tap, files = self.trace_tap, capture.files
        if tap is None or files is None or tap.unsupported:
            return
        await tap.settle()
        run = await tap.take()
        file = None
        if run.spool is not None:
            try:
                file = (await files.adopt_trace(run.spool)).name
            except OSError as exc:
                run.problems.append(f"cannot keep the trace: {exc.strerror or exc}")
        record.trace = run.to_json(file)
        try:
            await files.write_record(record)
        except OSError as exc:
            self.observer.on_message(self.status, "warning", f"cannot record the trace: {exc}")

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

    def __getattr__(self, name: str) -> object:  # every other call goes to the loop's observer
        return getattr(self.capture.observer, name)

    def on_session_start(self, status: CaptureStatus) -> None:
        self.capture.observer.on_session_start(status)
        self.capture._run_started()
