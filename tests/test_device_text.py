"""Device text is data: never rich markup, never terminal control, wherever it is shown.

Names from the .bsprof string table, header fields, ECP and console replies reach ``inspect``,
the ``watch`` live view and log lines, ``discover``, ``control`` and the daemon's logs; here each
of them carries markup (``[/]``, ``[link=…]``), escape sequences (CSI, OSC, 8-bit CSI) and bidi
overrides, and must come out literally, with control characters escaped, and exit normally.
``--json`` keeps the exact strings. The terminal tests run under a real one (tmux).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from terminal_helpers import Tmux, needs_tmux, tmux_terminal
from typer.testing import CliRunner
from waiting import until

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import CALLS, CPU, MODULE, PATH, STRING, Footer, Header
from rokuprof.cli import app
from rokuprof.daemon.logs import setup_logging
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.app import AppConfig, SyntheticApp
from rokuprof.views.text import UNSAFE, json_dumps, printable

ROOT = Path(__file__).resolve().parents[1]
TITLE = "PWNED-TITLE"
#: Names as a hostile (or merely odd) device might send them.
HOSTILE = {
    "closing tag": "a[/]b",
    "link": "[link=http://x]click[/link]",
    "style": "[bold red]LOUD",
    "clear screen": "clr\x1b[2Jx",
    "set title": f"t\x1b]0;{TITLE}\x07x",
    "8-bit CSI": "c\x9b31mx",
    "bidi override": "evil\u202egnp.exe",
    "isolate and DEL": "iso\u2066x\u2069\x7f",
}
MODULE_NAME = "mod[/]\x1b[1m"
FILE_NAME = f"pkg:/[link=http://x]f[/link]\x1b]0;{TITLE}\x07.brs"
HEADER = Header(
    major=1, minor=0, patch=0, header_size=0, requested_sample_ratio=1.0,
    actual_sample_ratio=1.0, line_data=False, memory_ops=False, start_ms=1_700_000_000_000,
    target_name=f"App [link=http://x]x[/link] \x1b]0;{TITLE}\x07", supplemental="sup [/] \x1b[2J",
    target_version="1.0 [bold]", vendor="Roku\x1b[31m", model="M[/]", firmware="f\x9b2J Café",
)  # fmt: skip
#: The simulated app's functions and files renamed (see ``AppConfig.names``).
DEVICE_NAME = "Den [link=http://x]x[/link] \x9b\u202e"  # ECP's XML cannot carry ESC
SIM_NAMES = (
    ("waitPort", HOSTILE["closing tag"] + "\x1b[2J"),
    ("renderTile", HOSTILE["link"]),
    ("drawPoster", HOSTILE["set title"]),
    ("decodeImage", HOSTILE["style"]),
    ("parseString", HOSTILE["8-bit CSI"]),
    ("eventLoop", HOSTILE["bidi override"]),
    ("pkg:/components/rows/PosterRowList.brs", "pkg:/[/]rows\x1b[31m.brs"),
)


def unsafe_in(text: str) -> list[str]:
    return sorted(set(UNSAFE.findall(text)) - {"\n"})


def hostile_stream() -> bytes:
    entries: list[tuple] = [(STRING, 1, MODULE_NAME), (STRING, 2, FILE_NAME), (MODULE, 1, 1)]
    for i, name in enumerate(HOSTILE.values(), start=1):
        entries += [
            (STRING, 10 + i, name),
            (PATH, i, 0, 1, 0, 2, i, 10 + i),
            (CPU, i, 1, 10 * i, 100 * i),
            (CALLS, i, i),
        ]
    return build_stream(HEADER, entries, Footer(1_700_000_001_000))


@pytest.fixture
def hostile_file(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.bsprof"
    path.write_bytes(hostile_stream())
    return path


def run_cli(*args: str, columns: int = 200) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS=str(columns))
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", *args],
        capture_output=True, text=True, timeout=60, env=env, check=False,
    )  # fmt: skip


# -- the helper ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("Café 東京 🎬", "Café 東京 🎬"),
        ("a[/]b [link=http://x]c[/link]", "a[/]b [link=http://x]c[/link]"),
        ("clr\x1b[2J", "clr\\x1b[2J"),
        ("t\x1b]0;x\x07", "t\\x1b]0;x\\x07"),
        ("c\x9b31m", "c\\x9b31m"),
        ("del\x7f nul\x00", "del\\x7f nul\\x00"),
        ("tab\tline\nret\r", "tab\\tline\\nret\\r"),
        ("evil\u202egnp", "evil\\u202egnp"),
        ("\u2066iso\u2069 \u200f \u061c \u2028", "\\u2066iso\\u2069 \\u200f \\u061c \\u2028"),
        ("\ud800", "\\ud800"),
    ],
)
def test_printable_escapes_controls_and_keeps_the_rest(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_printable_multiline_keeps_lines_and_tabs_only() -> None:
    assert printable("a\tb\nc\x1b[2J\r", multiline=True) == "a\tb\nc\\x1b[2J\\r"


@given(st.text())
def test_printable_and_json_dumps_never_let_a_control_through(raw: str) -> None:
    assert not UNSAFE.search(printable(raw))
    assert not UNSAFE.search(printable(raw, multiline=True).replace("\n", "").replace("\t", ""))
    dumped = json_dumps({"k": raw}, indent=2)
    assert json.loads(dumped) == {"k": raw}  # the exact text
    assert unsafe_in(dumped) == []


# -- inspect ---------------------------------------------------------------------------------


def test_inspect_to_a_pipe_shows_names_literally(hostile_file: Path) -> None:
    proc = run_cli("inspect", str(hostile_file))
    assert proc.returncode == 0, proc.stderr  # a complete file
    assert proc.stderr == "" and "Traceback" not in proc.stdout
    assert unsafe_in(proc.stdout) == []
    assert "\x1b" not in proc.stdout  # not even rich's own styles: a pipe is not a terminal
    for name in [*HOSTILE.values(), MODULE_NAME, FILE_NAME, HEADER.supplemental]:
        assert printable(name) in proc.stdout, name
    assert printable(f"{HEADER.target_name} {HEADER.target_version}") in proc.stdout
    assert printable(f"on {HEADER.vendor} {HEADER.model}, firmware {HEADER.firmware}") in (
        proc.stdout
    )


def test_inspect_json_keeps_the_exact_strings(hostile_file: Path) -> None:
    proc = run_cli("inspect", str(hostile_file), "--json")
    assert proc.returncode == 0, proc.stderr
    assert unsafe_in(proc.stdout) == []  # C1 and bidi escaped too
    report = json.loads(proc.stdout)
    assert {f["function"] for f in report["functions"]} == set(HOSTILE.values())
    assert {(f["module"], f["file"]) for f in report["functions"]} == {(MODULE_NAME, FILE_NAME)}
    header = report["header"]
    assert (header["target_name"], header["firmware"]) == (HEADER.target_name, HEADER.firmware)


def test_an_unreadable_file_name_is_not_markup(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["inspect", str(tmp_path / "[/]missing.bsprof")])
    assert result.exit_code == 2
    assert "[/]missing.bsprof" in result.stderr and "cannot read" in result.stderr


def test_convert_summary_shows_thread_names_literally(tmp_path: Path) -> None:
    module = f"Home[/]\x1b]0;{TITLE}\x07\x9b"
    synthetic = SyntheticApp(AppConfig(seed=4, names=(("HomeScene", module),)))
    entries = synthetic.advance(2.0) + synthetic.finish()
    path = tmp_path / "sim.bsprof"
    path.write_bytes(
        build_stream(synthetic.header(1_700_000_000_000), entries, Footer(1_700_000_002_000))
    )
    result = CliRunner().invoke(app, ["convert", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert f"{printable(module)} (2)" in result.stdout and unsafe_in(result.stdout) == []


# -- under a real terminal -------------------------------------------------------------------


@needs_tmux
def test_inspect_under_a_terminal(hostile_file: Path, tmp_path: Path) -> None:
    with tmux_terminal(tmp_path) as term:
        term.start("inspect", str(hostile_file))
        term.wait_exit(30)
        screen, title = term.screen(), term.title()
        assert term.exit_status() == 0, screen
    assert "Traceback" not in screen and "Error" not in screen
    assert TITLE not in title  # no OSC reached the terminal
    # Nothing cleared the screen: the first line (the app) is still there above the table.
    assert screen.index(printable(HEADER.target_name)) < screen.index("Top functions")
    for name in [*HOSTILE.values(), MODULE_NAME]:
        assert printable(name) in screen, name
    assert "[link=http://x]click[/link]" in screen  # a visible name, not a hidden hyperlink


@contextlib.asynccontextmanager
async def hostile_device() -> AsyncIterator[SimulatedDevice]:
    """A simulated Roku whose app, functions, files and ECP name are hostile."""
    cfg = DeviceConfig(
        run_seconds=3.0,
        runs=1,
        auto_launch=False,
        seed=3,
        app_names=SIM_NAMES,
        app_name=f"App [/] \x1b]0;{TITLE}\x07",
        name=DEVICE_NAME,
    )
    async with SimulatedDevice(cfg) as dev:
        yield dev


def watch_args(dev: SimulatedDevice, out: Path, *extra: str) -> list[str]:
    ports = ("--profiler-port", "--ecp-port", "--console-port")
    numbers = (dev.profiler_port, dev.ecp_port, dev.console_port)
    return [
        "watch",
        "127.0.0.1",
        "--out",
        str(out),
        *(str(x) for pair in zip(ports, numbers, strict=True) for x in pair),
        *extra,
    ]


async def wait_for_screen(term: Tmux, seen: str, timeout: float) -> str:
    """The screen once it shows ``seen`` (or as it is after ``timeout`` seconds)."""
    with contextlib.suppress(TimeoutError):
        await until(lambda: seen in term.screen(), timeout, step=0.1)
    return term.screen()


@needs_tmux
async def test_watch_live_view_keeps_running_and_shows_names_literally(tmp_path: Path) -> None:
    async with hostile_device() as dev:
        with tmux_terminal(tmp_path) as term:
            term.start(*watch_args(dev, tmp_path / "out", "--runs", "1", "--chunk-seconds", "1"))
            await wait_for_screen(term, "waiting", 20)
            await dev.launch()
            # While the run streams, the busiest (renamed) function is on screen, literally.
            busiest = printable(SIM_NAMES[0][1])
            live = await wait_for_screen(term, busiest, 20)
            assert busiest in live and "streaming  run 1" in live, live
            end = await wait_for_screen(term, "1 run(s) captured", 20)
            with contextlib.suppress(TimeoutError):
                await until(lambda: term.exit_status() is not None, 5, step=0.1)
            title, status = term.title(), term.exit_status()
        sent = dev.sent_bytes(0)
    assert status == 0, end
    assert "Traceback" not in end and "Error" not in end
    assert TITLE not in title
    assert printable(f"App [/] \x1b]0;{TITLE}\x07 2.4.1") in end
    assert printable(DEVICE_NAME) in end
    assert "state    stopped  (last run complete; 1 captured)" in end
    [session] = (tmp_path / "out" / "YN00AA000001").iterdir()
    assert (session / "capture.bsprof").read_bytes() == sent  # the view never held it up


@contextlib.asynccontextmanager
async def loopback_server(answer: bytes, until: bytes) -> AsyncIterator[int]:
    """A TCP server on 127.0.0.1 that reads up to ``until``, answers ``answer`` and closes."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.readuntil(until)
            writer.write(answer)
            await writer.drain()
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    async with server:
        yield server.sockets[0].getsockname()[1]


