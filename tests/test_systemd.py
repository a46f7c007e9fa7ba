"""The systemd unit: `systemd-analyze verify` says nothing, and `security` rates it <= 2.0.

The unit's ExecStart names the installed path; the test verifies a copy whose ExecStart points at
this environment's rokuprof, so verify checks a binary that exists. The example config must
pass `rokuprof config check`.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rokuprof.daemon.config import load_config

SYSTEMD = Path(__file__).parent.parent / "systemd"
UNIT = SYSTEMD / "rokuprof.service"
ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(
    ANALYZE is None, reason="systemd-analyze is not installed (Debian package: systemd)"
)


def local_unit(tmp_path: Path) -> Path:
    """A copy of the unit with ExecStart pointing at this environment's rokuprof."""
    exe = Path(sys.executable).parent / "rokuprof"
    command = str(exe) if exe.exists() else f"{sys.executable} -m rokuprof"
    text = UNIT.read_text()
    assert "ExecStart=/usr/local/bin/rokuprof daemon " in text
    copy = tmp_path / UNIT.name
    copy.write_text(text.replace("ExecStart=/usr/local/bin/rokuprof", f"ExecStart={command}"))
    return copy


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([ANALYZE, *args], capture_output=True, text=True, timeout=60, check=False)


def test_unit_essentials() -> None:
    text = UNIT.read_text()
    for line in (
        "Type=notify",
        "Restart=on-failure",
        "DynamicUser=yes",
        "StateDirectory=rokuprof",
        "WatchdogSec=",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
    ):
        assert re.search(rf"^{re.escape(line)}", text, re.M), line


@needs_analyze
def test_systemd_analyze_verify_is_silent(tmp_path: Path) -> None:
    result = run("verify", str(local_unit(tmp_path)))
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", result.stderr
    # the check is honest: an unknown key is reported on stderr
    broken = local_unit(tmp_path)
    broken.write_text(broken.read_text().replace("[Service]\n", "[Service]\nNoSuchKey=1\n"))
    assert "NoSuchKey" in run("verify", str(broken)).stderr


@needs_analyze
def test_systemd_analyze_security_exposure_is_low(tmp_path: Path) -> None:
    result = run("security", "--offline=true", "--no-pager", str(local_unit(tmp_path)))
    match = re.search(r"Overall exposure level for \S+: (\d+(?:\.\d+)?)", result.stdout)
    assert match, result.stdout + result.stderr
    assert float(match.group(1)) <= 2.0, result.stdout


def test_example_config_passes_config_check() -> None:
    config = load_config(SYSTEMD / "rokuprof.toml", env={})
    assert config.capture.out == Path("/var/lib/rokuprof")  # the unit's StateDirectory
