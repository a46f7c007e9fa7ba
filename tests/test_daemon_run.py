"""The daemon end to end on loopback: simulated devices, a fake Sentry, metrics, shutdown."""

from __future__ import annotations

import json
import logging
import socket
from pathlib import Path

import httpx
import pytest
from daemon_helpers import Running, chunk_files, chunk_ids, daemon_config, record, sessions, sim
from fake_sentry import KEY, FakeSentry
from store_helpers import make_chunk
from waiting import until

from rokuprof.daemon.notify import Notifier
from rokuprof.simulator import SimulatedDevice
from rokuprof.store.files import write_atomic


async def test_two_devices_captured_and_every_chunk_delivered(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    out = tmp_path / "out"
    async with (
        FakeSentry() as sentry,
        SimulatedDevice(sim("SIM0001", seed=1)) as a,
        SimulatedDevice(sim("SIM0002", seed=2)) as b,
    ):
        cfg = daemon_config(out, [a, b], sentry.dsn)
        async with Running(cfg) as run:
            await until(lambda: len(sessions(out)) == 2, 10)
            await until(lambda: all(record(s)["status"] != "streaming" for s in sessions(out)), 10)
            await sentry.wait_for(lambda: len(sentry.accepted()) == len(chunk_files(out)), 10)
            await until(lambda: run.daemon.uploader.pending == 0, 5)
            # session.json is finished before the daemon's counters hear of it: scrape after
            slots = run.daemon.slots.values()
            await until(lambda: sum(s.counters.sessions["complete"] for s in slots) == 2, 5)
            port = run.daemon.metrics.port
            async with httpx.AsyncClient(timeout=2.0) as client:
                text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
                health = await client.get(f"http://127.0.0.1:{port}/healthz")
            assert await run.finish() == 0
        sent = {0: a.sent_bytes(0), 1: b.sent_bytes(0)}
    assert health.status_code == 200
    assert [record(s)["status"] for s in sessions(out)] == ["complete", "complete"]
    archives = sorted((s / "capture.bsprof").read_bytes() for s in sessions(out))
    assert archives == sorted(sent.values())
    assert len(chunk_files(out)) >= 2
    assert set(sentry.chunk_ids()) == chunk_ids(out)
    assert len(sentry.chunk_ids()) == len(chunk_files(out))  # each once
    assert 'rokuprof_sessions_total{device="SIM0001",status="complete"} 1' in text
    assert f'rokuprof_device_bytes_total{{device="SIM0002"}} {len(sent[1])}' in text
    assert "rokuprof_spool_pending_chunks 0" in text
    assert "rokuprof_spool_pending_bytes 0" in text
    uploaded = len(list((out / "SIM0001").glob("*/chunks/*.json")))
    assert f'rokuprof_chunks_uploaded_total{{device="SIM0001"}} {uploaded}' in text
    assert "rokuprof_spool_oldest_pending_age_seconds 0" in text
    assert "daemon ready: 2 device(s)" in caplog.text and KEY not in caplog.text


async def test_shutdown_mid_run_finishes_the_chunk_and_marks_interrupted(tmp_path: Path) -> None:
    out = tmp_path / "out"
    receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    receiver.bind(str(tmp_path / "notify.sock"))
    receiver.settimeout(2.0)
    notifier = Notifier({"NOTIFY_SOCKET": str(tmp_path / "notify.sock")})
    try:
        async with FakeSentry() as sentry, SimulatedDevice(sim("SIM0003", run_seconds=60)) as dev:
            cfg = daemon_config(out, [dev], sentry.dsn)
            async with Running(cfg, notifier=notifier, status_interval=30.0) as run:
                await until(lambda: len(sentry.accepted()) >= 1, 10)
                assert await run.finish() == 0
            sent = dev.sent_bytes(0)
        messages = []
        while True:
            try:
                messages.append(receiver.recv(4096).decode())
            except TimeoutError:
                break
            if messages[-1].startswith("STOPPING=1"):
                break
    finally:
        receiver.close()
    (session,) = sessions(out)
    assert record(session)["status"] == "interrupted"
    archive = (session / "capture.bsprof").read_bytes()
    assert sent.startswith(archive) and len(archive) > 0
    assert set(sentry.chunk_ids()) == chunk_ids(out)
    assert record(session)["chunks"] == len(chunk_files(out)) >= 1
    assert messages[0].startswith("READY=1\nSTATUS=1 device(s)")
    assert messages[-1].startswith("STOPPING=1")


async def test_start_up_repairs_a_crash_and_resumes_uploads(tmp_path: Path) -> None:
    out = tmp_path / "out"
    crashed = out / "SIM9" / "20261121T100000Z-deadbeef"
    chunk = make_chunk()
    write_atomic(crashed / "chunks" / "000001.json", json.dumps(chunk))
    (crashed / "chunks" / "000002.json.tmp").write_text('{"half')
    (crashed / "capture.bsprof").write_bytes(b"PROF" * 10)
    write_atomic(crashed / "session.json", json.dumps({"status": "streaming", "bytes": 0}))
    async with FakeSentry() as sentry:
        cfg = daemon_config(out, [], sentry.dsn)
        async with Running(cfg) as run:
            await sentry.wait_for(lambda: len(sentry.accepted()) == 1, 5)
            assert await run.finish() == 0
    rec = record(crashed)
    assert rec["status"] == "interrupted" and rec["bytes"] == 40 and rec["chunks"] == 1
    assert "crash" in rec["end_reason"]
    assert not list(out.rglob("*.tmp"))
    assert sentry.chunk_ids() == [chunk["chunk_id"]]


async def test_without_a_dsn_everything_stays_on_disk(tmp_path: Path) -> None:
    out = tmp_path / "out"
    async with SimulatedDevice(sim("SIM0004")) as dev:
        cfg = daemon_config(out, [dev], None)
        async with Running(cfg) as run:
            await until(
                lambda: sessions(out) and record(sessions(out)[0])["status"] != "streaming", 10
            )
            up = run.daemon.uploader
            await until(lambda: up.stats.spool.pending == len(chunk_files(out)), 5)
            metrics = {f.name: f.samples[0][1] for f in run.daemon.collect() if len(f.samples) == 1}
            assert await run.finish() == 0
        assert len(chunk_files(out)) > 0
        assert metrics["rokuprof_uploads_enabled"] == 0  # the chunks are the output
        assert metrics["rokuprof_spool_pending_chunks"] == 0
        assert metrics["rokuprof_spool_pending_bytes"] == 0
        assert metrics["rokuprof_spool_oldest_pending_age_seconds"] == 0
    assert record(sessions(out)[0])["status"] == "complete"
    assert chunk_files(out) and not list(out.glob("*/*/delivered"))
