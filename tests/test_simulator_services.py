"""The simulated device's SSDP responder, ECP server and debug console, over real sockets."""

from __future__ import annotations

import asyncio
import re
import xml.etree.ElementTree as ET

import pytest

from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.ecp import LIMITED_BODY
from rokuprof.simulator.probe import ConsoleSession, http, read_stream, ssdp_search

HOST = "127.0.0.1"


def config(**kw) -> DeviceConfig:
    base = dict(
        serial="YN00AA000042", name="Sim Roku <1> & co", run_seconds=1.0, speed=20.0, seed=5
    )
    return DeviceConfig(**(base | kw))


def headers_of(reply: bytes) -> tuple[str, dict[str, str]]:
    lines = reply.decode().split("\r\n")
    fields = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            fields[name.strip().lower()] = value.strip()
    return lines[0], fields


@pytest.mark.parametrize("target", ["roku:ecp", "ssdp:all"])
async def test_ssdp_search_gets_a_unicast_reply(target):
    async with SimulatedDevice(config(auto_launch=False)) as dev:
        reply, sender = await ssdp_search(HOST, dev.ssdp_port, target)
    assert sender == (HOST, dev.ssdp_port)
    status, fields = headers_of(reply)
    assert status == "HTTP/1.1 200 OK"
    assert fields["location"] == f"http://{HOST}:{dev.ecp_port}/"
    assert fields["usn"] == "uuid:roku:ecp:YN00AA000042"
    assert fields["st"] == "roku:ecp"
    assert fields["cache-control"].startswith("max-age=")
    assert fields["server"].startswith("Roku/")
    assert reply.endswith(b"\r\n\r\n")


async def test_ssdp_ignores_other_targets_and_junk():
    async with SimulatedDevice(config(auto_launch=False)) as dev:
        with pytest.raises(TimeoutError):
            await ssdp_search(HOST, dev.ssdp_port, "urn:dial-multiscreen-org:service:dial:1", 0.3)
        # junk does not kill the responder
        reader_sock = await asyncio.get_running_loop().create_datagram_endpoint(
            asyncio.DatagramProtocol, remote_addr=(HOST, dev.ssdp_port)
        )
        reader_sock[0].sendto(b"\xff\xfe garbage")
        reader_sock[0].close()
        reply, _ = await ssdp_search(HOST, dev.ssdp_port)
        assert b"uuid:roku:ecp:YN00AA000042" in reply


async def test_device_info():
    async with SimulatedDevice(config(auto_launch=False)) as dev:
        status, headers, body = await http(HOST, dev.ecp_port, "GET", "/query/device-info")
    assert status == 200 and headers["content-type"].startswith("text/xml")
    root = ET.fromstring(body)
    assert root.tag == "device-info"
    info = {child.tag: child.text for child in root}
    assert info["serial-number"] == "YN00AA000042"
    assert info["friendly-device-name"] == info["user-device-name"] == "Sim Roku <1> & co"
    assert info["vendor-name"] == "Roku" and info["model-number"] == "4800X"
    assert info["software-version"] == "14.1.4" and info["software-build"] == "4123"
    assert info["developer-enabled"] == "true"
    assert info["ecp-setting-mode"] == "enabled"
    for name in ("udn", "device-id", "model-name", "network-type"):
        assert info[name]
    assert re.fullmatch(r"[0-9a-f]{40}", info["keyed-developer-id"])
    assert info["wifi-mac"] != info["ethernet-mac"]  # two interfaces, two unicast addresses
    assert all(int(info[k][:2], 16) & 0x03 == 0x02 for k in ("wifi-mac", "ethernet-mac"))


async def test_active_app_launch_and_home_over_ecp():
    async with SimulatedDevice(config(auto_launch=False, run_seconds=30.0, speed=1.0)) as dev:
        _, _, body = await http(HOST, dev.ecp_port, "GET", "/query/active-app")
        assert ET.fromstring(body).find("app").text == "Roku"
        status, _, _ = await http(HOST, dev.ecp_port, "POST", "/launch/dev")
        assert status == 200 and dev.current is not None
        _, _, body = await http(HOST, dev.ecp_port, "GET", "/query/active-app")
        app = ET.fromstring(body).find("app")
        assert app.get("id") == "dev" and app.text == "Café TV"
        assert (await http(HOST, dev.ecp_port, "POST", "/launch/dev"))[0] == 200
        assert len(dev.runs) == 1  # already running: no second launch
        assert (await http(HOST, dev.ecp_port, "POST", "/keypress/Home"))[0] == 200
        assert dev.current is None and dev.runs[0].exit_reason == "home"
        _, _, body = await http(HOST, dev.ecp_port, "GET", "/query/apps")
        ids = [a.get("id") for a in ET.fromstring(body).findall("app")]
        assert "dev" in ids
        assert (await http(HOST, dev.ecp_port, "GET", "/nope"))[0] == 404
        assert (await http(HOST, dev.ecp_port, "POST", "/launch/99999"))[0] == 404


