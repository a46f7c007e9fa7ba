"""``rokuprof inspect`` end to end: report figures worked out by hand, exit statuses, views."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import (
    ALLOC,
    CALLS,
    CPU,
    FREE,
    FREE_REALLOC,
    MEMORY,
    MODULE,
    PATH,
    STRING,
    Footer,
    Header,
)
from rokuprof.cli import app

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
HEADER = Header(
    major=1, minor=2, patch=3, header_size=0, requested_sample_ratio=0.5,
    actual_sample_ratio=1.0, line_data=True, memory_ops=True, start_ms=1_700_000_000_000,
    target_name="Fib Ünïcode", supplemental="", target_version="1.0.0", vendor="Roku",
    model="3930X", firmware="12.0.0",
)  # fmt: skip
# Main -> fib -> fib (recursion) and Main -> draw.
ENTRIES = [
    (STRING, 1, "main"),
    (STRING, 2, "pkg:/source/main.brs"),
    (STRING, 3, "Main"),
    (STRING, 4, "fib"),
    (STRING, 5, "draw"),
    (MODULE, 1, 1),
    (PATH, 1, 0, 1, 0, 2, 1, 3),
    (PATH, 2, 1, 0, 4, 2, 20, 4),
    (PATH, 3, 2, 0, 2, 2, 20, 4),
    (PATH, 4, 1, 0, 6, 2, 40, 5),
    (CPU, 1, 1, 10, 100),
    (CPU, 2, 3, 20, 200),
    (CPU, 3, 3, 30, 300),
    (CPU, 4, 1, 5, 50),
    (CPU, 4, 2, 5, 50),
    (CALLS, 1, 1),
    (CALLS, 2, 3),
    (CALLS, 3, 5),
    (CALLS, 4, 2),
    (MEMORY, 4, ALLOC, 1, 0x1000, 64),
    (MEMORY, 4, ALLOC, 1, 0x2000, 32),
    (MEMORY, 1, FREE, 1, 0x1000, 0),
    (MEMORY, 1, FREE, 1, 0x9999, 0),  # never allocated: counted, not an error
    (MEMORY, 2, FREE_REALLOC, 2, 0x2000, 0),
    (MEMORY, 2, ALLOC, 2, 0x3000, 128),
]
FOOTER = Footer(1_700_000_012_500)
runner = CliRunner()


@pytest.fixture
def complete_file(tmp_path):
    path = tmp_path / "fib.bsprof"
    path.write_bytes(build_stream(HEADER, ENTRIES, FOOTER, pad_to=80))
    return path


def inspect_json(path, *args):
    result = runner.invoke(app, ["inspect", str(path), "--json", *args])
    return result.exit_code, json.loads(result.stdout)


def test_json_report_of_a_complete_file(complete_file):
    code, report = inspect_json(complete_file)
    assert code == 0
    assert report["complete"] is True and report["error"] is None
    assert report["header"] == {
        "major": 1, "minor": 2, "patch": 3, "header_size": 80, "requested_sample_ratio": 0.5,
        "actual_sample_ratio": 1.0, "line_data": True, "memory_ops": True,
        "start_ms": 1_700_000_000_000, "target_name": "Fib Ünïcode", "supplemental": "",
        "target_version": "1.0.0", "vendor": "Roku", "model": "3930X", "firmware": "12.0.0",
    }  # fmt: skip
    assert report["footer"]["end_ms"] == 1_700_000_012_500
    totals = report["totals"]
    assert totals | {} == totals  # a dict
    expected = {
        "entries": len(ENTRIES), "strings": 5, "modules": 1, "paths": 4,
        "cpu": 70, "wall": 700, "calls": 11, "alloc_count": 3, "alloc_bytes": 224,
        "free_count": 2, "free_realloc_count": 1, "live_bytes": 128, "live_count": 1,
    }  # fmt: skip
    assert {k: totals[k] for k in expected} == expected
    assert report["functions"] == [
        # fib: self from paths 2 and 3; total counts path 3 once although fib recurses there.
        {"module": "main", "function": "fib", "file": "pkg:/source/main.brs",
         "self_cpu": 50, "self_wall": 500, "total_cpu": 50, "total_wall": 500, "calls": 8},
        # Main and draw tie on self wall; Main (more total) comes first.
        {"module": "main", "function": "Main", "file": "pkg:/source/main.brs",
         "self_cpu": 10, "self_wall": 100, "total_cpu": 70, "total_wall": 700, "calls": 1},
        {"module": "main", "function": "draw", "file": "pkg:/source/main.brs",
         "self_cpu": 10, "self_wall": 100, "total_cpu": 10, "total_wall": 100, "calls": 2},
    ]  # fmt: skip
    [leak] = report["leak_sites"]
    assert (leak["count"], leak["bytes"], leak["stack"]) == (1, 128, ["fib", "Main"])


def test_top_limits_functions(complete_file):
    code, report = inspect_json(complete_file, "--top", "1")
    assert code == 0 and [f["function"] for f in report["functions"]] == ["fib"]


def test_human_view(complete_file):
    result = runner.invoke(app, ["inspect", str(complete_file)], env={"COLUMNS": "160"})
    assert result.exit_code == 0
    out = result.stdout
    assert "Fib Ünïcode 1.0.0" in out and "format 1.2.3" in out
    assert "duration 12.50 s" in out and "complete" in out
    assert "fib ← Main" in out  # the leak site's call path
    assert out.index("fib") < out.index("draw")


@pytest.mark.parametrize(
    ("unit", "total", "fib"), [("us", "0.7 ms", "0.5 ms"), ("ms", "700.0 ms", "500.0 ms")]
)
def test_wall_unit_option(complete_file, unit, total, fib):
    """``--wall-unit`` as in convert: the times shown read the counters in it (JSON keeps them)."""
    result = runner.invoke(
        app, ["inspect", str(complete_file), "--wall-unit", unit], env={"COLUMNS": "160"}
    )
    assert result.exit_code == 0
    assert f"wall (self, all threads)  {total}" in result.stdout
    assert re.search(rf"│ fib\W+main\W+{re.escape(fib)} │", result.stdout), result.stdout
    assert inspect_json(complete_file, "--wall-unit", unit) == inspect_json(complete_file)
    assert (
        runner.invoke(app, ["inspect", str(complete_file), "--wall-unit", "minutes"]).exit_code == 2
    )


@pytest.mark.parametrize("cut", [5, 60, 81, 150, -3, -1])
def test_cut_file_reports_partial_results_with_exit_3(tmp_path, cut):
    data = build_stream(HEADER, ENTRIES, FOOTER, pad_to=80)
    path = tmp_path / "cut.bsprof"
    path.write_bytes(data[:cut])
    code, report = inspect_json(path)
    assert code == 3
    assert report["complete"] is False and report["error"] is None
    assert report["problem"].startswith("incomplete")
    if cut > 80:  # past the header: it is reported, with every whole entry before the cut
        assert report["header"]["target_name"] == "Fib Ünïcode"
        whole = [
            e
            for e in range(len(ENTRIES) + 1)
            if len(build_stream(HEADER, ENTRIES[:e], end=False, pad_to=80)) <= len(data[:cut])
        ]
        assert report["totals"]["entries"] == max(whole)


def test_corrupt_file_names_offset_and_keeps_what_came_before(tmp_path):
    good = build_stream(HEADER, ENTRIES[:12], end=False, pad_to=80)
    path = tmp_path / "bad.bsprof"
    path.write_bytes(good + b"\x07" + build_stream(HEADER, ENTRIES[12:], FOOTER)[80:])
    code, report = inspect_json(path)
    assert code == 3
    assert report["error"]["offset"] == len(good)
    assert "unknown entry type 7" in report["error"]["message"]
    assert report["totals"]["entries"] == 12
    human = runner.invoke(app, ["inspect", str(path)]).stdout
    assert f"corrupt at byte {len(good)}: unknown entry type 7" in human


@pytest.mark.parametrize(
    ("content", "why"),
    [(b"hello", "it starts with 'hello'"), (b"", "it is empty"), (os.urandom(64), "")],
)
def test_not_a_bsprof_file_is_one_line_and_exit_2(tmp_path, content, why):
    """Text, an empty file or random bytes: no table of zeros, one line naming the file."""
    path = tmp_path / "notes.txt"
    path.write_bytes(b"x" + content[1:] if content[:1] == b"b" else content)
    result = runner.invoke(app, ["inspect", str(path), "--json"])
    assert result.exit_code == 2 and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and f"{path} is not a .bsprof file" in lines[0] and why in lines[0]


@pytest.mark.parametrize(
    ("make", "message"),
    [(lambda p: p / "missing.bsprof", "cannot read"), (lambda p: p, "not a session")],
)
def test_unreadable_file_exits_2(tmp_path, make, message):
    result = runner.invoke(app, ["inspect", str(make(tmp_path))])
    assert result.exit_code == 2
    assert message in result.stderr


def test_session_directory_and_standard_input(tmp_path):
    """A session directory (what watch writes) and `-` read the same capture as the file."""
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes((SAMPLES / "cafe-tv-full.bsprof").read_bytes())
    by_file = runner.invoke(app, ["inspect", str(SAMPLES / "cafe-tv-full.bsprof"), "-j"])
    by_dir = runner.invoke(app, ["inspect", str(session), "-j"])
    assert by_file.exit_code == by_dir.exit_code == 0
    assert json.loads(by_dir.stdout) == json.loads(by_file.stdout)
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", "-", "--json"],
        input=(SAMPLES / "cafe-tv-full.bsprof").read_bytes(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == json.loads(by_file.stdout)


@pytest.mark.parametrize(
    ("head", "shown"),
    [
        (b"bsprof\x01\x00", "'bsprof\\x01\\x00'"),
        (b"bsprof12", "'bsprof12'"),
        (b"bsprof\x1b[2J", "'bsprof\\x1b['"),
    ],
)
def test_a_file_starting_with_bsprof_but_not_the_magic_names_both(tmp_path, head, shown):
    """``bsprof`` followed by anything but two zero bytes: the one line names the eight bytes
    found and the eight expected, escaped (no terminal control reaches the terminal)."""
    path = tmp_path / "almost.bsprof"
    path.write_bytes(head + b"rest of a file")
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", str(path)],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and proc.stdout == b""
    line = proc.stderr.decode()
    assert line.count("\n") == 1 and "\x1b" not in line
    assert f"{path} is not a .bsprof file" in line
    assert f"it starts with {shown}" in line
    assert "a .bsprof file with 'bsprof\\x00\\x00'" in line


def test_bad_usage_exits_2():
    assert runner.invoke(app, ["inspect", "x", "--top", "-1"]).exit_code == 2


def test_module_entry_point_and_sample_outputs_are_current():
    """``python -m rokuprof`` works, and a committed sample's JSON matches a fresh run."""
    sample = SAMPLES / "cafe-tv-cut-short.bsprof"
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", str(sample), "--json"],
        capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 3
    committed = (SAMPLES / "cafe-tv-cut-short.inspect.json").read_text()
    assert json.loads(proc.stdout) == json.loads(committed)


