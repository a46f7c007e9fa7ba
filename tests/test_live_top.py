"""The live view of ``rokuprof watch`` as a ``top``: it fills the terminal, shows the last
window's share beside the run's totals, and answers keys; under a real terminal (tmux, two
sizes) against the simulated Roku, and piece by piece."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from rich.console import Console
from scripted_clock import ScriptedClock
from terminal_helpers import needs_tmux
from waiting import until

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import build_header
from rokuprof.capture.loop import CaptureConfig, DeviceCapture
from rokuprof.capture.status import CaptureStatus
from rokuprof.capture.stop import StopCause
from rokuprof.profile.functions import FunctionStats, aggregate_functions
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.tables import ProfileTables
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.app import AppConfig, SyntheticApp
from rokuprof.views.live_figures import IDLE_FUNCTIONS, FunctionRow, Window, function_rows
from rokuprof.views.live_screen import function_table
from rokuprof.views.live_view import LiveView

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(r"^(main|HomeScene|ContentLoaderTask|VideoPlayerTask)\s+(\S+)\s")


def reader_after(seconds: float, seed: int = 4) -> ProfileReader:
    app = SyntheticApp(AppConfig(seed=seed))
    data = build_header(app.header(1_700_000_000_000))
    data += encode_entries(app.advance(seconds) + app.finish(), True)
    reader = ProfileReader()
    reader.feed(data)
    return reader


def status_of(tables: ProfileTables) -> CaptureStatus:
    return CaptureStatus(
        host="127.0.0.1", device="SIM", state="streaming", app="Café TV 2.4.1", tables=tables
    )


def screen(view: LiveView, status: CaptureStatus) -> list[str]:
    console = view.console
    console.print(view.render(status))
    lines = console.export_text().split("\n")
    return lines[:-1] if lines and lines[-1] == "" else lines


def header_of(lines: list[str]) -> str:
    return next(line for line in lines if line.startswith("thread "))


def function_lines(lines: list[str]) -> list[tuple[str, str, str]]:
    return [(m.group(1), m.group(2), line) for line in lines if (m := ROW.match(line))]


# -- piece by piece ------------------------------------------------------------------------------


def test_rows_are_inspects_functions_with_allocations() -> None:
    tables = reader_after(8.0).tables
    rows = function_rows(tables)
    functions = aggregate_functions(tables)
    assert len(rows) == len(functions)
    for f in functions:
        row = rows[(f.module, f.function, f.file)].stats
        assert (row.self_wall, row.total_wall, row.self_cpu, row.calls) == (
            f.self_wall,
            f.total_wall,
            f.self_cpu,
            f.calls,
        )
    assert sum(r.stats.alloc_bytes for r in rows.values()) == tables.totals().alloc_bytes


@pytest.mark.parametrize(("width", "height"), [(80, 24), (160, 50)])
def test_the_view_fills_the_terminal(width: int, height: int) -> None:
    status = status_of(reader_after(8.0).tables)
    console = Console(file=io.StringIO(), width=width, height=height, record=True)
    lines = screen(LiveView(console, keys=False), status)
    assert len(lines) == height - 1  # all but the cursor's line
    assert all(len(line) <= width for line in lines)  # nothing wrapped
    rows = function_lines(lines)
    functions = len(function_rows(status.tables))
    room = height - 1 - lines.index(header_of(lines)) - 1
    assert len(rows) == min(functions, room)
    if functions > room:
        assert ROW.match(lines[-1])  # the last line is a function, not blank
    assert ("file" in header_of(lines)) == (width >= 140)


def test_keys_sort_filter_and_hide_idle() -> None:
    status = status_of(reader_after(8.0).tables)
    console = Console(file=io.StringIO(), width=160, height=60, record=True)
    view = LiveView(console, keys=False)
    first = function_lines(screen(view, status))
    assert first[0][1] == "waitPort"  # the busiest, by its share of the window
    view.handle_key("i")
    hidden = function_lines(screen(view, status))
    assert not {name.lower() for _, name, _ in hidden} & IDLE_FUNCTIONS
    assert len(hidden) == len(first) - 1
    for _ in range(4):  # now -> self wall -> total wall -> CPU -> calls
        view.handle_key("s")
    lines = screen(view, status)
    assert "calls ▼" in header_of(lines) and "sort: calls" in "".join(lines)
    calls = {k[:2]: r.stats.calls for k, r in function_rows(status.tables).items()}
    order = [calls[(thread, name)] for thread, name, _ in function_lines(lines)]
    assert order == sorted(order, reverse=True)
    view.handle_key("t")  # the first thread, alphabetically
    threads = {t for t, _, _ in function_lines(screen(view, status))}
    assert threads == {"ContentLoaderTask"}
    for _ in range(4):  # HomeScene, main, VideoPlayerTask... and back to all
        view.handle_key("t")
    assert len({t for t, _, _ in function_lines(screen(view, status))}) > 1


def test_window_share_counts_only_the_last_window() -> None:
    early, late = reader_after(3.0).tables, reader_after(6.0).tables
    window = Window(10.0)
    rows_early = function_rows(early)
    window.update(100.0, rows_early)
    rows_late = function_rows(late)
    window.update(105.0, rows_late)  # within the window: since the first snapshot
    for key, row in rows_late.items():
        before = rows_early[key].stats.self_wall if key in rows_early else 0
        assert row.recent == row.stats.self_wall - before
    assert sum(r.share for r in rows_late.values()) == pytest.approx(1.0)
    rows_same = function_rows(late)
    window.update(116.0, rows_same)  # from the last snapshot at or before 106: 105 -> 116
    assert all(r.recent == 0 and r.share == 0 for r in rows_same.values())


def test_wall_times_are_read_in_the_wall_unit() -> None:
    """``--wall-unit`` reaches the table: the same counters, microseconds or milliseconds."""
    row = FunctionRow(FunctionStats("main", "f", "x.brs", self_wall=1_500, total_wall=2_500_000))
    cells = {}
    for unit in ("us", "ms"):
        view = LiveView(Console(file=io.StringIO()), keys=False, wall_unit=unit)
        console = Console(file=io.StringIO(), width=90, record=True)
        console.print(function_table([row], 0, view.window, 90, view.wall_seconds))
        cells[unit] = console.export_text().split("\n")[1].split()
    assert cells["us"] == ["main", "f", "·", "1.5", "ms", "2.50", "s"]
    assert cells["ms"] == ["main", "f", "·", "1.50", "s", "2,500", "s"]
    assert LiveView(Console(file=io.StringIO()), keys=False).wall_seconds == 1e-6  # the default


def test_a_finished_runs_table_stays_until_the_next_run_has_data() -> None:
    first = reader_after(5.0, seed=4)
    status = status_of(first.tables)
    console = Console(file=io.StringIO(), width=140, height=40, record=True)
    clock = ScriptedClock()
    view = LiveView(console, keys=False, clock=clock)
    shown = function_lines(screen(view, status))
    status.runs_done, status.last_status = 1, "complete"
    status.tables = ProfileTables()  # the next run connected: no data yet
    clock.advance(view.refresh)  # the rows are read again once a refresh interval
    lines = screen(view, status)
    assert [r[:2] for r in function_lines(lines)] == [r[:2] for r in shown]
    assert any("functions of run 1 (complete), until the next run has data" in x for x in lines)
    second = reader_after(0.5, seed=9)
    status.tables = second.tables
    clock.advance(view.refresh / 2)  # not yet: the finished run's rows stay
    assert [r[:2] for r in function_lines(screen(view, status))] == [r[:2] for r in shown]
    clock.advance(view.refresh / 2)
    now = function_lines(screen(view, status))
    assert len(now) == len(function_rows(second.tables)) < len(shown)


async def test_keys_from_a_terminal_and_its_mode_restored() -> None:
    """A pseudo-terminal as standard input: cbreak while the view runs, as before after."""
    master, slave = os.openpty()
    try:
        before = termios.tcgetattr(slave)
        stopped: list[str] = []
        status = status_of(reader_after(3.0).tables)
        view = LiveView(Console(file=io.StringIO(), width=120, height=30), keys=slave)
        view.attach(status, stop=stopped.append)
        async with view:
            mode = termios.tcgetattr(slave)
            assert not mode[3] & (termios.ICANON | termios.ECHO)  # cbreak: keys one by one
            os.write(master, b"i\x1b[Aq")  # an arrow key's sequence is no key
            await until(lambda: stopped, 5, step=0.01)
        assert stopped == [StopCause.KEY_Q] and view.hide_idle and view.sort == 0
        assert termios.tcgetattr(slave) == before
        with pytest.raises(RuntimeError):  # a failing run still restores the terminal
            async with LiveView(Console(file=io.StringIO()), keys=slave):
                raise RuntimeError("boom")
        assert termios.tcgetattr(slave) == before
    finally:
        os.close(master)
        os.close(slave)


async def test_the_profiler_hook_pauses_and_resumes_the_device() -> None:
    cfg = DeviceConfig(run_seconds=30.0, runs=1, auto_launch=False)
    async with SimulatedDevice(cfg) as dev:
        capture = DeviceCapture(
            CaptureConfig(host="127.0.0.1", console_port=dev.console_port, use_ecp=False)
        )
        idle = await capture.profiler_command("pause")
        assert idle.no_session  # no app runs yet
        await dev.launch()
        paused = await capture.profiler_command("pause")
        assert "paused" in paused.reply and "paused" in (dev.profiling_status() or "")
        resumed = await capture.profiler_command("resume")
        assert "resumed" in resumed.reply and "running" in (dev.profiling_status() or "")


# -- under a real terminal -------------------------------------------------------------------


class Terminal:
    """``rokuprof ARGS`` in a private tmux server's WIDTH x HEIGHT terminal; after it ends, its
    exit status and the terminal's mode (``stty -a``) are written next to the socket."""

    def __init__(self, tmp: Path, width: int, height: int) -> None:
        self.socket, self.width, self.height = tmp / "tmux.sock", width, height
        self.status, self.stty = tmp / "exit-status", tmp / "stty"

    def tmux(self, *args: str) -> str:
        command = ["tmux", "-S", str(self.socket), *args]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    def start(self, *args: str) -> None:
        cli = shlex.join([sys.executable, "-m", "rokuprof", *args])
        # Without LINES and COLUMNS: curses in the test process may have exported its own.
        env = f"-u LINES -u COLUMNS PYTHONPATH={shlex.quote(str(ROOT))}"
        status, stty = shlex.quote(str(self.status)), shlex.quote(str(self.stty))
        # the terminal's mode first, then the exit status the test waits for, each written whole
        done = f"rc=$?; stty -a > {stty}.tmp; mv {stty}.tmp {stty}; echo $rc > {status}.tmp"
        script = f"env {env} {cli}; {done}; mv {status}.tmp {status}; sleep 600"
        size = ("-x", str(self.width), "-y", str(self.height))
        self.tmux("-f", "/dev/null", "new-session", "-d", *size, script)

    def lines(self) -> list[str]:
        """The visible screen, line by line."""
        return self.tmux("capture-pane", "-p").split("\n")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def exit_status(self) -> int | None:
        text = self.status.read_text() if self.status.exists() else ""
        return int(text) if text.strip() else None

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True)


