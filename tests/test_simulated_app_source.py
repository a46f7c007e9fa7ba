"""The simulator plays the app it was given: a sideloaded app's profile names only that app's
own functions, in their own files, at their own lines, on the threads its code starts, and a
remote key does work in the functions its handler reaches.

The oracle is the source itself, read here with a plain pattern (``sub``/``function NAME(``
up to its ``end``), independent of the simulator's scanner."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from daemon_helpers import start_simulator

from rokuprof.profile.reader import ProfileReader
from tests.profile_helpers import profile

ROOT = Path(__file__).resolve().parents[1]
SAMPLE_APP = ROOT / "samples" / "app"
DEF = re.compile(r"^\s*(?:sub|function)\s+(\w+)\s*\(", re.I)
END = re.compile(r"^\s*end\s+(?:sub|function)\b", re.I)


def definitions(app: Path) -> dict[tuple[str, str], set[tuple[str, int, int]]]:
    """(pkg:/ file, name) -> (name, first line, last line) of each definition in ``app``."""
    found: dict[tuple[str, str], set[tuple[str, int, int]]] = {}
    for path in sorted(app.rglob("*")):
        if path.suffix not in (".brs", ".xml"):
            continue
        pkg = "pkg:/" + path.relative_to(app).as_posix()
        lines = path.read_text().splitlines()
        start = None
        for number, line in enumerate(lines, 1):
            match = DEF.match(line)
            if match and start is None:
                start = (match.group(1), number)
            elif END.match(line) and start is not None:
                found.setdefault((pkg, start[0]), set()).add((start[0], start[1], number))
                start = None
    return found


def code_lines(app: Path, pkg: str) -> dict[int, str]:
    text = (app / pkg.removeprefix("pkg:/")).read_text().splitlines()
    return {
        n: line
        for n, line in enumerate(text, 1)
        if line.strip() and not line.strip().startswith("'")
    }


def check_capture(capture: Path, app: Path) -> tuple[set[str], set[str], list[tuple[str, ...]]]:
    """Every frame of ``capture`` is a function ``app`` defines, at its definition's line, and
    every line CPU was charged to lies in that function's body on a line of code. Returns the
    function names, the threads and the call paths (root first)."""
    reader = ProfileReader.from_bytes(capture.read_bytes())
    tables = reader.tables
    defined = definitions(app)
    names: set[str] = set()
    stacks = []
    for pid in tables.paths:
        stack = tables.stack(pid)
        for node in stack:
            name, file = tables.string(node.function_id), tables.string(node.file_id)
            spans = defined.get((file, name))
            assert spans, f"{name} ({file}) is not a function of {app.name}"
            assert node.line in {first for _, first, _ in spans}, (name, file, node.line)
            names.add(name)
        stacks.append(tuple(tables.string(n.function_id) for n in reversed(stack)))
    assert tables.line_cpu, "no line data"
    for pid, offset in tables.line_cpu:
        node = tables.node(pid)
        file, name = tables.string(node.file_id), tables.string(node.function_id)
        line = tables.line_number(pid, offset)
        [span] = [s for s in defined[file, name] if s[1] == node.line]
        assert span[1] <= line <= span[2], (name, line, span)
        assert line in code_lines(app, file), (file, line)
    threads = {
        tables.module_name(node.module)
        for pid in tables.paths
        if (node := tables.node(pid)).caller == 0
    }
    return names, threads, stacks


def test_the_demo_profiles_the_sample_app_it_ships(tmp_path: Path) -> None:
    """``rokuprof demo`` as a user runs it: every function and line of its capture is
    samples/app's own, on its threads (main, the scene's render thread, ContentTask), and the
    scenario's Select ran the key handler's path (onKeyEvent → openItem → openDetails)."""
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "demo", "--json", "-o", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    [capture] = (tmp_path / "demo").rglob("capture.bsprof")
    names, threads, stacks = check_capture(capture, SAMPLE_APP)
    assert threads == {"main", "HomeScene", "ContentTask"}
    assert {"Main", "init", "buildContent", "describe", "onKeyEvent"} <= names
    assert ("onKeyEvent", "openItem", "openDetails") in {s[:3] for s in stacks}
    report = (capture.parent / "report.html").read_text()
    assert "renderTile" not in report and "PosterRowList" not in report
    assert json.loads(proc.stdout)["sessions"]


APP = {
    "manifest": "title=Weather Wall\nmajor_version=3\nminor_version=1\nbuild_version=7\n",
    "source/main.brs": """\