async def run_cli_async(*args: str) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "rokuprof", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.communicate()
    return proc.returncode, out.decode(), err.decode()


async def test_watch_plain_log_escapes_what_the_device_answered(tmp_path: Path) -> None:
    reason = f"\x1b]0;{TITLE}\x07[/] \x9b2J [link=http://x]x[/link]\x1b[2J"
    answer = f"HTTP/1.1 500 {reason}\r\nContent-Length: 0\r\n\r\n".encode("latin-1")
    async with loopback_server(answer, b"\r\n\r\n") as port:
        code, out, err = await run_cli_async(
            "watch", "127.0.0.1", "--out", str(tmp_path), "--profiler-port", str(port),
            "--no-ecp", "--no-console", "--duration", "1.5", "--view", "plain",
        )  # fmt: skip
    assert code == 0, err
    assert "Traceback" not in err
    assert unsafe_in(out) == [] and unsafe_in(err) == []
    assert printable(f"answered 500 {reason}") in out  # the warning line, escaped


# -- discover and control --------------------------------------------------------------------


async def cli_in_thread(*args: str) -> tuple[int, str, str]:
    """The CLI in a worker thread (it calls ``asyncio.run``) while the devices run here."""
    runner = CliRunner()
    result = await asyncio.wait_for(
        asyncio.to_thread(runner.invoke, app, list(args), env={"COLUMNS": "200"}), 30
    )
    return result.exit_code, result.stdout, result.stderr


