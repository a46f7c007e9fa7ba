"""The scale benchmark's quick mode as a smoke test: a real daemon subprocess, three replay
devices and a fake Sentry on loopback; every byte offered is absorbed, every chunk uploaded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_scale_run_absorbs_every_byte_and_uploads_every_chunk() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "daemon_scale.py"), "--quick", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["devices"] == 3 and result["exit_code"] == 0
    # offered vs absorbed: no device fell behind its schedule, every byte sent was archived
    assert result["devices_behind_over_limit"] == []
    assert result["devices_not_fully_archived"] == []
    assert result["sent_mb"] == result["archived_mb"] > 1.0
    assert result["offered_mb"] >= result["absorbed_mb"] > 0.9 * result["offered_mb"]
    # every chunk uploaded once by shutdown
    assert result["chunks_written"] > 3
    assert result["chunks_uploaded"] == result["chunks_written"]
    assert result["chunks_pending_at_shutdown"] == 0 and result["chunks_sent_twice"] == 0
    assert set(result["sessions"]) == {"complete"}
    assert all(result["checks"].values()), result["checks"]
