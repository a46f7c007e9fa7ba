"""What ``rokuprof watch`` shows while it captures: a live terminal view, plain log lines, or
nothing.

:class:`LiveView` is a ``top`` for the app run: it fills the terminal, redrawn once a second from
the event loop (no refresh thread, so it never reads the profile tables while they change). On
top: device, state, app, data rates, chunks, the live heap with its trend, the session; below,
one row per function (as many as fit): its share of the last ``window`` seconds beside the run's
cumulative self and total wall time, CPU, calls and allocated bytes. Keys (only when standard
input is a terminal, which is put in cbreak mode and always restored): ``s`` cycles the sort
column, ``t`` the thread shown, ``i`` hides idle functions (:data:`IDLE_FUNCTIONS`), ``p``/``r``
pause and resume the device's profiler, ``q`` ends the capture like Ctrl-C. A finished run's
table stays until the next run has data.

:class:`PlainLog` prints one line per notable event, for logs and pipes.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from rokuprof.capture.record import SessionRecord
from rokuprof.capture.status import STATE_TEXT, CaptureStatus, DeviceState
from rokuprof.capture.stop import StopCause
from rokuprof.capture.tasks import cancel
from rokuprof.store.layout import SessionStatus
from rokuprof.views.text import printable, text

if TYPE_CHECKING:
    from rokuprof.profile.tables import ProfileTables


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def clock(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


#: States a log does not give a line of their own: a run's start and end have theirs, and a
#: connect's ``waiting`` lasts until the answer says more. (``starting`` says where the loop
#: polls, once.)
UNLOGGED_STATES = frozenset({DeviceState.WAITING, DeviceState.STREAMING, DeviceState.FINISHED})


def state_line(status: CaptureStatus, previous: str = "") -> str | None:
    """The log line for a change to ``status.state`` (``None``: not worth a line)."""
    state = DeviceState(status.state)
    if state is DeviceState.STREAMING and previous == DeviceState.PAUSED:
        return "resumed: streaming again"
    if state in UNLOGGED_STATES:
        return None
    if state is DeviceState.STOPPED:
        return f"capture ended: {status.detail}" if status.detail else "capture ended"
    text = STATE_TEXT[state]
    return f"{text}: {status.detail}" if status.detail else text


class PlainLog:
    """One timestamped line per event (state changes, sessions, chunks, problems); device text
    in them (names, error messages) has its control characters escaped. A state is said when
    it changes, not again while it lasts."""

    def __init__(self, write: Callable[[str], None] = print, chunks: bool = True) -> None:
        self.write = write
        self.chunks = chunks
        self._last_state = ""

    def _say(self, status: CaptureStatus, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.write(printable(f"{stamp} {status.device or status.host}: {message}"))

    def on_state(self, status: CaptureStatus) -> None:
        if status.state == self._last_state or status.state == DeviceState.WAITING:
            return  # a connect: the answer will say more (busy stays busy meanwhile)
        line = state_line(status, self._last_state)
        self._last_state = status.state
        if line is not None:
            self._say(status, line)

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
        if record.status != SessionStatus.COMPLETE:
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


#: Functions that wait rather than work, hidden by the ``i`` key (compared without case).
IDLE_FUNCTIONS = frozenset({"wait", "waitport", "sleep"})
WALL_SECONDS = 1e-6  # the wall-time unit assumed for display (the format does not say)
SPARK = "▁▂▃▄▅▆▇█"

FunctionKey = tuple[str, str, str]  # (module, function, file), as inspect keys them


@dataclass(slots=True)
class FunctionRow:
    """One function's cumulative figures in the run, and its part of the last window."""

    module: str
    function: str
    file: str
    self_wall: int = 0
    total_wall: int = 0
    self_cpu: int = 0
    calls: int = 0
    alloc_bytes: int = 0
    recent: int = 0  # self wall in the last window
    share: float = 0.0  # of all self wall in the last window, 0..1


