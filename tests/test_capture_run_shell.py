"""The run machine's asyncio shell (rokuprof/capture/run.py) with a scripted device stream:
bytes are archived inside the delivery callback, stops carry their cause, a cancelled run
still writes its record, an answer that is not a profile leaves no session."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from device_script import ScriptedStream

from rokuprof.capture.chunks import sentry_sink_factory
from rokuprof.capture.config import CaptureConfig
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.capture.run import NoData, RunCapture
from rokuprof.capture.signals import StopRequest
from rokuprof.capture.status import CaptureStatus, NullObserver
from rokuprof.capture.stop import StopCause
from rokuprof.device.errors import HttpStatusError
from rokuprof.sentry import ChunkSettings

DATA = (Path(__file__).resolve().parent.parent / "samples" / "cafe-tv-cpu-only.bsprof").read_bytes()


async def identify():
    return "DEV1", {"dir": "DEV1", "host": "127.0.0.1"}


def capture(tmp_path: Path, stream: ScriptedStream, stop=None) -> RunCapture:
    stream.archive = tmp_path
    settings = CaptureConfig(
        host="127.0.0.1",
        out=tmp_path,
        chunk_settings=ChunkSettings(chunk_seconds=1.0),
        archive_limits=ArchiveLimits(min_free_bytes=0),
    )
    return RunCapture(
        stream,
        settings,
        CaptureStatus(host="127.0.0.1"),
        NullObserver(),
        stop or asyncio.Event(),
        identify=identify,
        sink_factory=sentry_sink_factory(ChunkSettings(chunk_seconds=1.0)),
    )


def pieces(data: bytes, n: int, delay: float = 0.0) -> list:
    size = -(-len(data) // n)
    return [(delay, data[i : i + size]) for i in range(0, len(data), size)]


async def test_every_byte_is_in_the_archive_before_the_callback_returns(tmp_path: Path) -> None:
    stream = ScriptedStream(pieces(DATA, 7))
    record, path = await capture(tmp_path, stream).run()
    sizes = [len(b"".join(d for _, d in stream.script[: i + 1])) for i in range(7)]
    assert stream.archive_after_callback == sizes
    assert (path / "capture.bsprof").read_bytes() == DATA
    assert record.status == "complete" and json.loads((path / "session.json").read_text())


async def test_a_stop_is_recorded_with_its_cause(tmp_path: Path) -> None:
    stop = StopRequest()
    stream = ScriptedStream(pieces(DATA[:6000], 3, 0.05), hold=True)
    run = asyncio.create_task(capture(tmp_path, stream, stop).run())
    await asyncio.wait_for(stream.played.wait(), 10)
    stop.request(StopCause.SIGTERM)
    record, path = await asyncio.wait_for(run, 5)
    assert record.status == "interrupted"
    assert record.end_reason.startswith("stopped by SIGTERM during the run")
    assert json.loads((path / "session.json").read_text())["status"] == "interrupted"


async def test_a_cancelled_run_still_writes_its_final_record(tmp_path: Path) -> None:
    stream = ScriptedStream(pieces(DATA[:8000], 4, 0.05), hold=True)
    run = asyncio.create_task(capture(tmp_path, stream).run())
    await asyncio.wait_for(stream.played.wait(), 10)  # all 8000 bytes delivered, then cancel
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    (session,) = tmp_path.glob("DEV1/*")
    saved = json.loads((session / "session.json").read_text())
    assert saved["status"] == "interrupted" and saved["bytes"] == 8000
    assert (session / "capture.bsprof").read_bytes() == DATA[:8000]


async def test_an_answer_that_is_not_a_profile_leaves_no_session(tmp_path: Path) -> None:
    busy = HttpStatusError("the profiler port answered 503 Service Unavailable", 503)
    with pytest.raises(HttpStatusError):
        await capture(tmp_path, ScriptedStream([], end=busy)).run()
    with pytest.raises(NoData):
        await capture(tmp_path, ScriptedStream([])).run()
    assert not list(tmp_path.glob("DEV1/*"))
