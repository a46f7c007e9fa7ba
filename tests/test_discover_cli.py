"""`rokuprof discover` as a real process: `--target` finds `rokuprof simulate`'s devices on
loopback (unicast M-SEARCH), and a machine with no route to the network gets the network error
and exit 1 (run in a network namespace of its own: nothing is sent to any LAN)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from daemon_helpers import reap, start_simulator
from loopback import needs_ipv6

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")


async def _rokuprof(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rokuprof",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=ENV,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    return proc.returncode or 0, out.decode(), err.decode()


async def test_target_finds_the_devices_of_rokuprof_simulate() -> None:
    sim = await start_simulator("--devices", "2", "--json", "--duration", "30")
    try:
        assert sim.stdout is not None
        rows = [json.loads(await asyncio.wait_for(sim.stdout.readline(), 15)) for _ in range(2)]
        targets = [arg for r in rows for arg in ("--target", f"127.0.0.1:{r['ssdp']}")]
        code, out, err = await _rokuprof("discover", "--timeout", "1", "--json", *targets)
    finally:
        sim.terminate()
        await reap(sim)
    assert code == 0, err
    found = {(d["serial"], d["ecp_port"]) for d in json.loads(out)}
    assert found == {(r["serial"], r["ecp"]) for r in rows}


def _isolated(*python: str) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in a new network namespace (no interface up, no route)."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("a network namespace of its own needs root and unshare")
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"cannot create a network namespace: {probe.stderr.decode().strip()}")
    return subprocess.run(
        ["unshare", "-n", sys.executable, *python],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
        check=False,
    )


def test_no_route_to_the_network_is_an_error_not_silence() -> None:
    result = _isolated("-m", "rokuprof", "discover", "--timeout", "1")
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.splitlines() == [
        "error: cannot send the SSDP search: no route to 239.255.255.250:1900"
        " (Network is unreachable)"
    ]
    assert "No Roku answered" not in result.stdout + result.stderr


def test_a_send_the_network_refuses_later_is_an_error_too() -> None:
    """Past the route check (here bypassed), the OS reports the refused send on a later
    receive: discover says it instead of "No Roku answered"."""
    script = (
        "import sys; from rokuprof.device import ssdp; ssdp.route_problem = lambda t: None\n"
        "from rokuprof.cli import main; sys.argv = ['rokuprof', 'discover', '--timeout', '1']\n"
        "main()"
    )
    result = _isolated("-c", script)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.splitlines() == [
        "error: cannot send the SSDP search: Network is unreachable"
    ]


@needs_ipv6
async def test_a_simulator_on_ipv6_loopback_is_found_and_shown_in_brackets() -> None:
    """`rokuprof simulate --host ::1`: its SSDP reply's LOCATION brackets the address (so it
    names the host that answered, not "another host"), and discover writes `[::1]:PORT`."""
    sim = await start_simulator("--host", "::1", "--json", "--duration", "30")
    try:
        assert sim.stdout is not None
        row = json.loads(await asyncio.wait_for(sim.stdout.readline(), 15))
        target = f"[::1]:{row['ssdp']}"
        code, out, err = await _rokuprof("discover", "--timeout", "1", "--json", "--target", target)
        assert code == 0, err
        code, table, err = await _rokuprof("discover", "--timeout", "1", "--target", target)
        assert code == 0, err
    finally:
        sim.terminate()
        await reap(sim)
    [found] = json.loads(out)
    assert found["location"] == f"http://[::1]:{row['ecp']}/" and found["location_trusted"]
    assert (found["address"], found["ecp_port"], found["serial"]) == (
        "::1",
        row["ecp"],
        row["serial"],
    )
    assert f"[::1]:{row['ecp']}" in table and "another host" not in table + err


@pytest.mark.parametrize(
    ("target", "advice"),
    [
        ("::1:9", "'::1:9' is ambiguous: write [::1]:9 for port 9 of ::1, or [::1:9]"),
        ("::1:65000", "write an IPv6 address with a port in brackets: [::1]:65000"),
    ],
)
async def test_an_ipv6_target_with_a_port_needs_brackets(target: str, advice: str) -> None:
    code, out, err = await _rokuprof("discover", "--timeout", "0.2", "--target", target)
    assert code == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("error: ") and advice in line


async def test_no_answer_from_a_target_names_it_and_does_not_advise_target() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as quiet:  # bound, never answers
        quiet.bind(("127.0.0.1", 0))
        port = quiet.getsockname()[1]
        code, out, err = await _rokuprof(
            "discover", "--timeout", "0.3", "--target", f"127.0.0.1:{port}"
        )
    assert code == 0 and out == ""
    assert f"No Roku answered at 127.0.0.1:{port} within 0.3 s" in err
    assert "--target" not in err