def function_rows(tables: ProfileTables) -> dict[FunctionKey, FunctionRow]:
    """Per function (as ``inspect`` aggregates them): self and total wall, self CPU, calls and
    allocated bytes of the paths it is the leaf of."""
    by_ids: dict[tuple[int, int, int], list[int]] = {}
    for pid, c in tables.snapshot().items():
        stack = tables.stack(pid)
        if not stack:
            continue
        leaf = stack[0]
        ids = (leaf.module, leaf.function_id, leaf.file_id)
        row = by_ids.get(ids)
        if row is None:
            row = by_ids[ids] = [0, 0, 0, 0, 0]
        row[0] += c.wall
        row[2] += c.cpu
        row[3] += c.calls
        row[4] += c.alloc_bytes
        if c.wall:
            for node_ids in {(n.module, n.function_id, n.file_id) for n in stack}:
                row = by_ids.get(node_ids)
                if row is None:
                    row = by_ids[node_ids] = [0, 0, 0, 0, 0]
                row[1] += c.wall
    out: dict[FunctionKey, FunctionRow] = {}
    for (module, function, file), (sw, tw, cpu, calls, alloc) in by_ids.items():
        key = (tables.module_name(module), tables.string(function), tables.string(file))
        row = out.get(key)
        if row is None:
            out[key] = FunctionRow(*key, sw, tw, cpu, calls, alloc)
        else:  # two IDs with the same name
            row.self_wall += sw
            row.total_wall += tw
            row.self_cpu += cpu
            row.calls += calls
            row.alloc_bytes += alloc
    return out


