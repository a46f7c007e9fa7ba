"""The daemon's disk keeper: retention, and the free-space floor of the output file system.

An asyncio shell over :func:`rokuprof.store.retention.keep` (which decides and deletes, in a
worker thread). A full pass runs at start, every ``interval`` seconds, and whenever a look at
the free space (every ``check_seconds``: one ``statvfs``) finds less than the floor and its
headroom (:attr:`~rokuprof.store.retention.RetentionPolicy.free_target`), so the floor is kept
between passes rather than reached by the captures. Retention deletes only when ``[retention]``
sets a limit; without one the keeper only watches.

When the floor cannot be kept (nothing deletable is left: what remains is being captured, or
is not rokuprof's), the capture waits at the floor (each device's machine stops connecting,
:mod:`rokuprof.capture.device_machine`). The keeper says so once (a warning, ``/healthz``'s
detail, ``rokuprof_disk_waiting``), and once more when space returns and capture resumes. After
a pass that freed nothing (or failed) the next one runs at most ``short_recheck`` seconds later,
so a floor that cannot be kept costs a ``statvfs`` a second, not a walk of the output.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rokuprof.daemon.config import DaemonConfig
from rokuprof.store.retention import Outcome, RetentionPolicy, keep
from rokuprof.store.spool import SpoolItem
from rokuprof.timefmt import utc_iso
from rokuprof.units import size

log = logging.getLogger(__name__)

SHORT_RECHECK = 5.0  # seconds between full passes while nothing deletable is left


def retention_policy(config: DaemonConfig) -> RetentionPolicy:
    """``[retention]``'s limits and the capture's floor, as retention applies them."""
    ret = config.retention
    return RetentionPolicy(
        max_age_seconds=ret.max_age_days * 86400 if ret.max_age_days is not None else None,
        max_bytes=ret.max_bytes,
        min_free_bytes=config.capture.archive.min_free_bytes,
    )


@dataclass
class DiskFigures:
    """What the keeper knows and did (for ``/metrics`` and ``/healthz``)."""

    free: int | None = None  # the output file system's free bytes at the last look
    passes: int = 0
    sessions_deleted: int = 0
    bytes_deleted: int = 0  # allocated bytes of what retention deleted
    chunks_dropped: int = 0  # undelivered chunks deleted (with their session, or alone)
    short: int = 0  # bytes missing to min_free_bytes that nothing deletable could free
    short_since: float | None = None  # Unix seconds: since when
    live: int = 0  # sessions being captured at the last pass


class DiskKeeper:
    """See the module docstring."""

    def __init__(
        self,
        out: Path,
        policy: RetentionPolicy,
        *,
        free_space: Callable[[Path], int],
        active: Callable[[], list[Path]] = list,
        keep_keys: Callable[[], set[str]] = set,
        on_dropped: Callable[[list[SpoolItem]], None] = lambda items: None,
        interval: float = 300.0,
        check_seconds: float = 1.0,
        short_recheck: float = SHORT_RECHECK,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.out = Path(out)
        self.policy = policy
        self.free_space = free_space
        self.active = active
        self.keep_keys = keep_keys
        self.on_dropped = on_dropped
        self.interval = interval
        self.check_seconds = check_seconds
        self.short_recheck = short_recheck
        self.clock = clock
        self.wall_clock = wall_clock
        self.figures = DiskFigures()
        self._last_pass = float("-inf")
        self._fruitless = False  # the last pass freed nothing, or failed

    @property
    def floor(self) -> int:
        return self.policy.min_free_bytes

    @property
    def enabled(self) -> bool:
        return self.policy.active or bool(self.floor)

    @property
    def waiting(self) -> bool:
        """The floor cannot be kept: the capture waits for space."""
        return self.figures.short_since is not None

    def note(self) -> str:
        """``/healthz``'s line while the capture waits for space (``""`` otherwise)."""
        f = self.figures
        if f.short_since is None:
            return ""
        since = utc_iso(f.short_since, "seconds")
        return f"capture waits for space since {since}: {self._why()}"

    def _why(self) -> str:
        f = self.figures
        free = size(f.free or 0, exact=True)
        head = (
            f"{free} free on the file system of {self.out}, below min_free_bytes"
            f" ({size(self.floor, exact=True)})"
        )
        if not self.policy.active:
            return head + ", and no [retention] limit lets rokuprof delete sessions"
        return (
            head + f", and nothing is left to delete ({f.live} session(s) being captured;"
            " the rest of the file system is not rokuprof's)"
        )

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> None:
        if not self.enabled:
            return
        next_pass = self.clock()
        while True:
            now = self.clock()
            due = now >= next_pass
            if not due and self.floor:
                free = await self._look()
                due = free is not None and free < self._target()
                if due and self._fruitless:
                    due = now >= self._last_pass + self.short_recheck
            if due:
                await self.pass_once()
                next_pass = self.clock() + self.interval
            await asyncio.sleep(self.check_seconds)

    def _target(self) -> int:
        return self.policy.free_target if self.policy.active else self.floor

    async def _look(self) -> int | None:
        try:
            free = await asyncio.to_thread(self.free_space, self.out)
        except OSError:
            return None
        self.figures.free = free
        if self.waiting and free >= self.floor:
            self._resumed()
        return free

    async def pass_once(self) -> Outcome:
        """One full pass: delete what the policy says, then see whether the floor holds."""
        self._last_pass = self.clock()
        try:
            outcome = await asyncio.to_thread(
                keep,
                self.out,
                self.policy,
                active=self.active(),
                free_space=self.free_space,
                skip=self.keep_keys(),
            )
        except OSError as exc:
            log.error("retention failed: %s", exc)
            self._fruitless = True
            return Outcome()
        self._fruitless = not outcome.deletions and not outcome.dropped
        f = self.figures
        f.passes += 1
        f.live = outcome.live
        f.sessions_deleted += len(outcome.deletions)
        f.bytes_deleted += sum(d.session.bytes for d in outcome.deletions)
        f.bytes_deleted += sum(c.allocated for c in outcome.dropped)
        f.chunks_dropped += sum(d.session.undelivered for d in outcome.deletions)
        f.chunks_dropped += len(outcome.dropped)
        if outcome.dropped:
            self.on_dropped([c.item for c in outcome.dropped])
        if outcome.free is not None:
            f.free = outcome.free
        f.short = outcome.short
        if outcome.short and not self.waiting:
            f.short_since = self.wall_clock()
            log.warning("disk: %s: capture waits until space returns", self._why())
        elif not outcome.short and self.waiting:
            self._resumed()
        return outcome

    def _resumed(self) -> None:
        f = self.figures
        waited = self.wall_clock() - (f.short_since or self.wall_clock())
        f.short_since, f.short = None, 0
        log.info(
            "disk: space is back (%s free, min_free_bytes %s) after %.0f s: capture resumes",
            size(f.free or 0, exact=True),
            size(self.floor, exact=True),
            waited,
        )
