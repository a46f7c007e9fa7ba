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
device is unreachable. Metrics and logs name each device by its directory name.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from rokuprof import __version__
from rokuprof.capture.loop import CaptureConfig
from rokuprof.capture.session import safe_name
from rokuprof.capture.signals import stop_on_signals
from rokuprof.capture.status import DeviceState
from rokuprof.capture.stop import StopCause, StopRequest
from rokuprof.daemon.config import DaemonConfig, DeviceEntry
from rokuprof.daemon.devices import DeviceSlot
from rokuprof.daemon.metrics import Family, MetricsServer
from rokuprof.daemon.naming import host_name
from rokuprof.daemon.notify import Notifier
from rokuprof.daemon.recovery import export_recovered_session, recover
from rokuprof.daemon.registry import Admission, DeviceNames, DiscoveredDevices
from rokuprof.daemon.tuning import CaptureTuning, PyroscopeTuning, UploaderTuning
from rokuprof.device.errors import DeviceError
from rokuprof.device.ssdp import SSDP_GROUP, SSDP_PORT, ReplyLimiter, SsdpDevice, discover
from rokuprof.store.files import make_dirs, set_file_mode
from rokuprof.store.layout import SessionStatus
from rokuprof.store.pyroscope import PyroscopePusher
from rokuprof.store.retention import RetentionPolicy, enforce
from rokuprof.store.spool import Spool
from rokuprof.store.uploader import Uploader
from rokuprof.timefmt import utc_iso

log = logging.getLogger(__name__)

ShutdownTrigger = Callable[[], Awaitable[object]]
#: Seconds systemd's start timeout gives a crashed session's conversion beyond its time budget.
RECOVERY_TIMEOUT_MARGIN = 30.0


