"""Command-line interface: each command lives in its own module and only parses options."""

from __future__ import annotations

from rokuprof.cli import convert_cmd, inspect_cmd, simulate_cmd  # noqa: F401  (register their commands)
from rokuprof.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
