"""The uploader: sends every pending spool chunk to Sentry, one envelope per chunk.

It works from the disk (:class:`~rokuprof.store.spool.Spool`), never from memory alone: a new
chunk is announced with :meth:`Uploader.submit`, and a rescan every ``rescan_seconds`` (and at
start) finds anything else pending. A chunk is marked delivered only after a 2xx.

* 2xx: delivered. ``X-Sentry-Rate-Limits`` is honoured on every answer, per category.
* 429: wait as told (``Retry-After`` / ``X-Sentry-Rate-Limits``; 60 s with neither), then
  send the same chunk again.
* 400/401/403/413: refused for good, the chunk moves to ``rejected/`` with the reason. So
  does a chunk that is not a valid V2 chunk (it would be dropped by Sentry after a 200).
* 5xx, other answers, network errors and timeouts: retry with capped exponential backoff and
  full jitter.

Without a DSN the uploader only keeps the spool's figures up to date. The DSN's key is never
logged (nor is the ``X-Sentry-Auth`` header). How an envelope is built is a parameter
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

from rokuprof.sentry.dsn import Dsn
from rokuprof.sentry.envelope import EnvelopeError, chunk_envelope, gzip_body
from rokuprof.sentry.validate import validate_chunk
from rokuprof.store.ratelimit import RateLimits
from rokuprof.store.spool import Spool, SpoolItem, SpoolStats

log = logging.getLogger(__name__)

REFUSED_FOR_GOOD = frozenset({400, 401, 403, 413})
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)

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


@dataclass
class UploaderStats:
    uploaded: int = 0
    rejected: int = 0
    send_errors: int = 0
    rate_limited: int = 0
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
        backoff_cap: float = 300.0,
        rescan_seconds: float = 60.0,
        build_body: BodyBuilder = sentry_body,
        check_chunk: Callable[[bytes], str | None] | None = check_chunk_bytes,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.spool = spool
        self.dsn = dsn
        self._client = client
        self._own_client = client is None
        self.timeout = timeout
        self.request_deadline = request_deadline
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.rescan_seconds = rescan_seconds
        self.build_body = build_body
        self.check_chunk = check_chunk
        self.rng = rng
        self.limits = RateLimits()
        self.stats = UploaderStats()
        self.failures = 0  # consecutive retryable failures
        self._retry_at = 0.0  # monotonic
        self._queue: dict[str, SpoolItem] = {}
        self._wake = asyncio.Event()
        self._draining = False
        self._stopped = asyncio.Event()

    # -- intake ------------------------------------------------------------------------------

    def submit(self, path: Path | str) -> None:
        """A new chunk file exists (the capture just wrote it)."""
        if self.dsn is None:  # nothing to send: the periodic rescan keeps the figures
            return
        path = Path(path)
        with contextlib.suppress(FileNotFoundError):
            st = path.stat()
            self._queue.setdefault(str(path), SpoolItem(st.st_mtime, path, st.st_size))
            self._wake.set()

    async def rescan(self) -> SpoolStats:
        """Find every pending chunk on disk again (after a restart, or anything missed)."""
        items, stats = await asyncio.to_thread(self.spool.scan)
        self.stats.spool = stats
        if self.dsn is None:
            return stats
        queue = {item.key: item for item in items}
        # keep submissions that arrived during the scan
        for key, item in self._queue.items():
            queue.setdefault(key, item)
        self._queue = dict(sorted(queue.items(), key=lambda kv: kv[1]))
        if self._queue:
            self._wake.set()
        return stats

    @property
    def pending(self) -> int:
        return len(self._queue)

    @property
    def pending_bytes(self) -> int:
        return sum(i.size for i in self._queue.values())

    def oldest_pending_mtime(self) -> float | None:
        return min((i.mtime for i in self._queue.values()), default=None)

    # -- the loop ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop now (an upload in flight is abandoned; the chunk stays pending)."""
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
            next_scan = time.monotonic() + self.rescan_seconds
            while not self._stopped.is_set():
                now = time.monotonic()
                if now >= next_scan:
                    await self._safe_rescan()
                    next_scan = now + self.rescan_seconds
                if self._draining and (not self._queue or self.dsn is None):
                    return
                wait = next_scan - now
                if self.dsn is not None and self._queue:
                    blocked = max(self.limits.blocked_for(now), self._retry_at - now)
                    if blocked <= 0:
                        await self._send_next(client)
                        continue
                    wait = min(wait, blocked)
                self._wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._wake.wait(), max(0.0, wait))
        finally:
            if self._own_client and client is not None:
                await client.aclose()
                self._client = None

    async def _safe_rescan(self) -> None:
        try:
            await self.rescan()
        except OSError as exc:
            self._error(f"cannot scan the spool: {exc}")

    # -- one chunk ---------------------------------------------------------------------------

    async def _send_next(self, client: httpx.AsyncClient) -> None:
        key, item = next(iter(self._queue.items()))
        try:
            await self._send_item(client, key, item)
        except FileNotFoundError:  # deleted by retention, or already moved
            self._queue.pop(key, None)
        except OSError as exc:  # e.g. the disk is full: the marker cannot be written
            self._retry_later(f"spool file problem for {_short(item.path)}: {exc}")

    async def _send_item(self, client: httpx.AsyncClient, key: str, item: SpoolItem) -> None:
        data = await asyncio.to_thread(item.path.read_bytes)
        if await asyncio.to_thread(self.spool.is_done, item.path):
            self._queue.pop(key, None)
            return
        problem = None
        if self.check_chunk is not None:
            problem = await asyncio.to_thread(self.check_chunk, data)
        if problem is None:
            try:
                body, chunk_id = self.build_body(data, time.time())
            except (EnvelopeError, ValueError) as exc:
                problem = f"cannot build an envelope: {exc}"
        if problem is not None:
            await self._reject(key, item, f"not a valid chunk, not sent: {problem}", None)
            return
        outcome = await self._post(client, body)
        if isinstance(outcome, str):
            self._retry_later(f"{outcome} (will retry)")
            return
        status, text = outcome
        self.stats.last_status = status
        if 200 <= status < 300:
            self.failures = 0
            self._retry_at = 0.0
            await asyncio.to_thread(
                self.spool.mark_delivered, item, chunk_id=chunk_id, status=status
            )
            self._queue.pop(key, None)
            self.stats.uploaded += 1
            self.stats.device(_device_of(item)).uploaded += 1
            log.debug("chunk %s delivered (HTTP %d)", _short(item.path), status)
        elif status == 429:
            self.stats.rate_limited += 1
            blocked = self.limits.blocked_for(time.monotonic())
            self._error(f"rate limited by Sentry (HTTP 429): waiting {blocked:.0f} s")
        elif status in REFUSED_FOR_GOOD:
            await self._reject(key, item, f"Sentry refused the chunk: HTTP {status} {text}", status)
        else:
            self._retry_later(f"Sentry answered HTTP {status} {text} (will retry)")

    async def _post(self, client: httpx.AsyncClient, body: bytes) -> tuple[int, str] | str:
        """POST one envelope: (status, short body text), or the network problem as text."""
        dsn = self.dsn
        try:
            response = await asyncio.wait_for(
                client.post(
                    dsn.envelope_url, content=body, headers=dsn.request_headers(gzipped=True)
                ),
                self.request_deadline,
            )
        except TimeoutError:
            return f"no answer from Sentry within {self.request_deadline:g} s"
        except httpx.TimeoutException as exc:
            return f"timed out talking to Sentry ({exc.__class__.__name__})"
        except httpx.HTTPError as exc:
            return f"cannot reach Sentry: {exc.__class__.__name__}: {self._scrub(str(exc))}"
        self.limits.update(response.status_code, response.headers, time.monotonic(), time.time())
        text = self._scrub(response.text[:200].strip().replace("\n", " "))
        return response.status_code, text

    def _scrub(self, text: str) -> str:
        key = self.dsn.public_key if self.dsn is not None else ""
        return text.replace(key, "<key>") if key else text

    def _retry_later(self, message: str) -> None:
        self.failures += 1
        self.stats.send_errors += 1
        ceiling = min(self.backoff_cap, self.backoff_base * 2 ** min(self.failures - 1, 30))
        delay = self.rng() * ceiling  # full jitter
        self._retry_at = time.monotonic() + delay
        self._error(f"{message}; next try in {delay:.1f} s")

    async def _reject(self, key: str, item: SpoolItem, reason: str, status: int | None) -> None:
        try:
            target = await asyncio.to_thread(
                self.spool.mark_rejected, item, reason=reason, status=status
            )
        except FileNotFoundError:
            target = None
        self._queue.pop(key, None)
        self.stats.rejected += 1
        self.stats.device(_device_of(item)).rejected += 1
        self._error(
            f"chunk {_short(item.path)} moved to {_short(target) if target else '-'}: {reason}"
        )

    def _error(self, message: str) -> None:
        self.stats.last_error = message
        self.stats.last_error_at = time.time()
        log.warning("%s", message)


def _device_of(item: SpoolItem) -> str:
    return item.session_dir.parent.name


def _short(path: Path) -> str:
    """``device/session/chunks/000001.json`` for logs."""
    return "/".join(Path(path).parts[-4:])
