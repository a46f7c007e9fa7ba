"""The app trace captured beside the ``.bsprof``: a loopback stand-in for the device's trace
socket that splits packets across messages, firmware without tracing, and hostile sockets
(garbage, a message announcing 1 GiB, endless small messages) that must leave the ``.bsprof``
run complete and the memory bounded. The profile stream is the simulator's."""

from __future__ import annotations

import shutil
from pathlib import Path

from capture_helpers import Recorder, run_capture, sim
from daemon_helpers import Running, cap_config, record
from daemon_helpers import sessions as daemon_sessions
from daemon_helpers import sim as daemon_sim
from profile_helpers import ROOT, device, profile
from trace_helpers import FakeTraceDevice, roku_app_trace
from waiting import until

from rokuprof.capture.loop import DeviceCapture
from rokuprof.capture.session import read_record
from rokuprof.capture.trace_tap import END_LIMIT, END_RUN, FLUSH_BYTES, NO_TRACING
from rokuprof.daemon.config import build_config
from rokuprof.simulator import SimulatedDevice
from rokuprof.trace.reader import read_trace
from rokuprof.trace.summary import trace_report


async def _capture(fake: FakeTraceDevice, out: Path, **kw) -> tuple:
    """One simulated run captured with the trace socket on ``fake``."""
    recorder = Recorder()
    async with SimulatedDevice(sim(run_seconds=2.0, speed=2.0)) as dev:
        config = cap_config(dev, out, runs=1, trace=True, ecp_port=fake.port, use_ecp=False, **kw)
        capture = DeviceCapture(config, observer=recorder)
        summary = await run_capture(capture, timeout=30)
        run = await dev.wait_run_end(0, 5)
        sent = dev.sent_bytes(0)
    [session] = summary.sessions
    return session, run, sent, recorder


async def test_the_run_s_trace_is_the_bytes_as_they_arrived(tmp_path: Path) -> None:
    data = roku_app_trace(interned=True).data()
    async with FakeTraceDevice("split", data, message_bytes=37) as fake:  # cut inside packets
        session, run, sent, _ = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    assert (session.path / "trace.perfetto-trace").read_bytes() == data
    record = read_record(session.path)
    assert record["trace"] == {
        "file": "trace.perfetto-trace",
        "bytes": len(data),
        "messages": -(-len(data) // 37),
        "end_reason": END_RUN,
        "dropped_bytes": 0,
        "problems": [],
    }
    assert fake.enables >= 1
    report = trace_report(read_trace((session.path / "trace.perfetto-trace").read_bytes()))
    assert report["complete"] and report["frames"]["missed"] == 3


async def test_a_trace_of_megabytes_goes_through_the_spool(tmp_path: Path) -> None:
    """Past a megabyte the payloads are written to the spool as they come (memory holds no
    more), and the session gets the same bytes; no spool is left behind."""
    data = roku_app_trace(interned=False).data() * 1200  # about 3 MiB
    async with FakeTraceDevice("split", data, message_bytes=64 * 1024 + 3) as fake:
        session, run, _, _ = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert len(data) > 3 * FLUSH_BYTES
    assert (session.path / "trace.perfetto-trace").read_bytes() == data
    assert read_record(session.path)["trace"]["bytes"] == len(data)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".trace-")] == []


async def test_firmware_without_tracing_is_one_line_and_the_run_goes_on(tmp_path: Path) -> None:
    async with FakeTraceDevice(enable_status=404) as fake:
        session, run, sent, recorder = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    assert not (session.path / "trace.perfetto-trace").exists()
    assert read_record(session.path)["trace"] is None
    said = [m for m in recorder.messages if NO_TRACING in m]
    assert len(said) == 1 and "404" in said[0]
    assert fake.sockets == 0


async def test_garbage_on_the_socket_costs_the_profile_nothing(tmp_path: Path) -> None:
    async with FakeTraceDevice("garbage") as fake:
        session, run, sent, recorder = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    trace = read_record(session.path)["trace"]
    assert trace["bytes"] == 0 and trace["file"] is None
    assert any("not WebSocket frames" in p for p in trace["problems"]), trace
    assert 1 <= fake.sockets <= 8  # it reconnected, backing off
    assert sum("app trace:" in m for m in recorder.messages) == len(set(recorder.messages))


