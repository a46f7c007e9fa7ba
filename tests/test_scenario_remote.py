"""The remote against the simulated device on loopback: keys in order (the device records
them), Lit_ encoding, launch parameters, exit-app (and Home on older firmware) ending the run
complete, and the keys' work in the captured profile."""

from __future__ import annotations

import asyncio

import pytest
from waiting import until

from rokuprof.bsprof.grammar import END_MARKER, build_footer
from rokuprof.bsprof.model import Footer
from rokuprof.device.ecp import EcpClient
from rokuprof.device.errors import LimitedModeError
from rokuprof.profile.reader import ProfileReader
from rokuprof.scenario import parse_scenario_text, run_scenario
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.probe import read_stream
from rokuprof.simulator.runs import COMPLETE

HOST = "127.0.0.1"


def config(**kw) -> DeviceConfig:
    base = dict(auto_launch=False, run_seconds=60.0, speed=10.0, seed=3)
    return DeviceConfig(**(base | kw))


def log(dev: SimulatedDevice) -> list[tuple[str, str]]:
    return [(kind, value) for _, kind, value in dev.remote_log]


async def test_keys_and_launch_reach_the_device_in_order_url_encoded() -> None:
    async with SimulatedDevice(config()) as dev, EcpClient(HOST, dev.ecp_port, 2) as ecp:
        await ecp.launch("dev", {"contentId": "a b&c=d/é", "mediaType": "movie"})
        for key in ["Down", "Lit_ ", "Lit_é", "Lit_/", "Lit_%", "Lit_?", "Select", "Up"]:
            await ecp.keypress(key)
        for command in ["keydown", "keyup"]:
            await ecp._request("POST", f"/{command}/Right")
        assert log(dev) == [
            ("launch", "contentId=a%20b%26c%3Dd%2F%C3%A9&mediaType=movie"),
            ("keypress", "Down"),
            ("keypress", "Lit_ "),
            ("keypress", "Lit_é"),
            ("keypress", "Lit_/"),
            ("keypress", "Lit_%"),
            ("keypress", "Lit_?"),
            ("keypress", "Select"),
            ("keypress", "Up"),
            ("keydown", "Right"),
            ("keyup", "Right"),
        ]
        assert list(dev.ecp_requests)[1:3] == ["POST /keypress/Down", "POST /keypress/Lit_%20"]
        times = [t for t, _, _ in dev.remote_log]
        assert times == sorted(times)


async def test_a_scenario_presses_its_keys_in_order_never_before_their_time() -> None:
    text = """
[[steps]]
press = "Down"
repeat = 3
interval = 0.1
[[steps]]
mark = "scrolled"
[[steps]]
wait = 0.2
[[steps]]
text = "hi"
"""
    scenario = parse_scenario_text(text, "s.toml")
    marks: list[tuple[str, float]] = []
    async with SimulatedDevice(config()) as dev, EcpClient(HOST, dev.ecp_port, 2) as ecp:
        clock = asyncio.get_running_loop().time  # the device logs time.monotonic()
        start = clock()
        await run_scenario(
            scenario, ecp, on_mark=lambda label, when: marks.append((label, when)), clock=clock
        )
    assert log(dev) == [("keypress", k) for k in ["Down", "Down", "Down", "Lit_h", "Lit_i"]]
    planned = [a.at for a in scenario.actions() if a.kind == "keypress"]
    assert planned == [0.0, 0.1, 0.2, 0.4, 0.4]
    for (when, _, _), offset in zip(dev.remote_log, planned, strict=True):
        assert when >= start + offset
    assert [label for label, _ in marks] == ["scrolled"]
    assert marks[0][1] >= start + 0.2


async def read_body(dev: SimulatedDevice) -> asyncio.Task[bytes]:
    await dev.wait_listening(5)
    task = asyncio.create_task(read_stream(HOST, dev.profiler_port))
    await dev.wait_until(lambda: dev.current is not None and dev.current.status == "streaming", 5)
    return task


