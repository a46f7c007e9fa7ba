"""A daemon capturing a rack of devices behind one address (simulators sharing 127.0.0.1):
each has its own name (config ``name``, else serial, else ``<host>-<port>``), directory and
metric series, as Prometheus's own text parser reads the exposition; two configured devices that
would start with one name are a config error."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path

from daemon_helpers import metrics_scrapes, reap, sim, start_daemon, stop_daemon
from prometheus_client.parser import text_string_to_metric_families

from rokuprof.simulator import SimulatedDevice

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(path: Path, out: Path, port: int, devices: list[tuple[SimulatedDevice, str]]):
    lines = ["[capture]", f'out = "{out}"', "chunk_seconds = 1", "[metrics]"]
    lines.append(f'listen = "127.0.0.1:{port}"')
    for dev, name in devices:
        lines += ["[[devices]]", 'host = "127.0.0.1"', *([f'name = "{name}"'] if name else [])]
        lines += [f"{key} = {getattr(dev, key)}" for key in ("profiler_port", "ecp_port")]
        lines.append(f"console_port = {dev.console_port}")
    path.write_text("\n".join(lines) + "\n")
    path.chmod(0o600)


def device_series(text: str) -> tuple[set[str], Counter]:
    """The ``device`` labels of per-device families, and how often each series appears."""
    seen: Counter = Counter()
    labels = set()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            seen[(sample.name, tuple(sorted(sample.labels.items())))] += 1
            if family.name.startswith("rokuprof_device") and sample.labels.get("device"):
                labels.add(sample.labels["device"])
    return labels, seen


async def scrape_until(port: int, out: Path, dirs: int) -> tuple[str, str]:
    """The exposition as soon as it answers, and once ``dirs`` device directories hold a
    finished session."""
    first = ""
    async for text in metrics_scrapes(port):
        first = first or text
        done = [p for p in out.glob("*/*/session.json") if '"complete"' in p.read_text()]
        if len({p.parent.parent for p in done}) >= dirs:
            return first, text
    raise AssertionError("the scrapes ended")  # not reached: metrics_scrapes ends by timeout


async def run_until_sessions(
    tmp_path: Path, devices: list[tuple[SimulatedDevice, str]]
) -> tuple[str, str]:
    """Run the daemon (a process, metrics on a free port) over ``devices`` (each with its
    config name, ``""`` for none) until each device's directory holds a finished session: the
    first and the last exposition (see :func:`scrape_until`)."""
    out, config, log = tmp_path / "out", tmp_path / "daemon.toml", tmp_path / "daemon.log"
    port = free_port()
    proc = None
    async with contextlib.AsyncExitStack() as stack:
        for device, _ in devices:
            await stack.enter_async_context(device)
        write_config(config, out, port, devices)
        try:
            proc = await start_daemon(config, log)
            first, last = await scrape_until(port, out, len(devices))
            await stop_daemon(proc, log)
        finally:
            await reap(proc)
    return first, last


async def test_a_rack_behind_one_address_has_one_name_per_device(tmp_path: Path) -> None:
    # ECP disabled: no serial number, so only the rule's host fallback tells them apart
    a = SimulatedDevice(sim("YN00RACK0001", ecp_mode="disabled", seed=1))
    b = SimulatedDevice(sim("YN00RACK0002", ecp_mode="disabled", seed=2))
    c = SimulatedDevice(sim("YN00RACK0003", seed=3))
    out = tmp_path / "out"
    first, last = await run_until_sessions(tmp_path, [(a, ""), (b, ""), (c, "den")])
    want = {f"127.0.0.1-{a.profiler_port}", f"127.0.0.1-{b.profiler_port}", "den"}
    for text in (first, last):
        labels, seen = device_series(text)
        assert labels <= want and not [s for s, n in seen.items() if n > 1]
    assert device_series(last)[0] == want
    assert {p.name for p in out.iterdir()} == want
    den = json.loads(next((out / "den").glob("*/session.json")).read_text())
    assert den["device"]["serial"] == "YN00RACK0003"  # the name is the config's; serial kept


def test_two_devices_that_would_share_a_name_are_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text(
        '[[devices]]\nhost = "127.0.0.1"\nprofiler_port = 9000\n'
        '[[devices]]\nhost = "127.0.0.1"\nprofiler_port = 9001\n'
        '[[devices]]\nhost = "127.0.0.2"\nname = "127.0.0.1-9000"\n'
        '[[devices]]\nhost = "127.0.0.3"\nname = "den"\n'
        '[[devices]]\nhost = "127.0.0.4"\nname = "den"\n'
    )
    result = subprocess.run(
        [sys.executable, "-m", "rokuprof", "config", "check", str(config)],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout
    assert result.stderr.splitlines()[1:] == [
        "  devices: devices[0] and devices[2] would all be named '127.0.0.1-9000' (their directory"
        " and metric label): give each its own name",
        "  devices: devices[3] and devices[4] would all be named 'den' (their directory and"
        " metric label): give each its own name",
    ]


async def test_unnamed_devices_on_one_host_are_host_port_in_the_log_and_device_info(
    tmp_path: Path,
) -> None:
    """Before (here: without) an ECP answer, two unnamed devices behind 127.0.0.1 are
    ``127.0.0.1-<port>`` everywhere: the log's lines and every label of
    ``rokuprof_device_info``, never the bare host they share."""
    a = SimulatedDevice(sim("YN00HOST0001", ecp_mode="disabled", seed=4))
    b = SimulatedDevice(sim("YN00HOST0002", ecp_mode="disabled", seed=5))
    log = tmp_path / "daemon.log"
    first, last = await run_until_sessions(tmp_path, [(a, ""), (b, "")])
    want = {f"127.0.0.1-{a.profiler_port}", f"127.0.0.1-{b.profiler_port}"}
    for text in (first, last):
        infos = [
            sample.labels
            for family in text_string_to_metric_families(text)
            if family.name == "rokuprof_device_info"
            for sample in family.samples
        ]
        assert {i["device"] for i in infos} == {i["name"] for i in infos} == want, text
    lines = log.read_text().splitlines()
    for name in want:
        said = f"capturing {name} (127.0.0.1:{name.rsplit('-', 1)[1]}, from config)"
        assert any(line.endswith(said) for line in lines)
        assert any(f": {name}: session " in line for line in lines)
    assert not [line for line in lines if ": 127.0.0.1: " in line or "capturing 127.0.0.1 " in line]
