"""The uploader: sends every pending spool chunk to Sentry, one envelope per chunk.

It works from the disk (:class:`~rokuprof.store.spool.Spool`), never from memory alone: a new
chunk is announced with :meth:`Uploader.submit`, and a rescan every ``rescan_seconds`` (and at
start) finds anything else pending. It holds at most ``window`` pending chunks in memory (the
oldest) plus the spool's totals, whatever the backlog; when the window is used up it rescans.
A chunk is marked delivered only after a 2xx.

Up to ``max_in_flight`` uploads run at once, oldest chunk first, at most one per session: the
chunks of one session reach Sentry in order, different sessions (devices) side by side. A chunk
is never in flight twice. After a failure or a refused key only one request goes out (the
probe) until Sentry answers again; failures of requests that were already in flight then count
in the figures but do not lengthen the backoff, so the retry policy is the same whatever
``max_in_flight`` is. A rate limit stops new requests from starting (those in flight finish).

* 2xx: delivered. ``X-Sentry-Rate-Limits`` is honoured on every answer, per category.
* 429: wait as told (``Retry-After`` / ``X-Sentry-Rate-Limits``; 60 s with neither), then
  send the same chunk again.
* 401/403: Sentry refused the key, not the chunk. Uploads pause (logged once, see
  :attr:`Uploader.pause`); the oldest chunk is sent again as a probe after a capped backoff,
  and any other answer ends the pause. Nothing is rejected.
* 400/413: this chunk is refused for good and moves to ``rejected/`` with the reason. So does
  a chunk that is not a valid V2 chunk (it would be dropped by Sentry after a 200).
* 5xx, other answers, network errors and timeouts: retry with capped exponential backoff and
  full jitter (:func:`~rokuprof.backoff.backoff_delay`, at most 60 s).

The status alone decides. Of Sentry's answer only the first
:data:`~rokuprof.httpbody.MAX_ANSWER_BYTES` are read (for messages), however long it is; the
connection is then closed.

The spool is bounded: when the pending chunks exceed ``max_spool_bytes``, the oldest are
dropped (deleted, counted, logged) until they fill at most 90 % of it. Without a DSN the
uploader sends and drops nothing and only keeps the spool's figures up to date. The DSN's key is
never logged (nor is the ``X-Sentry-Auth`` header). How an envelope is built is a parameter
(``build_body``), by default :func:`rokuprof.sentry.chunk_envelope` + gzip.
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

import httpx

from rokuprof.backoff import backoff_delay
from rokuprof.httpbody import IDENTITY, MAX_ANSWER_BYTES, answer_text, read_capped
from rokuprof.sentry.dsn import Dsn
from rokuprof.sentry.envelope import EnvelopeError, chunk_envelope, gzip_body
from rokuprof.sentry.validate import validate_chunk
from rokuprof.store.ratelimit import MAX_RETRY_SECONDS, RateLimits
from rokuprof.store.spool import DEFAULT_MAX_BYTES, ScanResult, Spool, SpoolItem, SpoolStats

log = logging.getLogger(__name__)

KEY_REFUSED = frozenset({401, 403})
CHUNK_REFUSED = frozenset({400, 413})
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
DEFAULT_WINDOW = 1000
DEFAULT_MAX_IN_FLIGHT = 1  # the daemon passes [sentry] max_in_flight
MAX_IN_FLIGHT = 64
LOW_WATER = 0.9  # a full spool is cut down to this fraction of its limit

BodyBuilder = Callable[[bytes, float], tuple[bytes, str]]
"""(chunk JSON bytes, send time) -> (gzip-compressed envelope body, chunk id)."""


def sentry_body(data: bytes, sent_at: float) -> tuple[bytes, str]:
    """The default :data:`BodyBuilder`: one ``profile_chunk`` envelope, gzip-compressed."""
    envelope = chunk_envelope(data, sent_at=sent_at)
    return gzip_body(envelope.to_bytes()), str(envelope.headers["event_id"])


def check_chunk_bytes(data: bytes) -> str | None:
    """Why Sentry would drop this chunk after accepting it, or ``None`` when it is valid."""
    problems = validate_chunk(data)
    return "; ".join(map(str, problems[:3])) if problems else None


@dataclass
class DeviceUploads:
    uploaded: int = 0
    rejected: int = 0
    dropped: int = 0


@dataclass
class UploadPause:
    """Uploads are paused because Sentry refused the DSN's key."""

    status: int  # the latest refusal: 401 or 403
    since: float  # Unix seconds
    refusals: int = 1

    @property
    def reason(self) -> str:
        return f"Sentry refused the key (HTTP {self.status})"


