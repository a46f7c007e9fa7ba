"""Files stay inside ``out``: no symbolic link below it is followed to write, sweep or delete
(issue 18, row 5), nor by crash recovery to read (issue 27). Real directories and links; the
simulated device on 127.0.0.1; what is opened is seen by the kernel (inotify)."""

from __future__ import annotations

import ctypes
import json
import logging
import os
import shutil
import struct
from pathlib import Path

import pytest
from daemon_helpers import Running, cap_config, crash, daemon_config, finished_session, record, sim
from store_helpers import write_chunks
from waiting import until

from rokuprof.capture.loop import DeviceCapture
from rokuprof.daemon.recovery import export_recovered_session, recover
from rokuprof.simulator import SimulatedDevice
from rokuprof.store.files import SymlinkRefused, make_dirs, sweep_tmp, write_atomic
from rokuprof.store.layout import links
from rokuprof.store.retention import RetentionPolicy, enforce, finish_deletions, list_sessions
from rokuprof.store.spool import Spool

SERIAL = "YN00AA000001"  # the simulator's default serial: the device directory's name
DAY = 86400.0


def tree(path: Path) -> dict[str, bytes | None]:
    """Every entry under ``path`` (files with their bytes, directories as None), without
    following links."""
    found: dict[str, bytes | None] = {}
    for dirpath, dirs, files in os.walk(path):
        for name in dirs:
            found[os.path.relpath(os.path.join(dirpath, name), path)] = None
        for name in files:
            full = os.path.join(dirpath, name)
            found[os.path.relpath(full, path)] = Path(full).read_bytes()
    return found


def elsewhere_with_tmp(tmp_path: Path) -> Path:
    """A directory outside ``out`` holding files a sweep would take: ``*.tmp``, nested too."""
    target = tmp_path / "elsewhere"
    (target / "nested" / "deeper").mkdir(parents=True)
    (target / "keep.tmp").write_bytes(b"not rokuprof's")
    (target / "nested" / "deeper" / "also.tmp").write_bytes(b"nor this")
    return target


