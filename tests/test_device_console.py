"""Debug console client: prompt detection, reply parsing, scripted and simulated consoles."""

from __future__ import annotations

import asyncio

import pytest

from rokuprof.device.chanperf import parse_chanperf
from rokuprof.device.console import ConsoleClient, PromptScanner, parse_bsprof_status
from rokuprof.device.errors import DeviceTimeout, ProtocolError
from rokuprof.simulator import DeviceConfig, SimulatedDevice


def scan(*pieces: bytes) -> PromptScanner:
    s = PromptScanner()
    for p in pieces:
        s.feed(p)
    return s


@pytest.mark.parametrize(
    ("pieces", "prompt"),
    [
        ((b"bsprof paused\r\n", b"> "), True),
        ((b">",), True),
        ((b"banner line\r\n>",), True),
        ((b"<xml>\r\n  <a>1</a>\r\n</xml>",), False),  # ends with '>' but not a prompt line
        ((b"a > b",), False),
        ((b"<tag\r\n", b">"), True),  # looks like one: the client waits briefly for more
        ((b">\r\n<more/>",), False),
        ((b"> x",), False),
        ((b"bsprof paused\r\n", b">\r\n"), True),  # the prompt's line ended: read alike
        ((b"status\n>\n",), True),
        ((b"\r\n>",), True),  # devices: '>' alone after a line break
    ],
)
def test_prompt_is_a_lone_gt_on_the_last_line(pieces: tuple[bytes, ...], prompt: bool) -> None:
    assert scan(*pieces).at_prompt is prompt


def test_reply_drops_the_prompt_and_the_echo() -> None:
    s = scan(b"bsprof-status\r\nstatus: running,cpu,mem,data_dest=network\r\n> ")
    assert s.take_reply("bsprof-status") == "status: running,cpu,mem,data_dest=network"
    assert s.text == ""


@pytest.mark.parametrize("prompt", [b"> ", b">", b">\r\n", b">\n"])
def test_reply_is_the_same_whichever_way_the_prompt_ends(prompt: bytes) -> None:
    s = scan(b"bsprof-status\r\nstatus: paused,cpu,data_dest=local\r\n" + prompt)
    assert s.at_prompt
    assert s.take_reply("bsprof-status") == "status: paused,cpu,data_dest=local"


def test_a_character_split_between_reads_is_kept_whole() -> None:
    data = "status: running,data_dest=réseau\r\n> ".encode()
    cut = data.index("é".encode()) + 1
    assert scan(data[:cut], data[cut:]).take_reply() == "status: running,data_dest=réseau"


def test_a_reply_over_the_cap_is_refused() -> None:
    s = PromptScanner(max_bytes=10)
    s.feed(b"0123456789")
    with pytest.raises(ProtocolError, match="reply larger than 10 B without a prompt"):
        s.feed(b"x")


def test_bsprof_status_parsing() -> None:
    st = parse_bsprof_status("status: running,cpu,mem,lines,data_dest=network")
    assert (st.state, st.metrics, st.data_dest) == ("running", ("cpu", "mem", "lines"), "network")
    assert parse_bsprof_status("status: paused,cpu,data_dest=local").state == "paused"
    assert parse_bsprof_status("No profiling session") is None
    with pytest.raises(ProtocolError):
        parse_bsprof_status("Command not recognized")


def test_chanperf_parsing() -> None:
    cp = parse_chanperf(
        "channel: mem=15156KiB{anon=2720,file=12392,shared=44},%cpu=7{user=1,sys=6}"
    )
    assert (cp.mem_kib, cp.cpu_percent) == (15156, 7)
    assert cp.mem == {"anon": 2720, "file": 12392, "shared": 44}
    assert cp.cpu == {"user": 1, "sys": 6}
    newer = parse_chanperf("channel: mem=100KiB{anon=1},%cpu=3{user=1,sys=2},gpu=9")
    assert (newer.mem_kib, newer.cpu_percent) == (100, 3)
    assert parse_chanperf("channel: mem and cpu data not available") is None
    with pytest.raises(ProtocolError):
        parse_chanperf("something else")


class ScriptedConsole:
    """A loopback console answering commands from a script (XML with '>' included)."""

    def __init__(self, banner: bytes, replies: dict[str, list[bytes]]) -> None:
        self.banner = banner
        self.replies = replies
        self.commands: list[str] = []
        self._handlers: set[asyncio.Task] = set()

    async def __aenter__(self) -> ScriptedConsole:
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.server.close()
        await asyncio.wait_for(self.server.wait_closed(), 5)
        await asyncio.wait_for(asyncio.gather(*self._handlers, return_exceptions=True), 5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._handlers.add(asyncio.current_task())
        writer.write(self.banner)
        await writer.drain()
        while line := await asyncio.wait_for(reader.readline(), 5):
            command = line.decode().strip()
            self.commands.append(command)
            if command == "quit":
                break
            for piece in self.replies.get(command, []):
                writer.write(piece)
                await writer.drain()
                await asyncio.sleep(0.02)
        writer.close()
        await writer.wait_closed()


async def test_xml_output_with_gt_is_not_taken_for_the_prompt() -> None:
    xml = [b"<device>\r\n  <name>a &gt; b</name>\r\n", b">\r\n", b"</device>\r\n", b">"]
    async with ScriptedConsole(b"Roku serial X1\r\n> ", {"dump": xml}) as con:
        async with ConsoleClient("127.0.0.1", con.port, timeout=2, settle=0.5) as client:
            assert client.banner == "Roku serial X1"
            reply = await client.command("dump")
        assert reply == "<device>\n  <name>a &gt; b</name>\n>\n</device>"
    assert con.commands == ["dump", "quit"]  # after the console's handler has finished


async def test_reply_without_a_prompt_ends_when_output_goes_quiet() -> None:
    replies = {"chanperf": [b"channel: mem=1KiB,%cpu=2\r\n"]}
    async with (
        ScriptedConsole(b"", replies) as con,
        ConsoleClient("127.0.0.1", con.port, timeout=2, quiet=0.2) as client,
    ):
        assert client.banner == ""
        perf = await client.chanperf()
    assert (perf.mem_kib, perf.cpu_percent) == (1, 2)


async def test_no_reply_at_all_times_out() -> None:
    async with (
        ScriptedConsole(b"> ", {}) as con,
        ConsoleClient("127.0.0.1", con.port, timeout=0.3) as client,
    ):
        with pytest.raises(DeviceTimeout, match="no reply to 'bsprof-status'"):
            await client.command("bsprof-status")


async def test_commands_round_trip_with_the_simulated_device() -> None:
    cfg = DeviceConfig(auto_launch=False, line_data=False)
    async with SimulatedDevice(cfg) as dev:
        async with ConsoleClient("127.0.0.1", dev.console_port, timeout=2) as client:
            assert "YN00AA000001" in client.banner
            assert await client.bsprof_status() is None
            assert await client.chanperf() is None
            await dev.launch()
            status = await client.bsprof_status()
            assert (status.state, status.metrics, status.data_dest) == (
                "running",
                ("cpu", "mem"),
                "network",
            )
            assert await client.bsprof_pause() == "bsprof paused"
            assert (await client.bsprof_status()).state == "paused"
            assert await client.bsprof_resume() == "bsprof resumed"
            assert (await client.bsprof_status()).state == "running"
            perf = await client.chanperf()
            assert perf.mem_kib and perf.mem_kib > 0
            assert perf.cpu_percent is not None
        await dev.home()
