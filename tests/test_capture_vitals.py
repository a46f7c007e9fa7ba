"""Device vitals and marks during a capture, against the simulated device on loopback (issue 21
D): vitals.jsonl, session.json's vitals and marks, the chunks' measurements (Relay's rules and
vroomrs), "not available", ECP limited mode and the console's fallback, the live view's line."""

from __future__ import annotations

import asyncio
import io
import json
import socket
from pathlib import Path

import pytest
from capture_helpers import Recorder, run_capture
from daemon_helpers import cap_config
from rich.console import Console
from waiting import until

from rokuprof.capture.loop import DeviceCapture
from rokuprof.capture.session import read_record
from rokuprof.capture.status import CaptureStatus
from rokuprof.capture.vitals import (
    CONSOLE,
    CONSOLE_RETRY,
    ECP,
    LIMITED,
    NOT_AVAILABLE,
    Reading,
    VitalsState,
)
from rokuprof.capture.vitals_poll import VitalsPoller
from rokuprof.device.console import ConsoleClient
from rokuprof.sentry.validate import validate_chunk
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.store.layout import VITALS_FILE
from rokuprof.views.live_screen import head_lines
from tests.viewers import vroom_v2

T0 = 1_800_000_000.0
BASE_KIB = 2600 + 12392 + 44  # the simulated app's memory before it allocates anything


def device(**kw) -> DeviceConfig:
    """A run of 2 s of app time in real time (vitals are read in real time)."""
    base = dict(run_seconds=2.0, runs=1, run_gap=0.1, seed=3, burst_ticks=(2, 10))
    return DeviceConfig(**(base | kw))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chunks_of(session: Path) -> list[dict]:
    return [json.loads(p.read_bytes()) for p in sorted((session / "chunks").glob("*.json"))]


def values(chunks: list[dict], name: str) -> list[dict]:
    return [v for c in chunks for v in c.get("measurements", {}).get(name, {}).get("values", [])]


def readings(session: Path) -> list[dict]:
    path = session / VITALS_FILE
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Enough(Exception):
    """The test has the answers it wanted."""


class FakeTime:
    """An injected clock and sleep: sleeping moves the clock; the poller stops after ``polls``
    questions."""

    def __init__(self, poller_questions: int) -> None:
        self.now = T0
        self.limit = poller_questions
        self.poller: VitalsPoller | None = None

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        if self.poller is not None and self.poller.questions >= self.limit:
            raise Enough


async def poll(dev: SimulatedDevice, state: VitalsState, questions: int, **ports) -> list:
    answers: list[tuple[float, str | None, Reading | None]] = []
    fake = FakeTime(questions)
    poller = VitalsPoller(
        "127.0.0.1",
        state,
        lambda s, r: answers.append((fake.now, s.source, r)),
        console_port=ports.get("console_port", dev.console_port),
        ecp_port=ports.get("ecp_port", dev.ecp_port),
        timeout=2.0,
        clock=fake.clock,
        sleep=fake.sleep,
    )
    fake.poller = poller
    with pytest.raises(Enough):
        await asyncio.wait_for(poller.run(), 20)
    return answers


# -- the poller, on an injected clock ------------------------------------------------------


async def test_the_poller_asks_once_an_interval_on_one_console_connection(monkeypatch) -> None:
    connects = []
    real_connect = ConsoleClient.connect

    async def counted(self: ConsoleClient) -> None:
        connects.append(self.port)
        await real_connect(self)

    monkeypatch.setattr(ConsoleClient, "connect", counted)
    async with SimulatedDevice(device(auto_launch=True)) as dev:
        answers = await poll(dev, VitalsState(1.0), questions=5)
    assert connects == [dev.console_port]
    assert [t for t, _, _ in answers] == [T0 + i for i in range(5)]
    assert all(r is not None and r.mem_bytes >= BASE_KIB * 1024 for _, _, r in answers)
    assert {source for _, source, _ in answers} == {CONSOLE}


async def test_an_unreachable_console_falls_back_to_ecp_and_is_tried_again_later() -> None:
    async with SimulatedDevice(device(auto_launch=True)) as dev:
        state = VitalsState(1.0)
        retry = int(CONSOLE_RETRY)
        answers = await poll(dev, state, questions=retry + 3, console_port=closed_port())
        asked = list(dev.ecp_requests).count("GET /query/chanperf")
    # the console at T0 (refused), ECP at once and each second until the console's retry at
    # T0 + 30 (refused again), then ECP at once again
    got = [(t - T0, r is not None) for t, _, r in answers]
    assert got == [(0, False), *((i, True) for i in range(retry)), (retry, False), (retry, True)]
    assert asked == state.readings == retry + 1 and state.source == ECP


