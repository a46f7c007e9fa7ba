"""The capture daemon: every configured (and discovered) device captured at once, chunks
uploaded from the disk spool, retention, metrics and systemd notifications.

Life cycle (:meth:`Daemon.run`):

1. start-up: repair the output directory (stale ``*.tmp``, half-deleted sessions, sessions a
   crash left ``streaming`` are closed as ``interrupted`` and what they archived but never
   chunked becomes chunks, spooled like live ones); start the uploader (it rescans the
   spool, so a restart resumes delivery), retention, the metrics endpoint, one supervised
   capture loop per configured device and, when enabled, SSDP discovery (at most
   ``[discovery] max_devices`` found devices at once, each dropped once it has been unreachable
   for ``expire_seconds``: :class:`~rokuprof.daemon.registry.DiscoveredDevices`); then
   ``READY=1``;
2. run until the shutdown trigger fires (SIGTERM/SIGINT by default, through
   :mod:`rokuprof.capture.signals`; tests pass their own);
3. shutdown: ``STOPPING=1``, stop discovery, ask every capture loop to stop with the cause (a
   run in progress writes its current chunk and ends ``interrupted``) and wait up to
   ``stop_seconds``, drain uploads for up to ``drain_seconds``, close the rest; exit status 0.

``/healthz`` is degraded (503) while stopping, when a capture loop has ended, or when every
device is unreachable. Metrics and logs name each device by its directory name. The metrics,
``/healthz`` and the status line are read from the daemon's state by
:mod:`rokuprof.daemon.collect`; the searches are :mod:`rokuprof.daemon.discovery`'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import random
import time
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof import __version__
from rokuprof.capture.limits import free_bytes
from rokuprof.capture.loop import CaptureConfig
from rokuprof.capture.probes import DEFAULT_PROBE_RATE, DEFAULT_PROBES, ProbeBudget
from rokuprof.capture.session import safe_name
from rokuprof.capture.signals import StopRequest, stop_on_signals
from rokuprof.capture.stop import StopCause
from rokuprof.daemon import collect as collecting
from rokuprof.daemon.capture_settings import entry_capture_config
from rokuprof.daemon.collect import DaemonState, collect, dead_loops, health, status_line
from rokuprof.daemon.config import DaemonConfig, DeviceEntry
from rokuprof.daemon.devices import DeviceSlot
from rokuprof.daemon.discovery import Discovery, SearchSettings, device_key
from rokuprof.daemon.disk import DiskKeeper, retention_policy
from rokuprof.daemon.metrics import Family, MetricsServer
from rokuprof.daemon.naming import label, shared_hosts
from rokuprof.daemon.notify import Notifier
from rokuprof.daemon.recovery import export_recovered_session, recover
from rokuprof.daemon.registry import DeviceNames, DiscoveredDevices
from rokuprof.daemon.tuning import CaptureTuning, PyroscopeTuning, UploaderTuning
from rokuprof.device.ssdp import SSDP_GROUP, SSDP_PORT
from rokuprof.store.files import make_dirs, set_file_mode
from rokuprof.store.pyroscope import PyroscopePusher
from rokuprof.store.spool import Spool, SpoolItem
from rokuprof.store.uploader import Uploader

log = logging.getLogger(__name__)

ShutdownTrigger = Callable[[], Awaitable[object]]
#: Seconds systemd's start timeout gives a crashed session's conversion beyond its time budget.
RECOVERY_TIMEOUT_MARGIN = 30.0
START_TURN = 100  # devices started between two turns of the event loop


@dataclass
class DaemonOptions:
    """Knobs that are not in the config file (tests and benchmarks shorten them)."""

    capture: CaptureTuning = field(default_factory=CaptureTuning)  # extra CaptureConfig fields
    uploader: UploaderTuning = field(default_factory=UploaderTuning)  # extra Uploader arguments
    stop_seconds: float = 30.0  # for capture loops to finish their runs
    drain_seconds: float = 20.0  # for pending uploads at shutdown
    retention_interval: float = 300.0
    space_check_seconds: float = 1.0  # between looks at the free space (the floor)
    status_interval: float = 10.0
    discovery_timeout: float = 3.0
    discovery_targets: tuple[tuple[str, int], ...] = ((SSDP_GROUP, SSDP_PORT),)
    discovery_bind: tuple[str, int] = ("0.0.0.0", 0)
    restart_backoff_cap: float = 60.0
    pyroscope: PyroscopeTuning = field(default_factory=PyroscopeTuning)  # PyroscopePusher's
    clock: Callable[[], float] = time.monotonic  # of discovery's policies (expiry, rate limit)
    rand: Callable[[], float] = random.random  # the jitter of every device's backoff
    probes: int = DEFAULT_PROBES  # connects and ECP queries of silent devices at once, fleet-wide
    probe_rate: float = DEFAULT_PROBE_RATE  # ... and started per second (rokuprof.capture.probes)


class Daemon:
    """See the module docstring."""

    def __init__(
        self,
        config: DaemonConfig,
        *,
        shutdown_trigger: ShutdownTrigger | None = None,
        notifier: Notifier | None = None,
        options: DaemonOptions | None = None,
    ) -> None:
        self.config = config
        self.shutdown_trigger = shutdown_trigger
        self.notifier = notifier or Notifier()
        self.options = options or DaemonOptions()
        self.out = Path(config.capture.out)
        self.slots: dict[str, DeviceSlot] = {}
        self._shared_hosts = shared_hosts(config.devices)  # named <host>-<port> (naming.py)
        self.probes = ProbeBudget(self.options.probes, self.options.probe_rate)  # every loop's
        self.uploader = Uploader(
            Spool(self.out),
            config.sentry.dsn,
            max_spool_bytes=config.spool.max_bytes,
            max_in_flight=config.sentry.max_in_flight,
            **self.options.uploader,
        )
        self.metrics: MetricsServer | None = None
        self.disk = DiskKeeper(
            self.out,
            retention_policy(config),
            free_space=self.options.capture.get("free_space", free_bytes),
            active=self.active_sessions,
            keep_keys=self.uploader.keep_keys,
            on_dropped=self._count_dropped,
            interval=self.options.retention_interval,
            check_seconds=self.options.space_check_seconds,
        )
        pyro = config.pyroscope
        self.pyroscope = (
            PyroscopePusher(self.out, pyro.url, name=pyro.name, **self.options.pyroscope)
            if pyro.url
            else None
        )
        self.stopping = False
        self.started_at = time.time()
        self.names = DeviceNames()  # two live devices never share a directory or a label
        opts = self.options
        self.discovery = Discovery(
            config.discovery,
            SearchSettings(
                opts.discovery_timeout,
                opts.discovery_targets,
                opts.discovery_bind,
                opts.stop_seconds,
            ),
            configured_hosts=frozenset(d.host for d in config.devices),
            slots=self.slots,
            names=self.names,
            add_device=functools.partial(self.add_device, source="discovery"),
            clock=opts.clock,
        )
        self.state = DaemonState(
            self.slots,
            self.uploader,
            uploads_on=config.sentry.dsn is not None,
            discovery=self.discovery,
            disk=self.disk,
            started_at=self.started_at,
            stopping=lambda: self.stopping,
        )
        self._tasks: list[asyncio.Task] = []
        self._discovery_task: asyncio.Task | None = None
        self._upload_task: asyncio.Task | None = None
        self._exporting: set[Path] = set()  # recovered sessions being exported (kept by retention)

    # -- devices -----------------------------------------------------------------------------

    def _capture_config(self, entry: DeviceEntry) -> CaptureConfig:
        claim = functools.partial(
            self._claim_name, self.device_key(entry), entry.host, entry.profiler_port
        )
        return entry_capture_config(
            self.config,
            entry,
            out=self.out,
            shared_hosts=self._shared_hosts,
            name_claim=claim,
            tuning=self.options.capture,
        )

    def _claim_name(self, key: str, host: str, port: int, wanted: str) -> str:
        """The name the device ``key`` uses when it wants ``wanted`` (its serial, else its host):
        ``wanted`` unless another live device has it (see :class:`DeviceNames`), said once."""
        name, clash = self.names.claim(key, wanted, host, port)
        if clash and wanted != safe_name(host):  # one host's two ports: not worth a warning
            log.warning(
                "two devices report serial %s: the one at %s keeps it, the one at %s:%d is named"
                " %s (its directory, metrics and logs)",
                wanted,
                self.names.owner(wanted),
                host,
                port,
                name,
                extra={"device": name},
            )
        return name

    device_key = staticmethod(device_key)

    @property
    def discovered(self) -> DiscoveredDevices:
        """The devices discovery captures (the cap and expiry)."""
        return self.discovery.registry

    @property
    def discovery_rounds(self) -> int:
        return self.discovery.stats.rounds

    def add_device(self, entry: DeviceEntry, *, source: str = "config") -> DeviceSlot | None:
        """Start capturing ``entry`` (once per host and profiler port)."""
        key = self.device_key(entry)
        if key in self.slots or self.stopping:
            return None
        name = label(entry, self._shared_hosts)
        slot = DeviceSlot(
            name,
            self._capture_config(entry),
            on_chunk=self.uploader.submit,
            source=source,
            backoff_cap=self.options.restart_backoff_cap,
            clock=self.options.clock,
            rand=self.options.rand,
            probes=self.probes,
        )
        self.slots[key] = slot
        slot.start()
        log.info("capturing %s (%s:%d, from %s)", name, entry.host, entry.profiler_port, source)
        return slot

    def active_sessions(self) -> list[Path]:
        live = [p for s in self.slots.values() if (p := s.active_session()) is not None]
        pushing = [self.pyroscope.current] if self.pyroscope and self.pyroscope.current else []
        return live + sorted(self._exporting) + pushing

    # -- background jobs ---------------------------------------------------------------------

    def _count_dropped(self, items: list[SpoolItem]) -> None:
        """Retention dropped these undelivered chunks: counted as the spool limit's are."""
        for item in items:
            self.uploader.stats.add_dropped(item.session.device, item.size)

    async def _export_recovered(self, sessions: list[Path]) -> None:
        """The exports of sessions a crash left, after start-up (one at a time, in a thread)."""
        cap = self.config.capture
        for session in sessions:
            try:
                await asyncio.to_thread(
                    export_recovered_session,
                    session,
                    cap.export,
                    settings=cap.chunks,
                    limits=cap.limits,
                )
            finally:
                self._exporting.discard(session)

    def status_line(self) -> str:
        return status_line(self.state)

    async def _status_loop(self) -> None:
        while True:
            await asyncio.sleep(self.options.status_interval)
            self.notifier.status(self.status_line())

    def alive(self) -> bool:
        """Every capture loop runs (what the systemd watchdog vouches for: a device that is
        switched off makes ``/healthz`` degraded, but a restart would not bring it back)."""
        return not dead_loops(self.state)

    def health(self) -> tuple[bool, str]:
        """``/healthz``: (healthy, text); see :func:`rokuprof.daemon.collect.health`."""
        return health(self.state)

    def collect(self) -> list[Family]:
        """Every metric family now (see :mod:`rokuprof.daemon.collect`)."""
        return collect(self.state, now=time.monotonic(), wall=time.time())

    def collect_in_turns(self) -> Generator[None, None, list[Family]]:
        """:meth:`collect`, a few devices at a time (what ``/metrics`` serves)."""
        return collecting.collect_in_turns(self.state, now=time.monotonic(), wall=time.time())

    # -- life cycle --------------------------------------------------------------------------

    def _spawn(self, coro: Awaitable[object], name: str) -> asyncio.Task:
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.append(task)
        return task

    async def start(self) -> None:
        """Repair the output, start every part; ``READY=1`` at the end."""
        for warning in self.config.warnings:
            log.warning("config: %s", warning)
        set_file_mode(self.config.capture.file_mode)
        await asyncio.to_thread(make_dirs, self.out)
        cap = self.config.capture
        recovered = await asyncio.to_thread(
            recover,
            self.out,
            chunks=cap.chunks,
            limits=cap.limits,
            budget=self.config.recovery,
            on_convert=self._recovering,
        )
        if cap.export and recovered.converted_sessions:
            self._exporting.update(recovered.converted_sessions)
            self._spawn(self._export_recovered(recovered.converted_sessions), "recovered-exports")
        listen = self.config.metrics.listen
        if listen is not None:
            self.metrics = MetricsServer(self.collect_in_turns, self.health, listen[0], listen[1])
            await self.metrics.start()
            log.info("metrics on http://%s:%d/metrics", listen[0], self.metrics.port)
        self._upload_task = asyncio.create_task(self.uploader.run(), name="uploader")
        self._spawn(self.disk.run(), "retention")
        if self.pyroscope is not None:
            self._spawn(self.pyroscope.run(), "pyroscope")
        for i, entry in enumerate(self.config.devices, 1):
            self.add_device(entry)
            if not i % START_TURN:
                await asyncio.sleep(0)  # thousands of devices: /metrics and signals answer
        if self.config.discovery.enabled:
            self._discovery_task = self._spawn(self.discovery.run(), "discovery")
        self._spawn(self.notifier.watchdog(lambda: self.alive() or self.stopping), "watchdog")
        self._spawn(self._status_loop(), "status")
        sentry = self.config.sentry.describe()
        log.info("rokuprof %s daemon ready: %d device(s), %s", __version__, len(self.slots), sentry)
        self.notifier.ready(self.status_line())

    def _recovering(self, session: Path) -> None:
        """A crashed session's conversion starts (in recovery's thread): systemd's start timeout
        gives it its time budget (and a margin) rather than cutting it short."""
        seconds = self.config.recovery.max_seconds + RECOVERY_TIMEOUT_MARGIN
        self.notifier.extend_timeout(seconds, f"recovering {session.parent.name}/{session.name}")

    async def shutdown(self, cause: StopCause = StopCause.REQUESTED) -> None:
        """Stop intake, let runs finish their chunks, drain uploads (all bounded); ``cause`` is
        what the sessions and logs record."""
        self.stopping = True
        self.notifier.stopping("finishing sessions and uploads")
        log.info("stopping (%s): finishing %d capture loop(s)", cause.describe(), len(self.slots))
        if self._discovery_task is not None:
            self._discovery_task.cancel()
        for slot in self.slots.values():
            slot.request_stop(cause)
        self.probes.close()  # loops waiting for a turn to probe stop waiting
        captures = [s.task for s in self.slots.values() if s.task is not None]
        if captures:
            _, late = await asyncio.wait(captures, timeout=self.options.stop_seconds)
            for task in late:
                log.warning("%s did not stop in time: cancelled", task.get_name())
                task.cancel()
            await asyncio.gather(*captures, return_exceptions=True)
        if self._upload_task is not None:
            left = await self.uploader.drain(self.options.drain_seconds, self._upload_task)
            if left and self.config.sentry.dsn is not None:
                log.warning("%d chunk(s) not uploaded yet: they stay on disk for next time", left)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self.metrics is not None:
            await self.metrics.close()
        log.info("stopped")

    async def run(self) -> int:
        """Run until the shutdown trigger fires; return the exit status."""
        stop = StopRequest()
        if self.shutdown_trigger is None:
            signals = stop_on_signals(self._on_signal(stop))
            trigger: ShutdownTrigger = stop.wait
        else:
            signals, trigger = contextlib.nullcontext(), self.shutdown_trigger
        with signals:
            try:
                await self.start()
            except OSError as exc:
                log.error("cannot start: %s", exc)
                await self.shutdown()
                return 1
            waiter = asyncio.ensure_future(trigger())
            try:
                await waiter
            finally:
                waiter.cancel()
            await self.shutdown(stop.cause or StopCause.REQUESTED)
            return 0

    @staticmethod
    def _on_signal(stop: StopRequest) -> Callable[[StopCause], None]:
        def request(cause: StopCause) -> None:
            log.info("received %s", cause.value)
            stop.request(cause)

        return request