@dataclass
class UploaderStats:
    uploaded: int = 0
    rejected: int = 0
    dropped: int = 0
    dropped_bytes: int = 0
    send_errors: int = 0
    rate_limited: int = 0
    key_refused: int = 0  # 401/403 answers
    last_status: int | None = None
    last_error: str = ""
    last_error_at: float | None = None  # Unix seconds
    spool: SpoolStats = field(default_factory=SpoolStats)
    per_device: dict[str, DeviceUploads] = field(default_factory=dict)

    def device(self, name: str) -> DeviceUploads:
        return self.per_device.setdefault(name, DeviceUploads())


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
    ) -> None:
        self.spool = spool
        self.dsn = dsn
        self._client = client
        self._own_client = client is None
        self.timeout = timeout
        self.request_deadline = request_deadline
        self.backoff_base = backoff_base
        self.backoff_cap = min(backoff_cap, MAX_RETRY_SECONDS)
        self.probe_base = probe_base
        self.rescan_seconds = rescan_seconds
        self.window = max(1, window)
        self.max_in_flight = max(1, min(max_in_flight, MAX_IN_FLIGHT, self.window))
        self.max_spool_bytes = max_spool_bytes
        self.build_body = build_body
        self.check_chunk = check_chunk
        self.rng = rng
        self.clock = clock
        self.limits = RateLimits()
        self.stats = UploaderStats()
        self.pause: UploadPause | None = None
        self.failures = 0  # consecutive retryable failures
        self._retry_at = 0.0  # on ``clock``
        self._epoch = 0  # counts failures and refusals: a request from an older epoch straggled
        self._in_flight: dict[str, asyncio.Task] = {}  # chunk key -> its upload task
        self._busy: set[Path] = set()  # session directories with a chunk in flight
        self._answered: set[str] = set()  # in flight, Sentry answered: recording the outcome
        self._settled: set[str] = set()  # chunks that stopped being pending while a scan ran
        # the oldest pending chunks, oldest first; ``_complete``: every pending one is here
        self._window: dict[str, SpoolItem] = {}
        self._complete = True
        self._pending = 0
        self._pending_bytes = 0
        self._scanning = False
        self._scan_due = False
        self._arrived: list[Path] = []  # submitted while a scan ran
        self._wake = asyncio.Event()
        self._draining = False
        self._stopped = asyncio.Event()

    # -- intake ------------------------------------------------------------------------------

    def submit(self, path: Path | str) -> None:
        """A new chunk file exists (the capture just wrote it)."""
        if self.dsn is None:  # nothing to send: the periodic rescan keeps the figures
            return
        if self._scanning:
            self._arrived.append(Path(path))
        else:
            self._add(Path(path))

    def _add(self, path: Path) -> None:
        key = str(path)
        if key in self._window:
            return
        try:
            st = path.stat()
        except FileNotFoundError:
            return
        self._pending += 1
        self._pending_bytes += st.st_size
        if self._complete and len(self._window) < self.window:
            self._window[key] = SpoolItem(st.st_mtime, path, st.st_size)
        else:  # older chunks wait on disk beyond the window: this one comes after them
            self._complete = False
        self._wake.set()

    def _forget(self, item: SpoolItem) -> None:
        """``item`` is no longer pending (delivered, rejected, dropped or gone)."""
        if self._scanning:
            self._settled.add(item.key)
        if self._window.pop(item.key, None) is None:
            return
        self._pending = max(0, self._pending - 1)
        self._pending_bytes = max(0, self._pending_bytes - item.size)
        if self._pending > len(self._window) <= len(self._in_flight):
            self._scan_due = True  # the rest waits on disk beyond the window

    async def rescan(self) -> SpoolStats:
        """Find the pending chunks on disk again (after a restart, or anything missed)."""
        self._scanning = True
        try:
            result: ScanResult = await asyncio.to_thread(
                self.spool.scan_window, self.window if self.dsn is not None else 0
            )
        finally:
            self._scanning = False
            arrived, self._arrived = self._arrived, []
            settled, self._settled = self._settled, set()
        self.stats.spool = result.stats
        self._scan_due = False
        if self.dsn is None:
            return result.stats
        self._window = {item.key: item for item in result.items}
        self._pending = result.stats.pending
        self._pending_bytes = result.stats.pending_bytes
        for key in settled:  # delivered (or rejected) while the scan listed the directories
            item = self._window.pop(key, None)
            if item is not None:
                self._pending = max(0, self._pending - 1)
                self._pending_bytes = max(0, self._pending_bytes - item.size)
        self._complete = len(self._window) == self._pending
        for path in arrived:
            if not result.saw(path):
                self._add(path)
        if self._window:
            self._wake.set()
        return result.stats

    @property
    def pending(self) -> int:
        return self._pending

    @property
    def pending_bytes(self) -> int:
        return self._pending_bytes

    @property
    def in_memory(self) -> int:
        """How many pending chunks are held in memory (at most ``window``)."""
        return len(self._window)

    @property
    def in_flight(self) -> int:
        """How many uploads are under way now (at most ``max_in_flight``)."""
        return len(self._in_flight)

    def oldest_pending_mtime(self) -> float | None:
        return next(iter(self._window.values())).mtime if self._window else None

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
        client = self._client
        if client is None and self.dsn is not None:
            client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
            self._client = client
        try:
            await self._safe_rescan()
            next_scan = self.clock() + self.rescan_seconds
            while not self._stopped.is_set():
                now = self.clock()
                if now >= next_scan or self._scan_due:
                    await self._safe_rescan()
                    next_scan = self.clock() + self.rescan_seconds
                if self._over_limit():
                    await self._enforce_limit()
                idle = not self._in_flight and (not self._pending or self.dsn is None)
                if self._draining and idle:
                    return
                wait = next_scan - now
                if self.dsn is not None and self._window:
                    blocked = max(self.limits.blocked_for(now), self._retry_at - now)
                    if blocked <= 0:
                        self._start_uploads(client)
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
            if self._own_client and client is not None:
                await client.aclose()
                self._client = None

    async def _safe_rescan(self) -> None:
        try:
            await self.rescan()
        except OSError as exc:
            self._scan_due = False
            self._error(f"cannot scan the spool: {exc}")

    def retry_in(self) -> float:
        """Seconds until the next send may go out (0: now)."""
        now = self.clock()
        return max(0.0, self.limits.blocked_for(now), self._retry_at - now)

    # -- the spool limit ---------------------------------------------------------------------

    def _over_limit(self) -> bool:
        limit = self.max_spool_bytes
        return self.dsn is not None and limit is not None and self._pending_bytes > limit

    async def _enforce_limit(self) -> None:
        """Drop the oldest pending chunks until they fill at most ``LOW_WATER`` of the limit."""
        assert self.max_spool_bytes is not None
        target = int(self.max_spool_bytes * LOW_WATER)
        before = self._pending_bytes
        dropped: list[SpoolItem] = []
        while self._pending_bytes > target:
            if not self._window:
                await self._safe_rescan()
                if not self._window:
                    break
            batch, excess = [], self._pending_bytes - target
            for item in self._window.values():
                if excess <= 0:
                    break
                if item.key not in self._in_flight:  # being sent: delivered or kept
                    batch.append(item)
                    excess -= item.size
            if not batch:
                break
            try:
                gone = await asyncio.to_thread(self.spool.drop, batch)
            except OSError as exc:
                self._error(f"spool full, but cannot drop chunks: {exc}")
                break
            for item in batch:  # gone, or already gone
                self._forget(item)
            dropped += gone
        if not dropped:
            return
        freed = sum(item.size for item in dropped)
        self.stats.dropped += len(dropped)
        self.stats.dropped_bytes += freed
        for item in dropped:
            self.stats.device(_device_of(item)).dropped += 1
        sessions = sorted({"/".join(item.session_dir.parts[-2:]) for item in dropped})
        shown = ", ".join(sessions[:5]) + (
            f" and {len(sessions) - 5} more" if len(sessions) > 5 else ""
        )
        self._error(
            f"spool full ({_mib(before)} of chunks waiting, limit {_mib(self.max_spool_bytes)}):"
            f" dropped the {len(dropped)} oldest undelivered chunk(s) ({_mib(freed)}) of {shown};"
            " their archives are kept (rokuprof convert rebuilds them)"
        )

    # -- uploads in flight -------------------------------------------------------------------

    def _start_uploads(self, client: httpx.AsyncClient) -> None:
        """Start uploads of the oldest pending chunks whose session has none in flight, up to
        the limit: ``max_in_flight``, or one (the probe) after a failure or a refused key."""
        limit = 1 if self.pause is not None or self.failures else self.max_in_flight
        if len(self._in_flight) >= limit:
            return
        for item in self._window.values():
            session = item.session_dir
            if item.key in self._in_flight or session in self._busy:
                continue
            self._busy.add(session)
            self._in_flight[item.key] = asyncio.create_task(
                self._upload(client, item), name=f"upload {_short(item.path)}"
            )
            if len(self._in_flight) >= limit:
                return

    async def _upload(self, client: httpx.AsyncClient, item: SpoolItem) -> None:
        """One chunk, start to finish; the outcome is recorded, never raised."""
        epoch = self._epoch
        try:
            await self._send_item(client, item, epoch)
        except FileNotFoundError:  # deleted by retention, or already moved
            self._forget(item)
        except OSError as exc:  # e.g. the disk is full: the marker cannot be written
            self._retry_later(f"spool file problem for {_short(item.path)}: {exc}", epoch)
        except Exception as exc:  # a bug must not end the uploader: keep the chunk, retry
            log.exception("uploading %s failed", _short(item.path))
            self._retry_later(f"cannot upload {_short(item.path)}: {exc!r}", epoch)
        finally:
            self._in_flight.pop(item.key, None)
            self._answered.discard(item.key)
            self._busy.discard(item.session_dir)
            self._wake.set()

    def _prepare(self, item: SpoolItem) -> tuple[bytes, str] | str | None:
        """In a worker thread: the gzip-compressed envelope and chunk id to send, the reason
        the chunk is not valid, or ``None`` when it was delivered or refused already."""
        data = item.path.read_bytes()
        if self.spool.is_done(item.path):
            return None
        if self.check_chunk is not None:
            problem = self.check_chunk(data)
            if problem is not None:
                return f"not a valid chunk, not sent: {problem}"
        try:
            return self.build_body(data, time.time())
        except (EnvelopeError, ValueError) as exc:
            return f"not a valid chunk, not sent: cannot build an envelope: {exc}"

    async def _send_item(self, client: httpx.AsyncClient, item: SpoolItem, epoch: int) -> None:
        prepared = await asyncio.to_thread(self._prepare, item)
        if prepared is None:
            self._forget(item)
            return
        if isinstance(prepared, str):
            await self._reject(item, prepared, None)
            return
        body, chunk_id = prepared
        outcome = await self._post(client, body)
        self._answered.add(item.key)
        if isinstance(outcome, str):
            self._retry_later(f"{outcome} (will retry)", epoch)
            return
        status, text = outcome
        self.stats.last_status = status
        if status in KEY_REFUSED:
            self._key_refused(status, text, epoch)
            return
        self._resume()
        if 200 <= status < 300:
            self.failures = 0
            self._retry_at = 0.0
            await asyncio.to_thread(
                self.spool.mark_delivered, item, chunk_id=chunk_id, status=status
            )
            self._forget(item)
            self.stats.uploaded += 1
            self.stats.device(_device_of(item)).uploaded += 1
            log.debug("chunk %s delivered (HTTP %d)", _short(item.path), status)
        elif status == 429:
            self.stats.rate_limited += 1
            blocked = self.limits.blocked_for(self.clock())
            self._error(f"rate limited by Sentry (HTTP 429): waiting {blocked:.0f} s")
        elif status in CHUNK_REFUSED:
            await self._reject(item, f"Sentry refused the chunk: HTTP {status} {text}", status)
        else:
            self._retry_later(f"Sentry answered HTTP {status} {text} (will retry)", epoch)

    async def _post(self, client: httpx.AsyncClient, body: bytes) -> tuple[int, str] | str:
        """POST one envelope: (status, the start of Sentry's answer), or the network problem as
        text. Of the answer at most :data:`~rokuprof.httpbody.MAX_ANSWER_BYTES` are read."""
        dsn = self.dsn
        headers = dsn.request_headers(gzipped=True) | IDENTITY
        try:
            async with asyncio.timeout(self.request_deadline):
                async with client.stream(
                    "POST", dsn.envelope_url, content=body, headers=headers
                ) as response:
                    answer, _ = await read_capped(response, MAX_ANSWER_BYTES)
        except TimeoutError:
            return f"no answer from Sentry within {self.request_deadline:g} s"
        except httpx.TimeoutException as exc:
            return f"timed out talking to Sentry ({exc.__class__.__name__})"
        except httpx.HTTPError as exc:
            return f"cannot reach Sentry: {exc.__class__.__name__}: {self._scrub(str(exc))}"
        self.limits.update(response.status_code, response.headers, self.clock(), time.time())
        return response.status_code, self._scrub(answer_text(response, answer)[:200])

    def _scrub(self, text: str) -> str:
        key = self.dsn.public_key if self.dsn is not None else ""
        return text.replace(key, "<key>") if key else text

    # -- outcomes ----------------------------------------------------------------------------

    def _key_refused(self, status: int, text: str, epoch: int) -> None:
        """401/403: pause every upload for this DSN; probe again after a capped backoff."""
        self.stats.key_refused += 1
        if epoch != self._epoch and self.pause is not None:
            return  # was in flight when the pause began: already said, already scheduled
        self._epoch += 1
        self.failures = 0
        pause = self.pause
        if pause is None:
            pause = self.pause = UploadPause(status, time.time())
        else:
            pause.status = status
            pause.refusals += 1
        delay = backoff_delay(pause.refusals, self.probe_base, self.backoff_cap, self.rng())
        self._retry_at = self.clock() + delay
        message = (
            f"uploads paused: {pause.reason}: {text or '-'}; {self._pending} chunk(s) wait on"
            f" disk, nothing is rejected; probing again at most {self.backoff_cap:g} s apart"
            " (check the DSN)"
        )
        if pause.refusals == 1:
            self._error(message, level=logging.ERROR)
        else:  # said once already: keep the figures, not the log
            self._error(message, logged=False)
            log.debug(
                "%s still refused (%d times); next try in %.1f s",
                pause.reason,
                pause.refusals,
                delay,
            )

    def _resume(self) -> None:
        if self.pause is None:
            return
        paused = time.time() - self.pause.since
        log.warning(
            "uploads resumed: Sentry accepted the key again after %.0f s paused (%d refusal(s))",
            paused,
            self.pause.refusals,
        )
        self.pause = None
        self._retry_at = 0.0

    def _retry_later(self, message: str, epoch: int) -> None:
        self.stats.send_errors += 1
        if epoch != self._epoch and self._retry_at > self.clock():
            # in flight when an earlier failure set the backoff: the same outage
            self._error(message, logged=False)
            return
        self._epoch += 1
        self.failures += 1
        delay = backoff_delay(self.failures, self.backoff_base, self.backoff_cap, self.rng())
        self._retry_at = self.clock() + delay
        self._error(f"{message}; next try in {delay:.1f} s")

    async def _reject(self, item: SpoolItem, reason: str, status: int | None) -> None:
        try:
            target = await asyncio.to_thread(
                self.spool.mark_rejected, item, reason=reason, status=status
            )
        except FileNotFoundError:
            target = None
        self._forget(item)
        self.stats.rejected += 1
        self.stats.device(_device_of(item)).rejected += 1
        self._error(
            f"chunk {_short(item.path)} moved to {_short(target) if target else '-'}: {reason}"
        )

    def _error(self, message: str, *, level: int = logging.WARNING, logged: bool = True) -> None:
        self.stats.last_error = message
        self.stats.last_error_at = time.time()
        if logged:
            log.log(level, "%s", message)


def _device_of(item: SpoolItem) -> str:
    return item.session.device


def _short(path: Path) -> str:
    """``device/session/chunks/000001.json`` for logs."""
    return "/".join(Path(path).parts[-4:])


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"