class _Window:
    """Each function's self wall over the last ``seconds``, from cumulative snapshots."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.points: deque[tuple[float, dict[FunctionKey, int]]] = deque()

    def reset(self) -> None:
        self.points.clear()

    def update(self, now: float, rows: dict[FunctionKey, FunctionRow]) -> None:
        points = self.points
        points.append((now, {k: r.self_wall for k, r in rows.items()}))
        while len(points) > 1 and points[1][0] <= now - self.seconds:
            points.popleft()
        base = points[0][1] if len(points) > 1 else {}
        total = 0
        for key, row in rows.items():
            row.recent = row.self_wall - base.get(key, 0)
            total += row.recent
        for row in rows.values():
            row.share = row.recent / total if total else 0.0


class _Heap:
    """Live heap bytes over time: the value now, its change over the window, a sparkline."""

    def __init__(self, window: float, points: int = 24) -> None:
        self.window = window
        self.values: deque[tuple[float, int]] = deque(maxlen=max(points, int(window) + 2))
        self.points = points

    def add(self, now: float, live: int) -> None:
        if self.values and now - self.values[-1][0] < 0.5:
            self.values[-1] = (self.values[-1][0], live)
        else:
            self.values.append((now, live))

    def describe(self) -> str:
        if not self.values:
            return ""
        now, live = self.values[-1]
        past = next((v for t, v in self.values if t >= now - self.window), live)
        recent = [v for _, v in self.values][-self.points :]
        low, high = min(recent), max(recent)
        spark = "".join(
            SPARK[(v - low) * (len(SPARK) - 1) // (high - low)] if high > low else SPARK[0]
            for v in recent
        )
        change = live - past
        sign = "+" if change > 0 else "−" if change < 0 else "±"
        return f"{spark} {sign}{human_bytes(abs(change))} in {self.window:g} s"


#: Sort columns the ``s`` key cycles through: (name, key of a row).
SORTS: tuple[tuple[str, Callable[[FunctionRow], float]], ...] = (
    ("now", lambda r: r.recent),
    ("self wall", lambda r: r.self_wall),
    ("total wall", lambda r: r.total_wall),
    ("CPU", lambda r: r.self_cpu),
    ("calls", lambda r: r.calls),
    ("alloc", lambda r: r.alloc_bytes),
)

#: Columns, and the narrowest terminal that shows each.
COLUMNS = (
    ("thread", "left", 72),
    ("function", "left", 0),
    ("now", "right", 0),
    ("self wall", "right", 0),
    ("total wall", "right", 84),
    ("CPU", "right", 96),
    ("calls", "right", 108),
    ("alloc", "right", 120),
    ("file", "left", 140),
)


class _Screen:
    """A renderable cropped or padded to exactly ``height`` lines, none of them wrapped."""

    def __init__(self, renderable: object, height: int) -> None:
        self.renderable = renderable
        self.height = max(1, height)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options.update(height=None), pad=True)
        lines = lines[: self.height]
        blank = [Segment(" " * options.max_width)]
        lines += [blank] * (self.height - len(lines))
        for i, line in enumerate(lines):
            yield from line
            if i < len(lines) - 1:
                yield Segment.line()


def keys_of(typed: str) -> Iterator[str]:
    """The single keys in what a terminal sent, without escape sequences (arrows, function
    keys: ``ESC [ … final`` or ``ESC O final``) and lone escapes."""
    i, n = 0, len(typed)
    while i < n:
        char = typed[i]
        i += 1
        if char != "\x1b":
            yield char
        elif i < n and typed[i] in "[O":
            i += 1
            while i < n and not "\x40" <= typed[i] <= "\x7e":
                i += 1
            i += 1  # the final byte


class _Keyboard:
    """Single keys from a terminal in cbreak mode; the terminal's mode is restored by
    :meth:`close` (and at interpreter exit, should that be skipped)."""

    def __init__(self, fd: int, on_key: Callable[[str], None]) -> None:
        self.fd = fd
        self.on_key = on_key
        self._saved: list | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        import termios
        import tty

        self._saved = termios.tcgetattr(self.fd)
        atexit.register(self.close)
        try:
            tty.setcbreak(self.fd, termios.TCSANOW)
            loop.add_reader(self.fd, self._ready)
        except BaseException:
            self.close()
            raise
        self._loop = loop

    def _ready(self) -> None:
        try:
            data = os.read(self.fd, 64)
        except OSError:
            data = b""
        if not data:  # end of input: no more keys
            self._stop_reading()
            return
        for key in keys_of(data.decode("latin-1")):
            self.on_key(key)

    def _stop_reading(self) -> None:
        if self._loop is not None:
            with contextlib.suppress(Exception):
                self._loop.remove_reader(self.fd)
            self._loop = None

    def close(self) -> None:
        self._stop_reading()
        if self._saved is None:
            return
        import termios

        with contextlib.suppress(Exception):
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
        self._saved = None
        atexit.unregister(self.close)


ProfilerHook = Callable[[str], Awaitable[object]]


class LiveView(PlainLog):
    """The live ``top`` of a capture (see the module docstring); events are printed above it.

    ``keys``: read keys from standard input when it is a terminal (``None``, the default),
    never (``False``), or from this file descriptor (a terminal)."""

    def __init__(
        self,
        console: Console | None = None,
        refresh: float = 1.0,
        window: float = 10.0,
        keys: bool | int | None = None,
    ) -> None:
        self.console = console or Console()
        super().__init__(self.console.print, chunks=False)
        self.refresh = refresh
        self.window = window
        self.keys = keys
        self.status: CaptureStatus | None = None
        self.sort = 0  # index into SORTS
        self.thread: str | None = None  # only this thread's functions
        self.hide_idle = False
        self.note: Text | None = None  # the answer to p / r
        self._stop: Callable[[StopCause], None] | None = None
        self._profiler: ProfilerHook | None = None
        self._rates = _Rates()
        self._window = _Window(window)
        self._heap = _Heap(window)
        self._live: Live | None = None
        self._task: asyncio.Task | None = None
        self._keyboard: _Keyboard | None = None
        self._command: asyncio.Task | None = None
        self._source: object | None = None  # the tables the rows are from
        self._rows: dict[FunctionKey, FunctionRow] = {}
        self._rows_at = -1e9
        self._cost = 0.0  # seconds the last rows took to compute

    def _say(self, status: CaptureStatus, message: str) -> None:
        stamp = datetime.now().strftime("%H:%M:%S")
        self.console.print(text(f"{stamp} {message}"))

    def attach(
        self,
        status: CaptureStatus,
        *,
        stop: Callable[[StopCause], None] | None = None,
        profiler: ProfilerHook | None = None,
    ) -> None:
        """The status to show; ``stop(cause)`` ends the capture (``q``); ``profiler(action)``
        sends ``pause``/``resume`` to the device (``p``/``r``)."""
        self.status = status
        self._stop = stop
        self._profiler = profiler

    async def __aenter__(self) -> LiveView:
        self._live = Live(
            console=self.console, auto_refresh=False, transient=False, vertical_overflow="crop"
        )
        self._live.start()
        try:
            self._start_keys()
        except BaseException:
            self._live.stop()
            raise
        self._task = asyncio.ensure_future(self._loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await cancel(self._task, self._command)
        finally:
            if self._keyboard is not None:
                self._keyboard.close()
            if self._live is not None:
                with contextlib.suppress(Exception):
                    self._draw()
                self._live.stop()

    def _start_keys(self) -> None:
        if self.keys is False:
            return
        if self.keys is None or self.keys is True:
            try:
                fd = sys.stdin.fileno()
            except (AttributeError, OSError, ValueError):
                return
        else:
            fd = self.keys
        if not os.isatty(fd):
            return
        keyboard = _Keyboard(fd, self.handle_key)
        keyboard.start(asyncio.get_running_loop())
        self._keyboard = keyboard

    async def _loop(self) -> None:
        while True:
            self._draw()
            await asyncio.sleep(self.refresh)

    def _draw(self) -> None:
        if self._live is not None and self.status is not None:
            self._live.update(self.render(self.status), refresh=True)

    # -- keys --------------------------------------------------------------------------------

    def handle_key(self, key: str) -> None:
        """Act on one key (see the module docstring) and redraw."""
        key = key.lower()
        if key == "s":
            self.sort = (self.sort + 1) % len(SORTS)
        elif key == "t":
            threads = sorted({r.module for r in self._rows.values()})
            order: list[str | None] = [None, *threads]
            at = order.index(self.thread) if self.thread in order else 0
            self.thread = order[(at + 1) % len(order)]
        elif key == "i":
            self.hide_idle = not self.hide_idle
        elif key in ("p", "r"):
            self._send("pause" if key == "p" else "resume")
        elif key == "q":
            if self._stop is not None:
                self._stop(StopCause.KEY_Q)
        else:
            return
        self._draw()

    def _send(self, action: str) -> None:
        if self._profiler is None:
            self.note = Text(f"cannot {action}: no device console", style="yellow")
            return
        if self._command is not None and not self._command.done():
            return  # one command at a time
        self.note = Text(f"{action}…")
        self._command = asyncio.ensure_future(self._run_command(action))

    async def _run_command(self, action: str) -> None:
        try:
            result = await self._profiler(action)  # type: ignore[misc]
        except Exception as error:  # a DeviceError, mostly: say it, keep going
            self.note = Text.assemble((f"{action} failed: ", "red"), printable(error))
        else:
            describe = getattr(result, "describe", None)
            answer = describe() if callable(describe) else str(result)
            self.note = Text.assemble(f"{action}: ", (printable(answer), "bold"))
        self._draw()

    # -- figures -----------------------------------------------------------------------------

    def _update_rows(self, status: CaptureStatus, now: float) -> None:
        tables = status.tables
        if tables is None or now - self._rows_at < max(self.refresh, 3 * self._cost, 0.5):
            return
        started = time.perf_counter()
        rows = function_rows(tables)
        self._cost = time.perf_counter() - started
        self._rows_at = now
        if tables is not self._source:
            if not rows:
                return  # a new run without data yet: the last run's table stays
            self._source = tables
            self._window.reset()
            self._heap = _Heap(self.window)
        self._window.update(now, rows)
        self._rows = rows

    def _visible(self) -> list[FunctionRow]:
        rows = [
            r
            for r in self._rows.values()
            if (self.thread is None or r.module == self.thread)
            and not (self.hide_idle and r.function.lower() in IDLE_FUNCTIONS)
        ]
        key = SORTS[self.sort][1]
        rows.sort(key=lambda r: (-key(r), -r.self_wall, r.module, r.function, r.file))
        return rows

    # -- rendering ---------------------------------------------------------------------------

    def render(self, status: CaptureStatus) -> _Screen:
        now = time.monotonic()
        self._update_rows(status, now)
        if status.tables is self._source or self._source is None:
            self._heap.add(now, status.live_heap_bytes)
        byte_rate, entry_rate = self._rates.update(now, status.bytes, status.entries)
        head: list[Text] = []

        def line(label: str, value: Text | str) -> None:
            row = Text(f"{label:<7}  ", style="bold", no_wrap=True, overflow="ellipsis")
            row.append_text(value if isinstance(value, Text) else Text(value))
            head.append(row)

        name = f" ({status.device_name})" if status.device_name else ""
        line("device", text(f"{status.device or status.host}{name}  [{status.host}]"))
        line("state", state_text(status, now))
        line("app", text(status.app or "-"))
        line(
            "data",
            f"{human_bytes(status.bytes)} ({human_bytes(byte_rate)}/s), "
            f"{status.entries:,} entries ({entry_rate:,.0f}/s)",
        )
        line(
            "chunks",
            f"{status.chunks} written, live heap {human_bytes(status.live_heap_bytes)}  "
            + self._heap.describe(),
        )
        if status.session_path is not None:
            line("session", text(status.session_path))
        for note in status.notes.values():
            line("note", text(note, style="yellow"))
        if status.message and status.message not in status.notes.values():
            line("note", text(status.message, style="yellow"))
        title = Text(self._title(status), style="bold", no_wrap=True, overflow="ellipsis")
        height = self.console.size.height - 1  # the cursor's line stays free: nothing scrolls
        parts = [*head, self._keys_line(), title, self._table(height)]
        return _Screen(Group(*parts), height)

    def _keys_line(self) -> Text:
        line = Text(no_wrap=True, overflow="ellipsis")
        sort = SORTS[self.sort][0]
        thread = printable(self.thread) if self.thread is not None else "all"
        idle = "hidden" if self.hide_idle else "shown"
        for key, what in (
            ("s", f" sort: {sort}"),
            ("t", f" thread: {thread}"),
            ("i", f" idle: {idle}"),
            ("p", " pause"),
            ("r", " resume"),
            ("q", " quit"),
        ):
            line.append(key, style="bold reverse")
            line.append(what + "  ")
        if self.note is not None:
            line.append_text(self.note)
        return line

    def _title(self, status: CaptureStatus) -> str:
        if not self._rows:
            return "functions: no data yet"
        if DeviceState(status.state).in_run and status.tables is self._source:
            return (
                f"functions of run {status.runs_done + 1}: share of the last {self.window:g} s "
                "beside the run's totals"
            )
        finished = f"run {status.runs_done}" + (
            f" ({status.last_status})" if status.last_status else ""
        )
        return f"functions of {finished}, until the next run has data"

    def _table(self, height: int) -> Table:
        width = self.console.size.width
        sort = SORTS[self.sort][0]
        table = Table(
            box=None,
            padding=(0, 1),
            pad_edge=False,
            header_style="reverse",
        )
        names = [(n, j) for n, j, least in COLUMNS if width >= least]
        for name, justify in names:
            label = f"{self.window:g} s %" if name == "now" else name
            if name == sort:
                label += " ▼"
            table.add_column(label, justify=justify, no_wrap=True, overflow="ellipsis")
        for row in self._visible()[: max(0, height)]:
            cells = {
                "thread": text(row.module),
                "function": text(row.function),
                "now": f"{100 * row.share:.1f}" if row.recent else "·",
                "self wall": _seconds(row.self_wall * WALL_SECONDS),
                "total wall": _seconds(row.total_wall * WALL_SECONDS),
                "CPU": f"{row.self_cpu:,}",
                "calls": f"{row.calls:,}",
                "alloc": human_bytes(row.alloc_bytes) if row.alloc_bytes else "·",
                "file": text(row.file),
            }
            table.add_row(*(cells[n] for n, _ in names))
        return table


def state_text(status: CaptureStatus, now: float) -> Text:
    """The live view's state line: the state in bold, then what it means now (the run's
    clock and the time since its last byte, or the reason), then the ECP mode if limited."""
    state = DeviceState(status.state)
    style = {
        DeviceState.UNREACHABLE: "bold red",
        DeviceState.BUSY: "bold yellow",
        DeviceState.PAUSED: "bold yellow",
        DeviceState.STREAMING: "bold green",
    }.get(state, "bold")
    out = Text(state.value, style=style)
    if state.in_run:
        out.append(f"  run {status.runs_done + 1}, {clock(status.elapsed(now))}")
        since = status.since_data(now)
        if since is not None:
            out.append(f", last data {since:.0f} s ago")
    else:
        words = STATE_TEXT[state]
        meaning = words.split(": ", 1)[1] if words.startswith(state.value + ": ") else words
        if meaning != state.value:
            out.append(f"  {meaning}")
        if status.last_status:
            out.append(f"  (last run {status.last_status}; {status.runs_done} captured)")
    if status.detail:
        out.append("  ")
        out.append_text(text(status.detail))
    if status.limited:
        out.append("  · ECP limited", style="yellow")
    return out


def _seconds(s: float) -> str:
    if s >= 100:
        return f"{s:,.0f} s"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{s * 1000:.1f} ms"
