"""A root daemon refuses an ``out`` another user could steer (issue 18, row 5), as ssh's
StrictModes does: owned by another user, or writable by group/others without the sticky bit,
itself or an ancestor. Real directories (``chown`` needs root: those tests skip otherwise) and a
real ``rokuprof`` process for the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rokuprof.store.ownership import root_output_problem

OTHER = 54321  # a uid no one on the test machine has
ROOT = Path(__file__).resolve().parents[1]
needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="chown to another user needs root"
)


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """A root-only directory to build in (pytest's own may be group-writable elsewhere)."""
    tmp_path.chmod(0o700)
    return tmp_path


@needs_root
def test_an_out_owned_by_another_user_is_refused_as_root_only(base: Path) -> None:
    out = base / "out"
    out.mkdir()
    os.chown(out, OTHER, OTHER)
    problem = root_output_problem(out, euid=0)
    assert problem is not None and f"{out} belongs to uid {OTHER}" in problem
    assert "\n" not in problem
    assert root_output_problem(out, euid=1000) is None  # not root: nothing to steer
    later = root_output_problem(out / "not" / "yet", euid=0)  # to be created under it
    assert later is not None and f"{out} belongs to uid {OTHER}" in later


@needs_root
def test_an_ancestor_or_a_link_target_owned_by_another_user_is_refused(base: Path) -> None:
    theirs = base / "theirs"
    (theirs / "data").mkdir(parents=True)
    os.chown(theirs, OTHER, OTHER)
    assert f"{theirs} belongs to uid {OTHER}" in root_output_problem(theirs / "data", euid=0)
    link = base / "link"  # out given as a link: where it leads is checked too
    link.symlink_to(theirs / "data", target_is_directory=True)
    assert f"{theirs} belongs to uid {OTHER}" in root_output_problem(link, euid=0)


def test_group_or_world_writable_without_sticky_bit_is_refused(base: Path) -> None:
    shared = base / "shared"
    shared.mkdir()
    out = shared / "out"
    for mode, who in ((0o777, "group and others"), (0o770, "group"), (0o703, "others")):
        shared.chmod(mode)
        problem = root_output_problem(out, euid=0)
        assert problem is not None and f"{shared} is writable by {who} (mode {mode:04o})" in problem
    shared.chmod(0o1777)  # like /tmp: others cannot rename or delete what root made there
    assert root_output_problem(out, euid=0) is None
    shared.chmod(0o755)
    assert root_output_problem(out, euid=0) is None


def rokuprof(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC")}
    env.pop("ROKUPROF_SENTRY_DSN", None)
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


@needs_root
def test_the_root_daemon_refuses_to_start_and_config_check_says_why(base: Path) -> None:
    out = base / "out"
    out.mkdir()
    os.chown(out, OTHER, OTHER)
    config = base / "rokuprof.toml"
    config.write_text(
        f'[capture]\nout = "{out}"\n[sentry]\ndsn = ""\n[[devices]]\nhost = "127.0.0.1"\n'
    )
    config.chmod(0o600)

    run = rokuprof("daemon", "--config", str(config))
    assert run.returncode == 2, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: running as root, refusing"), lines
    assert f"{out} belongs to uid {OTHER}" in lines[0] and "Traceback" not in run.stderr
    assert list(out.iterdir()) == []  # nothing written, not even a sweep

    check = rokuprof("config", "check", str(config))
    assert check.returncode == 2
    assert f"capture.out: running as root, refusing the output directory {out}" in check.stderr
    report = json.loads(rokuprof("config", "check", "--json", str(config)).stdout)
    assert report["ok"] is False and f"{out} belongs to uid {OTHER}" in report["problems"][0]

    os.chown(out, 0, 0)  # root's own: accepted
    assert rokuprof("config", "check", str(config)).returncode == 0