async def test_a_message_announcing_a_gigabyte_is_refused_before_its_payload(
    tmp_path: Path,
) -> None:
    async with FakeTraceDevice("huge") as fake:
        session, run, sent, _ = await _capture(fake, tmp_path)
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    trace = read_record(session.path)["trace"]
    assert trace["bytes"] == 0
    assert any("a message larger than 4 MiB" in p for p in trace["problems"]), trace


async def test_endless_small_messages_stop_at_the_run_s_byte_limit(tmp_path: Path) -> None:
    limit = 64 * 1024
    async with FakeTraceDevice("flood") as fake:
        session, run, sent, _ = await _capture(fake, tmp_path, trace_max_run_bytes=limit)
        sockets = fake.sockets
    assert run.status == "complete"
    assert (session.path / "capture.bsprof").read_bytes() == sent
    trace = read_record(session.path)["trace"]
    assert trace["end_reason"] == END_LIMIT
    assert limit - 64 < trace["bytes"] <= limit
    assert (session.path / "trace.perfetto-trace").stat().st_size == trace["bytes"]
    assert trace["dropped_bytes"] > 0
    assert sockets == 1  # closed at the limit, not reopened before the run ended


async def test_the_simulator_s_runs_each_get_their_own_trace(tmp_path: Path) -> None:
    """Against the simulated Roku (app tracing on, as Roku OS 15.1+): tracing enabled and the
    socket open before the launches, two runs, each session with the trace of its own run (the
    app's threads, frames at 60 Hz, the slice left open at its exit), byte for byte what the
    device sent."""
    recorder = Recorder()
    device = sim(run_seconds=2.0, speed=1.0, runs=2, run_gap=1.0, keep_bytes=True)
    async with SimulatedDevice(device) as dev:
        config = cap_config(dev, tmp_path, runs=2, trace=True)
        capture = DeviceCapture(config, observer=recorder)
        summary = await run_capture(capture, timeout=40)
        sent = [dev.sent_bytes(i) for i in range(2)]
        traced = [dev.runs[i].trace for i in range(2)]
    assert [s.record.status for s in summary.sessions] == ["complete", "complete"]
    reports = []
    for session, stream, device_trace in zip(summary.sessions, sent, traced, strict=True):
        assert (session.path / "capture.bsprof").read_bytes() == stream
        trace = (session.path / "trace.perfetto-trace").read_bytes()
        assert device_trace is not None and trace == bytes(device_trace.data)
        assert read_record(session.path)["trace"]["bytes"] == len(trace) > 0
        report = trace_report(read_trace(trace))
        assert report["complete"], report["problems"]
        assert report["unfinished"] == 1  # the slice the app left open at its exit
        assert report["frames"]["frames"] > 60  # two seconds at 60 Hz
        assert "RenderThr:Main" in report["threads"]
        reports.append(report)
    # each its own run, on the wall clock the .bsprof header gives the same run
    for report, run in zip(reports, traced, strict=True):
        assert run is not None
        assert abs(report["start_unix_ms"] - run.start_ms) < 100
    assert not [m for m in recorder.messages if "trace" in m]  # nothing went wrong


async def test_profile_with_trace_traces_the_launch_the_install_makes(tmp_path: Path) -> None:
    """``rokuprof profile APP --trace``: the socket is open before the install launches the
    app, so the run's trace is there from its start, made of the sideloaded app's own code."""
    app = tmp_path / "myapp"
    shutil.copytree(ROOT / "samples" / "app", app)
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app), "--duration", "2", "--trace", "-o", "out"
        )
        traced = dev.runs[0].trace
    assert status == 0, out + err
    [session] = [p.parent for p in (tmp_path / "out").rglob("session.json")]
    trace = (session / "trace.perfetto-trace").read_bytes()
    assert traced is not None and trace == bytes(traced.data)
    report = trace_report(read_trace(trace))
    files = {Path(p).name for p in (app / "source").glob("*.brs")}
    stacks = [row["callstack"] for row in report["script"]]
    assert stacks and all("pkg:/" in s for s in stacks)
    assert any(name in s for s in stacks for name in files)  # the app's own source files
    assert read_record(session)["trace"]["end_reason"] == END_RUN


