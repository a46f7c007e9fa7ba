"""The progress bar of reading a capture names the file as it is: a name with braces or brackets
(neither a format template nor markup to the bar) or control characters (shown as escapes), read
by ``inspect``, ``export`` and ``report`` on a real terminal (tmux)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from report_helpers import stream
from rich.console import Console
from terminal_helpers import needs_tmux, tmux_terminal

from rokuprof.cli.inputs import CaptureSource, open_capture
from rokuprof.cli.layout import load_capture
from rokuprof.cli.progress import SHOW_FROM
from rokuprof.views.text import UNSAFE

NAME = "a{b}[red]x{0}.bsprof"


def big_capture(path: Path) -> Path:
    """A capture large enough for a progress bar: a short run, then trailing bytes after its
    footer (which a reader tolerates)."""
    path.write_bytes(stream(2.0) + bytes(SHOW_FROM + (1 << 20)))
    return path


@pytest.mark.parametrize("label", [NAME, "dir/[/]x}{.bsprof", "esc\x1b[2J\x9b31m.bsprof"])
def test_the_bar_shows_the_label_literally(label):
    data = b"bsprof\0\0" + bytes(SHOW_FROM + 1)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    source = CaptureSource(label, "a", None, len(data), io.BytesIO(data[8:]), data[:8])
    fed = []
    assert source.read(fed.append, console) == len(data) == sum(map(len, fed))
    shown = out.getvalue()
    visible = label.replace("\x1b", "\\x1b").replace("\x9b", "\\x9b")
    assert f"reading {visible} " in shown
    assert "\x1b[2J" not in shown and "\x9b" not in shown


@pytest.mark.parametrize("label", [NAME, "esc\x1b[2J\x9b31m.bsprof"])
def test_the_layout_bar_of_export_report_and_diff_shows_the_label_literally(label):
    data = stream(2.0) + bytes(SHOW_FROM + 1)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=200)
    source = CaptureSource(label, "a", None, len(data), io.BytesIO(data[8:]), data[:8])
    inp = load_capture(source, console, "us")
    assert inp.timeline.last_slot() > 0  # the run was laid out
    shown = out.getvalue()
    visible = label.replace("\x1b", "\\x1b").replace("\x9b", "\\x9b")
    assert f"laying out {visible} " in shown
    assert "\x1b[2J" not in shown and "\x9b" not in shown


@needs_tmux
@pytest.mark.parametrize(
    ("args", "made"),
    [
        (["inspect"], None),
        (["export", "-f", "folded"], "a{b}[red]x{0}.folded"),
        (["report"], "a{b}[red]x{0}.report.html"),
        (["convert", "-o", "{tmp}/out"], "out/chunks/000001.json"),
    ],
)
def test_commands_read_such_a_file_on_a_terminal(tmp_path: Path, args, made) -> None:
    capture = big_capture(tmp_path / NAME)
    source = open_capture(str(capture))
    source.close()
    assert source.size >= SHOW_FROM  # large enough for the bar
    (tmp_path / "term").mkdir()
    with tmux_terminal(tmp_path / "term") as term:
        term.start(*(a.replace("{tmp}", str(tmp_path)) for a in args), str(capture))
        term.wait_exit(60)
        screen = term.screen()
        assert term.exit_status() == 0, screen
    assert "Traceback" not in screen and "Error" not in screen
    assert not UNSAFE.findall(screen.replace("\n", ""))
    if made:
        assert (tmp_path / made).stat().st_size > 0
    else:
        assert "Café TV" in screen  # inspect's table