async def test_app_state_and_media_player_follow_the_app():
    """What rokuecp's update() and @dlenroc's queries read: 404 at b17a9e7."""
    async with SimulatedDevice(config(auto_launch=False, run_seconds=30.0, speed=1.0)) as dev:

        async def get(path: str) -> ET.Element:
            status, headers, body = await http(HOST, dev.ecp_port, "GET", path)
            assert status == 200 and "xml" in headers["content-type"]
            return ET.fromstring(body)

        assert (await get("/query/media-player")).attrib == {"error": "false", "state": "none"}
        state = await get("/query/app-state/dev")
        assert [state.findtext(k) for k in ("app-id", "state", "status")] == [
            "dev",
            "inactive",
            "OK",
        ]
        await dev.launch()
        assert (await get("/query/app-state/dev")).findtext("state") == "active"
        player = await get("/query/media-player")
        assert player.get("state") == "close" and player.find("plugin").get("id") == "dev"
        assert (await get("/query/app-state/12")).findtext("state") == "inactive"
        unknown = await get("/query/app-state/<x>")
        assert unknown.findtext("status") == "FAILED" and "<x>" in unknown.findtext("error")


async def test_ecp_keep_alive_serves_several_requests_on_one_connection():
    async with SimulatedDevice(config(auto_launch=False)) as dev:
        reader, writer = await asyncio.open_connection(HOST, dev.ecp_port)
        try:
            for _ in range(3):
                writer.write(b"GET /query/device-info HTTP/1.1\r\nHost: x\r\n\r\n")
                async with asyncio.timeout(3):
                    head = await reader.readuntil(b"\r\n\r\n")
                    length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
                    body = await reader.readexactly(length)
                assert head.startswith(b"HTTP/1.1 200") and body.endswith(b"</device-info>\n")
        finally:
            writer.close()
            await writer.wait_closed()


async def test_limited_mode():
    async with SimulatedDevice(config(auto_launch=False)) as dev:
        dev.set_limited(True)
        status, headers, body = await http(HOST, dev.ecp_port, "POST", "/keypress/Home")
        assert status == 403 and body == LIMITED_BODY
        assert headers["content-type"].startswith("text/plain")
        status, _, body = await http(HOST, dev.ecp_port, "GET", "/query/device-info")
        assert status == 200 and b"<ecp-setting-mode>limited</ecp-setting-mode>" in body
        dev.set_limited(False)
        assert (await http(HOST, dev.ecp_port, "POST", "/keypress/Home"))[0] == 200
    async with SimulatedDevice(config(auto_launch=False, ecp_mode="disabled")) as dev:
        assert (await http(HOST, dev.ecp_port, "GET", "/query/device-info"))[0] == 403


async def test_console_commands_round_trip():
    async with SimulatedDevice(config(auto_launch=False, run_seconds=30.0, speed=1.0)) as dev:
        console = await ConsoleSession.open(HOST, dev.console_port)
        try:
            assert any("YN00AA000042" in line for line in console.banner)
            assert await console.command("bsprof-status") == ["No profiling session"]
            assert await console.command("bsprof-pause") == ["No profiling session"]
            assert await console.command("chanperf") == ["channel: mem and cpu data not available"]
            await dev.launch()
            status = await console.command("bsprof-status")
            assert status == ["status: running,cpu,mem,lines,data_dest=network"]
            assert await console.command("bsprof-pause") == ["bsprof paused"]
            assert (await console.command("bsprof-status"))[0].startswith("status: paused,")
            assert await console.command("bsprof-resume") == ["bsprof resumed"]
            perf = (await console.command("chanperf"))[0]
            assert perf.startswith("channel: mem=") and "KiB{anon=" in perf and "%cpu=" in perf
            assert (await console.command("frobnicate"))[0].startswith("Command not recognized")
            assert await console.command("") == []
        finally:
            await console.close()


@pytest.mark.parametrize("word", ["quit", "exit", "q"])
async def test_console_quit_closes_the_session(word):
    """Devices take exit, quit and q, and say so before closing (roku-debug waits for it)."""
    async with SimulatedDevice(config(auto_launch=False, console_banner=False)) as dev:
        console = await ConsoleSession.open(HOST, dev.console_port)
        assert console.banner == []
        console.writer.write(word.encode() + b"\r\n")
        async with asyncio.timeout(2):
            assert await console.reader.read() == b"Quit command received, exiting.\r\n"
        await console.close()


async def test_pause_really_reduces_what_is_recorded():
    """Same seed, same run: paused from the start, the stream holds far fewer entries."""
    counts = {}
    for paused in (False, True):
        async with SimulatedDevice(config(run_seconds=2.0, speed=40.0)) as dev:
            if paused:
                console = await ConsoleSession.open(HOST, dev.console_port)
                assert await console.command("bsprof-pause") == ["bsprof paused"]
                await console.close()
            await read_stream(HOST, dev.profiler_port)
            await dev.wait_run_end(0, 3)
            counts[paused] = dev.runs[0].entries
    assert counts[True] < counts[False] / 5