async def test_profile_baseline_compares_the_two_runs_traces(tmp_path: Path) -> None:
    """A second ``profile --trace`` judged against the first run's session: its app-trace
    figures are said beside the functions' gate."""
    app = tmp_path / "myapp"
    shutil.copytree(ROOT / "samples" / "app", app)
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app), "--duration", "2", "--trace", "-o", "first"
        )
        assert status == 0, out + err
        [baseline] = [p.parent for p in (tmp_path / "first").rglob("session.json")]
        status, out, err = await profile(
            dev,
            tmp_path,
            str(app),
            "--duration",
            "2",
            "--trace",
            "-o",
            "second",
            "--baseline",
            str(baseline),
        )
    assert status == 0, out + err  # no --fail-over: said, not judged
    assert "app trace: missed frames" in out
    assert "app trace: rendezvous blocked ms" in out


def _finished(sessions: list[Path]) -> bool:
    """Both devices' runs over, and the traced one's trace kept (the last thing a run does)."""
    records = {s.parent.name: record(s) for s in sessions}
    return (
        len(records) == 2
        and all(r["status"] == "complete" for r in records.values())
        and records.get("YN00TRACE001", {}).get("trace") is not None
    )


async def test_the_daemon_traces_the_devices_its_config_says(tmp_path: Path) -> None:
    """``[capture] trace = true`` with one device turning it off: the traced device's session
    gets its trace, the other's none (and that device's tracing is never enabled)."""
    out = tmp_path / "out"
    async with (
        SimulatedDevice(daemon_sim("YN00TRACE001", run_seconds=2.0)) as traced,
        SimulatedDevice(daemon_sim("YN00TRACE002", run_seconds=2.0)) as plain,
    ):
        devices = [
            {
                "host": "127.0.0.1",
                "name": dev.config.serial,
                "profiler_port": dev.profiler_port,
                "ecp_port": dev.ecp_port,
                "console_port": dev.console_port,
                **extra,
            }
            for dev, extra in ((traced, {}), (plain, {"trace": False}))
        ]
        config = build_config(
            {
                "capture": {"out": str(out), "chunk_seconds": 1.0, "trace": True},
                "devices": devices,
                "metrics": {"listen": "127.0.0.1:0"},
            },
            env={},
        )
        async with Running(config) as daemon:
            await daemon.ready()
            await until(lambda: _finished(daemon_sessions(out)), 40)
            assert await daemon.finish() == 0
        enabled = (traced.tracing.enabled, plain.tracing.enabled)
    by_device = {s.parent.name: s for s in daemon_sessions(out)}
    with_trace = by_device["YN00TRACE001"]
    assert (
        (with_trace / "trace.perfetto-trace").stat().st_size
        == record(with_trace)["trace"]["bytes"]
        > 0
    )
    without = by_device["YN00TRACE002"]
    assert not (without / "trace.perfetto-trace").exists()
    assert record(without)["trace"] is None
    assert enabled == (["dev"], [])


async def test_the_end_of_run_perfetto_export_holds_the_run_s_trace(tmp_path: Path) -> None:
    """``watch --trace --export perfetto``: the run's trace is kept before the exports are
    made, so the export's file starts with it, byte for byte, and holds the tracks too."""
    async with SimulatedDevice(sim(run_seconds=2.0, speed=1.0)) as dev:
        config = cap_config(dev, tmp_path, runs=1, trace=True, exports=("perfetto",))
        summary = await run_capture(DeviceCapture(config), timeout=40)
    [session] = summary.sessions
    trace = (session.path / "trace.perfetto-trace").read_bytes()
    exported = (session.path / "capture.perfetto-trace").read_bytes()
    assert trace and exported.startswith(trace) and len(exported) > len(trace)
    both = read_trace(exported)
    assert both.problems == []
    assert any(t.name.startswith("bsprof: ") for t in both.tracks.values())