async def test_discover_shows_a_hostile_name_literally() -> None:
    cfg = DeviceConfig(name=DEVICE_NAME, model_name="Roku [/]", auto_launch=False)
    async with SimulatedDevice(cfg) as dev:
        where = ["--bind", "127.0.0.1:0", "--target", f"127.0.0.1:{dev.ssdp_port}"]
        code, out, err = await cli_in_thread("discover", "--timeout", "0.8", *where)
        assert code == 0, err
        assert printable(DEVICE_NAME) in out and "Roku [/] 4800X" in out
        assert unsafe_in(out) == []
        code, out, err = await cli_in_thread("discover", "--json", "--timeout", "0.8", *where)
    assert code == 0, err
    assert unsafe_in(out) == []
    [row] = json.loads(out)
    assert row["name"] == DEVICE_NAME  # the exact text


async def test_control_shows_a_hostile_console_reply_as_data() -> None:
    reply = f"\x1b]0;{TITLE}\x07 [/] \x9bX\r\nsecond\tline \u202eevil\r\n> "
    control = ("control", "127.0.0.1")
    async with loopback_server(reply.encode(), b"\n") as port:
        where = ("--console-port", str(port), "--timeout", "3")
        code, out, err = await cli_in_thread(*control, "pause", *where)
        assert code == 0, err
        assert unsafe_in(out.replace("\t", "")) == []
        assert printable(f"\x1b]0;{TITLE}\x07 [/] \x9bX") in out
        assert "second\tline \\u202eevil" in out  # lines and tabs kept, the rest escaped
        code, out, err = await cli_in_thread(*control, "pause", *where, "--json")
        assert code == 0, err
        assert unsafe_in(out) == []
        assert json.loads(out)["reply"] == f"\x1b]0;{TITLE}\x07 [/] \x9bX\nsecond\tline \u202eevil"
        # A reply that is not a status is an error that quotes it: escaped there too.
        code, out, err = await cli_in_thread(*control, "status", *where)
    assert code == 1
    assert "unexpected bsprof-status reply" in err and unsafe_in(err) == []


