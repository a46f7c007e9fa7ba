"""Consoles for command output: on a terminal rich's layout; to a pipe or a file, lines that are
never wrapped, cut or coloured (a script reads every column), and ``--json`` as one document."""

from __future__ import annotations

import sys

from rich.console import Console

from rokuprof.views.text import json_dumps

#: Width of the layout when the output is not a terminal: wide enough that nothing is cut.
PIPE_WIDTH = 10_000


def _console(stderr: bool) -> Console:
    console = Console(stderr=stderr, highlight=False)
    if not console.is_terminal:
        console = Console(
            stderr=stderr, highlight=False, width=PIPE_WIDTH, no_color=True, soft_wrap=True
        )
    return console


def stdout_console() -> Console:
    """A console on standard output (unwrapped and uncoloured when it is not a terminal)."""
    return _console(stderr=False)


def stderr_console() -> Console:
    """A console on standard error (unwrapped and uncoloured when it is not a terminal)."""
    return _console(stderr=True)


def print_json(data: object) -> None:
    """``--json`` output: ``data`` as indented JSON on standard output (terminal-safe strings)."""
    sys.stdout.write(json_dumps(data, indent=2) + "\n")
    sys.stdout.flush()
