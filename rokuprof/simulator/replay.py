"""Replay: a stream body encoded once, streamed by any number of devices at a set byte rate.

A live simulated app costs Python work per entry at stream time (about 3 MB/s of one core), so
a rack of fast devices would measure the simulator, not its client. A :class:`ReplayBody` holds
the entries of one stream as bytes (from a ``.bsprof`` file, or generated once by the synthetic
app) and is shared, not copied, by every device that replays it: a replaying device only writes
slices of it on a timer (:func:`replay_stream`) and keeps its own schedule, so a client that
reads too slowly shows up as bytes behind schedule, not as a quietly slower device.

Each replayed run sends a fresh header (the body's header with this run's start time), the
whole body at the rate, then the end marker and a footer (end time = start + the run's length).
Writes are cut anywhere, as a device's are; a run that ends early (Home, stop) first finishes
the entry it was in, up to the next known entry boundary, so its stream stays well formed.
"""

from __future__ import annotations

import bisect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from rokuprof.bsprof import reference
from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.encoder import encode_entries, encode_varint
from rokuprof.bsprof.errors import BsprofError
from rokuprof.bsprof.grammar import END_MARKER, build_header
from rokuprof.bsprof.model import Header, Limits
from rokuprof.simulator.app import AppConfig, SyntheticApp
from rokuprof.simulator.runs import RunRecord

#: Stream bytes the synthetic app records per app second at ``rate`` 1.0 (measured, with line
#: data and memory operations; it grows a little slower than the rate).
APP_BYTES_PER_SECOND = 4400.0

DEFAULT_RATE = 1_000_000.0  # body bytes per second
DEFAULT_TICK = 0.05  # seconds between writes
#: SO_SNDBUF of a replay connection: the kernel's send queue is kept small (Linux would grow it to
#: megabytes), so a client that falls behind shows up in the schedule within a fraction of a second.
SEND_BUFFER = 256 * 1024


class ReplayError(ValueError):
    """A file that cannot be replayed (one line: what and where)."""


