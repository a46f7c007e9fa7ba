"""An app trace's frames in Sentry chunks, as Sentry's mobile SDKs report them: slow and frozen
frame renders and the screen's frame rate, placed on wall time by the trace's clock snapshot;
``rokuprof convert SESSION`` puts them into the chunks, which Relay's rules and vroomrs accept."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from capture_helpers import run_capture, sim
from daemon_helpers import cap_config
from trace_helpers import RENDER, TraceWriter, roku_app_trace

from rokuprof.capture.loop import DeviceCapture
from rokuprof.sentry.frame_measures import (
    FRAME_RATES,
    FROZEN_FRAMES,
    SLOW_FRAMES,
    frame_measures,
)
from rokuprof.sentry.validate import validate_chunk
from rokuprof.simulator import SimulatedDevice
from rokuprof.trace.reader import read_trace
from rokuprof.trace.summary import trace_report
from tests.viewers import vroom_v2

ROOT = Path(__file__).resolve().parent.parent


def test_missed_frames_become_slow_frame_renders_on_wall_time() -> None:
    # The app trace's clock snapshot: trace time 0 is 1,760,000,000,000 ms; it starts at 5 s.
    # Missed frames at +48 (32 ms), +130 (40 ms), +170 (26 ms): all slow, none frozen.
    measures = frame_measures(read_trace(roku_app_trace(interned=True).data()))
    start = 1_760_000_005.0
    assert [(m.name, m.unit, m.value, m.timestamp) for m in measures] == [
        (FRAME_RATES, "hz", 60, pytest.approx(start)),
        (SLOW_FRAMES, "nanosecond", 32_000_000, pytest.approx(start + 0.048)),
        (SLOW_FRAMES, "nanosecond", 40_000_000, pytest.approx(start + 0.130)),
        (SLOW_FRAMES, "nanosecond", 26_000_000, pytest.approx(start + 0.170)),
    ]


def test_a_frame_over_700_ms_is_frozen_and_without_a_clock_the_start_places_it() -> None:
    w = TraceWriter()  # no clock snapshot
    w.slice(0, 2, RENDER, "swapBuffers")
    w.slice(3, 790, RENDER, "render")
    w.slice(800, 802, RENDER, "swapBuffers")
    trace = read_trace(w.data())
    assert frame_measures(trace) == []  # nothing to place it by
    measures = frame_measures(trace, start=1000.0)
    assert [(m.name, m.value, m.timestamp) for m in measures] == [
        (FRAME_RATES, 60, 1000.0),
        (FROZEN_FRAMES, 800_000_000, 1000.0),
    ]


def _chunks(directory: Path) -> list[dict]:
    return [json.loads(p.read_bytes()) for p in sorted((directory / "chunks").glob("*.json"))]


async def test_convert_of_a_session_with_a_trace_puts_its_frames_in_the_chunks(
    tmp_path: Path,
) -> None:
    async with SimulatedDevice(sim(run_seconds=3.0, speed=1.0)) as dev:
        config = cap_config(dev, tmp_path / "out", runs=1, trace=True, chunks=False)
        capture = asyncio.ensure_future(run_capture(DeviceCapture(config), timeout=40))
        await asyncio.sleep(1.0)
        async with httpx.AsyncClient(timeout=5) as http:  # keys reach the app's slow code
            for key in ("Down", "Select", "Right", "Select"):
                assert (
                    await http.post(f"http://127.0.0.1:{dev.ecp_port}/keypress/{key}")
                ).is_success
                await asyncio.sleep(0.2)
        summary = await capture
    [session] = summary.sessions
    report = trace_report(read_trace((session.path / "trace.perfetto-trace").read_bytes()))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "rokuprof", "convert", str(session.path), "--out",
         str(tmp_path / "conv"), "--json", "--chunk-seconds", "1"],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    chunks = _chunks(tmp_path / "conv")
    values: dict[str, list] = {}
    for chunk in chunks:
        for name, m in chunk.get("measurements", {}).items():
            values.setdefault(name, []).extend(m["values"])
    missed = report["frames"]["missed"]
    assert missed > 0  # the simulated app misses frames where a key reaches slow code
    slow = values.get(SLOW_FRAMES, []) + values.get(FROZEN_FRAMES, [])
    assert len(slow) == missed == json.loads(done.stdout)["frame_measurements"] - 1
    assert [v["value"] for v in values[FRAME_RATES]] == [60]
    first, last = (
        min(c["profile"]["samples"][0]["timestamp"] for c in chunks),
        max(c["profile"]["samples"][-1]["timestamp"] for c in chunks),
    )
    assert all(first - 1 <= v["timestamp"] <= last + 1 for v in slow)  # on the run's wall time
    assert [validate_chunk(c) for c in chunks] == [[] for _ in chunks]
    with_frames = [c for c in chunks if SLOW_FRAMES in c.get("measurements", {})]
    reads = vroom_v2.read([vroom_v2.ingest(c) for c in with_frames])
    assert with_frames and [r.error for r in reads] == [None] * len(reads)


async def test_a_live_capture_s_chunks_carry_the_frames_it_missed(tmp_path: Path) -> None:
    """While the run streams, its trace is read as it is spooled: the frames it misses go into
    the chunks written during the run, on wall time, every one a frame the whole trace's
    analysis finds too."""
    async with SimulatedDevice(sim(run_seconds=4.0, speed=1.0)) as dev:
        config = cap_config(dev, tmp_path, runs=1, trace=True, chunk_seconds=0.5)
        capture = asyncio.ensure_future(run_capture(DeviceCapture(config), timeout=40))
        await asyncio.sleep(1.0)
        async with httpx.AsyncClient(timeout=5) as http:
            for key in ("Down", "Select", "Right", "Select"):
                response = await http.post(f"http://127.0.0.1:{dev.ecp_port}/keypress/{key}")
                assert response.is_success
                await asyncio.sleep(0.3)
        summary = await capture
    [session] = summary.sessions
    trace = read_trace((session.path / "trace.perfetto-trace").read_bytes())
    offset = trace.wall_offset_ns()
    assert offset is not None
    whole = {(m.name, m.value, round(m.timestamp, 6)) for m in frame_measures(trace)}
    chunks = _chunks(session.path)
    live = [
        (name, v["value"], round(v["timestamp"], 6))
        for c in chunks
        for name, m in c.get("measurements", {}).items()
        if name in (SLOW_FRAMES, FROZEN_FRAMES, FRAME_RATES)
        for v in m["values"]
    ]
    assert any(name == SLOW_FRAMES for name, _, _ in live)
    assert set(live) <= whole  # each one the analysis of the whole trace finds
    assert len(live) == len(set(live))  # none twice
    assert [validate_chunk(c) for c in chunks] == [[] for _ in chunks]
    with_frames = [c for c in chunks if SLOW_FRAMES in c.get("measurements", {})]
    reads = vroom_v2.read([vroom_v2.ingest(c) for c in with_frames])
    assert [r.error for r in reads] == [None] * len(reads)
