"""``rokuprof export INPUT --format F[,F...] [-o PATH|DIR]`` end to end, on real files, standard
input and session directories (a subprocess where a real pipe matters)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from export_checks import LOUD_FOLDED, loud_capture
from sentry_sdk.envelope import Envelope as SdkEnvelope
from typer.testing import CliRunner

from rokuprof.bsprof.decoder import Decoder
from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import Footer
from rokuprof.cli import app
from rokuprof.cli.inputs import CAPTURE_FILE
from rokuprof.cli.root import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE
from rokuprof.export import FORMATS, export, export_parts, input_from_bytes
from rokuprof.sentry.validate_v1 import validate_profile_v1

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "samples"
FULL = SAMPLES / "cafe-tv-full.bsprof"
runner = CliRunner()


def run(*args: object):
    return runner.invoke(app, ["export", *map(str, args)])


def test_every_format_into_a_directory(tmp_path):
    result = run(FULL, "--format", "all", "-o", tmp_path)
    assert result.exit_code == EXIT_OK, result.output
    inp = input_from_bytes(FULL.read_bytes())
    for name, info in FORMATS.items():
        target = tmp_path / f"cafe-tv-full{info.suffix}"
        if info.per_thread:
            for part, data in export_parts(inp, name).items():
                assert (tmp_path / f"cafe-tv-full.{part}{info.suffix}").read_bytes() == data
            assert f"{name}: {tmp_path / f'cafe-tv-full.*{info.suffix}'}" in result.stdout
            assert not target.exists()
            continue
        assert target.exists(), name
        assert f"{name}: {target}" in result.stdout
        if not info.multi_file:
            assert target.read_bytes() == export(inp, name)
    assert gzip.decompress((tmp_path / "cafe-tv-full.pb.gz").read_bytes())
    v1 = sorted((tmp_path / "cafe-tv-full.sentry-v1").iterdir())
    assert v1 and len(v1) % 3 == 0
    for path in v1:
        if path.name.endswith(".profile.json"):
            assert validate_profile_v1(path.read_bytes()) == []
        if path.suffix == ".envelope":
            items = SdkEnvelope.deserialize(path.read_bytes()).items
            assert [i.headers.get("type") for i in items] == ["transaction", "profile"]
    assert not list(tmp_path.rglob("*.tmp"))


def test_one_format_to_a_file_and_default_next_to_the_input(tmp_path):
    target = tmp_path / "x.json"
    result = run(FULL, "-f", "speedscope", "-o", target)
    assert result.exit_code == EXIT_OK, result.output
    assert json.loads(target.read_bytes())["$schema"].startswith("https://www.speedscope.app")
    copy = tmp_path / "run.bsprof"
    shutil.copy(FULL, copy)
    result = run(copy, "-f", "folded,pprof", "--metric", "cpu")
    assert result.exit_code == EXIT_OK, result.output
    assert (tmp_path / "run.cpu.folded").exists() and (tmp_path / "run.pb.gz").exists()


def test_a_session_directory_exports_its_capture_inside_it(tmp_path):
    session = tmp_path / "session"
    session.mkdir()
    shutil.copy(FULL, session / CAPTURE_FILE)
    result = run(session, "-f", "cpuprofile")
    assert result.exit_code == EXIT_OK, result.output
    threads = {"main", "HomeScene", "ContentLoaderTask", "VideoPlayerTask"}
    assert {p.name for p in session.glob("*.cpuprofile")} == {
        f"capture.{t}.cpuprofile" for t in threads
    }


@pytest.mark.parametrize("name", ["cafe-tv-cut-short", "cafe-tv-corrupt"])
def test_cut_short_or_corrupt_exports_what_was_read_and_says_so(tmp_path, name):
    result = run(SAMPLES / f"{name}.bsprof", "-f", "pprof,nflxprofile", "-o", tmp_path)
    assert result.exit_code == EXIT_INCOMPLETE
    assert (tmp_path / f"{name}.pb.gz").stat().st_size > 100
    assert (tmp_path / f"{name}.nflxprofile").stat().st_size > 100
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "exported what was read" in lines[0]
    assert ("corrupt" if "corrupt" in name else "incomplete") in lines[0]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d / "missing.bsprof", "cannot read"),
        (
            lambda d: (d / "x.txt").write_text("hello, not a profile") and d / "x.txt",
            "not a .bsprof",
        ),
        (lambda d: d, "without a capture.bsprof"),
    ],
)
def test_bad_inputs_exit_2_and_write_nothing(tmp_path, make, message):
    source = make(tmp_path)
    out = tmp_path / "out"
    result = run(source, "-f", "all", "-o", out)
    assert result.exit_code == EXIT_USAGE
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_unknown_format_and_metric_are_usage_errors(tmp_path):
    assert run(FULL, "-f", "pprof,svg", "-o", tmp_path).exit_code == EXIT_USAGE
    assert run(FULL, "-f", "folded", "--metric", "joules", "-o", tmp_path).exit_code == EXIT_USAGE
    assert run(FULL, "-f", "pprof,folded", "-o", "-").exit_code == EXIT_USAGE
    assert list(tmp_path.iterdir()) == []


def test_standard_input_to_standard_output_in_a_real_pipe(tmp_path):
    """``cat run.bsprof | rokuprof export - -f folded -o -``: only the folded stacks on stdout,
    nothing on stderr (no progress in a pipe)."""
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "export", "-", "-f", "folded", "-o", "-"],
        input=FULL.read_bytes(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stderr == b""
    assert proc.stdout == export(input_from_bytes(FULL.read_bytes()), "folded")


def test_folded_to_a_terminal_or_a_file_has_no_control_bytes(tmp_path):
    """``export -f folded -o -`` of names full of escape sequences: each control character is
    written as \\xNN (at 0e83a1a the bytes went to the terminal as they came)."""
    capture = loud_capture(tmp_path / "loud.bsprof")
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "export", str(capture), "-f", "folded", "-o", "-"],
        capture_output=True,
        timeout=60,
        check=False,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == EXIT_OK, proc.stderr
    text = proc.stdout.decode("utf-8")
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f]", text), repr(text)
    assert text.splitlines() == LOUD_FOLDED
    assert run(capture, "-f", "folded", "-o", tmp_path).exit_code == EXIT_OK  # a file: the same
    assert (tmp_path / "loud.folded").read_text() == text


def test_standard_input_that_is_not_a_capture_is_refused(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "export", "-", "-f", "pprof", "-o", str(tmp_path)],
        input=b"GET / HTTP/1.1\r\n\r\n",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == EXIT_USAGE
    assert b"standard input is not a .bsprof" in proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_sentry_v1_replaces_an_earlier_export(tmp_path):
    stale = tmp_path / "cafe-tv-full.sentry-v1" / "000099.envelope"
    stale.parent.mkdir()
    stale.write_bytes(b"old")
    (stale.parent / "notes.txt").write_text("mine")
    assert run(FULL, "-f", "sentry-v1", "-o", tmp_path).exit_code == EXIT_OK
    assert not stale.exists() and (stale.parent / "notes.txt").exists()


def test_sentry_v1_names_the_profiles_sentry_would_refuse(tmp_path):
    """A run dated after the year 9999 has no RFC 3339 timestamp: Relay would refuse its V1
    profiles, so they are left out and the summary line says which and why."""
    data = SAMPLES / "cafe-tv-cpu-only.bsprof"
    decoder = Decoder()
    entries = list(decoder.feed(data.read_bytes()))
    shift = 300_000_000_000_000 - decoder.header.start_ms
    header = dataclasses.replace(decoder.header, start_ms=decoder.header.start_ms + shift)
    far = tmp_path / "far.bsprof"
    far.write_bytes(build_stream(header, entries, Footer(decoder.footer.end_ms + shift)))
    result = run(far, "-f", "sentry-v1,folded", "-o", tmp_path)
    assert result.exit_code == EXIT_OK, result.output
    line = next(x for x in result.stdout.splitlines() if x.startswith("sentry-v1:"))
    assert "(0 bytes); profile 000001 left out (Relay would refuse it: timestamp" in line
    assert "; profile 000002 left out" in line
    assert list((tmp_path / "far.sentry-v1").iterdir()) == []
    folded = next(x for x in result.stdout.splitlines() if x.startswith("folded:"))
    assert folded.endswith("bytes)")  # nothing left out: no note


def test_sentry_v1_summary_has_no_note_when_sentry_gets_everything(tmp_path):
    result = run(FULL, "-f", "sentry-v1", "-o", tmp_path)
    assert result.exit_code == EXIT_OK, result.output
    (line,) = result.stdout.splitlines()
    assert line.startswith("sentry-v1:") and line.endswith("bytes)")
