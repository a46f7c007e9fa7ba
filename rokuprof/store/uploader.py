"""The uploader: sends every pending spool chunk to Sentry, one envelope per chunk.

An asyncio shell: :class:`~rokuprof.store.delivery.DeliveryPolicy` (pure) says what each answer
means (delivered, retry at t, reject, pause) and when sends may go; :class:`PendingWindow
<rokuprof.store.pending.PendingWindow>` (pure) keeps which chunks are pending;
:class:`~rokuprof.store.sender.Sender` reads, checks and POSTs one chunk. The uploader awaits
and carries out what they say.

It works from the disk (:class:`~rokuprof.store.spool.Spool`): a new chunk is announced with
:meth:`Uploader.submit`, and a rescan every ``rescan_seconds`` (and at start) finds anything
else pending. It holds at most ``window`` pending chunks in memory (the oldest) plus the
spool's totals. A chunk is marked delivered only after a 2xx, and a 2xx means delivered, never
sent again by this process even when the marker must wait for disk space
(:mod:`rokuprof.store.marking`, which also moves refused chunks to ``rejected/``). Up to
``max_in_flight`` uploads run at once, oldest chunk first, at most one per session (a
session's chunks reach Sentry in order, sessions side by side); a chunk is never in flight
twice. When the pending chunks
exceed ``max_spool_bytes``, the oldest are dropped (deleted, counted, logged) until they fill
at most 90 % of it. Without a DSN it sends and drops nothing, only keeps the spool's figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from rokuprof.sentry.dsn import Dsn
from rokuprof.store.delivery import (
    LOW_WATER,
    Answered,
    Deliver,
    DeliveryPolicy,
    Event,
    Failed,
    Reject,
    Retry,
    Say,
    Unsendable,
    UploadPause,
    next_sends,
    over_limit,
    spool_cut,
    spool_full_message,
)
from rokuprof.store.marking import Markers, short_path
from rokuprof.store.owed import OwedMarkers
from rokuprof.store.pending import PendingWindow
from rokuprof.store.ratelimit import MAX_RETRY_SECONDS
from rokuprof.store.sender import (
    DEFAULT_TIMEOUT,
    BodyBuilder,
    Sender,
    check_chunk_bytes,
    sentry_body,
)
from rokuprof.store.spool import DEFAULT_MAX_BYTES, ScanResult, Spool, SpoolItem, SpoolStats
from rokuprof.store.upload_stats import UploaderStats

log = logging.getLogger(__name__)

DEFAULT_WINDOW = 1000
DEFAULT_MAX_IN_FLIGHT = 1  # the daemon passes [sentry] max_in_flight
MAX_IN_FLIGHT = 64
LEVELS = {"debug": logging.DEBUG, "warning": logging.WARNING, "error": logging.ERROR}


class Uploader:
    """See the module docstring. Run :meth:`run` as a task; :meth:`drain` to finish."""

    def __init__(
        self,
        spool: Spool,
        dsn: Dsn | None,
        *,
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        request_deadline: float = 60.0,
        backoff_base: float = 1.0,
        backoff_cap: float = MAX_RETRY_SECONDS,
        probe_base: float = 5.0,
        rescan_seconds: float = 60.0,
        window: int = DEFAULT_WINDOW,
        max_in_flight: int = DEFAULT_MAX_IN_FLIGHT,
        max_spool_bytes: int | None = DEFAULT_MAX_BYTES,
        build_body: BodyBuilder = sentry_body,
        check_chunk: Callable[[bytes], str | None] | None = check_chunk_bytes,
        rng: Callable[[], float] = random.random,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.spool = spool
        self.dsn = dsn
        self.sender: Sender | None = None
        if dsn is not None:
            self.sender = Sender(
                spool,
                dsn,
                client=client,
                timeout=timeout,
                request_deadline=request_deadline,
                build_body=build_body,
                check_chunk=check_chunk,
                wall_clock=wall_clock,
            )
        self.probe_base = probe_base
        self.rescan_seconds = rescan_seconds
        self.window = max(1, window)
        self.max_in_flight = max(1, min(max_in_flight, MAX_IN_FLIGHT, self.window))
        self.max_spool_bytes = max_spool_bytes
        self.clock = clock
        self.wall_clock = wall_clock
        self.policy = DeliveryPolicy(
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            probe_base=probe_base,
            max_in_flight=self.max_in_flight,
            rng=rng,
        )
        self.stats = UploaderStats()
        owed: OwedMarkers[SpoolItem] = OwedMarkers(
            backoff_base=backoff_base, backoff_cap=backoff_cap, rng=rng
        )
        self.marks = Markers(spool, owed, self._say, clock)
        self._held: PendingWindow[SpoolItem] = PendingWindow(self.window)
        self._in_flight: dict[str, asyncio.Task] = {}  # chunk key -> its upload task
        self._busy: set[Path] = set()  # session directories with a chunk in flight
        self._answered: set[str] = set()  # in flight, Sentry answered: recording the outcome
        self._wake = asyncio.Event()
        self._draining = False
        self._drop_after = 0.0  # a failed drop is tried again a rescan period later
        self._stopped = asyncio.Event()

    @property
    def pause(self) -> UploadPause | None:
        """Set while Sentry refuses the DSN's key."""
        return self.policy.pause

    @property
    def failures(self) -> int:
        """Consecutive failures (0 once a chunk is delivered)."""
        return self.policy.failures

    # -- intake ------------------------------------------------------------------------------

    def submit(self, path: Path | str) -> None:
        """A new chunk file exists (the capture just wrote it)."""
        if self.dsn is None:  # nothing to send: the periodic rescan keeps the figures
            return
        if self._held.scanning:
            self._held.arrived.append(Path(path))
        else:
            self._add(Path(path))

    def _add(self, path: Path) -> None:
        if str(path) in self._held or str(path) in self.marks.owed:
            return
        try:
            st = path.stat()
        except FileNotFoundError:
            return
        self._held.add(SpoolItem(st.st_mtime, path, st.st_size))
        self._wake.set()

    def _forget(self, item: SpoolItem) -> None:
        self._held.forget(item, len(self._in_flight))

    async def rescan(self) -> SpoolStats:
        """Find the pending chunks on disk again (after a restart, or anything missed)."""
        self._held.scan_started()
        size = self.window if self.dsn is not None else 0
        try:
            result: ScanResult = await asyncio.to_thread(self.spool.scan_window, size)
        finally:
            arrived, settled = self._held.scan_ended()
        self.stats.spool = stats = result.stats
        if self.dsn is None:
            return stats
        settled |= self.marks.owed.keys()  # delivered: on disk they look pending until marked
        self._held.replace(result.items, stats.pending, stats.pending_bytes, settled)
        for path in arrived:
            if not result.saw(path):
                self._add(path)
        if self._held:
            self._wake.set()
        return stats

    @property
    def pending(self) -> int:
        return self._held.pending

    @property
    def pending_bytes(self) -> int:
        return self._held.pending_bytes

    @property
    def in_memory(self) -> int:
        """How many pending chunks are held in memory (at most ``window``)."""
        return len(self._held)

    @property
    def in_flight(self) -> int:
        """How many uploads are under way now (at most ``max_in_flight``)."""
        return len(self._in_flight)

    def oldest_pending_mtime(self) -> float | None:
        return next((item.mtime for item in self._held.items.values()), None)

    def keep_keys(self) -> set[str]:
        """Chunks no one else may drop: in flight, or accepted by Sentry."""
        return set(self._in_flight) | self.marks.owed.keys()

    # -- the loop ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop now: uploads still waiting for Sentry's answer are abandoned (their chunks stay
        pending); answered ones are recorded first."""
        self._stopped.set()
        self._wake.set()

    async def drain(self, timeout: float, task: asyncio.Task | None = None) -> int:
        """Send what is pending for at most ``timeout`` seconds, then stop ``task`` (the
        :meth:`run` task). Returns how many chunks are still pending."""
        self._draining = True
        self._wake.set()
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout)
            except TimeoutError:
                self.stop()
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        return self.pending

    async def run(self) -> None:
        """Upload until :meth:`stop` (or, once draining, until nothing is pending)."""
        sender = self.sender
        if sender is not None:
            sender.open()
        try:
            await self._safe_rescan()
            next_scan = self.clock() + self.rescan_seconds
            while not self._stopped.is_set():
                now = self.clock()
                if now >= next_scan or self._held.scan_due:
                    await self._safe_rescan()
                    next_scan = self.clock() + self.rescan_seconds
                limit = self.max_spool_bytes
                if sender and over_limit(self.pending_bytes, limit) and now >= self._drop_after:
                    await self._enforce_limit()
                idle = not self._in_flight and (not self.pending or sender is None)
                if self._draining and idle:
                    return
                wait = min(next_scan - now, await self.marks.write_due(now))
                if sender is not None and self._held:
                    blocked = self.policy.wait(now)
                    if blocked <= 0:
                        self._start_uploads(sender)
                    else:
                        wait = min(wait, blocked)
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(0.0, wait))
        finally:  # abandon uploads still waiting for Sentry; let answered ones be recorded
            tasks = list(self._in_flight.items())
            for key, task in tasks:
                if key not in self._answered:
                    task.cancel()
            await asyncio.gather(*(task for _, task in tasks), return_exceptions=True)
            if self.marks.owed:
                await self.marks.write_owed(last=True)
            if sender is not None:
                await sender.aclose()

    async def _safe_rescan(self) -> None:
        try:
            await self.rescan()
        except OSError as exc:
            self._say(Say(f"cannot scan the spool: {exc}"))

    def retry_in(self) -> float:
        """Seconds until the next send may go out (0: now)."""
        return self.policy.wait(self.clock())

    # -- the spool limit ---------------------------------------------------------------------

    async def _enforce_limit(self) -> None:
        """Drop the oldest pending chunks until they fill at most ``LOW_WATER`` of the limit."""
        limit = self.max_spool_bytes
        assert limit is not None
        before = self.pending_bytes
        dropped: list[SpoolItem] = []
        while over_limit(self.pending_bytes, int(limit * LOW_WATER)):
            if not self._held:
                await self._safe_rescan()
                if not self._held:
                    break
            held = self._held.items.values()
            batch = spool_cut(held, self.pending_bytes, limit, self._in_flight)
            if not batch:
                break
            try:
                gone = await asyncio.to_thread(self.spool.drop, batch)
            except OSError as exc:
                self._say(Say(f"spool full, but cannot drop chunks: {exc}"))
                self._drop_after = self.clock() + self.rescan_seconds
                break
            for item in batch:  # gone, or already gone
                self._forget(item)
            dropped += gone
        if not dropped:
            return
        for item in dropped:
            self.stats.add_dropped(item.session.device, item.size)
        self._say(Say(spool_full_message(before, limit, dropped)))

    # -- uploads in flight -------------------------------------------------------------------

    def _start_uploads(self, sender: Sender) -> None:
        """Start uploads of the oldest pending chunks whose session has none in flight, up to
        the policy's limit (one, the probe, after a failure or a refused key)."""
        room = self.policy.send_limit() - len(self._in_flight)
        for item in next_sends(self._held.items.values(), self._in_flight, self._busy, room):
            self._busy.add(item.session_dir)
            self._in_flight[item.key] = asyncio.create_task(
                self._upload(sender, item, self.policy.ticket()),
                name=f"upload {short_path(item.path)}",
            )

    async def _upload(self, sender: Sender, item: SpoolItem, ticket: int) -> None:
        """One chunk, start to finish; the outcome is recorded, never raised."""
        try:
            await self._send_item(sender, item, ticket)
        except FileNotFoundError:  # deleted by retention, or already moved
            self._forget(item)
        except OSError as exc:  # e.g. the disk is full: the marker cannot be written
            problem = f"spool file problem for {short_path(item.path)}: {exc}"
            await self._carry_out(item, Failed(problem, self.clock(), ticket))
        except Exception as exc:  # a bug must not end the uploader: keep the chunk, retry
            log.exception("uploading %s failed", short_path(item.path))
            problem = f"cannot upload {short_path(item.path)}: {exc!r}"
            await self._carry_out(item, Failed(problem, self.clock(), ticket))
        finally:
            self._in_flight.pop(item.key, None)
            self._answered.discard(item.key)
            self._busy.discard(item.session_dir)
            self._wake.set()

    async def _send_item(self, sender: Sender, item: SpoolItem, ticket: int) -> None:
        prepared = await asyncio.to_thread(sender.prepare, item)
        if prepared is None:  # delivered or refused already
            self._forget(item)
            return
        if isinstance(prepared, str):
            await self._carry_out(item, Unsendable(prepared))
            return
        body, chunk_id = prepared
        answer = await sender.post(body)
        self._answered.add(item.key)
        event: Event
        if isinstance(answer, str):
            event = Failed(f"{answer} (will retry)", self.clock(), ticket)
        else:
            self.stats.last_status = answer.status
            at, wall, pending = self.clock(), self.wall_clock(), self.pending
            event = Answered(answer.status, answer.headers, answer.text, at, wall, ticket, pending)
        await self._carry_out(item, event, chunk_id)

    # -- carrying out the policy's actions ---------------------------------------------------

    async def _carry_out(self, item: SpoolItem, event: Event, chunk_id: str = "") -> None:
        """Feed ``event`` to the policy and do what it says."""
        for action in self.policy.handle(event):
            match action:
                case Deliver(status):
                    self._forget(item)  # delivered: never sent again, marked now or later
                    self.stats.add_uploaded(item.session.device)
                    await self.marks.mark(item, chunk_id, status)
                case Reject(reason, status):
                    await self.marks.reject(item, reason, status)
                    self._forget(item)
                    self.stats.add_rejected(item.session.device)
                case Retry(_, cause):
                    self.stats.waited(cause)
                case Say():
                    self._say(action)

    def _say(self, say: Say) -> None:
        if say.record:
            self.stats.last_error = say.text
            self.stats.last_error_at = self.wall_clock()
        if say.logged:
            log.log(LEVELS[say.level], "%s", say.text)
