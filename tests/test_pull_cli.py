"""``rokuprof pull HOST`` as a user runs it (a real process) against a simulated Roku whose app
was sideloaded in local mode; and ``rokuprof simulate`` printing the installer's password."""

from __future__ import annotations

import asyncio
import io
import json
import os
import sys
import zipfile
from pathlib import Path

from daemon_helpers import start_simulator
from disk_helpers import fill, mounted_small_disk

from rokuprof.device.installer import InstallerClient
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry import validate_chunk
from rokuprof.simulator import DeviceConfig, Fault, SimulatedDevice

PASSWORD = "local-Secret-42"
LOCAL_APP = (
    "title=Pulled App\nmajor_version=2\nminor_version=0\nbsprof_enable=1\nbsprof_enable_mem=1\n"
)
REPO = Path(__file__).resolve().parents[1]
SAMPLE_APP = REPO / "samples" / "app"


def app_zip(manifest: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("manifest", manifest)
        for path in sorted(SAMPLE_APP.rglob("*.*")):  # samples/app's code: a profile of some size
            z.write(path, path.relative_to(SAMPLE_APP).as_posix())
    return buf.getvalue()


def device(**overrides) -> SimulatedDevice:
    config = dict(auto_launch=False, speed=20.0, run_seconds=2.0, dev_password=PASSWORD)
    return SimulatedDevice(DeviceConfig(**(config | overrides)))


async def local_run(dev: SimulatedDevice) -> None:
    """Sideload the local-mode app (the install launches it) and wait until it exits."""
    async with InstallerClient("127.0.0.1", PASSWORD, port=dev.installer_port) as client:
        assert (await client.sideload(app_zip(LOCAL_APP))).kind == "installed"
    await dev.wait_run_end(0, 15)


async def pull(
    dev: SimulatedDevice, out: Path, *args: str, password: str | None = PASSWORD
) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ROKU_DEV_PASSWORD"}
    env["PYTHONPATH"] = str(REPO)
    if password is not None:
        env["ROKU_DEV_PASSWORD"] = password
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "rokuprof",
        "pull",
        "127.0.0.1",
        "--installer-port",
        str(dev.installer_port),
        "--ecp-port",
        str(dev.ecp_port),
        "--out",
        str(out),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    async with asyncio.timeout(60):
        stdout, stderr = await proc.communicate()
    return proc.returncode, stdout.decode(), stderr.decode()


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


async def test_pull_writes_a_complete_session_of_a_local_mode_run(tmp_path):
    out = tmp_path / "out"
    async with device() as dev:
        await local_run(dev)
        status, stdout, stderr = await pull(dev, out)
        kept = dev._installer.profile
    assert (status, stderr) == (0, "")
    session = Path(stdout.strip())
    assert session.parent == out / "YN00AA000001"  # named by the serial ECP gave
    record = json.loads((session / "session.json").read_text())
    archive = (session / "capture.bsprof").read_bytes()
    assert archive == kept
    assert record["status"] == "complete"
    assert record["bytes"] == len(archive)
    assert record["app"] == {"name": "Pulled App", "version": "2.0"}
    assert record["profiler"]["data_dest"] == "local"
    assert record["profiler"]["end_ms"] is not None
    assert ProfileReader.from_bytes(archive).complete
    assert record["entries"] == ProfileReader.from_bytes(archive).entry_count
    for path in files_under(tmp_path):  # the password is in no file written
        assert PASSWORD.encode() not in path.read_bytes(), path


async def test_a_pulled_session_is_finished_like_a_captured_one(tmp_path):
    """The session layout a capture leaves: chunks/ (as many as `rokuprof convert` makes of
    the archive, each a valid V2 chunk, counted in session.json) and report.html; also for a
    profile cut short."""
    out = tmp_path / "out"
    async with device() as dev:
        await local_run(dev)
        status, stdout, stderr = await pull(dev, out)
    async with device(faults=(Fault("close", 4000),)) as dev:  # after the first CPU flush
        await local_run(dev)
        cut_status, cut_stdout, _ = await pull(dev, tmp_path / "cut")
    assert (status, stderr, cut_status) == (0, "", 3)
    for session in (Path(stdout.strip()), Path(cut_stdout.strip())):
        record = json.loads((session / "session.json").read_text())
        chunks = sorted((session / "chunks").glob("*.json"))
        assert chunks and record["chunks"] == len(chunks), record
        assert all(validate_chunk(json.loads(c.read_bytes())) == [] for c in chunks)
        assert record["chunk_report"]["chunks"] == len(chunks) and record["errors"] == []
        converted = tmp_path / f"converted-{session.parent.parent.name}"
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "rokuprof", "convert", str(session / "capture.bsprof"),
            "--out", str(converted), env=dict(os.environ, PYTHONPATH=str(REPO)),
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        await asyncio.wait_for(proc.wait(), 60)
        assert len(list((converted / "chunks").glob("*.json"))) == len(chunks)
        report = (session / "report.html").read_text()
        assert "Pulled App" in report
    tmp_files = [p for p in files_under(tmp_path) if p.name.endswith(".tmp")]
    assert tmp_files == []


async def test_pull_with_a_password_file_and_json(tmp_path):
    secret = tmp_path / "password"
    secret.write_text(PASSWORD + "\n")
    async with device() as dev:
        await local_run(dev)
        status, stdout, _ = await pull(
            dev, tmp_path / "out", "--password-file", str(secret), "--json", password="wrong"
        )
    assert status == 0
    said = json.loads(stdout)
    assert said["status"] == "complete" and Path(said["path"]).is_dir()
    assert PASSWORD not in stdout


async def test_no_profiling_data_available(tmp_path):
    out = tmp_path / "out"
    async with device() as dev:
        status, stdout, stderr = await pull(dev, out)
    assert (status, stdout) == (3, "")
    assert stderr == "127.0.0.1: No profiling data available (nothing was written)\n"
    assert files_under(out) == []


async def test_wrong_password_is_one_line_and_exit_2(tmp_path):
    async with device() as dev:
        await local_run(dev)
        status, stdout, stderr = await pull(dev, tmp_path / "out", password="guess")
        _, _, unset = await pull(dev, tmp_path / "out", password=None)
    assert (status, stdout) == (2, "")
    assert stderr.startswith("error: the device refused the developer password")
    assert stderr.count("\n") == 1 and "guess" not in stderr and PASSWORD not in stderr
    assert unset == (
        "error: no developer password: set ROKU_DEV_PASSWORD or give --password-file FILE\n"
    )
    assert files_under(tmp_path / "out") == []


async def test_a_cut_short_profile_is_truncated(tmp_path):
    async with device(faults=(Fault("close", 700),)) as dev:
        await local_run(dev)
        status, stdout, stderr = await pull(dev, tmp_path / "out")
    assert status == 3
    record = json.loads((Path(stdout.strip()) / "session.json").read_text())
    assert (record["status"], record["bytes"]) == ("truncated", 700)
    assert "the stream stops at byte 700" in record["end_reason"]
    assert stderr.startswith("warning: the profile is truncated")


async def test_simulate_prints_the_installer_and_its_password():
    proc = await start_simulator("--json", "--auto-launch", "--runs", "1", "--speed", "20")
    try:
        async with asyncio.timeout(15):
            row = json.loads(await proc.stdout.readline())
        async with InstallerClient(row["host"], row["password"], port=row["installer"]) as c:
            assert (await c.sideload(app_zip(LOCAL_APP))).kind == "installed"
    finally:
        proc.terminate()
        await proc.wait()


async def test_a_full_disk_is_one_line_and_exit_1(tmp_path):
    with mounted_small_disk(tmp_path / "disk") as disk:
        fill(disk)
        async with device() as dev:
            await local_run(dev)
            status, stdout, stderr = await pull(dev, disk / "out")
    assert (status, stdout) == (1, "")
    assert stderr.startswith("error: cannot write the session under ") and stderr.count("\n") == 1
    assert "No space left on device" in stderr