@dataclass
class DaemonOptions:
    """Knobs that are not in the config file (tests and benchmarks shorten them)."""

    capture: CaptureTuning = field(default_factory=CaptureTuning)  # extra CaptureConfig fields
    uploader: UploaderTuning = field(default_factory=UploaderTuning)  # extra Uploader arguments
    stop_seconds: float = 30.0  # for capture loops to finish their runs
    drain_seconds: float = 20.0  # for pending uploads at shutdown
    retention_interval: float = 300.0
    status_interval: float = 10.0
    discovery_timeout: float = 3.0
    discovery_targets: tuple[tuple[str, int], ...] = ((SSDP_GROUP, SSDP_PORT),)
    discovery_bind: tuple[str, int] = ("0.0.0.0", 0)
    restart_backoff_cap: float = 60.0
    pyroscope: PyroscopeTuning = field(default_factory=PyroscopeTuning)  # PyroscopePusher's
    clock: Callable[[], float] = time.monotonic  # of discovery's policies (expiry, rate limit)


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
        self.uploader = Uploader(
            Spool(self.out),
            config.sentry.dsn,
            max_spool_bytes=config.spool.max_bytes,
            max_in_flight=config.sentry.max_in_flight,
            **self.options.uploader,
        )
        self.metrics: MetricsServer | None = None
        pyro = config.pyroscope
        self.pyroscope = (
            PyroscopePusher(self.out, pyro.url, name=pyro.name, **self.options.pyroscope)
            if pyro.url
            else None
        )
        self.stopping = False
        self.started_at = time.time()
        self.discovery_rounds = 0
        self.discovery_errors = 0
        self.last_discovery_error = ""
        disc = config.discovery
        self.discovered = DiscoveredDevices(disc.max_devices, disc.expire_seconds)
        self.ssdp_limiter = ReplyLimiter()  # per source address, across searches
        self.names = DeviceNames()  # two live devices never share a directory or a label
        self._tasks: list[asyncio.Task] = []
        self._upload_task: asyncio.Task | None = None
        self._exporting: set[Path] = set()  # recovered sessions being exported (kept by retention)

    # -- devices -----------------------------------------------------------------------------

    def _capture_config(self, entry: DeviceEntry, device_dir: str | None = None) -> CaptureConfig:
        return CaptureConfig(
            host=entry.host,
            out=self.out,
            profiler_port=entry.profiler_port,
            ecp_port=entry.ecp_port,
            console_port=entry.console_port,
            chunk_settings=self.config.capture.chunks,
            limits=self.config.capture.limits,
            archive_limits=self.config.capture.archive,
            device_dir=device_dir or entry.name or None,
            host_name=host_name(entry, self.config.devices),
            exports=self.config.capture.export,
            name_claim=functools.partial(
                self._claim_name, self.device_key(entry), entry.host, entry.profiler_port
            ),
            **self.options.capture,
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

    @staticmethod
    def device_key(entry: DeviceEntry) -> str:
        """A device's identity in the daemon: host and profiler port."""
        return f"{entry.host}:{entry.profiler_port}"

    def add_device(self, entry: DeviceEntry, *, source: str = "config") -> DeviceSlot | None:
        """Start capturing ``entry`` (once per host and profiler port)."""
        key = self.device_key(entry)
        if key in self.slots or self.stopping:
            return None
        slot = DeviceSlot(
            entry.label,
            self._capture_config(entry),
            on_chunk=self.uploader.submit,
            source=source,
            backoff_cap=self.options.restart_backoff_cap,
            clock=self.options.clock,
        )
        self.slots[key] = slot
        slot.start()
        log.info(
            "capturing %s (%s:%d, from %s)", entry.label, entry.host, entry.profiler_port, source
        )
        return slot

    def active_sessions(self) -> list[Path]:
        live = [p for s in self.slots.values() if (p := s.active_session()) is not None]
        pushing = [self.pyroscope.current] if self.pyroscope and self.pyroscope.current else []
        return live + sorted(self._exporting) + pushing

    # -- background jobs ---------------------------------------------------------------------

    async def _discovery_loop(self) -> None:
        opts = self.options
        while True:
            try:
                found = await discover(
                    opts.discovery_timeout,
                    targets=opts.discovery_targets,
                    bind=opts.discovery_bind,
                    limiter=self.ssdp_limiter,
                    clock=opts.clock,
                )
            except DeviceError as exc:
                self.discovery_errors += 1
                self.last_discovery_error = str(exc)
                log.warning("discovery: %s", exc)
                found = []
            await self._expire_discovered()
            for device in found:
                self._add_discovered(device)
            self.discovery_rounds += 1
            await asyncio.sleep(self.config.discovery.interval_seconds)

    def _add_discovered(self, device: SsdpDevice) -> None:
        configured = {d.host for d in self.config.devices}
        if device.address in configured:
            return
        label = device.serial or device.address
        entry = DeviceEntry(host=device.address, name=safe_name(label), ecp_port=device.ecp_port)
        key = self.device_key(entry)
        if key in self.slots:
            return
        admission = self.discovered.offer(key, self.options.clock())
        if admission is Admission.CAP_REACHED:
            log.warning(
                "discovery: %d devices found by SSDP are captured, the most [discovery]"
                " max_devices allows; others (%s at %s first) are ignored until one has been"
                " unreachable for %g s",
                self.discovered.max_devices,
                label,
                device.address,
                self.discovered.expire_seconds,
            )
        if admission is Admission.NEW and self.add_device(entry, source="discovery") is None:
            self.discovered.forget(key)  # stopping

    async def _expire_discovered(self) -> None:
        """Stop and forget the discovered devices unreachable for ``expire_seconds``."""
        for key, slot in self.slots.items():
            if slot.source == "discovery" and (at := slot.last_answer()) is not None:
                self.discovered.answered(key, at)
        keys = [k for k in self.discovered.expire(self.options.clock()) if k in self.slots]
        gone = [self.slots.pop(k) for k in keys]
        if not gone:
            return
        names = [f"{s.name} ({s.config.host})" for s in gone]
        shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        log.info(
            "discovery: %d device(s) unreachable for %g s are no longer captured (added again"
            " when they answer SSDP): %s",
            len(gone),
            self.discovered.expire_seconds,
            shown,
        )
        for slot in gone:
            slot.request_stop()
        tasks = [s.task for s in gone if s.task is not None]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=self.options.stop_seconds)
            for task in late:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for key in keys:
            self.names.release(key)

    async def _retention_loop(self) -> None:
        ret = self.config.retention
        policy = RetentionPolicy(
            max_age_seconds=ret.max_age_days * 86400 if ret.max_age_days is not None else None,
            max_bytes=ret.max_bytes,
        )
        if not policy.active:
            return
        while True:
            try:
                await asyncio.to_thread(enforce, self.out, policy, active=self.active_sessions())
            except OSError as exc:
                log.error("retention failed: %s", exc)
            await asyncio.sleep(self.options.retention_interval)

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
        states: dict[str, int] = {}
        for slot in self.slots.values():
            states[slot.state] = states.get(slot.state, 0) + 1
        parts = ", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "no devices"
        line = f"{len(self.slots)} device(s): {parts}; {self.uploader.pending} chunk(s) to upload"
        pause = self.uploader.pause
        return f"{line} (uploads paused: {pause.reason})" if pause else line

    async def _status_loop(self) -> None:
        while True:
            await asyncio.sleep(self.options.status_interval)
            self.notifier.status(self.status_line())

    def _dead_loops(self) -> list[str]:
        return [s.name for s in self.slots.values() if s.task is not None and s.task.done()]

    def alive(self) -> bool:
        """Every capture loop runs (what the systemd watchdog vouches for: a device that is
        switched off makes ``/healthz`` degraded, but a restart would not bring it back)."""
        return not self._dead_loops()

    def health(self) -> tuple[bool, str]:
        """(healthy, text); a paused upload adds a line but is not unhealthy: the capture goes
        on and nothing is lost (``rokuprof_upload_paused`` is the metric to alert on)."""
        pause = self.uploader.pause
        note = ""
        if pause is not None:
            since = utc_iso(pause.since, "seconds")
            note = (
                f"\nuploads paused: {pause.reason} since {since};"
                f" {self.uploader.pending} chunk(s) wait on disk"
            )
        if self.stopping:
            return False, "stopping" + note
        dead = self._dead_loops()
        if dead:
            return False, f"capture loop ended: {', '.join(dead)}" + note
        slots = list(self.slots.values())
        if slots and all(s.state is DeviceState.UNREACHABLE for s in slots):
            lines = [
                f"{s.name} ({s.config.host}): {s.status.detail if s.status else ''}" for s in slots
            ]
            return False, "every device is unreachable:\n" + "\n".join(lines) + note
        return True, "ok" + note

    # -- metrics -----------------------------------------------------------------------------

    def collect(self) -> Iterable[Family]:
        up = self.uploader
        fam = {
            "bytes": Family("rokuprof_device_bytes_total", "counter", "Profiler bytes received."),
            "entries": Family("rokuprof_device_entries_total", "counter", "Entries decoded."),
            "state": Family(
                "rokuprof_device_state", "gauge", "Device state (1 = current, else 0)."
            ),
            "info": Family(
                "rokuprof_device_info", "gauge", "A device's names: directory, config, ECP (1)."
            ),
            "age": Family(
                "rokuprof_device_last_data_age_seconds",
                "gauge",
                "Seconds since the device's last profiler byte (absent before any).",
            ),
            "tick": Family(
                "rokuprof_device_worst_tick_seconds",
                "gauge",
                "The longest tick of the device's capture (decoding, deltas, chunks) so far.",
            ),
            "limited": Family(
                "rokuprof_device_ecp_limited", "gauge", "1 while the device's ECP is limited."
            ),
            "sessions": Family(
                "rokuprof_sessions_total", "counter", "Finished sessions by final status."
            ),
            "streaming": Family("rokuprof_sessions_streaming", "gauge", "Sessions being captured."),
            "written": Family("rokuprof_chunks_written_total", "counter", "Chunks written."),
            "uploaded": Family(
                "rokuprof_chunks_uploaded_total", "counter", "Chunks Sentry accepted (2xx)."
            ),
            "rejected": Family(
                "rokuprof_chunks_rejected_total", "counter", "Chunks refused for good."
            ),
            "dropped": Family(
                "rokuprof_chunks_dropped_total",
                "counter",
                "Undelivered chunks dropped: spool full.",
            ),
            "restarts": Family(
                "rokuprof_capture_restarts_total", "counter", "Capture loop restarts."
            ),
            "error": Family(
                "rokuprof_last_error_info", "gauge", "The latest error (labels), 1 when present."
            ),
            "error_time": Family(
                "rokuprof_last_error_timestamp_seconds", "gauge", "When the latest error happened."
            ),
        }
        now = time.monotonic()
        for slot in self.slots.values():
            d = slot.name
            c = slot.counters
            st = slot.status
            fam["bytes"].add(slot.bytes_total(), device=d)
            fam["entries"].add(slot.entries_total(), device=d)
            for state in DeviceState:
                fam["state"].add(1 if slot.state is state else 0, device=d, state=state.value)
            fam["info"].add(
                1,
                device=d,
                name=slot.label,
                host=slot.config.host,
                device_name=st.device_name if st is not None else "",
            )
            since = st.since_data(now) if st is not None else None
            if since is not None:
                fam["age"].add(round(since, 3), device=d)
            if st is not None:
                fam["tick"].add(round(st.worst_tick_seconds, 6), device=d)
            fam["limited"].add(1 if st is not None and st.limited else 0, device=d)
            for status in (s for s in SessionStatus if s.final):
                fam["sessions"].add(c.sessions.get(status, 0), device=d, status=status)
            fam["streaming"].add(1 if c.live else 0, device=d)
            fam["written"].add(c.chunks_written, device=d)
            fam["restarts"].add(c.restarts, device=d)
            if c.last_error:
                fam["error"].add(1, source="device", device=d, message=c.last_error[:300])
                fam["error_time"].add(c.last_error_at or 0, source="device", device=d)
        for device_dir, counts in sorted(up.stats.per_device.items()):  # the display names
            fam["uploaded"].add(counts.uploaded, device=device_dir)
            fam["rejected"].add(counts.rejected, device=device_dir)
            fam["dropped"].add(counts.dropped, device=device_dir)
        if up.stats.last_error:
            fam["error"].add(1, source="upload", device="", message=up.stats.last_error[:300])
            fam["error_time"].add(up.stats.last_error_at or 0, source="upload", device="")
        if self.last_discovery_error:
            fam["error"].add(1, source="discovery", device="", message=self.last_discovery_error)
        disc = self.discovered
        discovery = [
            Family("rokuprof_discovery_devices", "gauge", "Devices found by SSDP captured.").add(
                len(disc)
            ),
            Family(
                "rokuprof_discovery_ignored_total",
                "counter",
                "SSDP devices ignored: [discovery] max_devices reached.",
            ).add(disc.ignored),
            Family(
                "rokuprof_discovery_expired_total",
                "counter",
                "SSDP devices dropped after expire_seconds unreachable.",
            ).add(disc.expired),
            Family(
                "rokuprof_discovery_replies_dropped_total",
                "counter",
                "SSDP datagrams dropped unread: over the rate per source address.",
            ).add(self.ssdp_limiter.dropped),
        ]
        oldest = (
            up.oldest_pending_mtime() if self.config.sentry.dsn else up.stats.spool.oldest_mtime
        )
        pending = up.pending if self.config.sentry.dsn else up.stats.spool.pending
        pending_bytes = up.pending_bytes if self.config.sentry.dsn else up.stats.spool.pending_bytes
        extra = [
            Family("rokuprof_spool_pending_chunks", "gauge", "Chunks waiting for upload.").add(
                pending
            ),
            Family("rokuprof_spool_pending_bytes", "gauge", "Bytes of chunks to upload.").add(
                pending_bytes
            ),
            Family(
                "rokuprof_spool_oldest_pending_age_seconds",
                "gauge",
                "Age of the oldest chunk not yet delivered (0 when none).",
            ).add(max(0.0, time.time() - oldest) if oldest else 0.0),
            Family("rokuprof_upload_errors_total", "counter", "Failed upload attempts.").add(
                up.stats.send_errors
            ),
            Family("rokuprof_upload_rate_limited_total", "counter", "429 answers.").add(
                up.stats.rate_limited
            ),
            Family(
                "rokuprof_upload_paused", "gauge", "1 while Sentry refuses the key (401/403)."
            ).add(1 if up.pause is not None else 0),
            Family("rokuprof_upload_key_refused_total", "counter", "401/403 answers.").add(
                up.stats.key_refused
            ),
            Family("rokuprof_spool_dropped_bytes_total", "counter", "Bytes of chunks dropped.").add(
                up.stats.dropped_bytes
            ),
            Family("rokuprof_spool_limit_bytes", "gauge", "Undelivered chunk bytes allowed.").add(
                up.max_spool_bytes or 0
            ),
            Family("rokuprof_build_info", "gauge", "rokuprof version.").add(1, version=__version__),
            Family("rokuprof_start_time_seconds", "gauge", "Daemon start (Unix time).").add(
                self.started_at
            ),
        ]
        return [*fam.values(), *extra, *discovery]

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
            self.metrics = MetricsServer(self.collect, self.health, listen[0], listen[1])
            await self.metrics.start()
            log.info("metrics on http://%s:%d/metrics", listen[0], self.metrics.port)
        self._upload_task = asyncio.create_task(self.uploader.run(), name="uploader")
        self._spawn(self._retention_loop(), "retention")
        if self.pyroscope is not None:
            self._spawn(self.pyroscope.run(), "pyroscope")
        for entry in self.config.devices:
            self.add_device(entry)
        if self.config.discovery.enabled:
            self._spawn(self._discovery_loop(), "discovery")
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
        for task in self._tasks:
            if task.get_name() == "discovery":
                task.cancel()
        for slot in self.slots.values():
            slot.request_stop(cause)
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
