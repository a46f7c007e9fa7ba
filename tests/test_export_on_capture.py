"""Exports written when a run ends: ``watch --export`` (a real process against the simulated
device), the daemon's ``[capture] export`` (live runs and sessions a crash left), and what a
failed export does (recorded in session.json, never failing the capture)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from daemon_helpers import Running, crash, daemon_config, finished_session, record, sessions, sim
from export_checks import check_folded, check_pprof
from waiting import until
from watch_helpers import finish, watching

from rokuprof.capture.exports import (
    ExportOutcome,
    export_finished_run,
    export_formats,
    export_session,
    output_name,
)
from rokuprof.capture.session import SessionFiles, SessionRecord
from rokuprof.daemon.config import ConfigError, build_config
from rokuprof.export import FORMATS, export, input_from_bytes
from rokuprof.simulator import DeviceConfig, SimulatedDevice

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
FILES = {"pprof": "capture.pb.gz", "folded": "capture.folded"}


def assert_exported(session: Path, formats=("pprof", "folded")) -> dict:
    """Each format's file is there, is what ``rokuprof export`` makes of the archive, and the
    offline decoders find inspect's totals in it; returns session.json's ``exports``."""
    inp = input_from_bytes((session / "capture.bsprof").read_bytes())
    rec = record(session)
    for fmt in formats:
        path = session / FILES[fmt]
        assert path.read_bytes() == export(inp, fmt), fmt
        assert rec["exports"][fmt] == {"file": FILES[fmt], "bytes": path.stat().st_size}
    check_pprof(inp)
    check_folded(inp)
    assert not [e for e in rec["errors"] if e["kind"] == "export"]
    assert not list(session.glob("*.tmp"))
    return rec["exports"]


async def test_watch_export_writes_the_formats_into_the_session(tmp_path: Path) -> None:
    cfg = DeviceConfig(run_seconds=1.0, runs=1, seed=7, speed=4.0)
    async with (
        SimulatedDevice(cfg) as dev,
        watching(dev, tmp_path, "--runs", "1", "--export", "pprof,folded") as proc,
    ):
        code, out, err = await finish(proc, 30)
    assert code == 0, err
    [session] = list((tmp_path / "YN00AA000001").iterdir())
    assert record(session)["status"] == "complete"
    assert_exported(session)
    assert "exports: capture.pb.gz (" in out and "capture.folded (" in out


async def test_watch_exports_carry_the_release_and_environment_of_the_chunks(
    tmp_path: Path,
) -> None:
    cfg = DeviceConfig(run_seconds=2.0, runs=1, seed=7, speed=4.0)
    options = ("--export", "sentry-v1", "--release", "cafe@9.9.9-lab", "--environment", "lab")
    async with (
        SimulatedDevice(cfg) as dev,
        watching(dev, tmp_path, "--runs", "1", *options) as proc,
    ):
        code, _, err = await finish(proc, 30)
    assert code == 0, err
    [session] = list((tmp_path / "YN00AA000001").iterdir())
    rec = record(session)
    assert (rec["release"], rec["environment"]) == ("cafe@9.9.9-lab", "lab")
    chunks = [json.loads(p.read_bytes()) for p in sorted((session / "chunks").glob("*.json"))]
    assert chunks and {(c["release"], c["environment"]) for c in chunks} == {
        ("cafe@9.9.9-lab", "lab")
    }
    v1 = session / output_name("capture", "sentry-v1")
    payloads = [json.loads(p.read_bytes()) for p in sorted(v1.glob("*.json"))]
    assert payloads, rec["exports"]
    assert {(p["release"], p["environment"]) for p in payloads} == {("cafe@9.9.9-lab", "lab")}


async def test_watch_export_is_byte_for_byte_what_rokuprof_export_makes(tmp_path: Path) -> None:
    """Issue 28: the files ``watch --export all`` writes when a run ends are the very bytes
    ``rokuprof export SESSION -f all`` makes of that session later, whatever chunk window the
    run was watched with (at b17a9e7, with ``--chunk-seconds 1``, 7 of the 8 formats
    differed: their timeline was laid out in one-second windows)."""
    cfg = DeviceConfig(run_seconds=2.0, runs=1, seed=7, speed=4.0)
    watched = ("--export", "all", "--chunk-seconds", "1", "--release", "cafe@9.9.9-lab")
    async with (
        SimulatedDevice(cfg) as dev,
        watching(dev, tmp_path / "out", "--runs", "1", *watched) as proc,
    ):
        code, _, err = await finish(proc, 60)
    assert code == 0, err
    [session] = list((tmp_path / "out" / "YN00AA000001").iterdir())
    offline = tmp_path / "offline"
    offline.mkdir()
    command = [sys.executable, "-m", "rokuprof", "export", str(session), "-f", "all"]
    done = await asyncio.create_subprocess_exec(
        *command,
        "-o",
        str(offline),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    _, err_bytes = await asyncio.wait_for(done.communicate(), 120)
    assert done.returncode == 0, err_bytes.decode()
    made = sorted(p.relative_to(offline) for p in offline.rglob("*") if p.is_file())
    assert len(made) >= 10  # every format, a .cpuprofile per thread, sentry-v1's three files
    for rel in made:
        assert (session / rel).read_bytes() == (offline / rel).read_bytes(), rel
    exports = record(session)["exports"]
    assert set(exports) == set(FORMATS)
    threads = sorted(str(p) for p in made if p.suffix == ".cpuprofile")
    assert sorted(exports["cpuprofile"]["files"]) == threads
    assert exports["cpuprofile"]["file"] == "capture.*.cpuprofile"


def test_watch_export_names_are_checked_before_waiting(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rokuprof.cli import app

    result = CliRunner().invoke(
        app, ["watch", "127.0.0.1", "--out", str(tmp_path / "o"), "--export", "pprof,svg"]
    )
    assert result.exit_code == 2
    assert "unknown export format 'svg'" in result.output
    assert not (tmp_path / "o").exists()


def exported(out: Path) -> bool:
    """A session whose session.json records its exports (written atomically: whole or absent)."""
    try:
        return any(record(s).get("exports") for s in sessions(out))
    except FileNotFoundError:
        return False


async def test_daemon_exports_each_finished_run(tmp_path: Path) -> None:
    out = tmp_path / "out"
    async with SimulatedDevice(sim("EXP0001", seed=4)) as dev:
        capture = {"out": str(out), "chunk_seconds": 1.0, "export": ["folded", "pprof"]}
        cfg = daemon_config(out, [dev], None, capture=capture)
        assert "exports at each run's end: folded, pprof" in cfg.summary()
        async with Running(cfg) as run:
            await until(lambda: exported(out), 20)
            assert await run.finish() == 0
    [session] = sessions(out)
    assert record(session)["status"] == "complete"
    assert list(assert_exported(session)) == ["folded", "pprof"]


async def test_daemon_exports_the_sessions_a_crash_left(tmp_path: Path) -> None:
    session = await finished_session(tmp_path)
    crash(session, keep_chunks=1)
    capture = {"out": str(tmp_path), "chunk_seconds": 1.0, "export": ["pprof", "folded"]}
    cfg = daemon_config(tmp_path, [], None, capture=capture)
    async with Running(cfg) as run:
        await until(lambda: record(session).get("exports"), 20)
        assert await run.finish() == 0
    rec = record(session)
    assert rec["status"] == "interrupted" and "recovered" in rec
    assert_exported(session)


def test_config_refuses_unknown_export_formats() -> None:
    with pytest.raises(ConfigError) as caught:
        build_config({"capture": {"export": ["pprof", "svg"], "chunk_seconds": 0}}, env={})
    errors = caught.value.errors
    assert any(e.startswith("capture.export: unknown export format 'svg'") for e in errors)
    assert any(e.startswith("capture.chunk_seconds") for e in errors)  # every problem at once
    with pytest.raises(ConfigError, match=r"capture\.export: must be a list"):
        build_config({"capture": {"export": "pprof"}}, env={})
    assert build_config({"capture": {"export": ["all"]}}, env={}).capture.export == (
        export_formats(["all"])
    )
    assert build_config({}, env={}).capture.export == ()


# -- failures are recorded, never raised ---------------------------------------------------------


def a_session(tmp_path: Path) -> Path:
    session = tmp_path / "dev" / "s1"
    session.mkdir(parents=True)
    shutil.copy(SAMPLES / "cafe-tv-cpu-only.bsprof", session / "capture.bsprof")
    return session


def test_a_format_that_cannot_be_written_leaves_the_others(tmp_path: Path) -> None:
    session = a_session(tmp_path)
    (session / "capture.pb.gz").mkdir()  # in the way of the pprof file
    outcome = export_session(session, ("pprof", "folded", "sentry-v1"))
    assert list(outcome.errors) == ["pprof"]
    assert outcome.errors["pprof"].startswith("cannot export capture.pb.gz: ")
    assert (session / "capture.folded").is_file()
    v1 = outcome.written["sentry-v1"]
    assert v1["file"] == "capture.sentry-v1" and (session / "capture.sentry-v1").is_dir()
    assert not list(session.rglob("*.tmp"))


def test_an_unreadable_archive_is_an_error_for_every_format(tmp_path: Path) -> None:
    session = tmp_path / "s"
    session.mkdir()
    outcome = export_session(session, ("pprof", "folded"))
    assert outcome.written == {}
    assert set(outcome.errors) == {"pprof", "folded"}
    assert all(m.startswith("cannot read capture.bsprof: ") for m in outcome.errors.values())


async def test_export_finished_run_records_the_outcome_in_session_json(tmp_path: Path) -> None:
    files = SessionFiles(tmp_path, "dev", 1_795_273_445.0)
    files.path.mkdir(parents=True)
    shutil.copy(SAMPLES / "cafe-tv-cpu-only.bsprof", files.path / "capture.bsprof")
    (files.path / "capture.folded").mkdir()  # folded cannot be written
    rec = SessionRecord(files.name, files.profiler_id, {"dir": "dev"}, 1_795_273_445.0)
    rec.status = "complete"
    outcome = await asyncio.wait_for(export_finished_run(files, rec, ("pprof", "folded")), 30)
    assert isinstance(outcome, ExportOutcome)
    saved = json.loads(files.session_file.read_text())
    assert saved["status"] == "complete"  # an export never changes the run's outcome
    assert saved["exports"]["pprof"]["file"] == "capture.pb.gz"
    assert saved["exports"]["folded"]["error"].startswith("cannot export capture.folded")
    assert [(e["kind"], e["format"]) for e in saved["errors"]] == [("export", "folded")]
