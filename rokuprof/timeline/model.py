"""The timeline: per thread, runs of equal stacks on a grid of ``1/hz`` slots (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

#: Stack index of an idle sample in :attr:`Timeline.stacks` (and the idle marker of a placed run).
IDLE = 0


@dataclass
class Timeline:
    """The synthetic samples: per thread, runs of equal stacks on a grid of ``1/hz`` slots.

    Slot 0 is the run's start (``origin``); a sample at slot ``s`` lies at ``origin + s / hz``.
    A run ``(first slot, stack index, count)`` is ``count`` samples one slot apart; a busy run is
    always followed by another sample of its thread (busy or idle), so each busy sample stands for
    one period: a thread's busy samples times the period is its busy time as laid out.
    """

    hz: int
    origin: float | None  # epoch seconds of slot 0 (the run start); None without a header
    stacks: list[tuple[int, ...]] = field(default_factory=lambda: [()])  # frame indexes, leaf first
    runs: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)  # thread -> runs
    heap: list[tuple[int, int]] = field(default_factory=list)  # (slot, live bytes)
    #: memory operations by when they arrived: (slot, call path ID -> the differences of
    #: :data:`~rokuprof.path_model.MEMORY_COUNTERS`), slots increasing, on the live heap's steps
    memory: list[tuple[int, dict[int, list[int]]]] = field(default_factory=list)

    @property
    def period_us(self) -> float:
        return 1e6 / self.hz

    def last_slot(self) -> int:
        """One past the last sample of any thread (0 when there are none)."""
        return max((r[-1][0] + r[-1][2] for r in self.runs.values() if r), default=0)

    def samples(self, thread: int) -> int:
        return sum(n for _, _, n in self.runs.get(thread, ()))

    def busy_samples(self, thread: int) -> int:
        """Busy samples of a thread (its busy time is this many periods)."""
        stacks = self.stacks
        return sum(n for _, sid, n in self.runs.get(thread, ()) if stacks[sid])
