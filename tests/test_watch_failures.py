"""``rokuprof watch`` ends well when its capture fails midway (issue 18, row 6): a full disk (a
real, tiny tmpfs), an unexpected exception in the loop, a device directory that is a link. The
run in progress is finished with its cause and every byte the archive took, one ``error:`` line,
exit status 1, no traceback. Real processes against the simulated device on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from daemon_helpers import cap_config
from disk_helpers import fill, mounted_small_disk
from waiting import until
from watch_helpers import finish, watching

from rokuprof.capture.limits import ArchiveLimits
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.store.files import RESERVE_BYTES, SpaceReserve
from rokuprof.workflows.watch import summary_json, watch

SERIAL = "YN00AA000001"  # the simulator's default serial: the device directory's name
#: The chunk writer raises after the first chunk (a bug anywhere in the loop looks like this).
FAULTY_WRITER = """
import sys
from rokuprof.capture import session
real = session.SessionFiles.write_chunk
async def write_chunk(self, chunk):
    if self.chunks_written >= 1:
        raise RuntimeError("injected fault in the chunk writer")
    return await real(self, chunk)
session.SessionFiles.write_chunk = write_chunk
from rokuprof.cli import main
sys.argv[0] = "rokuprof"
main()
"""


def the_session(out: Path) -> Path:
    [session] = [p for p in (out / SERIAL).iterdir() if p.is_dir()]
    return session


def assert_one_error_line(err: str, starts: str) -> str:
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {starts}"), lines
    return lines[0]


def assert_finished(session: Path, status: str, sent: bytes) -> dict:
    """``session.json`` is final with its cause; the archive is a prefix of what the device
    sent, and all of what the record counts."""
    record = json.loads((session / "session.json").read_text("utf-8"))
    archive = (session / "capture.bsprof").read_bytes()
    assert record["status"] == status and record["end"] is not None
    assert record["errors"][-1]["kind"] == "capture"
    assert record["end_reason"].startswith(record["errors"][-1]["message"])
    assert archive and sent.startswith(archive) and record["bytes"] == len(archive)
    assert record["chunks"] == len(list((session / "chunks").glob("*.json")))
    assert not list(session.rglob("*.tmp"))
    return record


@pytest.fixture
def small_disk(tmp_path: Path):
    """A 1 MiB tmpfs (root only), unmounted afterwards."""
    with mounted_small_disk(tmp_path / "disk") as disk:
        yield disk


def test_a_space_reserve_gives_back_room_on_a_full_disk(small_disk: Path) -> None:
    reserve = SpaceReserve(small_disk)
    assert reserve.held
    fill(small_disk)
    with pytest.raises(OSError):
        (small_disk / "record.json").write_bytes(b"x" * 4096)
    reserve.release()
    (small_disk / "record.json").write_bytes(b"x" * (RESERVE_BYTES // 2))  # room again


async def test_a_disk_that_fills_mid_run_ends_the_watch_with_one_error_line(
    small_disk: Path,
) -> None:
    out = small_disk / "out"
    cfg = DeviceConfig(run_seconds=120.0, runs=1, seed=5, cpu_flush_seconds=0.2)
    async with SimulatedDevice(cfg) as dev:
        extra = ("--runs", "1", "--min-free-bytes", "0", "--chunk-seconds", "1")
        async with watching(dev, out, *extra, "--hold-seconds", "1") as proc:
            await until(lambda: list(out.glob("*/*/chunks/000001.json")), 20)
            fill(small_disk)  # the disk is full from the run's next write on, and stays full
            code, stdout, err = await finish(proc, 30)
        sent = dev.sent_bytes(0)
    assert code == 1, err
    line = assert_one_error_line(err, "the capture stopped: [Errno 28] No space left on device")
    session = the_session(out)
    assert line.endswith(f"session {session} ended truncated")
    record = assert_finished(session, "truncated", sent)
    assert "No space left on device" in record["end_reason"]
    assert "the disk stayed full for 1 s (hold_seconds)" in line  # held first, then gave up
    assert "truncated" in stdout and str(session) in stdout  # the summary still comes


async def test_an_unexpected_exception_in_the_loop_fails_the_run_with_its_cause(
    tmp_path: Path,
) -> None:
    cfg = DeviceConfig(run_seconds=60.0, runs=1, seed=6, cpu_flush_seconds=0.2)
    async with SimulatedDevice(cfg) as dev:
        extra = ("--runs", "1", "--chunk-seconds", "0.5", "--json")
        async with watching(dev, tmp_path, *extra, bootstrap=FAULTY_WRITER) as proc:
            code, stdout, err = await finish(proc, 30)
        sent = dev.sent_bytes(0)
    assert code == 1, err
    cause = "the capture failed: RuntimeError: injected fault in the chunk writer"
    line = assert_one_error_line(err, cause)
    session = the_session(tmp_path)
    assert line.endswith(f"session {session} ended failed")
    record = assert_finished(session, "failed", sent)
    assert record["chunks"] == 1
    assert "RuntimeError: injected fault" in record["errors"][-1]["detail"]  # the traceback
    report = json.loads(stdout)
    assert report["error"] == line.removeprefix("error: ")
    assert [s["status"] for s in report["sessions"]] == ["failed"]


async def test_a_linked_device_directory_ends_the_watch_with_one_error_line(
    tmp_path: Path,
) -> None:
    out, target = tmp_path / "out", tmp_path / "elsewhere"
    (target / "nested").mkdir(parents=True)
    (target / "nested" / "old.tmp").write_bytes(b"not rokuprof's")
    out.mkdir()
    (out / SERIAL).symlink_to(target, target_is_directory=True)
    cfg = DeviceConfig(run_seconds=1.0, runs=1, seed=7, speed=4.0)
    async with SimulatedDevice(cfg) as dev, watching(dev, out, "--runs", "1", "-q") as proc:
        code, _, err = await finish(proc, 30)
    assert code == 1, err
    assert_one_error_line(err, f"the capture stopped: {out / SERIAL} is a symbolic link")
    assert sorted(p.relative_to(target) for p in target.rglob("*")) == [
        Path("nested"),
        Path("nested/old.tmp"),
    ]  # no session written there, nothing swept there


async def test_the_library_call_finishes_the_run_after_any_exception(tmp_path: Path) -> None:
    """Through a public seam, no patching: the free-space probe breaks once the run streams."""
    out = tmp_path / "out"

    def broken_probe(path: Path) -> int:
        if list(out.glob("*/*/session.json")):
            raise ZeroDivisionError("the probe broke")
        return 1 << 40

    async with SimulatedDevice(DeviceConfig(run_seconds=30.0, runs=1, seed=8)) as dev:
        config = cap_config(
            dev,
            out,
            runs=1,
            free_space=broken_probe,
            archive_limits=ArchiveLimits(min_free_bytes=1),
        )
        summary = await asyncio.wait_for(watch(config, view="quiet", signals=False), 20)
        sent = dev.sent_bytes(0)
    cause = "the capture failed: ZeroDivisionError: the probe broke"
    [captured] = summary.sessions
    assert summary.failure == f"{cause}; session {captured.path} ended failed"
    assert captured.record.status == "failed"
    assert_finished(captured.path, "failed", sent)
    assert summary_json(summary)["error"] == summary.failure
