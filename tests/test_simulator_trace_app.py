"""A sideloaded app's trace names that app: an app written here, sideloaded to the simulated
device with rokuprof's installer client, enabled for tracing and run with a real profiler client
and a real WebSocket client. Its trace's threads, call stacks (function, file, definition line),
observers and rendezvous are the app's own; the key whose handler does slow work misses frames;
the trace's clock puts app time 0 at the ``.bsprof`` header's start.

The oracle is the source itself, read here with a plain pattern, not with the simulator's
scanner."""

from __future__ import annotations

import asyncio
import io
import re
import zipfile

import httpx
from websockets.asyncio.client import connect

from rokuprof.device.installer import InstallerClient
from rokuprof.profile.reader import ProfileReader
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.probe import read_stream
from rokuprof.trace.analysis import frame_cadence
from rokuprof.trace.reader import read_trace
from rokuprof.trace.summary import trace_report

HOST = "127.0.0.1"
PASSWORD = "trace-test"
DEF = re.compile(r"^\s*(?:sub|function)\s+(\w+)\s*\(", re.I)

APP = {
    "manifest": (
        "title=Radio Guide\nmajor_version=2\nminor_version=0\nbuild_version=5\n"
        "run_as_process=1\nbsprof_enable=1\nbsprof_data_dest=network\nbsprof_enable_lines=1\n"
    ),
    "source/main.brs": """\
' Radio Guide: a grid of stations
sub Main()
    screen = CreateObject("roSGScreen")
    port = CreateObject("roMessagePort")
    screen.setMessagePort(port)
    screen.CreateScene("GuideScene")
    screen.show()
    while true
        msg = wait(0, port)
    end while
end sub
""",
    "components/GuideScene.xml": """\
<?xml version="1.0" encoding="utf-8" ?>
<component name="GuideScene" extends="Scene">
  <script type="text/brightscript" uri="GuideScene.brs" />
</component>
""",
    "components/GuideScene.brs": """\
sub init()
    m.loader = CreateObject("roSGNode", "StationsTask")
    m.loader.observeField("stations", "onStations")
    m.loader.control = "run"
end sub

sub onStations()
    m.count = m.loader.stations.count()
end sub

function onKeyEvent(key as String, press as Boolean) as Boolean
    if key = "OK"
        rebuildGrid()
        return true
    end if
    return false
end function

sub rebuildGrid()
    cells = []
    for row = 1 to 12
        for col = 1 to 40
            cells.push({ row: row, col: col, label: "cell" })
        end for
    end for
end sub
""",
    "components/StationsTask.xml": """\
<?xml version="1.0" encoding="utf-8" ?>
<component name="StationsTask" extends="Task">
  <interface><field id="stations" type="array" /></interface>
  <script type="text/brightscript" uri="StationsTask.brs" />
</component>
""",
    "components/StationsTask.brs": """\
sub init()
    m.top.functionName = "loadStations"
end sub

sub loadStations()
    list = []
    for i = 1 to 30
        list.push(parseStation(i))
    end for
    m.top.stations = list
end sub

function parseStation(i as Integer) as Object
    return { name: "station " + i.toStr(), band: "FM" }
end function
""",
}


def package() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, text in APP.items():
            z.writestr(name, text)
    return buf.getvalue()


def definitions() -> dict[tuple[str, str], int]:
    """(pkg:/ file, function) -> the line it is defined on."""
    found = {}
    for name, text in APP.items():
        for number, line in enumerate(text.splitlines(), 1):
            if match := DEF.match(line):
                found["pkg:/" + name, match.group(1)] = number
    return found


async def until(predicate, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.01)


async def test_a_sideloaded_apps_trace_is_made_of_its_own_code() -> None:
    config = DeviceConfig(
        host=HOST, auto_launch=False, run_seconds=4.0, speed=2.0, dev_password=PASSWORD, seed=8
    )
    ecp = None
    async with SimulatedDevice(config) as dev, httpx.AsyncClient(timeout=5) as http:
        ecp = f"http://{HOST}:{dev.ecp_port}"
        async with InstallerClient(HOST, PASSWORD, port=dev.installer_port, timeout=10) as client:
            assert (await client.sideload(package())).kind == "installed"
        run = await dev.wait_listening(5)  # installed and launched: waiting for its profiler
        assert (await http.post(f"{ecp}/perfetto/enable/dev")).status_code == 200
        url = f"ws://{HOST}:{dev.ecp_port}/perfetto-session"
        async with connect(url, open_timeout=5, ping_interval=None) as ws:
            stream = asyncio.create_task(read_stream(HOST, dev.profiler_port, timeout=15))
            await until(lambda: (dev.app_clock() or 0) >= 2.0)
            assert (await http.post(f"{ecp}/keypress/Select")).status_code == 200
            await dev.wait_run_end(run.index, 10)
            messages = []
            async with asyncio.timeout(10):
                while True:
                    try:
                        messages.append(await asyncio.wait_for(ws.recv(), 0.6))
                    except TimeoutError:
                        break
            bsprof = await stream
    record = run.trace
    data = b"".join(messages)
    assert record is not None and bytes(record.data) == data
    trace = read_trace(data)
    report = trace_report(trace)
    assert report["complete"] and not report["problems"] and report["unmatched_ends"] == 0

    threads = {"RenderThr:Main", "AuxRenderThread", "main", "TN:StationsTask"}
    assert threads <= set(report["threads"])
    # every call stack is a function of the app, in its file, at the line that defines it
    defined = definitions()
    stacks = {str(s.args["callstack"]) for s in trace.slices if "callstack" in s.args}
    for stack in stacks:
        name, _, where = stack.partition(" ")
        file, _, line = where.rpartition(":")
        assert defined.get((file, name)) == int(line), stack
    names = {stack.split(" ")[0] for stack in stacks}
    assert {"Main", "onStations", "rebuildGrid"} <= names
    assert names <= {name for _, name in defined}
    # the OK key (ECP Select) runs rebuildGrid on the render thread, and that frame is missed
    [key] = [s for s in trace.slices if s.name == "keyEvent"]
    assert key.args == {"key": "Select"} and trace.thread_name(key.track) == "RenderThr:Main"
    grid = [s for s in trace.slices if str(s.args.get("callstack", "")).startswith("rebuildGrid")]
    assert grid and {trace.thread_name(s.track) for s in grid} == {"RenderThr:Main"}
    _, missed = frame_cadence(trace)
    assert any(m.start <= key.start < m.end for m in missed)
    # the Task meets the render thread: rendezvous with flows, and the scene's observer runs
    assert report["rendezvous"] and {r["thread"] for r in report["rendezvous"]} == {
        "TN:StationsTask"
    }
    assert all(r["field"].startswith("StationsTask.") for r in report["rendezvous"])
    assert trace.flows
    observed = {s.args["function"] for s in trace.slices if s.name == "observer.callback"}
    assert observed == {"onStations"}
    frames = report["frames"]
    assert 50 <= frames["frames"] / (report["span_ms"] / 1000) <= 61
    # the app's exit leaves its main thread's script open
    [open_] = [s for s in trace.slices if s.end is None]
    main_line = defined["pkg:/source/main.brs", "Main"]
    assert open_.args["callstack"] == f"Main pkg:/source/main.brs:{main_line}"
    # one clock for both files: app time 0 is the .bsprof header's start, on the wall clock
    header = ProfileReader.from_bytes(bsprof).header
    assert header.start_ms == record.start_ms == run.start_ms
    assert trace.wall_offset_ns() + record.boot_ns == header.start_ms * 1_000_000
    assert header.target_name == "Radio Guide"
