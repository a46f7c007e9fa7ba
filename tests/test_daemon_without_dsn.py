"""A daemon without a DSN, as a process against the simulator: nothing is pending upload, not
the chunks it writes nor those a past run left on disk; its metrics and log say uploads are off."""

from __future__ import annotations

import socket
from pathlib import Path

from daemon_helpers import (
    chunk_files,
    finished_session,
    metrics_scrapes,
    reap,
    sim,
    start_daemon,
    stop_daemon,
)
from prometheus_client.parser import text_string_to_metric_families

from rokuprof.simulator import SimulatedDevice


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def figures(text: str) -> dict[str, float]:
    """The exposition's unlabelled samples by name, as Prometheus's own parser reads them."""
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if not sample.labels
    }


async def test_without_a_dsn_no_chunk_is_pending_upload(tmp_path: Path) -> None:
    out, config, log = tmp_path / "out", tmp_path / "daemon.toml", tmp_path / "daemon.log"
    old = await finished_session(out)  # what a past run left: chunks without delivered/
    port = free_port()
    proc = None
    async with SimulatedDevice(sim("YN00NODSN001", run_seconds=2.0, seed=4)) as dev:
        config.write_text(
            f'[capture]\nout = "{out}"\nchunk_seconds = 1\n[metrics]\nlisten = "127.0.0.1:{port}"\n'
            f'[[devices]]\nhost = "127.0.0.1"\nprofiler_port = {dev.profiler_port}\n'
            f"ecp_port = {dev.ecp_port}\nconsole_port = {dev.console_port}\n"
        )
        config.chmod(0o600)
        try:
            proc = await start_daemon(config, log)
            scrapes: list[dict[str, float]] = []
            async for text in metrics_scrapes(port, interval=0.2):
                scrapes.append(figures(text))
                new = [p for p in chunk_files(out) if old not in p.parents]
                if new and len(scrapes) >= 5:
                    break
            await stop_daemon(proc, log)
        finally:
            await reap(proc)
    assert len(list((old / "chunks").glob("*.json"))) >= 3
    for seen in scrapes:
        assert seen["rokuprof_spool_pending_chunks"] == 0
        assert seen["rokuprof_uploads_enabled"] == 0
        assert seen["rokuprof_spool_pending_bytes"] == 0
        assert seen["rokuprof_spool_oldest_pending_age_seconds"] == 0
    text = log.read_text()
    assert "no DSN: chunks stay on disk" in text and "pending" not in text
    assert not list(out.glob("*/*/delivered"))
