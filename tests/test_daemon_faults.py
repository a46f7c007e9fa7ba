"""Proof: faulty devices and a difficult Sentry at once. Every device's session ends, the good
device is byte-perfect, every archive is a prefix of what its device sent, and every chunk on
disk reaches the fake Sentry (or is rejected with its reason), each chunk_id accepted once."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from daemon_helpers import Running, chunk_files, daemon_config, record, sessions, sim
from fake_sentry import FakeSentry, Reply, rate_limited
from waiting import until

from rokuprof.bsprof.grammar import build_entry
from rokuprof.simulator import Fault, SimulatedDevice


def by_device(out: Path) -> dict[str, Path]:
    return {s.parent.name: s for s in sessions(out)}


@pytest.mark.slow
async def test_faulty_devices_and_a_difficult_sentry(tmp_path: Path) -> None:
    rng = random.Random(20261121)
    out = tmp_path / "out"
    giant_string = build_entry((0, 7, "x" * 200_000), False)
    devices = {
        "GOOD": sim("GOOD", seed=11),
        "CUT": sim("CUT", seed=12, faults=(Fault("reset", rng.randint(200, 4000), run=0),)),
        "STALL": sim("STALL", seed=13, faults=(Fault("stall", rng.randint(200, 4000), run=0),)),
        "VARINT": sim(
            "VARINT",
            seed=14,
            faults=(Fault("garbage", rng.randint(200, 4000), run=0, data=b"\x80" * 300_000),),
        ),
        "STRING": sim(
            "STRING", seed=15, faults=(Fault("garbage", 2000, run=0, data=giant_string),)
        ),
    }
    async with FakeSentry() as sentry:
        sentry.script(rate_limited(0.4), Reply(500), Reply(hang=True), Reply(413), Reply(503))
        sims = [SimulatedDevice(cfg) for cfg in devices.values()]
        for dev in sims:
            await dev.start()
        try:
            cfg = daemon_config(out, sims, sentry.dsn)
            async with Running(cfg, capture={"idle_timeout": 1.0}) as run:
                await until(lambda: len(sessions(out)) == len(sims), 10)
                await until(
                    lambda: all(record(s)["status"] != "streaming" for s in sessions(out)), 15
                )
                up = run.daemon.uploader
                await until(lambda: up.pending == 0 and up.stats.rejected == 1, 15)
                assert await run.finish() == 0
            sent = {
                dev.config.serial: [dev.sent_bytes(i) for i in range(len(dev.runs))] for dev in sims
            }
        finally:
            for dev in sims:
                await dev.stop()

    found = by_device(out)
    status = {name: record(path)["status"] for name, path in found.items()}
    assert status["GOOD"] == "complete"
    assert status["CUT"] == "truncated"
    assert status["STALL"] == "truncated"
    assert status["VARINT"] == "failed" and status["STRING"] == "failed"
    for name in ("VARINT", "STRING"):
        (error,) = [e for e in record(found[name])["errors"] if e["kind"] == "decoder"]
        assert error["message"] and error["offset"] > 0
    for name, path in found.items():
        archive = (path / "capture.bsprof").read_bytes()
        assert any(run.startswith(archive) for run in sent[name]), name
    assert (found["GOOD"] / "capture.bsprof").read_bytes() == sent["GOOD"][0]

    on_disk = {json.loads(p.read_bytes())["chunk_id"] for p in chunk_files(out)}
    rejected = list(out.glob("*/*/rejected/*.reason.json"))
    assert len(rejected) == 1 and json.loads(rejected[0].read_text())["status"] == 413
    accepted = sentry.chunk_ids()
    assert len(accepted) == len(set(accepted))
    assert set(accepted) == on_disk  # every chunk still in chunks/ was delivered
    assert not list(out.rglob("*.tmp"))
