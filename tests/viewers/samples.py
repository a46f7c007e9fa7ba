"""The sample captures the viewer tests export, decoded once per test session."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from rokuprof.export import ExportInput, export, export_parts, input_from_bytes
from tests.viewers import REPO
from tests.viewers.expected import Expected, expected_figures

SAMPLES = REPO / "samples"
#: Every viewer test runs on these: the full sample (four threads, memory and line data) and the
#: CPU-only one (no memory operations, no line data).
VIEWER_SAMPLES = ("cafe-tv-full", "cafe-tv-cpu-only")


@cache
def load(name: str) -> ExportInput:
    return input_from_bytes((SAMPLES / f"{name}.bsprof").read_bytes())


@cache
def expected(name: str) -> Expected:
    return expected_figures(load(name).reader)


def write_export(name: str, fmt: str, directory: Path, suffix: str, **options) -> Path:
    """Export sample ``name`` as ``fmt`` into ``directory``; returns the file."""
    path = directory / f"{name}{suffix}"
    path.write_bytes(export(load(name), fmt, **options))
    return path


def write_parts(name: str, fmt: str, directory: Path) -> dict[str, Path]:
    """A multi-file export (sentry-v1): {part name: file}."""
    out = {}
    for part, data in export_parts(load(name), fmt).items():
        path = directory / f"{name}.{part}" if part else directory / name
        path.write_bytes(data)
        out[part] = path
    return out
