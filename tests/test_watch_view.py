"""The live view and the plain log of ``rokuprof watch``."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.console import Console

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import build_header
from rokuprof.capture.session import SessionRecord
from rokuprof.capture.status import CaptureStatus, DeviceState
from rokuprof.profile.reader import ProfileReader
from rokuprof.simulator.app import AppConfig, SyntheticApp
from rokuprof.units import size as human_bytes
from rokuprof.views.live_log import PlainLog
from rokuprof.views.live_screen import clock
from rokuprof.views.live_view import LiveView
from rokuprof.views.text import printable
from rokuprof.workflows.watch import make_observer

HOSTILE = (("waitPort", "[/]wait\x1b[2J"), ("pkg:/source/main.brs", "[link=x]m\x9b"))


def streaming_status(names: tuple[tuple[str, str], ...] = ()) -> CaptureStatus:
    app = SyntheticApp(AppConfig(seed=4, names=names))
    data = build_header(app.header(1_700_000_000_000)) + encode_entries(
        app.advance(3.0) + app.finish(), True
    )
    reader = ProfileReader()
    reader.feed(data)
    return CaptureStatus(
        host="10.0.0.7",
        device="YN00AA000001",
        device_name="Den",
        state="streaming",
        app="Café TV 2.4.1",
        session_path=Path("out/YN00AA000001/20261121T000000Z-abcdef12"),
        run_started=time.monotonic() - 65,
        bytes=len(data),
        entries=reader.entry_count,
        chunks=2,
        live_heap_bytes=reader.tables.live_bytes,
        tables=reader.tables,
    )


def test_live_view_shows_device_app_state_rates_chunks_heap_and_top_functions() -> None:
    status = streaming_status()
    console = Console(file=io.StringIO(), width=140, record=True)
    view = LiveView(console)
    view.render(status)  # the first frame starts the rate window
    status.bytes += 2048
    status.entries += 100
    console.print(view.render(status))
    text = console.export_text()
    assert "YN00AA000001 (Den)  [10.0.0.7]" in text
    assert "streaming  run 1, 0:01:0" in text  # elapsed 65 s
    assert "Café TV 2.4.1" in text
    assert "/s)" in text and "entries" in text
    assert "2 written, live heap" in text
    assert "functions of run 1: share of the last 10 s beside the run's totals" in text
    assert "waitPort" in text  # the synthetic app's busiest function
    assert "20261121T000000Z-abcdef12" in text


def test_plain_log_lines() -> None:
    lines: list[str] = []
    log = PlainLog(lines.append)
    status = streaming_status()
    status.state = DeviceState.REFUSED
    log.on_state(status)
    log.on_state(status)  # no repeat
    log.on_session_start(status)
    log.on_chunk(status, Path("chunks/000001.json"))
    record = SessionRecord("s", "p" * 32, {}, 0.0, status="truncated", end_reason="cut short")
    status.runs_done = 1
    log.on_session_end(status, record, Path("out/s"))
    log.on_message(status, "warning", "ECP said no")
    text = "\n".join(lines)
    assert text.count("refused: the profiler port refuses") == 1
    assert "streaming into out/YN00AA000001/" in text
    assert "chunk 000001.json written" in text
    assert "run 1 truncated" in text and "cut short" in text
    assert "warning: ECP said no" in text


def test_formatting_helpers() -> None:
    assert human_bytes(512) == "512 B"
    assert human_bytes(1536) == "1.5 KiB"
    assert human_bytes(5 * 1024**3) == "5.0 GiB"
    assert clock(3725) == "1:02:05"


def test_the_live_view_reads_wall_times_in_the_captures_unit() -> None:
    console = Console(file=io.StringIO(), force_terminal=True)
    assert isinstance(make_observer("auto", console, "ms"), LiveView)
    assert make_observer("live", console, "ms").wall_seconds == 1e-3
    assert make_observer("live", console).wall_seconds == 1e-6


def test_live_view_and_plain_log_show_device_text_literally() -> None:
    status = streaming_status(HOSTILE)
    status.device_name = "Den [bold]\x1b]0;title\x07"
    status.app = "App [/] \u202e 1.0"
    status.message = "ECP said [link=http://x]no[/link]\x1b[2J"
    console = Console(file=io.StringIO(), width=160, record=True)
    console.print(LiveView(console).render(status))  # no MarkupError
    text = console.export_text()
    for shown in ("[/]wait\\x1b[2J", "[link=x]m\\x9b", "Den [bold]\\x1b]0;title\\x07"):
        assert shown in text
    assert "App [/] \\u202e 1.0" in text and "ECP said [link=http://x]no[/link]\\x1b[2J" in text
    lines: list[str] = []
    PlainLog(lines.append).on_message(status, "warning", status.message + "\nforged")
    [line] = lines
    assert line.endswith(printable("warning: " + status.message + "\nforged"))
