"""The live view of ``rokuprof watch``: a ``top`` for the app run (asyncio and rich shell).

It fills the terminal, redrawn once a second from the event loop (no refresh thread, so it never
reads the profile tables while they change). On top: device, state, app, data rates, chunks, the
live heap with its trend, the session; below, one row per function (as many as fit): its share of
the last ``window`` seconds beside the run's cumulative self and total wall time, CPU, calls and
allocated bytes. Keys (only when standard input is a terminal, which is put in cbreak mode and
always restored): ``s`` cycles the sort column, ``t`` the thread shown, ``i`` hides idle
functions (:data:`~rokuprof.views.live_figures.IDLE_FUNCTIONS`), ``p``/``r`` pause and resume
the device's profiler, ``q`` ends the capture like Ctrl-C. A finished run's table stays until
the next run has data.

Figures: :mod:`~rokuprof.views.live_figures`; the screen: :mod:`~rokuprof.views.live_screen`;
keys: :mod:`~rokuprof.views.live_keys`. This class holds what is shown, and decides when.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from datetime import datetime

from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from rokuprof.bsprof.wall_unit import DEFAULT_WALL_UNIT, units_per_second
from rokuprof.capture.status import CaptureStatus
from rokuprof.capture.stop import StopCause
from rokuprof.capture.tasks import cancel
from rokuprof.profile.functions import FunctionKey
from rokuprof.views import live_screen
from rokuprof.views.live_figures import (
    SORTS,
    FunctionRow,
    Heap,
    Rates,
    Window,
    function_rows,
    visible_rows,
)
from rokuprof.views.live_keys import Keyboard, keyboard_for
from rokuprof.views.live_log import PlainLog
from rokuprof.views.text import printable, text

ProfilerHook = Callable[[str], Awaitable[object]]


class LiveView(PlainLog):
    """The live ``top`` of a capture (see the module docstring); events are printed above it.

    ``keys``: read keys from standard input when it is a terminal (``None``, the default),
    never (``False``), or from this file descriptor (a terminal). ``wall_unit``: the unit of
    the stream's wall times (``rokuprof.bsprof.wall_unit.WALL_UNITS``). ``clock``: the monotonic
    clock the capture's status is stamped with (the run's time, rates, the window)."""

    def __init__(
        self,
        console: Console | None = None,
        refresh: float = 1.0,
        window: float = 10.0,
        keys: bool | int | None = None,
        *,
        wall_unit: str = DEFAULT_WALL_UNIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.console = console or Console()
        super().__init__(self.console.print, chunks=False)
        self.refresh = refresh
        self.window = window
        self.keys = keys
        self.wall_seconds = 1 / units_per_second(wall_unit)
        self.clock = clock
        self.status: CaptureStatus | None = None
        self.sort = 0  # index into SORTS
        self.thread: str | None = None  # only this thread's functions
        self.hide_idle = False
        self.note: Text | None = None  # the answer to p / r
        self._stop: Callable[[StopCause], None] | None = None
        self._profiler: ProfilerHook | None = None
        self._rates = Rates()
        self._window = Window(window)
        self._heap = Heap(window)
        self._live: Live | None = None
        self._task: asyncio.Task | None = None
        self._keyboard: Keyboard | None = None
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
            self._keyboard = keyboard_for(self.keys, self.handle_key)
            if self._keyboard is not None:
                self._keyboard.start(asyncio.get_running_loop())
        except BaseException:
            self._keyboard = None
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
            threads = sorted({r.stats.module for r in self._rows.values()})
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

    # -- figures and the screen ----------------------------------------------------------------

    def _update_rows(self, status: CaptureStatus, now: float) -> None:
        """New rows from the tables at most once a ``refresh`` (less often when computing them
        takes long); a new run's rows only once it has data."""
        tables = status.tables
        if tables is None or now - self._rows_at < max(self.refresh, 3 * self._cost, 0.5):
            return
        rows = function_rows(tables)
        self._cost = self.clock() - now
        self._rows_at = now
        if tables is not self._source:
            if not rows:
                return  # a new run without data yet: the last run's table stays
            self._source = tables
            self._window.reset()
            self._heap = Heap(self.window)
        self._window.update(now, rows)
        self._rows = rows

    def render(self, status: CaptureStatus) -> live_screen.Screen:
        """The whole screen for ``status`` now."""
        now = self.clock()
        self._update_rows(status, now)
        current = status.tables is self._source
        if current or self._source is None:
            self._heap.add(now, status.live_heap_bytes)
        rates = self._rates.update(now, status.bytes, status.entries)
        height = self.console.size.height - 1  # the cursor's line stays free: nothing scrolls
        rows = visible_rows(self._rows, self.sort, self.thread, self.hide_idle)
        parts = [
            *live_screen.head_lines(status, now, rates, self._heap.describe()),
            live_screen.keys_line(self.sort, self.thread, self.hide_idle, self.note),
            live_screen.title(status, bool(self._rows), current, self.window),
            live_screen.function_table(
                rows[: max(0, height)],
                self.sort,
                self.window,
                self.console.size.width,
                self.wall_seconds,
            ),
        ]
        return live_screen.Screen(Group(*parts), height)
