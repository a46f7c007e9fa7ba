"""A real terminal for the tests of what reaches one: a private tmux server running ``rokuprof``
(test_device_text, test_cli_progress); tests that need it are marked ``needs_tmux``."""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TMUX = shutil.which("tmux")
needs_tmux = pytest.mark.skipif(
    TMUX is None and os.environ.get("CI") != "true",
    reason="tmux is not installed (Debian package: tmux)",
)


class Tmux:
    """A private tmux server (own socket) running one command in a 120x40 terminal."""

    def __init__(self, tmp: Path) -> None:
        self.socket = tmp / "tmux.sock"
        self.status = tmp / "exit-status"

    def tmux(self, *args: str) -> str:
        command = ["tmux", "-S", str(self.socket), *args]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    def start(self, *args: str) -> None:
        env = f"PYTHONPATH={shlex.quote(str(ROOT))}"
        cli = shlex.join([sys.executable, "-m", "rokuprof", *args])
        script = f"env {env} {cli}; echo $? > {shlex.quote(str(self.status))}; sleep 600"
        self.tmux("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", script)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-")

    def title(self) -> str:
        return self.tmux("display-message", "-p", "#{pane_title}")

    def exit_status(self) -> int | None:
        text = self.status.read_text() if self.status.exists() else ""
        return int(text) if text.strip() else None

    def wait_exit(self, timeout: float) -> None:
        """Until the command has ended (its exit status written), at most ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.exit_status() is None and time.monotonic() < deadline:
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True)


@contextlib.contextmanager
def tmux_terminal(tmp: Path) -> Iterator[Tmux]:
    """A :class:`Tmux`, its server killed however the test ends."""
    term = Tmux(tmp)
    try:
        yield term
    finally:
        term.close()
