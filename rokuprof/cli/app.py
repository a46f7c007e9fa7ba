"""The typer application every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="rokuprof",
    help="Capture Roku BrightScript profiler data (.bsprof) and turn it into profiles.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Exit statuses shared by the commands.
EXIT_OK = 0
EXIT_USAGE = 2  # bad usage or an unreadable file (typer's own usage errors use 2 as well)
EXIT_INCOMPLETE = 3  # the data was incomplete or corrupt; what could be read was used
