"""``rokuprof convert FILE --to sentry --out DIR`` end to end, on real files."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from sentry_helpers import SAMPLES, assert_valid, synthetic_stream
from sentry_sdk.envelope import Envelope as SdkEnvelope
from typer.testing import CliRunner

from rokuprof.cli import app
from rokuprof.cli.root import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE

runner = CliRunner()


def convert(*args: str):
    return runner.invoke(app, ["convert", *map(str, args)])


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    path = tmp_path_factory.mktemp("in") / "run.bsprof"
    path.write_bytes(synthetic_stream(75.0, seed=7, rate=0.5))
    return path


def chunk_files(out):
    return sorted((out / "chunks").iterdir())


def test_writes_numbered_valid_chunks_and_a_summary(stream, tmp_path):
    out = tmp_path / "out"
    result = convert(stream, "--to", "sentry", "--out", out)
    assert result.exit_code == EXIT_OK, result.output
    files = chunk_files(out)
    assert [f.name for f in files] == ["000001.json", "000002.json"]
    payloads = assert_valid(f.read_bytes() for f in files)
    assert len({p["chunk_id"] for p in payloads}) == 2
    assert len({p["profiler_id"] for p in payloads}) == 1
    assert "chunks: 2," in result.stdout and "threads: 4" in result.stdout
    assert "time covered" in result.stdout and "left over" in result.stdout
    assert "wrote 2 chunk file(s)" in result.stdout
    assert not list(out.rglob("*.tmp")) and not (out / "envelopes").exists()


def test_envelopes_are_readable_by_the_official_sdk(stream, tmp_path):
    out = tmp_path / "out"
    result = convert(stream, "--out", out, "--envelopes")  # --to defaults to sentry
    assert result.exit_code == EXIT_OK, result.output
    envelopes = sorted((out / "envelopes").iterdir())
    assert [e.name for e in envelopes] == ["000001.envelope", "000002.envelope"]
    for env_file, chunk_file in zip(envelopes, chunk_files(out), strict=True):
        parsed = SdkEnvelope.deserialize(env_file.read_bytes())
        (item,) = parsed.items
        assert item.type == "profile_chunk" and item.headers["platform"] == "brightscript"
        assert item.payload.get_bytes() == chunk_file.read_bytes()
        assert parsed.headers["event_id"] == json.loads(chunk_file.read_bytes())["chunk_id"]


def test_release_environment_and_window_options(stream, tmp_path):
    out = tmp_path / "out"
    result = convert(
        stream, "--out", out, "--release", "cafe@9.9", "--environment", "staging",
        "--chunk-seconds", "10",
    )  # fmt: skip
    assert result.exit_code == EXIT_OK, result.output
    payloads = assert_valid(f.read_bytes() for f in chunk_files(out))
    assert len(payloads) >= 8
    assert {(p["release"], p["environment"]) for p in payloads} == {("cafe@9.9", "staging")}
    for p in payloads:
        times = [s["timestamp"] for s in p["profile"]["samples"]]
        assert max(times) - min(times) <= 10 + 1e-6


def busy_samples(stdout: str) -> int:
    return int(re.search(r"\(([\d,]+) busy\)", stdout).group(1).replace(",", ""))


def test_wall_unit_option(stream, tmp_path):
    us = convert(stream, "--out", tmp_path / "us")
    ns = convert(stream, "--out", tmp_path / "ns", "--wall-unit", "ns")
    assert us.exit_code == ns.exit_code == EXIT_OK, ns.output
    assert "wall unit us" in us.stdout and "wall unit ns" in ns.stdout
    assert busy_samples(us.stdout) > 5000
    assert busy_samples(ns.stdout) <= busy_samples(us.stdout) / 1000 + 10


@pytest.mark.parametrize(
    ("name", "status"), [("cafe-tv-cut-short", "incomplete"), ("cafe-tv-corrupt", "corrupt")]
)
def test_incomplete_files_are_converted_and_say_so(name, status, tmp_path):
    out = tmp_path / "out"
    result = convert(SAMPLES / f"{name}.bsprof", "--out", out)
    assert result.exit_code == EXIT_INCOMPLETE, result.output
    assert status in result.stdout and "converted what was decoded" in result.stdout
    assert_valid(f.read_bytes() for f in chunk_files(out))


def test_unreadable_file_is_a_usage_error(tmp_path):
    result = convert(tmp_path / "missing.bsprof", "--out", tmp_path / "out")
    assert result.exit_code == EXIT_USAGE
    assert "cannot read" in result.stderr
    result = convert(tmp_path, "--out", tmp_path / "out")  # a directory
    assert result.exit_code == EXIT_USAGE


@pytest.mark.parametrize(
    "args",
    [
        ["--to", "pprof"],
        ["--wall-unit", "minutes"],
        ["--chunk-seconds", "61"],
        ["--environment", "a/b"],
    ],
)
def test_bad_options_are_usage_errors(stream, tmp_path, args):
    result = convert(stream, "--out", tmp_path / "out", *args)
    assert result.exit_code == EXIT_USAGE
    assert not (tmp_path / "out" / "chunks").exists() or not chunk_files(tmp_path / "out")


def test_unknown_format_is_named_clearly(stream, tmp_path):
    result = convert(stream, "--out", tmp_path / "out", "--to", "pprof")
    assert "pprof" in result.output and "sentry" in result.output


def test_existing_output_needs_force(stream, tmp_path):
    out = tmp_path / "out"
    assert convert(stream, "--out", out, "--chunk-seconds", "10").exit_code == EXIT_OK
    many = len(chunk_files(out))
    result = convert(stream, "--out", out)
    assert result.exit_code == EXIT_USAGE and "--force" in result.stderr
    assert len(chunk_files(out)) == many  # untouched
    result = convert(stream, "--out", out, "--force")
    assert result.exit_code == EXIT_OK
    assert [f.name for f in chunk_files(out)] == ["000001.json", "000002.json"]  # no stale ones


def test_output_path_that_is_a_file(stream, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    result = convert(stream, "--out", target)
    assert result.exit_code == EXIT_USAGE and "not a directory" in result.stderr


def test_installed_entry_point_runs_convert(tmp_path):
    """The real console entry point, in a subprocess (no progress bar: not a terminal)."""
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "convert", str(SAMPLES / "cafe-tv-full.bsprof"),
         "--out", str(out)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == EXIT_OK, proc.stderr
    assert "chunks: 1," in proc.stdout and proc.stderr == ""
    assert_valid(f.read_bytes() for f in chunk_files(out))


def test_unwritable_output_fails_cleanly(stream, tmp_path):
    out = tmp_path / "out"
    (out / "chunks").mkdir(parents=True)
    (out / "chunks" / "000001.json.tmp").mkdir()  # in the way of the first chunk's write
    result = convert(stream, "--out", out)
    assert result.exit_code == 1 and "cannot write" in result.stderr


def test_no_chunk_at_all_is_exit_3_with_the_reason(tmp_path):
    """`--wall-unit ns` turns a 10 s run's wall time into a few milliseconds, not one sample on
    any thread: no chunk, and say so. (The 45 s sample capture read so still makes 8 samples,
    since busy time is conserved per thread: a chunk.)"""
    source = tmp_path / "short.bsprof"
    source.write_bytes(synthetic_stream(10.0, seed=7, rate=0.5))
    result = runner.invoke(
        app, ["convert", str(source), "-o", str(tmp_path / "out"), "--wall-unit", "ns"]
    )
    assert result.exit_code == EXIT_INCOMPLETE
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: no chunk was produced") and "--wall-unit ns" in line


@pytest.mark.parametrize("content", [b"", b"hello, not a profile\n", bytes(range(256))])
def test_not_a_bsprof_creates_nothing(tmp_path, content):
    source = tmp_path / "in.bsprof"
    source.write_bytes(content)
    out = tmp_path / "out"
    result = runner.invoke(app, ["convert", str(source), "-o", str(out)])
    assert result.exit_code == EXIT_USAGE and not out.exists()
    (line,) = result.stderr.splitlines()
    assert "not a .bsprof file" in line


def test_an_unwritable_subdirectory_fails_before_anything_is_written(tmp_path):
    """A file where DIR/envelopes should be: exit 2 at once, naming that path; no chunk written."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "envelopes").write_text("in the way")
    result = runner.invoke(
        app, ["convert", str(SAMPLES / "cafe-tv-full.bsprof"), "-o", str(out), "--envelopes"]
    )
    assert result.exit_code == EXIT_USAGE
    assert f"{out / 'envelopes'} exists and is not a directory" in result.stderr
    assert not list(out.glob("chunks/*.json"))


def test_json_summary_and_session_directory_input(tmp_path):
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes((SAMPLES / "cafe-tv-full.bsprof").read_bytes())
    result = runner.invoke(app, ["convert", str(session), "-o", str(tmp_path / "out"), "-j"])
    assert result.exit_code == EXIT_OK
    report = json.loads(result.stdout)
    assert report["status"] == "complete" and report["chunk_files"] == report["chunks"] > 0
    assert len(list((tmp_path / "out" / "chunks").glob("*.json"))) == report["chunks"]