async def test_a_linked_device_directory_is_refused_and_its_target_untouched(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    target = elsewhere_with_tmp(tmp_path)
    before = tree(target)
    (out / SERIAL).symlink_to(target, target_is_directory=True)
    async with SimulatedDevice(sim(SERIAL, run_seconds=1.0)) as dev:
        capture = DeviceCapture(cap_config(dev, out, runs=1))
        with pytest.raises(SymlinkRefused) as refused:
            await capture.run()
    assert refused.value.link == out / SERIAL
    assert f"{out / SERIAL} is a symbolic link" in str(refused.value)
    assert tree(target) == before  # nothing written there, no *.tmp swept there
    assert (out / SERIAL).is_symlink()


async def test_the_daemon_says_it_once_at_start_and_on_each_refusal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    out = tmp_path / "out"
    out.mkdir()
    target = elsewhere_with_tmp(tmp_path)
    before = tree(target)
    (out / "LINK1").symlink_to(target, target_is_directory=True)
    async with SimulatedDevice(sim("LINK1", run_seconds=1.0)) as dev:
        cfg = daemon_config(out, [dev], None)
        async with Running(cfg, restart_backoff_cap=0.3) as run:
            await until(lambda: "the capture stopped" in caplog.text, 10)
            assert await run.finish() == 0
    link = out / "LINK1"
    start = [r for r in caplog.records if f"{link} is a symbolic link" in r.getMessage()]
    assert start and start[0].levelno == logging.WARNING  # at start-up, before any capture
    stopped = [r.getMessage() for r in caplog.records if "the capture stopped" in r.getMessage()]
    assert all(f"{link} is a symbolic link" in line for line in stopped)
    assert tree(target) == before


def test_no_directory_is_made_or_written_through_a_link_below_out(tmp_path: Path) -> None:
    out, target = tmp_path / "out", tmp_path / "elsewhere"
    (out / "dev").mkdir(parents=True)
    target.mkdir()
    (out / "dev" / "sess").symlink_to(target, target_is_directory=True)
    with pytest.raises(SymlinkRefused):
        make_dirs(out / "dev" / "sess" / "chunks", within=out)
    with pytest.raises(SymlinkRefused):
        write_atomic(out / "dev" / "sess" / "session.json", "{}", within=out)
    assert list(target.iterdir()) == []
    # out itself may be a link (the user's choice): followed, and only it
    alias = tmp_path / "alias"
    alias.symlink_to(out, target_is_directory=True)
    made = write_atomic(alias / "dev" / "s2" / "session.json", "{}", within=alias)
    assert made.read_text() == "{}" and (out / "dev" / "s2").is_dir()


def test_a_temporary_name_that_is_a_link_is_never_written_through(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_bytes(b"precious")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "session.json.tmp").symlink_to(victim)
    with pytest.raises(OSError):
        write_atomic(tmp_path / "out" / "session.json", "{}")
    assert victim.read_bytes() == b"precious"


def test_sweep_tmp_never_deletes_through_links(tmp_path: Path) -> None:
    out = tmp_path / "out"
    target = elsewhere_with_tmp(tmp_path)
    outside_file = tmp_path / "outside.tmp"
    outside_file.write_bytes(b"x")
    before = tree(target)
    real = out / "DEV" / "20260101T000000.000Z-1" / "chunks"
    real.mkdir(parents=True)
    (real / "000001.json.tmp").write_bytes(b"{")
    (out / "DEV" / "x.tmp").write_bytes(b"")
    (out / "LINKED").symlink_to(target, target_is_directory=True)
    (out / "DEV" / "linked-session").symlink_to(target, target_is_directory=True)
    (out / "DEV" / "file-link.tmp").symlink_to(outside_file)
    assert sweep_tmp(out, "LINKED") == []  # a linked device directory is not swept at all
    removed = sweep_tmp(out)
    assert sorted(removed) == sorted([real / "000001.json.tmp", out / "DEV" / "x.tmp"])
    assert tree(target) == before and outside_file.read_bytes() == b"x"
    assert (out / "DEV" / "file-link.tmp").is_symlink()  # not rokuprof's: left alone
    alias = tmp_path / "alias"  # out given as a link: swept, as the user asked
    alias.symlink_to(out, target_is_directory=True)
    (real / "000002.json.tmp").write_bytes(b"{")
    assert sweep_tmp(alias, "DEV") == [
        alias / "DEV" / "20260101T000000.000Z-1/chunks/000002.json.tmp"
    ]


def old_session(path: Path, size: int = 100) -> Path:
    write_atomic(path / "session.json", json.dumps({"status": "complete"}))
    write_atomic(path / "capture.bsprof", b"x" * size)
    ancient = 1_000_000_000.0
    for f in (path / "session.json", path / "capture.bsprof", path):
        os.utime(f, (ancient, ancient))
    return path


def test_retention_never_deletes_or_counts_through_links(tmp_path: Path) -> None:
    out, target = tmp_path / "out", tmp_path / "elsewhere"
    old_session(target / "20200101T000000.000Z-1")  # sessions outside out, old enough to go
    half_deleted = target / ".20200102T000000.000Z-2.deleting"
    half_deleted.mkdir(parents=True)
    (half_deleted / "capture.bsprof").write_bytes(b"someone else's")
    big = tmp_path / "big.bin"
    big.write_bytes(b"b" * 100_000)
    before = tree(target)
    out.mkdir()
    (out / "LINKDEV").symlink_to(target, target_is_directory=True)
    (out / "DEV").mkdir()
    (out / "DEV" / "20200103T000000.000Z-3").symlink_to(
        target / "20200101T000000.000Z-1", target_is_directory=True
    )
    mine = old_session(out / "DEV" / "20200104T000000.000Z-4")
    (mine / "big-link").symlink_to(big)
    assert links(out) == [out / "DEV" / "20200103T000000.000Z-3", out / "LINKDEV"]

    assert finish_deletions(out) == []  # the .deleting behind the link is not rokuprof's
    [info] = list_sessions(out)  # links are not sessions; a link counts as itself
    assert info.path == mine and info.bytes < 50_000  # its own blocks, not big.bin's
    policy = RetentionPolicy(max_age_seconds=DAY, max_bytes=1)
    done = enforce(out, policy, now=2_000_000_000.0)
    assert [d.session.path for d in done] == [mine]
    assert tree(target) == before and big.read_bytes() == b"b" * 100_000


def test_spool_markers_are_never_written_through_a_link(tmp_path: Path) -> None:
    out, target = tmp_path / "out", tmp_path / "elsewhere"
    target.mkdir()
    [(chunk, chunk_id)] = write_chunks(out, "DEV", "20260101T000000.000Z-1", 1)
    (chunk.parent.parent / "delivered").symlink_to(target, target_is_directory=True)
    spool = Spool(out)
    [item] = spool.scan()[0]
    with pytest.raises(SymlinkRefused):
        spool.mark_delivered(item, chunk_id=chunk_id, status=200)
    assert list(target.iterdir()) == []


# -- crash recovery reads nothing through a link -------------------------------------------------

IN_ACCESS, IN_OPEN = 0x1, 0x20


class Opened:
    """Every open and read of the watched directories and the files in them, as the kernel
    reports them (inotify): ``take()`` returns the paths seen since the last call."""

    def __init__(self, *directories: Path) -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        self.watched: dict[int, Path] = {}
        for directory in directories:
            wd = libc.inotify_add_watch(self.fd, os.fsencode(directory), IN_OPEN | IN_ACCESS)
            assert wd >= 0, os.strerror(ctypes.get_errno())
            self.watched[wd] = directory

    def take(self) -> set[Path]:
        seen: set[Path] = set()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return seen
            pos = 0
            while pos < len(data):
                wd, _mask, _cookie, length = struct.unpack_from("iIII", data, pos)
                name = data[pos + 16 : pos + 16 + length].rstrip(b"\0").decode()
                seen.add(self.watched[wd] / name if name else self.watched[wd])
                pos += 16 + length

    def close(self) -> None:
        os.close(self.fd)


def plant(link: Path, target: Path) -> None:
    """Move ``link`` (a file or directory of the session) to ``target`` and leave a link to it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(link, target)
    link.symlink_to(target, target_is_directory=target.is_dir())


async def test_crash_recovery_reads_nothing_through_links_planted_in_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A crashed session whose archive, a chunk, a dropped marker, its recovery marker and its
    vitals are links to files outside ``out``, and one whose record and chunks directory are:
    recovery and its exports open none of them (at 0e83a1a the archive behind the link was
    converted into chunks, and every other target read)."""
    caplog.set_level(logging.WARNING)
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    session = await finished_session(out)
    crash(session, keep_chunks=2)
    twin = session.with_name("20200101T000000.000Z-twin")
    shutil.copytree(session, twin)
    (session / "vitals.jsonl").write_text('{"t": 0, "cpu": 50}\n')
    (session / "dropped").mkdir()
    (elsewhere / "dropped").mkdir(parents=True)
    (elsewhere / "dropped" / "000009.json").write_text('{"covered": {}}')
    (session / "dropped" / "000009.json").symlink_to(elsewhere / "dropped" / "000009.json")
    (elsewhere / "recovering.json").write_text('{"attempt": 1}')
    (session / "recovering.json").symlink_to(elsewhere / "recovering.json")
    plant(session / "capture.bsprof", elsewhere / "capture.bsprof")
    plant(session / "chunks" / "000001.json", elsewhere / "000001.json")
    plant(session / "vitals.jsonl", elsewhere / "vitals.jsonl")
    plant(twin / "session.json", elsewhere / "twin" / "session.json")
    plant(twin / "chunks", elsewhere / "twin" / "chunks")
    planted = [p for p in (session, twin) for p in [p, *p.rglob("*")] if p.is_symlink()]
    assert len(planted) == 7
    before = tree(elsewhere)

    opened = Opened(
        elsewhere, elsewhere / "dropped", elsewhere / "twin", elsewhere / "twin" / "chunks"
    )
    try:
        (elsewhere / "twin" / "chunks" / "000001.json").read_bytes()  # the watch sees reads
        assert opened.take() == {elsewhere / "twin" / "chunks" / "000001.json"}
        result = recover(out)
        export_recovered_session(session, ["report", "folded"])
        assert opened.take() == set()
    finally:
        opened.close()
    assert tree(elsewhere) == before
    assert result.converted_sessions == [session]  # the twin's record is not read
    rec = record(session)
    assert rec["status"] == "interrupted" and rec["bytes"] == 0 and rec["recovered"]["chunks"] == 0
    assert rec["exports"]["folded"]["error"].startswith("cannot read capture.bsprof: ")
    warned = {r.getMessage() for r in caplog.records}
    for link in planted:
        assert any(f"{link} is a symbolic link" in line for line in warned), link
