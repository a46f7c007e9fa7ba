"""Chunks for what a crashed session archived but never chunked (pure: bytes in, chunks out).

A crash (``kill -9``, power loss) stops a run between two chunk writes: its archive holds every
byte read, its ``chunks/`` only what was built before. Catching up must add the rest without
sending any sample twice, and a catch-up that is itself killed must be safe to run again.

The rule: **the chunk files are the record of what was sent.** Per call path, named as chunks
name it (its frames, leaf first), the samples already in the session's chunk files are
subtracted from the whole archive's wall time, oldest data first (what a path's own time
cannot pay, since a path may have been given up to a period more than its time, is owed by its
thread: the catch-up's samples of that thread start that much in debt); only what remains is
laid out, by the same :class:`~rokuprof.sentry.chunk.ChunkBuilder` a live run uses, after the last
sample already chunked. So, per call path, the samples of all the session's chunks equal what
``rokuprof convert`` makes of the archive (within one sample), however often the catch-up runs:
chunk files it wrote before being killed count as already sent the next time.

Timing: the archive has no arrival times; its remaining slices (cut at fixed byte offsets, like
the offline converter's) are spread by byte position from just after the last chunked sample to
the archive's last write (its mtime), but never faster than the busiest thread's busy time
adds up, so that every sample has room before the time its data "arrived".
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rokuprof.bsprof.model import Limits
from rokuprof.path_model import PathNode, root_module
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry.assemble import Chunk
from rokuprof.sentry.build_report import BuildReport
from rokuprof.sentry.chunk import ChunkBuilder
from rokuprof.sentry.convert import default_slice_bytes
from rokuprof.sentry.coverage import PathKey, chunk_samples
from rokuprof.sentry.frames import frame_for
from rokuprof.sentry.sampling import units_per_second
from rokuprof.sentry.settings import ChunkSettings


@dataclass(frozen=True, slots=True)
class _Slice:
    offset: int
    walls: dict[int, int]
    live_bytes: int
    memory: bool


@dataclass
class CatchUpResult:
    chunks: list[Chunk]
    report: BuildReport
    samples_before: int  # busy samples already in the session's chunks
    bytes_read: int
    problem: str | None  # why the archive is not a whole stream (``None``: it is)
    skipped_chunks: int = 0  # chunk files that could not be read (their samples count as 0)
    notes: list[str] = field(default_factory=list)


class CatchUp:
    """Feed the archive (in pieces), then :meth:`finish` for the missing chunks."""

    def __init__(
        self,
        already: Iterable[Mapping],
        *,
        start: float,
        end: float,
        total_bytes: int,
        profiler_id: str,
        settings: ChunkSettings | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.settings = settings or ChunkSettings()
        self.start = start  # the session's start (Unix seconds)
        self.end = end  # the archive's last write
        self.profiler_id = profiler_id
        self.reader = ProfileReader(limits)
        self.slice_bytes = default_slice_bytes(total_bytes)
        self.received = 0
        self._next_cut = self.slice_bytes
        self._slices: list[_Slice] = []
        self._keys: dict[int, PathKey | None] = {}
        self._frame_texts: dict[tuple[int, int, int], str] = {}
        units = units_per_second(self.settings.wall_unit)
        self.samples_before = 0
        self.last_sample: float | None = None
        counts: Counter = Counter()
        for payload in already:
            got, last = chunk_samples(payload)
            counts += got
            if last is not None:
                self.last_sample = last if self.last_sample is None else max(last, self.last_sample)
        self.samples_before = sum(counts.values())
        # Wall units the chunked samples stand for, per call path (rounded up: never twice).
        self._debt = {k: -(-n * units // self.settings.hz) for k, n in counts.items()}
        self._debtor: dict[PathKey, int] = {}  # key -> the thread (module) of its call path

    def feed(self, data: bytes | memoryview) -> None:
        view = memoryview(data)
        while view:
            part = view[: self._next_cut - self.received]
            self.reader.feed(part)
            self.received += len(part)
            view = view[len(part) :]
            if self.received == self._next_cut:
                self._take_slice()
                self._next_cut += self.slice_bytes

    def _key(self, path: int) -> PathKey | None:
        if path not in self._keys:
            stack = self.reader.tables.stack(path) if path else ()
            self._keys[path] = tuple(map(self._frame_text, stack)) or None
        return self._keys[path]

    def _frame_text(self, node: PathNode) -> str:
        """A frame as its key's JSON, made once per (function, file, line) and shared by every
        key that has it."""
        ids = (node.function_id, node.file_id, node.line)
        text = self._frame_texts.get(ids)
        if text is None:
            frame = frame_for(self.reader.tables, node)
            text = self._frame_texts[ids] = json.dumps(frame, sort_keys=True, ensure_ascii=False)
        return text

    def _take_slice(self) -> None:
        delta = self.reader.tables.take_walls()
        walls, memory = delta.walls, bool(delta.memory)
        rest: dict[int, int] = {}
        for path, wall in walls.items():
            key = self._key(path)
            debt = self._debt.get(key, 0) if key is not None else 0
            if debt:
                if key not in self._debtor:
                    module = root_module(self.reader.tables, path)
                    if module is not None:
                        self._debtor[key] = module
                paid = min(debt, wall)
                self._debt[key] = debt - paid
                wall -= paid
            if wall:
                rest[path] = wall
        if rest:
            self._slices.append(_Slice(self.received, rest, delta.live_bytes, memory))

    def _busy_so_far(self, units: int) -> list[float]:
        """Per slice: the busiest thread's busy time up to and including it (seconds)."""
        per_thread: Counter = Counter()
        tables = self.reader.tables
        out = []
        for s in self._slices:
            for path, wall in s.walls.items():
                module = root_module(tables, path)
                if module is not None:
                    per_thread[module] += wall
            out.append(max(per_thread.values(), default=0) / units)
        return out

    def finish(self) -> CatchUpResult:
        """The chunks still missing, in order (none when everything was chunked)."""
        self.reader.close()
        self._take_slice()
        reader = self.reader
        result = CatchUpResult(
            chunks=[],
            report=BuildReport(),
            samples_before=self.samples_before,
            bytes_read=self.received,
            problem=reader.problem(),
        )
        if reader.header is None or not self._slices:
            return result
        hz = self.settings.hz
        first = self.start if self.last_sample is None else self.last_sample + 1 / hz
        first = max(first, self.start)
        busy = self._busy_so_far(units_per_second(self.settings.wall_unit))
        slack = 0.5  # for the last rounding samples
        last = max(self.end, first + busy[-1] + slack)
        builder = ChunkBuilder(
            reader.tables,
            first,  # the origin: no sample goes before the ones already sent
            header=reader.header,
            settings=self.settings,
            profiler_id=self.profiler_id,
        )
        result.report = builder.report
        # A call path may have been sent up to a period more than its own wall time (the
        # sampler gives a thread's whole periods to its paths with the largest remainders): what
        # its wall time could not pay is owed by its thread, whose other paths pay it first.
        for key, debt in self._debt.items():
            module = self._debtor.get(key)
            if debt > 0 and module is not None:
                builder.sampler.owe(module, debt)
        low = self._slices[0].offset - self.slice_bytes
        high = max(self._slices[-1].offset, low + 1)
        for s, busy_so_far in zip(self._slices, busy, strict=True):
            fraction = min(1.0, max(0.0, (s.offset - low) / (high - low)))
            at = first + max((last - slack - first) * fraction, busy_so_far + 1 / hz)
            builder.add_wall(s.walls, at, live_bytes=s.live_bytes, memory=s.memory)
            result.chunks += builder.ready()
        result.chunks += builder.finish(last).chunks
        if math.isfinite(last) and result.report.describe():
            result.notes = result.report.describe()
        return result
