"""The live view's screen as rich renderables, from figures it is given (no clock, no state).

On top: device, state, app (with its last CPU and memory reading), data rates, chunks, the live
heap with its trend, the session, notes; then the keys and what they set; then one row per
function, as many as fit.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from rokuprof.capture.status import STATE_TEXT, CaptureStatus, DeviceState
from rokuprof.units import seconds, size
from rokuprof.views.live_figures import SORTS, FunctionRow, vitals_text
from rokuprof.views.text import printable, text

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


class Screen:
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


def clock(seconds: float) -> str:
    """``H:MM:SS``."""
    whole = int(seconds)
    return f"{whole // 3600:d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def head_lines(
    status: CaptureStatus, now: float, rates: tuple[float, float], heap: str
) -> list[Text]:
    """The lines above the keys: ``rates`` are bytes and entries per second, ``heap`` the live
    heap's trend."""
    head: list[Text] = []

    def line(label: str, value: Text | str) -> None:
        row = Text(f"{label:<7}  ", style="bold", no_wrap=True, overflow="ellipsis")
        row.append_text(value if isinstance(value, Text) else Text(value))
        head.append(row)

    byte_rate, entry_rate = rates
    name = f" ({status.device_name})" if status.device_name else ""
    line("device", text(f"{status.label or status.device or status.host}{name}  [{status.host}]"))
    line("state", state_text(status, now))
    app = text(status.app or "-")
    if vitals := vitals_text(status.vitals):
        app.append(f"  {vitals}")
    line("app", app)
    line(
        "data",
        f"{size(status.bytes)} ({size(byte_rate)}/s), "
        f"{status.entries:,} entries ({entry_rate:,.0f}/s)",
    )
    line(
        "chunks",
        f"{status.chunks} written, live heap {size(status.live_heap_bytes)}  " + heap,
    )
    if status.session_path is not None:
        line("session", text(status.session_path))
    for note in status.notes.values():
        line("note", text(note, style="yellow"))
    if status.message and status.message not in status.notes.values():
        line("note", text(status.message, style="yellow"))
    return head


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
        if state is DeviceState.PAUSED:
            out.append(" (or the r key)")  # this view reads it; a log or the daemon does not
    if status.limited:
        out.append("  · ECP limited", style="yellow")
    return out


def keys_line(sort: int, thread: str | None, hide_idle: bool, note: Text | None) -> Text:
    """The answer to the last ``p``/``r`` first (a narrow terminal cuts the end of the line,
    and the keys are the part one can do without), then the keys and what they set now."""
    line = Text(no_wrap=True, overflow="ellipsis")
    if note is not None:
        line.append_text(note)
        line.append("  ")
    shown = printable(thread) if thread is not None else "all"
    idle = "hidden" if hide_idle else "shown"
    for key, what in (
        ("s", f" sort: {SORTS[sort][0]}"),
        ("t", f" thread: {shown}"),
        ("i", f" idle: {idle}"),
        ("p", " pause"),
        ("r", " resume"),
        ("q", " quit"),
    ):
        line.append(key, style="bold reverse")
        line.append(what + "  ")
    return line


def title(status: CaptureStatus, has_rows: bool, current: bool, window: float) -> Text:
    """The table's title: whose functions (``current``: the run streaming now's)."""
    if not has_rows:
        words = "functions: no data yet"
    elif DeviceState(status.state).in_run and current:
        words = (
            f"functions of run {status.runs_done + 1}: share of the last {window:g} s "
            "beside the run's totals"
        )
    else:
        finished = f"run {status.runs_done}" + (
            f" ({status.last_status})" if status.last_status else ""
        )
        words = f"functions of {finished}, until the next run has data"
    return Text(words, style="bold", no_wrap=True, overflow="ellipsis")


def function_table(
    rows: list[FunctionRow], sort: int, window: float, width: int, wall_seconds: float
) -> Table:
    """``rows`` as a table with the columns ``width`` has room for; wall times are counts of
    ``wall_seconds``."""
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="reverse")
    names = [(n, j) for n, j, least in COLUMNS if width >= least]
    for name, justify in names:
        label = f"{window:g} s %" if name == "now" else name
        if name == SORTS[sort][0]:
            label += " ▼"
        table.add_column(label, justify=justify, no_wrap=True, overflow="ellipsis")
    for row in rows:
        f = row.stats
        cells = {
            "thread": text(f.module),
            "function": text(f.function),
            "now": f"{100 * row.share:.1f}" if row.recent else "·",
            "self wall": seconds(f.self_wall * wall_seconds),
            "total wall": seconds(f.total_wall * wall_seconds),
            "CPU": f"{f.self_cpu:,}",
            "calls": f"{f.calls:,}",
            "alloc": size(f.alloc_bytes) if f.alloc_bytes else "·",
            "file": text(f.file),
        }
        table.add_row(*(cells[n] for n, _ in names))
    return table
