"""Laying synthetic samples out on a thread's timeline.

Time is a grid of slots ``1/hz`` seconds apart from the run's origin; every sample sits on a slot,
so samples laid back to back are exactly one period apart. Each thread has a :class:`Lane`: a
queue of samples waiting to be placed (``(path, count)`` runs, in arrival order) and the samples
placed in the chunk being built.

Sentry gives a sample the time until the next sample on its thread, and the last sample of a
thread nothing. So a busy run is always followed by a sample one slot later: either the next busy
sample (the run continues) or an idle sample (stack ``[]``). A run is never left open at the end
of a chunk.

Samples are placed as late as they fit before a limit (their data's arrival, a window's end, the
run's end), never after it; what does not fit waits for a later limit. When a window or the run
ends with samples still waiting, the samples already placed in the window are first pushed back
into the idle time before them (the work they describe happened before it was reported, so
earlier is never wrong), never before the window's start. That happens once per window, so it
costs one pass over the window's runs.
"""

from __future__ import annotations

from collections import deque

#: Placed-run marker for an idle sample (empty stack).
IDLE = 0


class Lane:
    """One thread: queued samples, and the runs placed in the current chunk."""

    __slots__ = ("floor", "next_slot", "open", "queue", "queued", "runs")

    def __init__(self, first_slot: int = 0) -> None:
        self.queue: deque[list[int]] = deque()  # [path, count], oldest first
        self.queued = 0
        self.next_slot = first_slot  # no new sample may be placed before this slot
        self.floor = first_slot  # no sample of the current window may move before this slot
        self.open = False  # the last placed sample is busy: a run is in progress
        self.runs: list[tuple[int, int, int]] = []  # (first slot, path or IDLE, count)

    def push(self, path: int, count: int) -> None:
        """Queue ``count`` samples of ``path`` behind what is already waiting."""
        if self.queue and self.queue[-1][0] == path:
            self.queue[-1][1] += count
        else:
            self.queue.append([path, count])
        self.queued += count

    def push_front(self, path: int, count: int) -> None:
        """Put samples back at the head of the queue (they were placed but must be carried)."""
        if self.queue and self.queue[0][0] == path:
            self.queue[0][1] += count
        else:
            self.queue.appendleft([path, count])
        self.queued += count

    def drop_newest(self, n: int) -> list[tuple[int, int]]:
        """Remove the ``n`` most recently queued samples; return them as ``(path, count)``."""
        dropped = []
        while n:
            tail = self.queue[-1]
            k = min(n, tail[1])
            dropped.append((tail[0], k))
            tail[1] -= k
            if not tail[1]:
                self.queue.pop()
            self.queued -= k
            n -= k
        return dropped

    def place(self, limit: int, *, push_back: bool = False) -> int:
        """Place queued samples in slots before ``limit``, as late as they fit (ending at
        ``limit``), never before :attr:`next_slot`; what does not fit stays queued, to be placed
        later. With ``push_back``, the window's placed runs first make room by moving earlier.
        Returns the number of busy samples placed."""
        q = self.queued
        if not q:
            return 0
        if push_back and q > limit - self.next_slot and self.runs:
            self._push_back(limit - q)
        start = max(self.next_slot, limit - q)
        if self.open and start > self.next_slot:
            # A gap before the new run: close the previous run with an idle sample.
            self.runs.append((self.next_slot, IDLE, 1))
            self.open = False
        k = min(q, limit - start)
        if k <= 0:
            return 0
        slot = start
        left = k
        queue = self.queue
        runs = self.runs
        while left:
            head = queue[0]
            n = head[1] if head[1] <= left else left
            runs.append((slot, head[0], n))
            slot += n
            left -= n
            if n == head[1]:
                queue.popleft()
            else:
                head[1] -= n
        self.queued -= k
        self.next_slot = slot
        self.open = True
        return k

    def _push_back(self, end: int) -> None:
        """Move the busy runs placed in this window earlier, as little as needed, so that they
        end by ``end`` (or as close to it as :attr:`floor` allows); order is kept and idle
        samples are laid again after each busy run that is followed by a gap."""
        busy = [(slot, path, n) for slot, path, n in self.runs if path != IDLE]
        if not busy:
            return
        leftmost = self.floor + sum(n for _, _, n in busy)
        cursor = max(end, leftmost)
        moved = []
        for slot, path, n in reversed(busy):
            leftmost -= n
            first = max(min(slot + n, cursor) - n, leftmost)
            moved.append((first, path, n))
            cursor = first
        moved.reverse()
        runs: list[tuple[int, int, int]] = []
        for i, (slot, path, n) in enumerate(moved):
            runs.append((slot, path, n))
            if i + 1 < len(moved) and slot + n < moved[i + 1][0]:
                runs.append((slot + n, IDLE, 1))
        self.runs = runs
        last_slot, _, last_n = moved[-1]
        self.next_slot = last_slot + last_n
        self.open = True

    def room(self, limit: int) -> int:
        """Slots before ``limit`` that more busy samples could still take (pushing the placed
        ones back if need be); the closing idle sample goes at ``limit``."""
        return max(0, limit - self.floor - self.busy_samples() - self.queued)

    def close(self) -> None:
        """End the current run, if any, with an idle sample."""
        if self.open:
            self.runs.append((self.next_slot, IDLE, 1))
            self.next_slot += 1
            self.open = False

    def busy_samples(self) -> int:
        """Busy samples placed in the current chunk."""
        return sum(n for _, path, n in self.runs if path != IDLE)

    def unplace(self) -> None:
        """Take every placed busy sample back into the head of the queue (in order) and drop
        the placed idle samples. Only valid right after :meth:`close`."""
        for _, path, n in reversed(self.runs):
            if path != IDLE:
                self.push_front(path, n)
        self.runs = []

    def start_chunk(self, first_slot: int) -> None:
        """Forget the placed runs (they went into a chunk); the next chunk starts at
        ``first_slot``."""
        self.runs = []
        if self.next_slot < first_slot:
            self.next_slot = first_slot
        self.floor = self.next_slot