@pytest.mark.parametrize(
    ("firmware", "used", "reason"), [("14.1.4", "exit-app", "exit-app"), ("12.5.0", "home", "home")]
)
async def test_exit_app_ends_the_run_complete(firmware: str, used: str, reason: str) -> None:
    """Roku OS 13+ has exit-app; before it the device answers 404 and Home does the job."""
    async with (
        SimulatedDevice(config(software_version=firmware)) as dev,
        EcpClient(HOST, dev.ecp_port, 2) as ecp,
    ):
        await ecp.launch()
        body = await read_body(dev)
        assert await ecp.exit_app() == used
        data = await asyncio.wait_for(body, 5)
        run = await dev.wait_run_end(0, 5)
    assert (run.status, run.exit_reason) == (COMPLETE, reason)
    assert data.endswith(END_MARKER + build_footer(Footer(run.end_ms)))
    assert ProfileReader.from_bytes(data).complete
    expected = [("exit-app", "dev")] if used == "exit-app" else [("keypress", "Home")]
    assert log(dev)[1:] == expected


async def test_exit_app_when_no_app_runs_falls_back_to_a_harmless_home() -> None:
    async with SimulatedDevice(config()) as dev, EcpClient(HOST, dev.ecp_port, 2) as ecp:
        assert await ecp.exit_app() == "home"
        assert list(dev.ecp_requests) == ["POST /exit-app/dev", "POST /keypress/Home"]
        assert dev.runs == []


async def test_exit_app_in_limited_mode_says_so() -> None:
    async with SimulatedDevice(config()) as dev, EcpClient(HOST, dev.ecp_port, 2) as ecp:
        await ecp.launch()
        dev.set_limited(True)
        with pytest.raises(LimitedModeError, match="limited mode"):
            await ecp.exit_app()
        assert dev.current is not None  # still running: nothing exited it
        dev.set_limited(False)
        assert await ecp.exit_app() == "exit-app"


def function_paths(data: bytes) -> set[tuple[str, ...]]:
    tables = ProfileReader.from_bytes(data).tables
    return {
        tuple(tables.string(node.function_id) for node in reversed(tables.stack(pid)))
        for pid in tables.paths
    }


async def capture(keys: list[str], link: dict[str, str] | None = None) -> set[tuple[str, ...]]:
    async with SimulatedDevice(config()) as dev, EcpClient(HOST, dev.ecp_port, 2) as ecp:
        await ecp.launch()
        body = await read_body(dev)
        for key in keys:
            await ecp.keypress(key)
        if link is not None:
            await ecp.launch("dev", link)  # the running app gets the deep link
        await until(lambda: (dev.app_clock() or 0) > 1.0, 10)  # the app ran a while
        assert await ecp.exit_app() == "exit-app"
        data = await asyncio.wait_for(body, 5)
    assert ProfileReader.from_bytes(data).complete
    return function_paths(data)


async def test_key_work_shows_in_the_captured_profile() -> None:
    on_key = ("Main", "eventLoop", "handleMessage", "onKeyEvent")
    pressed = await capture(["Down", "Down", "Down", "Select"])
    assert (*on_key, "moveFocus") in pressed
    assert ("HomeScene_onRender", "RowList_update", "RowList_scroll") in pressed
    assert (*on_key, "navigate", "DétailsÉcran_show") in pressed
    assert ("ContentLoader_run", "loadDetails") in pressed
    quiet = await capture([])
    assert (*on_key, "moveFocus") not in quiet
    assert not {p for p in quiet if "loadDetails" in p or "RowList_scroll" in p}


async def test_launch_parameters_open_the_linked_content_in_a_running_app() -> None:
    linked = await capture([], {"contentId": "42", "mediaType": "movie"})
    on_input = ("Main", "eventLoop", "handleMessage", "onInputEvent")
    assert (*on_input, "navigate", "DétailsÉcran_show") in linked
    assert ("ContentLoader_run", "loadDetails") in linked