async def test_limited_mode_stops_ecp_for_the_run() -> None:
    async with SimulatedDevice(device(auto_launch=True, ecp_mode="limited")) as dev:
        state = VitalsState(1.0, use_console=False)
        answers = []
        poller = VitalsPoller(
            "127.0.0.1",
            state,
            lambda s, r: answers.append(r),
            console_port=dev.console_port,
            ecp_port=dev.ecp_port,
            timeout=2.0,
        )
        await asyncio.wait_for(poller.run(), 10)  # returns: nowhere left to ask
        assert list(dev.ecp_requests).count("GET /query/chanperf") == 1
    assert answers == [None] and state.summary()["unavailable"] == LIMITED


# -- a capture -----------------------------------------------------------------------------


class Marker(Recorder):
    """Marks the session's start, and a moment into it: once the second vitals reading came
    (``after``: that reading's time)."""

    def __init__(self) -> None:
        super().__init__()
        self.capture: DeviceCapture | None = None
        self.task: asyncio.Task | None = None
        self.results: list[bool] = []
        self.readings: list[float] = []
        self.after: float | None = None

    def on_session_start(self, status) -> None:
        self.results.append(self.capture.mark("home screen"))
        self.task = asyncio.ensure_future(self._later(status))

    async def _later(self, status) -> None:
        def seen() -> int:
            if status.vitals is not None and status.vitals.time not in self.readings:
                self.readings.append(status.vitals.time)
            return len(self.readings)

        await until(lambda: seen() >= 2, 10, step=0.01)
        self.after = self.readings[-1]
        self.results.append(self.capture.mark("details/ä 1"))


async def test_a_capture_keeps_vitals_and_marks_in_the_session_and_the_chunks(tmp_path) -> None:
    async with SimulatedDevice(device()) as dev:
        config = cap_config(dev, tmp_path, runs=1, chunk_seconds=1.0, vitals_interval=0.25)
        observer = Marker()
        capture = DeviceCapture(config, observer=observer)
        observer.capture = capture
        assert capture.mark("too early") is False  # no session is open
        summary = await run_capture(capture, 20)
    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "complete"
    lines = readings(session.path)
    vitals = record["vitals"]
    # one line per reading, as the summary counts them; in time order, an interval apart (the
    # first one's question also opened the console connection)
    assert len(lines) == vitals["readings"] >= 4
    times = [line["time"] for line in lines]
    assert times == sorted(times) and (times[-1] - times[1]) / (len(times) - 2) >= 0.2
    assert vitals["source"] == "console" and vitals["unavailable"] is None
    assert vitals["max_cpu_percent"] == max(line["cpu_percent"] for line in lines) > 0
    assert vitals["max_mem_bytes"] == max(line["mem_bytes"] for line in lines) > BASE_KIB * 1024
    assert session.record.start < lines[0]["time"]

    # the marks
    assert observer.results == [True, True]
    start = session.record.start
    assert [m["label"] for m in record["marks"]] == ["home screen", "details/ä 1"]
    for m in record["marks"]:
        assert m["offset"] == pytest.approx(m["time"] - start, abs=1e-5)
    # the second mark came after the second reading: its offset is from the session's start
    assert record["marks"][1]["time"] >= observer.after
    assert record["marks"][1]["offset"] >= observer.after - start > 0
    assert record["marks_dropped"] == 0

    # the chunks: every reading and mark, valid by Relay's rules; vroomrs reads them
    chunks = chunks_of(session.path)
    cpu = values(chunks, "cpu_usage")
    # the run streams its live heap as memory_footprint: the device's memory goes beside it
    memory = values(chunks, "app_memory_footprint")
    assert [round(v["timestamp"], 3) for v in cpu] == times
    assert [v["value"] for v in cpu] == [line["cpu_percent"] for line in lines]
    assert [v["value"] for v in memory] == [line["mem_bytes"] for line in lines]
    for label, name in (("home screen", "mark.home_screen"), ("details/ä 1", "mark.details_1")):
        [mark] = [m for m in record["marks"] if m["label"] == label]
        [value] = values(chunks, name)
        assert value["timestamp"] == pytest.approx(mark["time"], abs=1e-6)
        assert value["value"] == pytest.approx(mark["offset"] * 1e9, abs=1e3)
    units = {n: m["unit"] for c in chunks for n, m in c.get("measurements", {}).items()}
    assert units == {
        "memory_footprint": "byte",
        "app_memory_footprint": "byte",
        "cpu_usage": "percent",
        "mark.home_screen": "nanosecond",
        "mark.details_1": "nanosecond",
    }
    assert [validate_chunk(c) for c in chunks] == [[] for _ in chunks]
    with_side = [c for c in chunks if "cpu_usage" in c.get("measurements", {})]
    plain = [{k: v for k, v in c.items() if k != "measurements"} for c in with_side]
    reads = vroom_v2.read([vroom_v2.ingest(c) for c in with_side + plain])
    assert [r.error for r in reads] == [None] * len(reads)
    half = len(with_side)
    assert [r.self_ns() for r in reads[:half]] == [r.self_ns() for r in reads[half:]]


