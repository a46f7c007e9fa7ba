"""What ``rokuprof watch`` shows while it captures: a live terminal view, plain log lines, or
nothing.

:class:`LiveView` redraws a rich panel once a second from the event loop (no refresh thread, so
it never reads the profile tables while they change): device, app, state, elapsed time, bytes
and entries per second, chunks written, live heap bytes and the top functions by self time.
:class:`PlainLog` prints one line per notable event, for logs and pipes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from rokuprof.capture.session import SessionRecord
from rokuprof.capture.status import STREAMING, CaptureStatus
from rokuprof.profile.functions import aggregate_functions
from rokuprof.views.text import printable, text


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class PlainLog:
    """One timestamped line per event (state changes, sessions, chunks, problems); device text
    in them (names, error messages) has its control characters escaped."""

    def __init__(self, write: Callable[[str], None] = print, chunks: bool = True) -> None:
        self.write = write
        self.chunks = chunks
        self._last_state = ""

    def _say(self, status: CaptureStatus, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.write(printable(f"{stamp} {status.device or status.host}: {message}"))

    def on_state(self, status: CaptureStatus) -> None:
        if status.state == self._last_state:
            return
        self._last_state = status.state
        if status.state == "waiting":
            self._say(status, "waiting for an app run")
        elif status.state == "stopped":
            self._say(status, "stopped")

    def on_session_start(self, status: CaptureStatus) -> None:
        self._say(status, f"streaming into {status.session_path}")

    def on_chunk(self, status: CaptureStatus, path: Path) -> None:
        if self.chunks:
            self._say(
                status,
                f"chunk {path.name} written ({human_bytes(status.bytes)}, "
                f"{status.entries} entries so far)",
            )

    def on_session_end(self, status: CaptureStatus, record: SessionRecord, path: Path) -> None:
        self._say(
            status,
            f"run {status.runs_done} {record.status}: {human_bytes(record.bytes)}, "
            f"{record.entries} entries, {record.chunks} chunk(s) in {path}",
        )
        if record.status != "complete":
            self._say(status, f"  {record.end_reason}")

    def on_message(self, status: CaptureStatus, level: str, text: str) -> None:
        self._say(status, f"{level}: {text}")


class _Rates:
    """Bytes and entries per second over the last few seconds."""

    def __init__(self, window: float = 3.0) -> None:
        self.window = window
        self.points: list[tuple[float, int, int]] = []

    def update(self, now: float, nbytes: int, entries: int) -> tuple[float, float]:
        if self.points and (nbytes < self.points[-1][1]):  # a new run started
            self.points.clear()
        self.points.append((now, nbytes, entries))
        while len(self.points) > 2 and now - self.points[0][0] > self.window:
            self.points.pop(0)
        t0, b0, e0 = self.points[0]
        span = now - t0
        if span <= 0:
            return 0.0, 0.0
        return (nbytes - b0) / span, (entries - e0) / span


class LiveView(PlainLog):
    """A rich live panel, redrawn every ``refresh`` seconds; events are printed above it."""

    def __init__(self, console: Console | None = None, refresh: float = 1.0, top: int = 8):
        self.console = console or Console()
        super().__init__(self.console.print, chunks=False)
        self.refresh = refresh
        self.top = top
        self.status: CaptureStatus | None = None
        self._rates = _Rates()
        self._live: Live | None = None
        self._task: asyncio.Task | None = None
        self._top_rows: list[tuple[str, str, float, int]] = []
        self._top_at = 0.0

    def _say(self, status: CaptureStatus, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.console.print(text(f"{stamp} {message}"))

    async def __aenter__(self) -> LiveView:
        self._live = Live(console=self.console, auto_refresh=False, transient=False)
        self._live.start()
        self._task = asyncio.ensure_future(self._loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._live is not None:
            self._draw()
            self._live.stop()

    def attach(self, status: CaptureStatus) -> None:
        self.status = status

    async def _loop(self) -> None:
        while True:
            self._draw()
            await asyncio.sleep(self.refresh)

    def _draw(self) -> None:
        if self._live is not None and self.status is not None:
            self._live.update(self.render(self.status), refresh=True)

    def _top_functions(self, status: CaptureStatus) -> list[tuple[str, str, float, int]]:
        now = time.monotonic()
        if status.tables is not None and now - self._top_at >= max(1.0, self.refresh):
            self._top_at = now
            rows = aggregate_functions(status.tables)[: self.top]
            self._top_rows = [(f.function, f.file, f.self_wall / 1000.0, f.calls) for f in rows]
        return self._top_rows

    def render(self, status: CaptureStatus) -> Group:
        now = time.monotonic()
        byte_rate, entry_rate = self._rates.update(now, status.bytes, status.entries)
        head = Table.grid(padding=(0, 2))
        head.add_column(style="bold")
        head.add_column()
        name = f" ({status.device_name})" if status.device_name else ""
        head.add_row("device", text(f"{status.device or status.host}{name}  [{status.host}]"))
        state = status.state
        if state == STREAMING:
            state += f"  run {status.runs_done + 1}, {clock(status.elapsed(now))}"
        elif status.last_status:
            state += f"  (last run {status.last_status}; {status.runs_done} captured)"
        head.add_row("state", state)
        head.add_row("app", text(status.app or "-"))
        head.add_row(
            "data",
            f"{human_bytes(status.bytes)} ({human_bytes(byte_rate)}/s), "
            f"{status.entries:,} entries ({entry_rate:,.0f}/s)",
        )
        head.add_row(
            "chunks", f"{status.chunks} written, live heap {human_bytes(status.live_heap_bytes)}"
        )
        if status.session_path is not None:
            head.add_row("session", text(status.session_path))
        if status.message:
            head.add_row("note", text(status.message, style="yellow"))
        parts: list[object] = [head]
        rows = self._top_functions(status)
        if rows:
            top = Table(title="top functions by self time", title_justify="left", box=None)
            top.add_column("function")
            top.add_column("file", overflow="fold")
            top.add_column("self ms", justify="right")
            top.add_column("calls", justify="right")
            for function, file, self_ms, calls in rows:
                top.add_row(text(function), text(file), f"{self_ms:,.1f}", f"{calls:,}")
            parts.append(top)
        return Group(*parts)
