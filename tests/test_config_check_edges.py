"""`rokuprof config check` refuses what would stop the daemon at start, every problem at once:
a device host `watch` would refuse (malformed, a URL, no such address, a name that does not
resolve) and an output directory that cannot be written (under /proc, a read-only mount)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from disk_helpers import mounted_small_disk
from typer.testing import CliRunner

from rokuprof.cli import app, checks

ROOT = Path(__file__).resolve().parents[1]
BAD_HOSTS = ("not a host!!", "http://192.168.1.5:8060/", "256.1.1.1")


def _write(path: Path, out: str, hosts: tuple[str, ...]) -> Path:
    devices = "".join(f'[[devices]]\nhost = "{h}"\n' for h in hosts)
    path.write_text(f'[capture]\nout = "{out}"\n{devices}[metrics]\nlisten = ""\n')
    path.chmod(0o600)
    return path


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", ROKUPROF_SENTRY_DSN="")
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_config_check_lists_bad_hosts_and_an_unwritable_out_at_once(tmp_path: Path) -> None:
    """Only literals and malformed names: nothing is looked up."""
    config = _write(tmp_path / "c.toml", "/proc/rokuprof-out", BAD_HOSTS)
    result = _run("config", "check", str(config))
    assert result.returncode == 2, result.stdout
    lines = result.stderr.splitlines()
    assert lines[0] == f"{config}: 4 problem(s)"
    assert "capture.out: cannot create /proc/rokuprof-out: cannot write to /proc" in lines[1]
    assert "devices[0].host: 'not a host!!' is not a host name" in lines[2]
    assert "devices[1].host: 'http://192.168.1.5:8060/' is a URL, not a host name" in lines[3]
    assert "devices[2].host: '256.1.1.1' is not an IP address" in lines[4]
    assert "OK" not in result.stdout and "Traceback" not in result.stderr
    # the daemon refuses the same config the same way (exit 2, not 1 once started)
    daemon = _run("daemon", "--config", str(config))
    assert daemon.returncode == 2, daemon.stderr
    assert daemon.stderr.splitlines()[0] == f"{config}: 4 problem(s)"


@pytest.mark.parametrize(
    ("value", "column"),
    [("[" * 50_000, 105), ("{b=" * 50_000, 305), ("[{b=" * 25_000, 205)],
    ids=["arrays", "inline-tables", "both"],
)
def test_toml_nested_50000_deep_is_not_valid_toml(tmp_path: Path, value: str, column: int) -> None:
    """At 0e83a1a: a RecursionError traceback and exit 1."""
    config = tmp_path / "deep.toml"
    config.write_text(f"# nested\na = {value}\n")
    for command in (("config", "check"), ("daemon", "--config")):
        result = _run(*command, str(config))
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr and "RecursionError" not in result.stderr
        assert result.stderr.splitlines() == [
            f"{config}: 1 problem(s)",
            "  not valid TOML: arrays or tables nested more than 100 deep "
            f"(at line 2, column {column})",
        ]


def test_an_ipv6_host_in_brackets_is_a_host(tmp_path: Path) -> None:
    config = _write(tmp_path / "c.toml", str(tmp_path / "out"), ("[::1]", "::2"))
    result = _run("config", "check", str(config))
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "out").exists()  # the check made nothing


def test_a_read_only_out_is_a_problem(tmp_path: Path) -> None:
    mount = tmp_path / "ro"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a read-only tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        for out in (mount, mount / "sub"):
            config = _write(tmp_path / "c.toml", str(out), ("127.0.0.1",))
            result = _run("config", "check", str(config))
            assert result.returncode == 2, result.stdout
            assert "capture.out: cannot" in result.stderr
            assert "Read-only file system" in result.stderr
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_host_name_that_does_not_resolve_is_a_problem(tmp_path: Path) -> None:
    """The resolver is the one `watch` uses, injected: no DNS query leaves this machine."""

    def resolver(host: str) -> object:
        if host == "tv.example":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", 0))]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    config = _write(tmp_path / "c.toml", str(tmp_path / "out"), ("tv.example", "gone.example"))
    original, checks.resolve = checks.resolve, resolver
    try:
        result = CliRunner().invoke(app, ["config", "check", str(config)])
    finally:
        checks.resolve = original
    assert result.exit_code == 2
    assert result.stderr.splitlines()[1:] == [
        "  devices[1].host: cannot resolve host 'gone.example': Name or service not known"
    ]


def test_retention_and_the_floor_beyond_the_disk_draw_a_warning(tmp_path: Path) -> None:
    """On a real 16 MiB file system: 14 MiB of retention plus a 4 MiB floor cannot both hold
    (the floor wins: said as a warning, exit 0); 10 MiB plus 4 MiB fit (no warning)."""
    with mounted_small_disk(tmp_path / "disk", "16m") as disk:
        results = {}
        for retention in ("14MiB", "10MiB"):
            config = tmp_path / f"{retention}.toml"
            config.write_text(
                f'[capture]\nout = "{disk / "out"}"\nmin_free_bytes = "4MiB"\n'
                f'[retention]\nmax_bytes = "{retention}"\n'
                '[[devices]]\nhost = "127.0.0.1"\n[metrics]\nlisten = ""\n'
            )
            config.chmod(0o600)
            results[retention] = _run("config", "check", str(config))
    over, fits = results["14MiB"], results["10MiB"]
    assert over.returncode == 0 and fits.returncode == 0, over.stderr + fits.stderr
    assert (
        "warning: retention.max_bytes (14 MiB) plus capture.min_free_bytes (4 MiB)" in over.stderr
    )
    assert "the file system of" in over.stderr and "(16 MiB)" in over.stderr
    assert "warning" not in fits.stderr