async def test_without_memory_ops_the_device_memory_is_the_memory_footprint(tmp_path) -> None:
    async with SimulatedDevice(device(memory_ops=False)) as dev:
        config = cap_config(dev, tmp_path, runs=1, chunk_seconds=1.0, vitals_interval=0.25)
        summary = await run_capture(DeviceCapture(config), 20)
    [session] = summary.sessions
    chunks = chunks_of(session.path)
    lines = readings(session.path)
    assert [v["value"] for v in values(chunks, "memory_footprint")] == [
        line["mem_bytes"] for line in lines
    ]
    assert values(chunks, "app_memory_footprint") == []


async def test_not_available_gives_no_readings_and_says_why(tmp_path) -> None:
    async with SimulatedDevice(device(run_as_process=False)) as dev:
        config = cap_config(dev, tmp_path, runs=1, vitals_interval=0.25, use_console=False)
        summary = await run_capture(DeviceCapture(config), 20)
        asked = list(dev.ecp_requests).count("GET /query/chanperf")
    [session] = summary.sessions
    record = read_record(session.path)
    assert record["status"] == "complete"
    assert record["vitals"] == {
        "source": None,
        "readings": 0,
        "max_cpu_percent": None,
        "max_mem_bytes": None,
        "unavailable": NOT_AVAILABLE,
    }
    assert asked == 1  # a 2 s run: asked again 10 s later, never
    assert not (session.path / VITALS_FILE).exists()
    assert values(chunks_of(session.path), "cpu_usage") == []


async def test_limited_ecp_and_no_console_say_so_in_the_session(tmp_path) -> None:
    async with SimulatedDevice(device(ecp_mode="limited")) as dev:
        config = cap_config(dev, tmp_path, runs=1, vitals_interval=0.25, console_port=closed_port())
        summary = await run_capture(DeviceCapture(config), 20)
        asked = list(dev.ecp_requests).count("GET /query/chanperf")
    [session] = summary.sessions
    vitals = read_record(session.path)["vitals"]
    assert vitals["readings"] == 0 and asked == 1
    assert vitals["unavailable"].startswith(f"{LIMITED}; the debug console cannot be reached")


async def test_the_console_unreachable_ecp_gives_the_readings(tmp_path) -> None:
    async with SimulatedDevice(device()) as dev:
        config = cap_config(dev, tmp_path, runs=1, vitals_interval=0.25, console_port=closed_port())
        summary = await run_capture(DeviceCapture(config), 20)
    [session] = summary.sessions
    vitals = read_record(session.path)["vitals"]
    assert vitals["source"] == "ecp"
    assert vitals["readings"] == len(readings(session.path)) >= 4


async def test_vitals_interval_0_asks_nothing(tmp_path) -> None:
    async with SimulatedDevice(device()) as dev:
        config = cap_config(dev, tmp_path, runs=1, vitals_interval=0, use_console=False)
        summary = await run_capture(DeviceCapture(config), 20)
        assert "GET /query/chanperf" not in dev.ecp_requests
    [session] = summary.sessions
    assert read_record(session.path)["vitals"] is None


# -- the live view -------------------------------------------------------------------------


def head_text(status: CaptureStatus) -> str:
    console = Console(width=100, record=True, file=io.StringIO())
    for line in head_lines(status, 0.0, (0.0, 0.0), ""):
        console.print(line)
    return console.export_text()


def test_the_live_view_shows_the_last_reading_and_nothing_without_one() -> None:
    status = CaptureStatus(host="127.0.0.1", app="Café TV 2.4.1")
    assert "cpu" not in head_text(status)
    status.vitals = Reading(T0, 7, 15_519_744)
    [app] = [line for line in head_text(status).splitlines() if line.startswith("app")]
    assert app.rstrip() == "app      Café TV 2.4.1  app 7% cpu · 14.8 MiB"
    status.vitals = Reading(T0, None, None)
    assert "cpu" not in head_text(status)