' Weather Wall: entry point
sub Main()
    screen = CreateObject("roSGScreen")
    port = CreateObject("roMessagePort")
    screen.setMessagePort(port)
    screen.CreateScene("WallScene")
    screen.show()
    while true
        msg = wait(0, port)
    end while
end sub
""",
    "components/WallScene.xml": """\
<?xml version="1.0" encoding="utf-8" ?>
<component name="WallScene" extends="Scene">
  <interface>
    <field id="forecast" type="assocarray" onChange="onForecast" />
  </interface>
  <script type="text/brightscript" uri="WallScene.brs" />
</component>
""",
    "components/WallScene.brs": """\
sub init()
    m.fetcher = CreateObject("roSGNode", "ForecastTask")
    m.fetcher.observeField("result", "onForecast")
    m.fetcher.control = "run"
end sub

sub onForecast()
    drawTiles(m.fetcher.result)
end sub

sub drawTiles(days as Object)
    for each day in days
        tile = { label: day.name, temp: day.high }
    end for
end sub

function onKeyEvent(key as String, press as Boolean) as Boolean
    if key = "OK"
        refreshRadar() ' the map, on demand
        return true
    end if
    if key = "options" then showSettings()
    return false
end function

sub refreshRadar()
    frames = []
    for i = 1 to 24
        frames.push({ index: i })
    end for
end sub

sub showSettings()
    m.top.findNode("settings").visible = true
end sub
""",
    "components/ForecastTask.xml": """\
<?xml version="1.0" encoding="utf-8" ?>
<component name="ForecastTask" extends="Task">
  <interface><field id="result" type="array" /></interface>
  <script type="text/brightscript"><![CDATA[
sub init()
    m.top.functionName = "fetchForecast"
end sub

sub fetchForecast()
    days = []
    for d = 1 to 7
        days.push(parseDay(d))
    end for
    m.top.result = days
end sub

function parseDay(d as Integer) as Object
    return { name: "day" + d.toStr(), high: 20 + d }
end function
]]></script>
</component>
""",
}


def write_app(folder: Path) -> Path:
    for name, text in APP.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


async def test_an_app_written_here_plays_its_own_functions_threads_and_keys(tmp_path: Path) -> None:
    """An app the test writes, sideloaded by ``rokuprof profile`` to ``rokuprof simulate`` (both
    as processes, as a user runs them): its capture holds only its own functions, its Task runs
    on a thread named for the component, and the OK key (ECP Select) runs refreshRadar, which
    nothing else calls."""
    app = write_app(tmp_path / "weather")
    scenario = tmp_path / "keys.toml"
    scenario.write_text('steps = [{wait = 1.0}, {press = "Select"}, {wait = 1.0}]\n')
    simulator = await start_simulator("--json", "--no-auto-launch")
    try:
        row = json.loads(await asyncio.wait_for(simulator.stdout.readline(), 30))
        device = SimpleNamespace(
            installer_port=row["installer"], ecp_port=row["ecp"], profiler_port=row["profiler"],
            console_port=row["console"], password=row["password"],
        )  # fmt: skip
        options = ("--scenario", str(scenario), "--lines", "-o", "out")
        status, out, err = await profile(device, tmp_path, str(app), *options)
    finally:
        simulator.terminate()
        await simulator.wait()
    assert status == 0, out + err
    [capture] = (tmp_path / "out").rglob("capture.bsprof")
    names, threads, stacks = check_capture(capture, app)
    assert threads == {"main", "WallScene", "ForecastTask"}
    assert {"Main", "init", "onForecast", "drawTiles", "fetchForecast", "parseDay"} <= names
    assert ("onKeyEvent", "refreshRadar") in {s[:2] for s in stacks}
    assert "showSettings" not in names  # only the options key calls it
    assert "Weather Wall" in (capture.parent / "session.json").read_text()
