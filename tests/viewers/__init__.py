"""Harnesses that open rokuprof's exports in the real viewers and report what those viewers read.

One module per reader (``pprof``, ``speedscope``, ``trace_engine``, ``nflx``, ``vroom``,
``envelope``); ``expected`` holds the figures they are compared with (``inspect``'s per-function
totals). A reader that is not installed skips its test with the install command, except under
``CI=true``, where a missing reader is a failure: CI installs every reader (.ci/install-viewers.sh).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODE_MODULES = REPO / "node_modules"
VIEWERS = Path(__file__).resolve().parent


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def missing(reader: str, install: str) -> None:
    """Skip (or, under CI=true, fail) a test whose reader is not installed."""
    message = f"{reader} is not installed (install it with: {install})"
    if in_ci():
        pytest.fail(f"{message}; CI must install every viewer", pytrace=False)
    pytest.skip(message)


def need_command(name: str, install: str) -> str:
    path = shutil.which(name)
    if path is None:
        missing(name, install)
    return path  # type: ignore[return-value]


def need_npm(package: str) -> Path:
    """The installed npm package's directory (``npm ci`` at the repository root installs it)."""
    need_command("node", "apt-get install nodejs")
    where = NODE_MODULES / package
    if not (where / "package.json").is_file():
        missing(f"npm package {package}", "npm ci")
    return where


def need_module(name: str, install: str):
    try:
        return __import__(name, fromlist=["_"])
    except ImportError:
        missing(f"Python package {name}", install)
