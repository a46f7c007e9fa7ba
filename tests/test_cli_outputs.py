"""Where the viewers' commands put what they make, run as a user runs them (processes, a real
terminal): ``report -o DIR`` names its page as ``export -o DIR`` does, and a binary export is
never written to a terminal (issue 28 item 7)."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from terminal_helpers import needs_tmux, tmux_terminal

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "samples" / "cafe-tv-full.bsprof"


def rokuprof(*args: object, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", *map(str, args)],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
        stdout=stdout,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )


def test_report_into_a_directory_is_named_as_export_names_it(tmp_path):
    """``report -o DIR`` was refused ("it is a directory") at b17a9e7 while ``export -o DIR``
    wrote ``DIR/<stem><suffix>``: both now write ``DIR/cafe-tv-full.report.html``, the same
    page; a session directory's page is ``DIR/capture.report.html``."""
    by_report, by_export = tmp_path / "r", tmp_path / "e"
    by_report.mkdir()
    by_export.mkdir()
    done = rokuprof("report", SAMPLE, "-o", by_report)
    assert done.returncode == 0, done.stderr.decode()
    assert rokuprof("export", SAMPLE, "-f", "report", "-o", by_export).returncode == 0
    assert [p.name for p in by_report.iterdir()] == ["cafe-tv-full.report.html"]
    assert [p.name for p in by_export.iterdir()] == ["cafe-tv-full.report.html"]
    page = (by_report / "cafe-tv-full.report.html").read_bytes()
    assert page == (by_export / "cafe-tv-full.report.html").read_bytes()
    assert f"report: {by_report / 'cafe-tv-full.report.html'}" in done.stdout.decode()

    session = tmp_path / "session"
    session.mkdir()
    shutil.copy(SAMPLE, session / "capture.bsprof")
    assert rokuprof("report", session, "-o", by_report).returncode == 0
    assert sorted(p.name for p in by_report.iterdir()) == [
        "cafe-tv-full.report.html",
        "capture.report.html",
    ]


@needs_tmux
@pytest.mark.parametrize(("fmt", "suffix"), [("pprof", ".pb.gz"), ("nflxprofile", ".nflxprofile")])
def test_a_binary_export_is_not_written_to_a_terminal(tmp_path, fmt, suffix):
    """``export -f pprof -o -`` on a terminal: one line saying why and what to do, exit status 2
    (bad usage, nothing written), none of the file's bytes on the screen (b17a9e7 wrote the
    gzip stream to the terminal). Redirected, the same command writes the file."""
    (tmp_path / "term").mkdir()
    with tmux_terminal(tmp_path / "term") as term:
        term.start("export", str(SAMPLE), "-f", fmt, "-o", "-")
        term.wait_exit(60)
        screen = term.screen()
        assert term.exit_status() == 2, screen
    assert f"error: {fmt} is binary: not written to a terminal" in screen
    assert f"> profile{suffix}" in screen
    assert "\ufffd" not in screen and len(screen.strip().splitlines()) <= 3, screen
    with (tmp_path / f"out{suffix}").open("wb") as out:
        assert rokuprof("export", SAMPLE, "-f", fmt, "-o", "-", stdout=out).returncode == 0
    data = (tmp_path / f"out{suffix}").read_bytes()
    assert gzip.decompress(data) if fmt == "pprof" else data