@dataclass(frozen=True)
class ReplayBody:
    """The entries of one stream, encoded: ``body`` is everything between the header and the
    end marker. ``source`` says where it came from (for logs and the CLI)."""

    header: Header
    body: bytes = field(repr=False)
    source: str = ""
    app_seconds: float | None = None  # app time the body covers, when known
    #: some body offsets where an entry starts, ascending (a few KB apart); none known: an
    #: early end sends the rest of the body
    boundaries: tuple[int, ...] = field(default=(), repr=False)

    def entry_end(self, offset: int) -> int:
        """The first known entry boundary at or after ``offset`` (the body's end if none)."""
        i = bisect.bisect_left(self.boundaries, offset)
        return self.boundaries[i] if i < len(self.boundaries) else len(self.body)

    def __len__(self) -> int:
        return len(self.body)

    def stream_header(self, start_ms: int) -> bytes:
        """This body's header for a run that starts at ``start_ms`` (same size and padding)."""
        return build_header(replace(self.header, start_ms=start_ms), self.header.header_size)

    @classmethod
    def from_file(cls, path: Path | str, limits: Limits | None = None) -> ReplayBody:
        """The body of a ``.bsprof`` file: every whole entry up to the end marker (or up to the
        end of a cut file). A corrupt file is refused, naming the problem and its offset."""
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ReplayError(f"cannot read {path}: {exc.strerror or exc}") from None
        limits = limits or Limits()
        try:
            header, size = reference.parse_header(data, limits)
        except reference.Truncated:
            raise ReplayError(f"{path}: the file ends inside the header") from None
        except BsprofError as exc:
            raise ReplayError(f"{path}: {exc}") from None
        decoder = Decoder(limits)
        view = memoryview(data)
        marks = []
        for start in range(0, len(data), 1 << 16):  # in slices: one partial entry at a time
            decoder.feed(view[start : start + (1 << 16)])
            if decoder.error is not None:
                raise ReplayError(f"{path}: cannot replay a corrupt stream: {decoder.error}")
            if decoder.state == "body":
                marks.append(decoder.offset - size)  # where the partial entry starts
        decoder.close()
        end = decoder.offset
        footer = decoder.footer
        if footer is not None:  # complete: drop trailing bytes, the footer and the end marker
            end -= footer.trailing_bytes + len(encode_varint(footer.end_ms)) + len(END_MARKER)
        elif decoder.ended:
            end -= len(END_MARKER)
        if end <= size:
            raise ReplayError(f"{path}: no entries to replay")
        bounds = tuple(sorted({m for m in marks if 0 < m < end - size}))
        return cls(header, data[size:end], source=str(path), boundaries=bounds)

    @classmethod
    def generate(
        cls,
        app_seconds: float,
        *,
        seed: int = 1,
        rate: float = 1.0,
        line_data: bool = True,
        memory_ops: bool = True,
        app_name: str = "Café TV",
    ) -> ReplayBody:
        """``app_seconds`` of the synthetic app (at activity ``rate``), encoded once."""
        if app_seconds <= 0:
            raise ValueError("app_seconds must be > 0")
        app = SyntheticApp(
            AppConfig(
                seed=seed, rate=rate, line_data=line_data, memory_ops=memory_ops, name=app_name
            )
        )
        parts, bounds, size = [], [], 0
        while app.clock < app_seconds - 1e-9:  # each part ends at an entry boundary
            part = encode_entries(app.advance(min(0.05, app_seconds - app.clock)), line_data)
            parts.append(part)
            size += len(part)
            bounds.append(size)
        parts.append(encode_entries(app.finish(), line_data))
        header = app.header(0)
        padded = replace(header, header_size=len(build_header(header)) + 8)
        source = f"synthetic app, seed {seed}, rate {rate:g}, {app_seconds:g} app seconds"
        body = b"".join(parts)
        bounds = tuple(sorted({b for b in bounds if 0 < b < len(body)}))
        return cls(padded, body, source=source, app_seconds=app.clock, boundaries=bounds)


def app_rate_for(byte_rate: float, rate: float = 1.0) -> float:
    """The synthetic app's activity at which its app time keeps pace with the wall clock when
    its body is replayed at ``byte_rate`` (times ``rate``)."""
    return max(0.01, rate * byte_rate / APP_BYTES_PER_SECOND)


async def replay_stream(
    record: RunRecord,
    body: ReplayBody,
    send: Callable[[memoryview], Awaitable[None]],
    wait_until: Callable[[float], Awaitable[bool]],
    *,
    rate: float,
    tick: float = DEFAULT_TICK,
    clock: Callable[[], float],
) -> None:
    """Send ``body`` at ``rate`` bytes per second: every ``tick`` the bytes that came due since
    the last write, as one slice. ``send`` may block (the client reads slowly): the schedule
    does not wait, so the next write is larger, and ``record`` keeps how far behind it was
    (:meth:`RunRecord.behind`, ``max_behind``). ``wait_until(deadline)`` sleeps until
    ``clock`` (monotonic seconds) reads ``deadline`` and returns False when the run must end
    now."""
    data = memoryview(body.body)
    total = len(data)
    record.schedule_start = start = clock()
    record.schedule_rate = rate
    record.schedule_body = total
    record.schedule_base = record.bytes_sent
    sent = 0
    while sent < total:
        due = min(total, int((clock() - start) * rate))
        if due > sent:
            await send(data[sent:due])
            sent = due
        now = clock()
        record.body_sent = sent
        record.max_behind = max(record.max_behind, record.behind(now))
        if sent >= total:
            return
        if not await wait_until(now + tick):  # ended early: finish the entry being written
            end = body.entry_end(sent)
            if end > sent:
                await send(data[sent:end])
                record.body_sent = end
            return
