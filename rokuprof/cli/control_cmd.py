"""``rokuprof control HOST status|pause|resume|chanperf``: the profiler via the debug console."""

from __future__ import annotations

from typing import Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.checks import host_problem
from rokuprof.cli.options import ConsolePortOption, JsonFlag, choice
from rokuprof.cli.output import print_json
from rokuprof.cli.root import app
from rokuprof.device.constants import CONSOLE_ACTIONS as ACTIONS
from rokuprof.device.constants import CONSOLE_PORT
from rokuprof.device.hosts import plain_host
from rokuprof.views.text import printable

Action = choice("Action", *ACTIONS)


@app.command()
def control(
    host: Annotated[str, typer.Argument(help="The Roku's address (IP or host name, no port).")],
    action: Annotated[Action, typer.Argument(metavar="ACTION", help="/".join(ACTIONS) + ".")],
    console_port: ConsolePortOption = CONSOLE_PORT,
    timeout: Annotated[
        float,
        typer.Option(min=0.1, metavar="SECONDS", help="Seconds the whole exchange may take."),
    ] = 5.0,
    as_json: JsonFlag = False,
) -> None:
    """Ask the running app's profiler for its status, pause it or resume it (Roku OS 9+), or
    show the app's memory and CPU use (chanperf; needs run_as_process=1).

    Exit status: 0 the device answered; 1 it could not be reached or its answer could not be
    read; 2 bad usage or a malformed or unknown host.
    """
    import asyncio  # the command's, not its help's

    from rokuprof.device.control import control as run_control
    from rokuprof.device.errors import DeviceError

    if (problem := host_problem(host, ports="--console-port")) is not None:
        exits.fail(problem)
    try:
        result = asyncio.run(
            run_control(plain_host(host), Action(action).value, console_port, timeout)
        )
    except DeviceError as error:
        exits.fail(error, exits.FAILED)
    if as_json:
        print_json(result.to_json())
    else:  # the console's reply, as data, tabs and all
        print(printable(result.describe(), multiline=True))
    raise typer.Exit(exits.OK)
