"""Prometheus text over a real loopback HTTP server, and /healthz."""

from __future__ import annotations

import asyncio

import httpx

from rokuprof.daemon.metrics import Family, MetricsServer, render


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
