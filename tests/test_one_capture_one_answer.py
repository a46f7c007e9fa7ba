"""One capture, one answer (issue 19 row 1): an offline conversion is a function of the bytes
alone, whether the size is known (a file, a session directory) or not (standard input), and
whatever pieces the bytes are read in."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sentry_helpers import SAMPLES, counter_ids, synthetic_stream
from strategies import splits

from rokuprof.sentry.convert import OfflineConverter

pytestmark = pytest.mark.engine  # what the engine decodes, end to end

FULL = SAMPLES / "cafe-tv-full.bsprof"
STREAM = synthetic_stream(4.0, seed=4, rate=0.5)  # 22 KB: several slices
#: Exports whose bytes hold no random identifier.
EXACT_FORMATS = ("pprof", "speedscope", "chrome-trace", "cpuprofile", "nflxprofile", "folded")


def chunk_texts(conv: OfflineConverter) -> list[str]:
    return [c.data for c in conv.chunks()]


def reference(data: bytes, **options) -> list[str]:
    """The chunks of ``data`` fed whole, its size known in advance."""
    conv = OfflineConverter(total_bytes=len(data), new_id=counter_ids(), **options)
    conv.feed(data)
    return chunk_texts(conv)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_any_read_sizes_and_an_unknown_size_give_the_same_chunks(data):
    parts = data.draw(splits(STREAM))
    conv = OfflineConverter(new_id=counter_ids())  # size unknown, as on standard input
    for part in parts:
        conv.feed(part)
    assert chunk_texts(conv) == reference(STREAM)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.integers(2, 9), st.integers(1, 400))
def test_merging_slices_depends_on_the_bytes_only(data, max_slices, max_entries):
    """Past either bound (slices held, call paths held) neighbours merge, the same way for
    any read sizes."""
    options = {"slice_bytes": 512, "max_slices": max_slices, "max_slice_entries": max_entries}
    parts = data.draw(splits(STREAM))
    conv = OfflineConverter(new_id=counter_ids(), **options)
    for part in parts:
        conv.feed(part)
        assert conv.slices < max_slices or conv.slices == 1
    assert chunk_texts(conv) == reference(STREAM, **options)


def test_a_long_file_holds_a_bounded_number_of_slices():
    data = FULL.read_bytes()
    conv = OfflineConverter(slice_bytes=64, max_slices=100)
    conv.feed(data)
    assert conv.slices < 100 and conv.slice_bytes >= 64 * 64


def rokuprof(args: str, tmp: Path, stdin_file: Path | None = None) -> subprocess.CompletedProcess:
    """``rokuprof ARGS`` in a real process, its input piped through ``cat`` if asked."""
    command = f"{shlex.quote(sys.executable)} -m rokuprof {args}"
    if stdin_file is not None:
        command = f"cat {shlex.quote(str(stdin_file))} | {command}"
    proc = subprocess.run(
        command, shell=True, cwd=tmp, capture_output=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def chunk_files(out: Path) -> list[dict]:
    """The chunk payloads written, without their random identifiers."""
    payloads = []
    for path in sorted((out / "chunks").iterdir()):
        payload = json.loads(path.read_bytes())
        del payload["chunk_id"], payload["profiler_id"]
        payloads.append(payload)
    return payloads


def test_convert_a_file_its_session_directory_and_a_pipe_alike(tmp_path):
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes(FULL.read_bytes())
    runs = {
        "file": rokuprof(f"convert --json {FULL} --out file", tmp_path),
        "session": rokuprof(f"convert --json {session} --out session-out", tmp_path),
        "pipe": rokuprof("convert --json - --out pipe", tmp_path, stdin_file=FULL),
    }
    summaries = {}
    for name, proc in runs.items():
        summary = json.loads(proc.stdout)
        del summary["input"], summary["out"]
        summaries[name] = summary
    # Each thread's busy samples hold its busy time within one period (T = 1/101 s), so the run's
    # busy samples hold the capture's whole wall-self time (inspect's, in microseconds) within one
    # period per thread.
    totals = json.loads(rokuprof(f"inspect --json {FULL}", tmp_path).stdout)["totals"]
    threads = len(summaries["file"]["threads"])
    assert abs(summaries["file"]["busy_samples"] - totals["wall"] * 101 / 1e6) <= threads
    assert summaries["pipe"] == summaries["session"] == summaries["file"]
    file = chunk_files(tmp_path / "file")
    assert chunk_files(tmp_path / "pipe") == file
    assert chunk_files(tmp_path / "session-out") == file


def test_export_a_file_its_session_directory_and_a_pipe_alike(tmp_path):
    session = tmp_path / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes(FULL.read_bytes())
    formats = ",".join(EXACT_FORMATS)
    rokuprof(f"export {FULL} -f {formats} -o file/", tmp_path)
    rokuprof(f"export {session} -f {formats} -o session-out/", tmp_path)
    rokuprof(f"export - -f {formats} -o pipe/", tmp_path, stdin_file=FULL)

    def files(directory: str) -> dict[str, bytes]:
        return {p.name.split(".", 1)[1]: p.read_bytes() for p in (tmp_path / directory).iterdir()}

    file = files("file")
    threads = [name for name in file if name.endswith(".cpuprofile")]  # one file per thread
    assert len(threads) > 1 and len(file) == len(EXACT_FORMATS) - 1 + len(threads)
    assert files("pipe") == file
    assert files("session-out") == file
