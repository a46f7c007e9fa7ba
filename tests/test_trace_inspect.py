"""``rokuprof inspect`` of a Perfetto app trace, as a process: the trace recognised by its
content, a session directory's trace with ``--trace``, the text and JSON forms, and the exit
status of a trace cut short."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from trace_helpers import roku_app_trace

ROOT = Path(__file__).resolve().parent.parent


def _inspect(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100")
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", "inspect", *args],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip


def test_a_trace_file_is_recognised_by_its_content(tmp_path: Path) -> None:
    path = tmp_path / "whatever.bin"
    path.write_bytes(roku_app_trace(interned=True).data())
    done = _inspect(str(path), "--json")
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout)
    assert r["kind"] == "perfetto-trace"
    assert r["frames"]["missed"] == 3
    assert r["threads"] == ["RenderThr:Main", "TN:ContentTask", "BrightScript"]
    text = _inspect(str(path))
    assert text.returncode == 0, text.stderr
    assert "10 swaps, 4 of 9 intervals over 16.7 ms, 3 missed" in text.stdout
    assert "slow render" in text.stdout and "TN:ContentTask" in text.stdout
    assert "outermost 10.000 ms (all nested 15.000 ms), deepest cascade 3" in text.stdout


def test_a_session_directory_s_trace_with_the_trace_option(tmp_path: Path) -> None:
    (tmp_path / "trace.perfetto-trace").write_bytes(roku_app_trace(interned=False).data())
    done = _inspect(str(tmp_path), "--trace", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["observers"]["max_depth"] == 3
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = _inspect(str(empty), "--trace")
    assert missing.returncode == 2
    assert "has no trace.perfetto-trace (no app trace was captured)" in missing.stderr


def test_a_trace_cut_short_exits_3_with_what_was_read(tmp_path: Path) -> None:
    data = roku_app_trace(interned=False).data()
    path = tmp_path / "cut.perfetto-trace"
    path.write_bytes(data[:-5])
    done = _inspect(str(path), "--json")
    assert done.returncode == 3
    r = json.loads(done.stdout)
    assert not r["complete"]
    assert "ends inside a packet" in r["problems"][0]
    assert r["frames"]["frames"] == 10


def test_device_text_in_a_trace_is_shown_as_data(tmp_path: Path) -> None:
    from trace_helpers import MAIN, TraceWriter

    w = TraceWriter()
    w.thread(MAIN, 1, "evil\x1b]0;title\x07[red]x")
    w.slice(0, 5, MAIN, "ExecBrightScript", args={"callstack": "f\x1b[2J pkg:/a.brs:1"})
    path = tmp_path / "t.perfetto-trace"
    path.write_bytes(w.data())
    done = _inspect(str(path))
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout
    assert "[red]x" in done.stdout  # not taken as markup


def test_not_a_capture_nor_a_trace_names_both(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(b"hello")
    done = _inspect(str(path))
    assert done.returncode == 2
    assert "a Perfetto trace with '\\x0a'" in done.stderr
