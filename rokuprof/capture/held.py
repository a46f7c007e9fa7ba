"""A full disk mid-run, carried out for one run: held bytes, paused reading, retried writes.

The policy (when to retry, when to give up) is :class:`~rokuprof.capture.hold.SpaceHold`'s;
:class:`ArchiveHold` keeps the archive bytes a write refused for lack of space, in order (a
write the kernel took in part keeps only the rest), pauses the stream while it holds any, writes
them when the ticker says it is time, and resumes reading once all went through.
:meth:`ArchiveHold.spaced` retries a chunk or ``session.json`` write the same way. When the hold
gives up, ``fail`` is called with an ``OSError`` saying why: the run ends ``truncated``.
Every call comes from the event loop, one at a time; nothing here blocks it.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from rokuprof.capture.hold import SpaceHold, hold_budget, no_space

if TYPE_CHECKING:
    from rokuprof.capture.archive import ArchiveWriter
    from rokuprof.capture.limits import ArchiveLimits
    from rokuprof.device.stream import ProfilerStream

T = TypeVar("T")


class ArchiveHold:
    """The full-disk hold of one run (see the module docstring)."""

    def __init__(
        self,
        limits: ArchiveLimits,
        stream: ProfilerStream,
        clock: Callable[[], float],
        say: Callable[[str, str], None],
        fail: Callable[[OSError], None],
    ) -> None:
        budget = hold_budget(limits.hold_bytes, limits.max_bytes_after_error)
        self.policy = SpaceHold(limits.hold_seconds, budget)  # archive bytes
        self.writes = SpaceHold(limits.hold_seconds, budget)  # chunks and records
        self.stream = stream
        self.clock = clock
        self.say = say
        self.fail = fail
        self.gave_up = False
        self._held: deque[bytes] = deque()
        self._held_bytes = 0
        self._error: OSError | None = None

    @property
    def holding(self) -> bool:
        return self.policy.holding

    def retry_at(self) -> float | None:
        return self.policy.retry_at()

    def write(self, archive: ArchiveWriter, data: bytes, name: str) -> bool:
        """Write ``data`` now, or hold it; ``True`` when this write began a hold."""
        if self.policy.holding:
            self._held.append(bytes(data))
            self._held_bytes += len(data)
            self.policy.hold(self._held_bytes)
            self._check(self.clock())
            return False
        before = archive.bytes
        try:
            archive.write_now(data)
        except OSError as error:
            if not no_space(error) or self.policy.seconds <= 0:
                raise
            rest = bytes(memoryview(data)[archive.bytes - before :])  # a part may be written
            self._held.append(rest)
            self._held_bytes = len(rest)
            self._error = error
            self.policy.blocked(self._held_bytes, self.clock())
            self.stream.hold()  # the kernel's and the device's buffers keep the rest
            self.say(
                "warning",
                f"waiting for disk space: writing the archive of {name} failed "
                f"({error.strerror or error}); reading paused, {self._held_bytes:,} bytes held, "
                f"retrying for up to {self.policy.seconds:g} s",
            )
            self._check(self.clock())
            return True
        return False

    def retry(self, archive: ArchiveWriter) -> None:
        """Try the held bytes again, in order; resume reading when all went through."""
        now = self.clock()
        while self._held:
            data = self._held[0]
            before = archive.bytes
            try:
                archive.write_now(data)
            except OSError as error:
                written = archive.bytes - before
                if written:  # the kernel took a part: only the rest waits
                    self._held[0] = data[written:]
                    self._held_bytes -= written
                self._error = error
                if not no_space(error):
                    self._give_up("")
                    return
                self.policy.blocked(self._held_bytes, now)
                self._check(now)
                return
            self._held.popleft()
            self._held_bytes -= len(data)
        seconds = self.policy.cleared(now)
        self.stream.release()
        self.say("info", f"disk space returned: capture resumed after {seconds:.1f} s")

    async def drain(self, archive: ArchiveWriter, *, wait: bool) -> None:
        """Before the run ends: write what is held, retrying until the hold ends (``wait``),
        or once."""
        while self.policy.holding and not self.gave_up:
            if wait:
                await asyncio.sleep(max(0.0, self.policy.retry_at() - self.clock()))
            self.retry(archive)
            if not wait and self.policy.holding:
                self._give_up("the run was stopped while the disk was full")

    async def spaced(self, write: Callable[[object], Awaitable[T]], what: object) -> T:
        """``write(what)``, retried with backoff while the disk is full (up to the hold)."""
        hold = self.writes
        while True:
            try:
                result = await write(what)
            except OSError as error:
                if not no_space(error) or hold.seconds <= 0:
                    raise
                first = not hold.holding
                hold.blocked(0, self.clock())
                reason = hold.give_up(self.clock())
                if reason is not None:
                    raise OSError(error.errno, f"{error.strerror}; {reason}") from error
                if first:
                    self.say("warning", f"waiting for disk space: {error.strerror or error}")
                await asyncio.sleep(max(0.0, hold.retry_at() - self.clock()))
                continue
            if hold.holding:
                hold.cleared(self.clock())
            return result

    def _check(self, now: float) -> None:
        reason = self.policy.give_up(now)
        if reason is not None:
            self._give_up(reason)

    def _give_up(self, reason: str) -> None:
        """End the run by the write failure (its session ends truncated, saying why)."""
        if self.gave_up:
            return
        self.gave_up = True
        error = self._error
        text = error.strerror or str(error)
        if reason:
            text = f"{text}; {reason}, {self._held_bytes:,} held bytes not written"
        self._held.clear()
        self._held_bytes = 0
        self.fail(OSError(error.errno, text))
