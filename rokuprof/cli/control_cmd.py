"""``rokuprof control HOST status|pause|resume|chanperf``: the profiler via the debug console."""

from __future__ import annotations

import asyncio
from typing import Annotated

import typer
from rich.console import Console

from rokuprof.cli.app import EXIT_OK, EXIT_USAGE, app
from rokuprof.device.control import ACTIONS
from rokuprof.device.control import control as run_control
from rokuprof.device.errors import DeviceError
from rokuprof.views.text import error_line, json_dumps, printable

EXIT_DEVICE = 1  # the device could not be reached or answered something unreadable


@app.command()
def control(
    host: Annotated[str, typer.Argument(help="The Roku's address.")],
    action: Annotated[str, typer.Argument(help="status, pause, resume or chanperf.")],
    console_port: Annotated[int, typer.Option(min=1, max=65535, help="Debug console port.")] = 8080,
    timeout: Annotated[
        float, typer.Option(min=0.1, help="Seconds the whole exchange may take, at most.")
    ] = 5.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Ask the running app's profiler for its status, pause it or resume it (Roku OS 9+), or
    show the app's memory and CPU use (chanperf; needs run_as_process=1)."""
    err = Console(stderr=True, highlight=False)
    if action not in ACTIONS:
        err.print(error_line(f"unknown action {action!r}: choose {', '.join(ACTIONS)}"))
        raise typer.Exit(EXIT_USAGE)
    try:
        result = asyncio.run(run_control(host, action, console_port, timeout))
    except DeviceError as error:
        err.print(error_line(error), soft_wrap=True)  # one line, even in a narrow pipe
        raise typer.Exit(EXIT_DEVICE) from None
    if as_json:
        print(json_dumps(result.to_json(), indent=2))
    else:
        print(printable(result.describe(), multiline=True))  # the console's reply, as data
    raise typer.Exit(EXIT_OK)
