"""Command-line interface: each command lives in its own module and only parses options."""

from __future__ import annotations

from rokuprof.cli import (  # noqa: F401  (importing a command module registers its command)
    config_cmd,
    control_cmd,
    convert_cmd,
    daemon_cmd,
    demo_cmd,
    diff_cmd,
    discover_cmd,
    export_cmd,
    inspect_cmd,
    report_cmd,
    simulate_cmd,
    watch_cmd,
)
from rokuprof.cli.app import app


def main() -> None:
    app(prog_name="rokuprof")  # also under `python -m rokuprof`: help and hints name the command


__all__ = ["app", "main"]
