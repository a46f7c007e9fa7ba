"""Two generated runs of the simulator's app with planted differences, and ``rokuprof diff`` as
a process (test_diff, test_diff_html)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import Footer
from rokuprof.simulator.app import AppConfig, SyntheticApp

ROOT = Path(__file__).resolve().parent.parent
START_MS = 1_700_000_000_000
SEED = 7
JSON_FILE = "pkg:/source/utils/json.brs"

# The planted differences between build A and build B (see AppConfig: none of them changes the
# app's random draws, so nothing else differs).
SLOWER = ("ContentLoaderTask", "parseString", JSON_FILE)  # twice as slow in B
ADDED_FN = ("VideoPlayerTask", "loadSubtitles", "pkg:/components/tasks/VideoPlayerTask.brs")
REMOVED_FN = ("main", "registryWrite", "pkg:/source/utils/registry.brs")
LEAKING = ("HomeScene", "decodeImage", "pkg:/components/rows/imaging.brs")  # frees nothing in B
BUILD_A = {"absent": ("loadSubtitles",)}
BUILD_B = {
    "absent": ("registryWrite",),
    "slower": (("parseString", 2.0),),
    "leaking": ("decodeImage",),
}


def stream(seconds: float, *, footer: bool = True, seed: int = SEED, **build) -> bytes:
    app = SyntheticApp(AppConfig(seed=seed, **build))
    header = app.header(START_MS)
    data = build_header(header) + encode_entries(app.advance(seconds) + app.finish(), True)
    data += END_MARKER
    if footer:
        data += build_footer(Footer(START_MS + int(seconds * 1000)))
    return data


def run_cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[str]:
    """``rokuprof diff ARGS`` with its output in a pipe (an 80-column one, were it a terminal)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80")
    proc = subprocess.run(
        [sys.executable, "-m", "rokuprof", "diff", *args],
        input=stdin or b"", capture_output=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


def diff_in(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``rokuprof diff ARGS`` as a process run in ``directory`` (inputs named as a person would
    name them)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-m", "rokuprof", "diff", *args],
        cwd=directory, capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
