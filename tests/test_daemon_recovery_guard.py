"""Recovery cannot loop (issue 18): a crashed session whose conversion raises, goes over its
budget or kills the daemon is set aside, recorded in its ``session.json`` with one log line, and
every later start skips it and becomes ready. The rules are tested with plain data; the
behaviour with the daemon as a real process, real files and a real ``SIGKILL``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from daemon_helpers import reap, record, sim, stop_daemon
from scripted_clock import ScriptedClock

from rokuprof.daemon import recovery
from rokuprof.daemon.config import ConfigError, build_config
from rokuprof.daemon.recovery import recover
from rokuprof.daemon.recovery_marker import MARKER_FILE, read_marker
from rokuprof.daemon.recovery_policy import (
    Action,
    BudgetWatch,
    OverBudget,
    Plan,
    RecoveryBudget,
    plan_session,
)
from rokuprof.simulator import SimulatedDevice
from rokuprof.timefmt import utc_iso

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "cafe-tv-full.bsprof"
FAULTS = Path(__file__).resolve().parent / "recovery_faults.py"
CRASHED = {"status": "interrupted", "errors": [{"kind": "crash", "message": "killed"}]}


# -- the rules, with plain data ------------------------------------------------------------------


def test_what_start_up_does_with_a_session() -> None:
    budget = RecoveryBudget(max_attempts=2)
    assert plan_session(CRASHED, None, budget) == Plan(Action.CONVERT, attempt=1)
    assert plan_session(CRASHED, {"attempt": 1}, budget) == Plan(Action.CONVERT, attempt=2)
    assert plan_session(CRASHED, {}, budget) == Plan(Action.CONVERT, attempt=2)  # unreadable: 1
    killed = plan_session(CRASHED, {"attempt": 2, "started": "2026-01-01T00:00:00Z"}, budget)
    assert killed.action is Action.SET_ASIDE
    assert "died during 2 conversion(s)" in killed.reason
    assert "the last one started 2026-01-01T00:00:00Z" in killed.reason
    once = RecoveryBudget(max_attempts=1)
    assert plan_session(CRASHED, {"attempt": 1}, once).action is Action.SET_ASIDE
    # Recovered, or set aside, before the marker could go: only the marker is removed.
    for done in ({"recovered": {}}, {"recovery_failed": {"reason": "error"}}):
        assert plan_session(CRASHED | done, {"attempt": 2}, budget) == Plan(Action.CLEAR)
        assert plan_session(CRASHED | done, None, budget) == Plan(Action.NOTHING)
    finished = {"status": "complete", "errors": []}
    assert plan_session(finished, None, budget) == Plan(Action.NOTHING)
    broken = {"status": "interrupted", "errors": ["not an object"]}
    assert plan_session(broken, None, budget) == Plan(Action.NOTHING)


def test_a_conversion_is_measured_against_its_budget() -> None:
    clock, resident = ScriptedClock(100.0), [1000]
    budget = RecoveryBudget(max_seconds=10, max_memory=500)
    watch = BudgetWatch(budget, clock=clock, memory=lambda: resident[0])
    clock.now, resident[0] = 110.0, 1500  # exactly at both limits: still within
    watch.check()
    clock.now = 110.5
    with pytest.raises(OverBudget, match=r"time budget: 10\.5 s, the budget is 10 s"):
        watch.check()
    clock.now, resident[0] = 101.0, 1501
    with pytest.raises(OverBudget, match="memory budget"):
        watch.check()
    unknown = BudgetWatch(budget, clock=clock, memory=lambda: None)
    unknown.check()  # memory that cannot be read is not checked; time still is


def test_the_recovery_section_of_the_config() -> None:
    assert build_config({}, env={}).recovery == RecoveryBudget()
    cfg = build_config(
        {"recovery": {"max_seconds": 30, "max_memory": "512MiB", "max_attempts": 1}}, env={}
    )
    assert cfg.recovery == RecoveryBudget(30.0, 512 << 20, 1)
    summary = "\n".join(cfg.summary())
    assert "recovery: each crashed session within 30 s and 512 MiB more memory" in summary
    with pytest.raises(ConfigError) as err:
        build_config(
            {"recovery": {"max_seconds": -1, "max_memory": "lots", "max_attempts": 0}}, env={}
        )
    assert [e.split(":")[0] for e in err.value.errors] == [
        "recovery.max_seconds",
        "recovery.max_memory",
        "recovery.max_attempts",
    ]


# -- recover() on real files ---------------------------------------------------------------------


def crashed_session(out: Path, device: str = "CRASHED1") -> Path:
    """A session a kill -9 left: the archive on disk (a real capture), no chunk yet, the record
    still ``streaming``."""
    start = time.time() - 60
    session = out / device / f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime(start))}.000Z-0a1b2c3d"
    session.mkdir(parents=True)
    shutil.copyfile(SAMPLE, session / "capture.bsprof")
    rec = {
        "format": 1,
        "session": session.name,
        "device": {"dir": device},
        "status": "streaming",
        "start": utc_iso(start),
        "profiler_id": uuid.uuid4().hex,
        "errors": [],
    }
    (session / "session.json").write_text(json.dumps(rec))
    return session


def test_the_marker_is_on_disk_while_a_session_converts_and_gone_after(
    tmp_path: Path, monkeypatch
) -> None:
    session = crashed_session(tmp_path)
    seen: list[dict | None] = []
    real = recovery.CatchUp

    class Watching(real):
        def feed(self, data):
            seen.append(read_marker(recovery.SessionDir(session)))
            super().feed(data)

    monkeypatch.setattr(recovery, "CatchUp", Watching)
    result = recover(tmp_path)
    assert result.converted_sessions == [session] and result.chunks_written
    assert seen and seen[0]["attempt"] == 1 and seen[0]["pid"] == os.getpid()
    assert not (session / MARKER_FILE).exists() and "recovered" in record(session)


# -- the daemon as a process ---------------------------------------------------------------------


@contextlib.contextmanager
def notify_socket() -> Iterator[tuple[str, socket.socket]]:
    """An sd_notify socket, as systemd gives a Type=notify service (a short path: AF_UNIX)."""
    where = tempfile.mkdtemp(prefix="rp-")
    path = os.path.join(where, "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(path)
        sock.setblocking(False)
        yield path, sock
    finally:
        sock.close()
        shutil.rmtree(where, ignore_errors=True)


class Start:
    """One start of ``rokuprof daemon`` (through :mod:`recovery_faults` when ``fault``)."""

    def __init__(self, config: Path, log: Path, notify: tuple[str, socket.socket]) -> None:
        self.config, self.log, self.notify = config, log, notify
        self.proc: asyncio.subprocess.Process | None = None

    async def launch(self, fault: str | None = None) -> asyncio.subprocess.Process:
        env = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_USEC", "WATCHDOG_PID")}
        env.pop("ROKUPROF_SENTRY_DSN", None)
        env["NOTIFY_SOCKET"] = self.notify[0]
        entry = [str(FAULTS), fault] if fault else ["-m", "rokuprof"]
        with self.log.open("ab") as stderr:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable,
                *entry,
                "daemon",
                "--config",
                str(self.config),
                stdout=asyncio.subprocess.DEVNULL,
                stderr=stderr,
                env=env,
            )
        return self.proc

    async def ready(self, timeout: float = 60.0) -> bool:
        """Wait for ``READY=1``; ``False`` if the process ended first."""
        loop = asyncio.get_running_loop()
        sock = self.notify[1]
        async with asyncio.timeout(timeout):
            while True:
                got = asyncio.ensure_future(loop.sock_recv(sock, 65536))
                ended = asyncio.ensure_future(self.proc.wait())
                await asyncio.wait({got, ended}, return_when=asyncio.FIRST_COMPLETED)
                ended.cancel()
                if got.done() and got.result().startswith(b"READY=1"):
                    return True
                if not got.done():
                    got.cancel()
                    return False

    async def healthz(self) -> tuple[int, str]:
        port = re.findall(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", self.log.read_text())
        async with httpx.AsyncClient() as client:
            answer = await client.get(f"http://127.0.0.1:{port[-1]}/healthz", timeout=5)
        return answer.status_code, answer.text


def write_config(path: Path, out: Path, dev: SimulatedDevice, extra: str = "") -> None:
    path.write_text(
        f'[capture]\nout = "{out}"\n[metrics]\nlisten = "127.0.0.1:0"\n{extra}\n'
        f'[[devices]]\nhost = "127.0.0.1"\nname = "IDLE"\nprofiler_port = {dev.profiler_port}\n'
        f"ecp_port = {dev.ecp_port}\nconsole_port = {dev.console_port}\n"
    )


def set_aside_lines(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if " set aside: " in line]


@contextlib.asynccontextmanager
async def daemon_setup(tmp_path: Path, extra: str = ""):
    """An idle simulated Roku (so /healthz can say ok), a crashed session, a config and the
    means to start the daemon on them."""
    out = tmp_path / "out"
    session = crashed_session(out)
    config, log = tmp_path / "rokuprof.toml", tmp_path / "daemon.log"
    async with SimulatedDevice(sim("IDLE", runs=0)) as dev:
        write_config(config, out, dev, extra)
        with notify_socket() as notify:
            start = Start(config, log, notify)
            try:
                yield session, start
            finally:
                await reap(start.proc)


async def assert_ready_and_healthy(start: Start) -> None:
    assert await start.ready(), start.log.read_text()[-3000:]
    status = await start.healthz()
    assert status == (200, "ok\n"), status


async def test_a_conversion_that_kills_the_daemon_is_set_aside_and_the_next_start_is_ready(
    tmp_path: Path,
) -> None:
    async with daemon_setup(tmp_path) as (session, start):
        for attempt in (1, 2):  # max_attempts = 2: the conversion kills the daemon twice
            proc = await start.launch("kill")
            assert await asyncio.wait_for(proc.wait(), 60) == -signal.SIGKILL
            assert json.loads((session / MARKER_FILE).read_text())["attempt"] == attempt
            assert "recovery_failed" not in record(session)
        await start.launch("kill")  # the same fault: never reached again
        await assert_ready_and_healthy(start)
        failed = record(session)["recovery_failed"]
        assert failed["reason"] == "killed"
        assert "the daemon died during 2 conversion(s)" in failed["message"]
        assert {"kind": "recovery", "message": failed["message"]} in record(session)["errors"]
        assert not (session / MARKER_FILE).exists()
        [line] = set_aside_lines(start.log)
        assert session.name in line and "recovery failed: the daemon died" in line
        await stop_daemon(start.proc, start.log)
        await start.launch("kill")  # every later start skips it, silently
        await assert_ready_and_healthy(start)
        await stop_daemon(start.proc, start.log)
    assert len(set_aside_lines(start.log)) == 1 and "recovered" not in record(session)


@pytest.mark.parametrize(
    ("fault", "message"),
    [("raise", "RuntimeError: injected converter failure"), ("memory", "MemoryError")],
)
async def test_a_conversion_that_raises_is_set_aside_and_skipped_at_the_next_start(
    tmp_path: Path, fault: str, message: str
) -> None:
    async with daemon_setup(tmp_path) as (session, start):
        await start.launch(fault)
        await assert_ready_and_healthy(start)
        failed = record(session)["recovery_failed"]
        assert failed["reason"] == "error" and failed["message"] == f"recovery failed: {message}"
        assert not (session / MARKER_FILE).exists()
        [line] = set_aside_lines(start.log)
        assert session.name in line and message in line
        await stop_daemon(start.proc, start.log)
        chunks = sorted((session / "chunks").glob("*.json"))
        await start.launch()  # the real converter now: the session stays aside
        await assert_ready_and_healthy(start)
        await stop_daemon(start.proc, start.log)
    assert len(set_aside_lines(start.log)) == 1
    assert "recovered" not in record(session)
    assert sorted((session / "chunks").glob("*.json")) == chunks


async def test_a_conversion_over_its_budget_is_set_aside(tmp_path: Path) -> None:
    tiny = "[recovery]\nmax_seconds = 0.000001\n"  # a normal archive takes longer than that
    async with daemon_setup(tmp_path, tiny) as (session, start):
        await start.launch()
        await assert_ready_and_healthy(start)
        failed = record(session)["recovery_failed"]
        assert failed["reason"] == "budget"
        assert failed["message"].startswith("recovery failed: over its time budget: ")
        assert "the budget is 1e-06 s" in failed["message"]
        [line] = set_aside_lines(start.log)
        assert "over its time budget" in line
        await stop_daemon(start.proc, start.log)
    assert not (session / MARKER_FILE).exists() and "recovered" not in record(session)


async def test_an_ordinary_crashed_session_is_converted_by_the_daemon(tmp_path: Path) -> None:
    async with daemon_setup(tmp_path) as (session, start):
        await start.launch()
        await assert_ready_and_healthy(start)
        await stop_daemon(start.proc, start.log)
    rec = record(session)
    assert rec["status"] == "interrupted" and rec["recovered"]["chunks"] >= 1
    assert len(list((session / "chunks").glob("*.json"))) == rec["recovered"]["chunks"]
    assert "recovery_failed" not in rec and not (session / MARKER_FILE).exists()
    assert not set_aside_lines(start.log)