@pytest.mark.parametrize(("columns", "shown"), [(80, False), (160, True)])
def test_narrow_terminals_drop_columns_instead_of_folding_names(complete_file, columns, shown):
    env = {"COLUMNS": str(columns), "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}  # a terminal to rich
    out = runner.invoke(app, ["inspect", str(complete_file)], env=env).stdout
    out = re.sub("\x1b\\[[0-9;]*m", "", out)  # bold and italic stay on a terminal
    assert max(len(line) for line in out.splitlines()) <= columns
    header = next(line for line in out.splitlines() if "function" in line and "module" in line)
    assert ("file" in header) is shown and ("self CPU" in header) is shown
    assert all(name in out for name in ("fib", "Main", "draw"))


def test_a_pipe_gets_every_column_whatever_the_terminal_width(tmp_path):
    """``inspect FILE > out.txt``: no 80-column layout, no dropped column, nothing wrapped."""
    sample = SAMPLES / "cafe-tv-full.bsprof"
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", str(sample)],
        capture_output=True, timeout=60, check=False, env={**os.environ, "COLUMNS": "80"},
    )  # fmt: skip
    assert proc.returncode == 0
    lines = proc.stdout.decode().splitlines()
    header = next(line for line in lines if "function" in line and "module" in line)
    for column in ("self %", "self CPU", "file", "total wall", "calls"):
        assert column in header
    assert (
        max(map(len, lines)) > 80
        and "pkg:/components/tasks/ContentLoaderTask.brs" in proc.stdout.decode()
    )
    assert "\x1b[" not in proc.stdout.decode()  # no colour codes in a file