async def screen_when(term: Terminal, check, timeout: float = 20.0) -> list[str]:
    """The screen once ``check(lines)`` holds (or as it is after ``timeout`` seconds)."""
    with contextlib.suppress(TimeoutError):
        await until(lambda: check(term.lines()), timeout, step=0.1)
    return term.lines()


def room(lines: list[str]) -> int:
    """How many function rows fit below the header (a large number before there is one)."""
    top = next((i for i, line in enumerate(lines) if line.startswith("device ")), None)
    header = next((i for i, line in enumerate(lines) if line.startswith("thread ")), None)
    if top is None or header is None:
        return 1000
    return (len(lines) - 1 - 1) - (header - top) - 1  # the last element is after the last "\n"


def shown(lines: list[str]) -> str:
    return "\n".join(lines)


@needs_tmux
@pytest.mark.parametrize(("width", "height"), [(90, 24), (160, 50)])
async def test_watch_top_under_tmux(tmp_path: Path, width: int, height: int) -> None:
    cfg = DeviceConfig(run_seconds=60.0, runs=1, auto_launch=False, seed=5)
    async with SimulatedDevice(cfg) as dev:
        term = Terminal(tmp_path, width, height)
        try:
            term.start(
                "watch", "127.0.0.1", "--out", str(tmp_path / "out"), "--no-ecp",
                "--profiler-port", str(dev.profiler_port),
                "--console-port", str(dev.console_port),
            )  # fmt: skip
            await screen_when(term, lambda s: "refused" in shown(s))
            await dev.launch()
            # As many rows as fit: the view is one line less than the terminal (the cursor's);
            # the simulated app has about 30 functions once playback started.
            lines = await screen_when(term, lambda s: len(function_lines(s)) >= min(room(s), 28))
            rows = function_lines(lines)
            header = next(i for i, line in enumerate(lines) if line.startswith("thread "))
            if height < 40:
                assert len(rows) == room(lines), shown(lines)
            else:  # every function fits
                assert len(rows) < room(lines) and not lines[header + 1 + len(rows)].strip()
            assert "10 s % ▼" in lines[header]
            assert ("file" in lines[header]) == (width >= 140), shown(lines)

            term.keys("i")
            lines = await screen_when(term, lambda s: "idle: hidden" in shown(s))
            assert "waitPort" not in shown(lines) and function_lines(lines)
            term.keys("s")
            lines = await screen_when(term, lambda s: "self wall ▼" in shown(s))
            walls = [row[2] for row in function_lines(lines)]
            assert walls, shown(lines)
            term.keys("t")
            lines = await screen_when(term, lambda s: "thread: ContentLoaderTask" in shown(s))
            assert {t for t, _, _ in function_lines(lines)} == {"ContentLoaderTask"}

            term.keys("p")
            lines = await screen_when(term, lambda s: "pause: bsprof paused" in shown(s))
            assert "paused" in (dev.profiling_status() or ""), shown(lines)
            if width >= 160:  # the state line offers the key this view reads
                await screen_when(term, lambda s: "--console-port" in shown(s))
                lines = await screen_when(term, lambda s: "` (or the r key)" in shown(s))
            term.keys("r")
            await screen_when(term, lambda s: "resume: bsprof resumed" in shown(s))
            assert "running" in (dev.profiling_status() or "")

            term.keys("q")
            end = await screen_when(term, lambda s: "1 run(s) captured" in shown(s))
            with contextlib.suppress(TimeoutError):
                await until(lambda: term.exit_status() is not None, 10, step=0.1)
            assert term.exit_status() == 0, shown(end)
            assert "stopped by the q key" in shown(end) and "Traceback" not in shown(end)
            stty = term.stty.read_text().split()
            assert "icanon" in stty and "echo" in stty  # the terminal's mode is back
        finally:
            term.close()
    [session] = (tmp_path / "out" / "127.0.0.1").iterdir()
    record = json.loads((session / "session.json").read_text())
    assert record["status"] == "interrupted"
