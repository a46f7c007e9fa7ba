"""Prometheus text over a real loopback HTTP server, and /healthz; what the daemon's metrics,
health and discovery read from the state it hands them."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from rokuprof.daemon.collect import collect, health, status_line
from rokuprof.daemon.config import DeviceEntry, build_config
from rokuprof.daemon.daemon import Daemon
from rokuprof.daemon.discovery import Discovery, SearchSettings, device_key
from rokuprof.daemon.metrics import Family, MetricsServer, render
from rokuprof.daemon.notify import Notifier
from rokuprof.daemon.registry import DeviceNames
from rokuprof.device.ssdp import SsdpDevice


def test_render_text_format() -> None:
    text = render(
        [
            Family("rokuprof_bytes_total", "counter", "Bytes received.")
            .add(10, device="tv-1")
            .add(2.5, device='we"ird\\name\n'),
            Family("rokuprof_up", "gauge", "Running.").add(1),
        ]
    )
    assert text == (
        "# HELP rokuprof_bytes_total Bytes received.\n"
        "# TYPE rokuprof_bytes_total counter\n"
        'rokuprof_bytes_total{device="tv-1"} 10\n'
        'rokuprof_bytes_total{device="we\\"ird\\\\name\\n"} 2.5\n'
        "# HELP rokuprof_up Running.\n"
        "# TYPE rokuprof_up gauge\n"
        "rokuprof_up 1\n"
    )


async def test_metrics_and_healthz_over_http() -> None:
    state = {"ok": True, "n": 0}

    def collect():
        state["n"] += 1
        return [Family("rokuprof_scrapes", "counter", "Scrapes.").add(state["n"])]

    server = MetricsServer(collect, lambda: (state["ok"], "ok" if state["ok"] else "stalled"))
    server.port = 0
    async with server, httpx.AsyncClient(timeout=2.0) as client:
        base = f"http://127.0.0.1:{server.port}"
        r = await client.get(base + "/metrics")
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
        assert "rokuprof_scrapes 1\n" in r.text
        assert (await client.get(base + "/healthz")).text == "ok\n"
        state["ok"] = False
        r = await client.get(base + "/healthz")
        assert (r.status_code, r.text) == (503, "stalled\n")
        assert (await client.get(base + "/nope")).status_code == 404
        assert (await client.post(base + "/metrics")).status_code == 405


async def test_a_silent_client_does_not_block_others() -> None:
    server = MetricsServer(lambda: [Family("x", "gauge", "x").add(1)], port=0)
    async with server:
        _reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(b"GET /metr")  # never finishes its request
        async with httpx.AsyncClient(timeout=2.0) as client:
            r = await client.get(f"http://127.0.0.1:{server.port}/metrics")
            assert r.status_code == 200
        writer.close()
        await writer.wait_closed()


def _daemon(tmp_path: Path, **sections: object) -> Daemon:
    config = build_config({"capture": {"out": str(tmp_path)}, **sections}, env={})
    return Daemon(config, shutdown_trigger=asyncio.Event().wait, notifier=Notifier({}))


def test_collect_reads_the_state_it_is_handed_at_the_time_it_is_given(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    daemon.discovery.stats.last_error = "cannot search: no route"
    families = {f.name: f.samples for f in collect(daemon.state, now=50.0, wall=1000.0)}
    assert families["rokuprof_start_time_seconds"] == [({}, daemon.started_at)]
    assert families["rokuprof_spool_oldest_pending_age_seconds"] == [({}, 0.0)]
    assert families["rokuprof_discovery_devices"] == [({}, 0.0)]
    assert families["rokuprof_last_error_info"] == [
        ({"source": "discovery", "device": "", "message": "cannot search: no route"}, 1.0)
    ]
    assert families["rokuprof_device_state"] == []  # no device yet
    assert daemon.collect()[0].name == "rokuprof_device_bytes_total"  # the same, clocks read


def test_health_and_status_line(tmp_path: Path) -> None:
    daemon = _daemon(tmp_path)
    assert health(daemon.state) == (True, "ok") and daemon.alive()
    assert status_line(daemon.state) == "0 device(s): no devices; uploads off (no DSN)"
    with_dsn = _daemon(tmp_path, sentry={"dsn": "http://k@127.0.0.1:9/1"})
    assert status_line(with_dsn.state) == "0 device(s): no devices; 0 chunk(s) to upload"
    daemon.stopping = True
    assert health(daemon.state) == (False, "stopping") == daemon.health()


def _found(address: str, serial: str = "") -> SsdpDevice:
    return SsdpDevice(f"uuid:{address}", serial, address, 8060, "", True, "Roku")


def test_discovery_admits_up_to_the_cap_and_never_a_configured_host(tmp_path: Path) -> None:
    config = build_config({"discovery": {"enabled": True, "max_devices": 2}}, env={})
    added: list[DeviceEntry] = []
    slots: dict = {}

    def add(entry: DeviceEntry) -> object:
        added.append(entry)
        slots[device_key(entry)] = entry
        return entry

    discovery = Discovery(
        config.discovery,
        SearchSettings(1.0, (), ("127.0.0.1", 0), 1.0),
        configured_hosts=frozenset({"10.0.0.1"}),
        slots=slots,
        names=DeviceNames(),
        add_device=add,
        clock=lambda: 5.0,
    )
    for found in (_found("10.0.0.1"), _found("10.0.0.2", "YN1"), _found("10.0.0.2", "YN1")):
        discovery.offer(found)
    discovery.offer(_found("10.0.0.3"))
    discovery.offer(_found("10.0.0.4"))
    assert [(e.host, e.name) for e in added] == [("10.0.0.2", "YN1"), ("10.0.0.3", "10.0.0.3")]
    assert (len(discovery.registry), discovery.registry.ignored) == (2, 1)
