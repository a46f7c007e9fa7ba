"""What a run's chunk building produced, and everything that did not make it into a chunk
(pure: no I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rokuprof.sentry.validate import Problem

#: This much busy time not fitting before the end of the run suggests a wrong wall-time unit.
UNPLACED_WARNING_SECONDS = 10.0


@dataclass(frozen=True)
class Leftover:
    """Samples of one thread in no chunk when the run ended: no room before its end, or too
    few for a valid chunk."""

    thread_id: str
    thread_name: str
    samples: int
    seconds: float
    functions: tuple[str, ...]

    def describe(self) -> str:
        return (
            f"thread {self.thread_name} ({self.thread_id}): {self.samples} sample(s), "
            f"{self.seconds * 1000:.1f} ms in {', '.join(self.functions)}"
        )


@dataclass
class BuildReport:
    """What a run produced, and everything that did not make it into a chunk."""

    chunks: int = 0
    samples: int = 0  # all samples in emitted chunks, idle ones included
    busy_samples: int = 0
    threads: dict[str, str] = field(default_factory=dict)  # thread id -> name, as emitted
    first: float | None = None  # first sample timestamp
    last: float | None = None  # last sample timestamp
    covered_seconds: float = 0.0  # sum of chunk durations
    carried_windows: int = 0  # windows whose data was too small and moved to a later chunk
    carried_single_samples: int = 0  # single busy samples carried to the next window
    excess_windows: int = 0  # windows that ended with busy time still waiting (busy > wall)
    leftovers: list[Leftover] = field(default_factory=list)
    remainder_seconds: float = 0.0  # rounding left unsampled (each path and thread within T)
    unattributed_seconds: float = 0.0  # wall time on paths the stream never defined
    unplaced_seconds: float = 0.0  # busy time that did not fit before the end, in no chunk
    after_end_seconds: float = 0.0  # busy time that did not fit before the end, placed after it
    dropped_seconds: float = 0.0  # busy time over the backlog limit, not sent
    rejected: list[tuple[int, list[Problem]]] = field(default_factory=list)  # (samples, why)
    heap_values_dropped: int = 0
    side_values_dropped: int = 0  # vitals and mark values in no chunk (none came after them)
    chunk_bytes: int = 0  # bytes of the emitted chunks
    largest_chunk: int = 0  # bytes of the largest one
    split_windows: int = 0  # windows sent as several chunks (over max_chunk_bytes)
    split_chunks: int = 0  # chunks written over max_chunk_bytes and split again in two
    capped_samples: int = 0  # samples in no chunk: the run's chunks reached their byte cap
    capped_at: int | None = None  # max_session_chunk_bytes, once it was reached

    @property
    def leftover_samples(self) -> int:
        return sum(x.samples for x in self.leftovers)

    def describe(self) -> list[str]:
        """Human-readable lines about carries, leftovers and anything lost."""
        lines = []
        if self.carried_windows or self.carried_single_samples:
            lines.append(
                f"carried: {self.carried_single_samples} single sample(s) moved to a later "
                f"chunk; {self.carried_windows} window(s) too small for a chunk of their own"
            )
        if self.excess_windows:
            lines.append(
                f"carried: busy time exceeded wall time in {self.excess_windows} window(s) "
                "and moved into the next"
            )
        late = self.after_end_seconds + self.unplaced_seconds
        warning = (
            " (more busy time than wall time: is the wall-time unit right?)"
            if late > UNPLACED_WARNING_SECONDS
            else ""
        )
        if self.after_end_seconds:
            lines.append(
                f"placed after the end: {self.after_end_seconds:.2f} s of busy time did not fit "
                "before the end of the run (its data came late) and lies after it" + warning
            )
        if self.unplaced_seconds:
            lines.append(
                f"not placed: {self.unplaced_seconds:.2f} s of busy time did not fit before the "
                "end of the run" + ("" if self.after_end_seconds else warning)
            )
        for leftover in self.leftovers:
            lines.append("left over (in no chunk): " + leftover.describe())
        if self.dropped_seconds:
            lines.append(
                f"dropped: {self.dropped_seconds:.1f} s of busy time that ran more than the "
                "backlog limit ahead of wall time (is the wall-time unit right?)"
            )
        if self.unattributed_seconds:
            lines.append(
                f"not sampled: {self.unattributed_seconds:.3f} s of wall time on undefined "
                "call paths"
            )
        for samples, problems in self.rejected:
            lines.append(
                f"rejected by validation ({samples} samples lost): " + "; ".join(map(str, problems))
            )
        if self.heap_values_dropped:
            lines.append(f"heap measurements not sent: {self.heap_values_dropped} value(s)")
        if self.side_values_dropped:
            lines.append(f"vitals and marks not sent: {self.side_values_dropped} value(s)")
        if self.split_windows:
            lines.append(
                f"split: {self.split_windows} window(s) had too many busy threads for one chunk "
                "and were sent as several"
            )
        if self.split_chunks:
            lines.append(
                f"split: {self.split_chunks} chunk(s) came out over max_chunk_bytes and were "
                "sent as two (their threads, or one thread's samples in two spans of time)"
            )
        if self.capped_at is not None:
            lines.append(
                f"chunk bytes capped: the run's chunks reached {self.capped_at} bytes "
                f"(max_session_chunk_bytes); {self.capped_samples} later sample(s) are in no "
                "chunk (the raw archive has them all)"
            )
        return lines