# -- daemon logs -----------------------------------------------------------------------------


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    root.setLevel(level)


def log_hostile(fmt: str) -> str:
    out = io.StringIO()
    setup_logging(fmt, stream=out)
    log = logging.getLogger("rokuprof.test")
    name = HOSTILE["set title"] + "\nFAKE 00:00:00 INFO forged line" + HOSTILE["8-bit CSI"]
    log.warning("%s: session ended", name, extra={"device": DEVICE_NAME})
    try:
        raise RuntimeError(f"device said {HOSTILE['clear screen']}")
    except RuntimeError:
        log.exception("the capture loop failed")
    return out.getvalue()


def test_human_log_lines_carry_no_control_characters(restore_logging: None) -> None:
    text = log_hostile("human")
    assert unsafe_in(text) == []
    lines = text.splitlines()
    assert lines[0].endswith(
        "WARNING rokuprof.test: "
        + printable(HOSTILE["set title"] + "\nFAKE 00:00:00 INFO forged line")
        + printable(HOSTILE["8-bit CSI"])
        + ": session ended"
    )
    assert not any(line.startswith("FAKE") for line in lines)  # no forged line
    assert "Traceback (most recent call last):" in lines  # a traceback keeps its lines
    assert lines[-1] == "RuntimeError: device said " + printable(HOSTILE["clear screen"])


def test_json_log_lines_keep_the_exact_text(restore_logging: None) -> None:
    text = log_hostile("json")
    assert unsafe_in(text) == []
    first, second = (json.loads(line) for line in text.splitlines())
    assert first["message"].startswith(HOSTILE["set title"] + "\nFAKE")
    assert first["device"] == DEVICE_NAME
    assert second["exception"].endswith(f"RuntimeError: device said {HOSTILE['clear screen']}")
