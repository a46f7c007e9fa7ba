"""The one way to end a command with an error (``error: ...`` on stderr, then its exit status),
and warnings. The statuses and what each means: :mod:`rokuprof.exit_status`."""

from __future__ import annotations

from typing import NoReturn

import typer

from rokuprof.exit_status import FAILED, INCOMPLETE, OK, UNDECIDED, USAGE
from rokuprof.views.text import printable

__all__ = ["FAILED", "INCOMPLETE", "OK", "UNDECIDED", "USAGE", "fail", "warn"]


def _stderr_line(prefix: str, message: object) -> None:
    from rokuprof.cli.output import stderr_console

    err = stderr_console()
    err.print(f"{prefix} {printable(message)}", markup=False, highlight=False, soft_wrap=True)


def fail(message: object, status: int = USAGE) -> NoReturn:
    """Print ``error: <message>`` as one line on stderr (device text escaped) and exit."""
    _stderr_line("error:", message)
    raise typer.Exit(status)


def warn(message: object) -> None:
    """Print ``warning: <message>`` as one line on stderr (device text escaped)."""
    _stderr_line("warning:", message)
