"""Small edges a new user meets (issue 19 row 5), each as a real ``rokuprof`` process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from rokuprof.store.retention import RetentionPolicy, enforce

ROOT = Path(__file__).resolve().parents[1]
FULL = ROOT / "samples" / "cafe-tv-full.bsprof"
CUT = ROOT / "samples" / "cafe-tv-cut-short.bsprof"


def rokuprof(*args: object) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80")
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", *map(str, args)],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip


def test_diff_text_says_a_problem_once_and_uses_one_minus_sign() -> None:
    proc = rokuprof("diff", CUT, FULL)
    assert proc.returncode == 3, proc.stderr
    assert "incomplete: the stream stops" in proc.stdout
    assert "incomplete: incomplete" not in proc.stdout
    assert "\u2212" not in proc.stdout  # ASCII "-" everywhere, as in the growth column
    assert "(B - A)" in proc.stdout


def test_diff_json_run_lengths_are_rounded() -> None:
    proc = rokuprof("diff", CUT, FULL, "--json")
    report = json.loads(proc.stdout)
    assert (report["a"]["seconds"], report["b"]["seconds"]) == (10.91, 45.12)


def test_inspect_top_0_lists_everything_as_diff_top_0_does() -> None:
    every = json.loads(rokuprof("inspect", FULL, "--top", "0", "-j").stdout)
    many = json.loads(rokuprof("inspect", FULL, "--top", "100000", "-j").stdout)
    assert every == many and len(every["functions"]) == 31
    assert rokuprof("inspect", FULL, "--top", "-1").returncode == 2


def test_retention_says_one_day_in_the_singular(tmp_path: Path) -> None:
    session = tmp_path / "dev" / "20260101T000000Z-1"
    session.mkdir(parents=True)
    (session / "session.json").write_text('{"status": "complete"}')
    os.utime(session / "session.json", (0, 0))
    os.utime(session, (0, 0))
    (done,) = enforce(tmp_path, RetentionPolicy(max_age_seconds=86400), now=10 * 86400)
    assert done.reason == "older than 1 day"


def test_config_check_says_one_day_in_the_singular() -> None:
    from rokuprof.daemon.config import build_config

    one = build_config({"retention": {"max_age_days": 1}}, env={}).summary()
    two = build_config({"retention": {"max_age_days": 2}}, env={}).summary()
    assert any("older than 1 day " in f"{line} " for line in one)
    assert any("older than 2 days" in line for line in two)
