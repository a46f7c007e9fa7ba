"""Owner-only output: files 0600 and directories 0700 whatever the umask, unless configured."""

from __future__ import annotations

import json
import logging
import os
import stat
from pathlib import Path

import pytest
from daemon_helpers import Running
from fake_sentry import FakeSentry
from store_helpers import make_chunk, write_chunks

from rokuprof.daemon.config import load_config
from rokuprof.store import files
from rokuprof.store.files import make_dirs, open_new, opener, set_file_mode, write_atomic
from rokuprof.store.spool import Spool


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(autouse=True)
def loose_umask():
    """A umask that would leave files 0644 and directories 0755 (outside systemd); the
    module's file mode is restored afterwards."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)
        set_file_mode(files.DEFAULT_FILE_MODE)


def test_files_and_new_directories_are_owner_only(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    target = write_atomic(tmp_path / "a" / "b" / "x.json", "{}")
    assert mode(target) == 0o600
    assert (mode(tmp_path / "a"), mode(tmp_path / "a" / "b")) == (0o700, 0o700)
    assert mode(tmp_path) == 0o755  # existing directories keep their mode
    fd = open_new(tmp_path / "a" / "archive.bin")
    os.close(fd)
    assert mode(tmp_path / "a" / "archive.bin") == 0o600
    with open(tmp_path / "a" / "log.txt", "ab", opener=opener) as f:
        f.write(b"x")
    assert mode(tmp_path / "a" / "log.txt") == 0o600


def test_a_configured_mode_is_used_exactly_whatever_the_umask(tmp_path: Path) -> None:
    set_file_mode(0o640)
    os.umask(0o077)  # as under systemd's UMask=0077: the config still wins
    target = write_atomic(tmp_path / "d" / "x.json", b"{}")
    assert (mode(target), mode(tmp_path / "d")) == (0o640, 0o750)
    set_file_mode(0o644)
    assert mode(make_dirs(tmp_path / "e" / "f")) == 0o755


def test_make_dirs_and_set_file_mode_refuse_what_they_should(tmp_path: Path) -> None:
    make_dirs(tmp_path / "x")
    with pytest.raises(FileExistsError):
        make_dirs(tmp_path / "x", exist_ok=False)
    with pytest.raises(ValueError, match="owner read and write"):
        set_file_mode(0o400)
    with pytest.raises(ValueError, match="other than read/write"):
        set_file_mode(0o700)
    assert files.file_mode() == 0o600


def test_spool_markers_are_owner_only(tmp_path: Path) -> None:
    write_chunks(tmp_path, "dev", "s1", 3)
    spool = Spool(tmp_path)
    items, _ = spool.scan()
    delivered = spool.mark_delivered(items[0], chunk_id="a" * 32, status=200)
    rejected = spool.mark_rejected(items[1], reason="HTTP 400", status=400)
    (dropped,) = spool.drop([items[2]])
    marker = tmp_path / "dev" / "s1" / "dropped" / dropped.name
    session = tmp_path / "dev" / "s1"
    for path in (delivered, rejected, rejected.with_name("000002.reason.json"), marker):
        assert mode(path) == 0o600, path
    for name in ("chunks", "delivered", "rejected", "dropped"):
        assert mode(session / name) == 0o700, name
    assert mode(tmp_path / "dev") == 0o700 and mode(session) == 0o700


async def test_the_daemon_warns_once_about_a_readable_dsn_and_writes_owner_only(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ROKUPROF_SENTRY_DSN", raising=False)
    caplog.set_level(logging.WARNING)
    out = tmp_path / "deep" / "out"
    async with FakeSentry() as sentry:
        path = tmp_path / "rokuprof.toml"
        path.write_text(
            f'[capture]\nout = "{out}"\n[sentry]\ndsn = "{sentry.dsn}"\n[metrics]\nlisten = ""\n'
        )
        path.chmod(0o604)
        config = load_config(path)
        async with Running(config) as run:
            # once the start-up recovery is done (it closes a session it finds unfinished and
            # sweeps its *.tmp files): a chunk the capture would write, owner-only like the rest
            await run.ready()
            chunk = run.daemon.out / "dev" / "s1" / "chunks" / "000001.json"
            write_atomic(chunk, json.dumps(make_chunk()))
            run.daemon.uploader.submit(chunk)
            await sentry.wait_for(lambda: len(sentry.accepted()) == 1)
            assert await run.finish() == 0
    warnings = [r.getMessage() for r in caplog.records if "holds a Sentry DSN" in r.getMessage()]
    assert len(warnings) == 1
    assert "readable by others (mode 0604)" in warnings[0]
    assert mode(out) == 0o700 and mode(out.parent) == 0o700
    assert mode(chunk) == 0o600 and mode(chunk.parent) == 0o700
    delivered = chunk.parent.parent / "delivered" / "000001.json"
    assert mode(delivered) == 0o600 and mode(delivered.parent) == 0o700
