"""Chunks Sentry accepted whose ``delivered/`` marker could not be written yet (pure bookkeeping:
no files, no clock; the times are given, the jitter comes from ``rng``).

A 2xx means delivered, whatever the disk says: the uploader keeps such a chunk here, never sends
it again in this process, and writes its marker when the disk allows, trying again after a
capped exponential backoff with full jitter (:func:`~rokuprof.store.ratelimit.retry_delay`) for
as long as the writes fail. Only a restart before the marker is written sends the chunk again
(at-least-once across processes; its ``chunk_id`` is Sentry's dedup key).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from typing import Generic, Protocol, TypeVar

from rokuprof.store.ratelimit import MAX_RETRY_SECONDS, RetryDelays


class Keyed(Protocol):
    @property
    def key(self) -> str: ...


K = TypeVar("K", bound=Keyed)


class OwedMarkers(Generic[K]):
    """See the module docstring. ``items`` maps a chunk's key to the chunk and its id."""

    def __init__(
        self,
        *,
        backoff_base: float = 1.0,
        backoff_cap: float = MAX_RETRY_SECONDS,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.delays = RetryDelays(backoff_base, backoff_cap, rng=rng)
        self.items: dict[str, tuple[K, str, int]] = {}  # key -> (chunk, chunk id, HTTP status)
        self.failures = 0  # marker writes in a row that failed
        self.retry_at = 0.0  # monotonic seconds: no write before

    def __contains__(self, key: str) -> bool:
        return key in self.items

    def __len__(self) -> int:
        return len(self.items)

    def keys(self) -> set[str]:
        return set(self.items)

    def owe(self, item: K, chunk_id: str, status: int, at: float) -> float:
        """Sentry accepted ``item`` at ``at`` and its marker failed: keep it; the seconds until
        the next write (a backoff already running is the same outage: not lengthened)."""
        self.items[item.key] = (item, chunk_id, status)
        if self.retry_at > at:
            return self.retry_at - at
        return self.failed(at)

    def due(self, now: float) -> list[tuple[K, str, int]]:
        """The markers to write now (none while the backoff runs)."""
        return list(self.items.values()) if self.items and now >= self.retry_at else []

    def wait(self, now: float) -> float | None:
        """Seconds until the next write is due (``None``: nothing owed)."""
        return max(0.0, self.retry_at - now) if self.items else None

    def failed(self, at: float) -> float:
        """A write failed at ``at``: back off (the delay)."""
        self.failures += 1
        delay = self.delays.after_failures(self.failures)
        self.retry_at = at + delay
        return delay

    def settled(self, keys: Iterable[str]) -> None:
        """These markers were written (or their chunks are gone): owed no more."""
        for key in keys:
            self.items.pop(key, None)
        if not self.items:
            self.failures = 0
            self.retry_at = 0.0
