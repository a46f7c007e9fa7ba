"""The uploader's markers: a refused chunk moved to ``rejected/`` with its reason, and delivered
markers, written now or when the disk allows (an asyncio shell over
:class:`~rokuprof.store.owed.OwedMarkers`, which keeps the chunks and the backoff).

A chunk Sentry accepted is delivered whatever the disk says: when its ``delivered/`` marker
cannot be written (a full disk), the chunk is kept in memory and the uploader never sends it
again; the markers are written when the backoff says, and once more at shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path

from rokuprof.store.delivery import Say
from rokuprof.store.owed import OwedMarkers
from rokuprof.store.spool import Spool, SpoolItem

log = logging.getLogger(__name__)


class Markers:
    """Writes the uploader's markers (``say``: its messages, ``clock``: monotonic)."""

    def __init__(
        self,
        spool: Spool,
        owed: OwedMarkers[SpoolItem],
        say: Callable[[Say], None],
        clock: Callable[[], float],
    ) -> None:
        self.spool = spool
        self.owed = owed
        self.say = say
        self.clock = clock

    def _mark(self, item: SpoolItem, chunk_id: str, status: int) -> None:
        with contextlib.suppress(FileNotFoundError):  # the session is gone: nothing to mark
            self.spool.mark_delivered(item, chunk_id=chunk_id, status=status)

    def _write_all(self, owed: list[tuple[SpoolItem, str, int]]) -> tuple[list[str], str]:
        """In a thread: write owed markers until one fails; (keys written, the failure)."""
        done: list[str] = []
        for item, chunk_id, status in owed:
            try:
                self._mark(item, chunk_id, status)
            except OSError as exc:
                return done, str(exc)
            done.append(item.key)
        return done, ""

    async def mark(self, item: SpoolItem, chunk_id: str, status: int) -> None:
        """Sentry took the chunk: its marker now, or kept owed when the disk refuses."""
        try:
            await asyncio.to_thread(self._mark, item, chunk_id, status)
        except OSError as exc:
            first = not self.owed
            delay = self.owed.owe(item, chunk_id, status, self.clock())
            text = (
                f"chunk {short_path(item.path)} delivered (HTTP {status}), but its marker cannot"
                f" be written: {exc}; kept in memory, not sent again, marker retried in"
                f" {delay:.1f} s"
            )
            self.say(Say(text, "warning" if first else "debug"))
            return
        log.debug("chunk %s delivered (HTTP %d)", short_path(item.path), status)

    async def reject(self, item: SpoolItem, reason: str, status: int | None) -> None:
        """Move a chunk refused for good to ``rejected/``, with its reason beside it."""
        try:
            target = await asyncio.to_thread(
                self.spool.mark_rejected, item, reason=reason, status=status
            )
        except FileNotFoundError:
            target = None
        where = short_path(target) if target else "-"
        self.say(Say(f"chunk {short_path(item.path)} moved to {where}: {reason}"))

    async def write_due(self, now: float) -> float:
        """Write the owed markers if their backoff is over; seconds until the next try."""
        if self.owed.due(now):
            await self.write_owed()
        wait = self.owed.wait(now)
        return float("inf") if wait is None else wait

    async def write_owed(self, *, last: bool = False) -> None:
        """Write the markers the disk refused before (``last``: at shutdown)."""
        owed = list(self.owed.items.values())
        done, problem = await asyncio.to_thread(self._write_all, owed)
        self.owed.settled(done)
        if not problem:
            log.info("wrote the delivered markers of %d chunk(s) Sentry had accepted", len(done))
        elif last:
            text = (
                f"{len(self.owed)} delivered marker(s) still cannot be written ({problem}):"
                " those chunks will be sent again after a restart (Sentry drops the copies"
                " by chunk_id)"
            )
            self.say(Say(text))
        else:
            delay = self.owed.failed(self.clock())
            text = (
                f"{len(self.owed)} delivered marker(s) still cannot be written ({problem});"
                f" next try in {delay:.1f} s"
            )
            self.say(Say(text, "debug", record=False))


def short_path(path: Path) -> str:
    """``device/session/chunks/000001.json`` for logs."""
    return "/".join(Path(path).parts[-4:])
