"""``rokuprof demo``: a simulated device captured in-process; the suggested commands work."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from rokuprof.cli import app
from rokuprof.profile.reader import ProfileReader
from rokuprof.scenario.model import parse_scenario_text
from rokuprof.sentry import validate_chunk
from rokuprof.workflows.demo import DEMO_CHUNKS, DEMO_SERIAL, demo_lines, run_demo

ROOT = Path(__file__).resolve().parents[1]
#: What a summary names as a path: absolute, a directory, or a file of a kind rokuprof writes
#: or reads (not words such as ``start/end``).
PATH_WORD = re.compile(r"^(/\S*|\S+/|\S+\.(toml|bsprof|json|html|gz))$")


async def test_run_demo_captures_one_complete_run(tmp_path: Path) -> None:
    console = Console(file=io.StringIO(), width=200)
    result = await run_demo(
        tmp_path,
        seconds=2.0,  # a window or more of data before the end-of-run flush
        chunks=replace(DEMO_CHUNKS, chunk_seconds=0.5),
        view="plain",
        console=console,
        signals=False,
    )
    [session] = result.summary.sessions
    assert session.path.parent == tmp_path / DEMO_SERIAL
    assert session.record.status == "complete" and result.device_status == "complete"
    assert result.connect_delay is not None and result.connect_delay < 1.0
    reader = ProfileReader.from_bytes((session.path / "capture.bsprof").read_bytes())
    assert reader.complete and reader.entry_count == session.record.entries
    chunks = sorted((session.path / "chunks").glob("*.json"))
    assert chunks and all(validate_chunk(json.loads(c.read_bytes())) == [] for c in chunks)
    assert json.loads(chunks[0].read_bytes())["environment"] == "demo"
    log = console.file.getvalue()
    assert "waiting for an app run" in log and "run 1 complete" in log
    text = "\n".join(demo_lines(result))
    assert str(session.path) in text and "rokuprof inspect" in text and "rokuprof convert" in text


def test_demo_command_and_the_commands_it_suggests(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    result = runner.invoke(
        app, ["demo", "--seconds", "0.6", "--chunk-seconds", "0.3"], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 0, result.stdout + result.stderr
    out = result.stdout
    assert "1 run(s) captured from YN00DEMO0001" in out
    assert "Session (complete): rokuprof-demo/YN00DEMO0001/" in out
    suggested = [line.strip() for line in out.splitlines() if line.strip().startswith("rokuprof ")]
    assert [s.split()[1] for s in suggested] == ["inspect", "report", "export", "convert"]
    for command in suggested:
        run = runner.invoke(app, shlex.split(command)[1:])
        assert run.exit_code == 0, (command, run.stdout, run.stderr)
    assert list((tmp_path / "rokuprof-converted" / "chunks").glob("*.json"))
    session = next((tmp_path / "rokuprof-demo" / "YN00DEMO0001").iterdir())
    assert (session / "capture.report.html").is_file()
    assert (session / "capture.speedscope.json").is_file() and (session / "capture.pb.gz").is_file()


async def test_run_demo_profiles_the_sample_app_through_a_scenario(tmp_path: Path) -> None:
    """The demo is `profile` of the shipped sample app: sideloaded (its manifest carries the
    profiler keys), driven by the scenario's keys, marked, ended by exit-app, reported."""
    steps = parse_scenario_text(
        'steps = [{wait = 0.5}, {mark = "browse"}, {press = "Down", repeat = 2, interval = 0.2},'
        ' {mark = "details"}, {press = "Select"}, {wait = 0.5}]',
        "test.toml",
    )
    console = Console(file=io.StringIO(), width=200)
    lines: list[str] = []
    result = await run_demo(
        tmp_path, scenario=steps, view="plain", console=console, say=lines.append, signals=False
    )
    [session] = result.summary.sessions
    record = json.loads((session.path / "session.json").read_bytes())
    assert record["status"] == "complete" and record["app"]["name"] == "rokuprof sample"
    assert [m["label"] for m in record["marks"]] == ["browse", "details"]
    assert result.keys == 3 and "installed: Install Success." in lines
    assert "app exit requested (POST /exit-app/dev)" in lines
    reader = ProfileReader.from_bytes((session.path / "capture.bsprof").read_bytes())
    assert reader.complete and reader.header.memory_ops  # DEMO_KEYS: --mem
    tables = reader.tables
    stacks = {
        tuple(tables.string(n.function_id) for n in tables.stack(p))[::-1] for p in tables.paths
    }
    assert ("onKeyEvent", "openItem", "openDetails") in {s[:3] for s in stacks}  # the Select
    assert result.report == session.path / "report.html" and result.report.stat().st_size > 0


def test_every_path_the_demo_summary_names_exists_outside_a_clone(tmp_path: Path) -> None:
    """``rokuprof demo`` run from a directory that is not the repository (as after ``pip
    install``): each path its summary names exists there (the session's files relative to the
    session), apart from the placeholders of the last line (``path/to/...``)."""
    away = tmp_path / "elsewhere"
    away.mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "demo", "--view", "plain"],
        cwd=away, env=dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="300"),
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = proc.stdout[proc.stdout.index("run(s) captured from") :]
    [session] = (away / "rokuprof-demo" / "YN00DEMO0001").iterdir()
    words = {w.strip("(),:;`'\"") for w in summary.split()}
    named = {w for w in words if PATH_WORD.match(w) and not w.startswith("path/to/")}
    assert any(w.endswith("scenario.toml") for w in named), summary
    missing = [w for w in named if not ((away / w).exists() or (session / w).exists())]
    assert missing == [], summary
