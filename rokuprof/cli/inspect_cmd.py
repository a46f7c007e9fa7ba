"""``rokuprof inspect FILE``: what a .bsprof capture contains."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.inputs import CaptureInputError, open_capture
from rokuprof.cli.options import JsonFlag
from rokuprof.cli.output import print_json, stderr_console, stdout_console
from rokuprof.cli.root import app
from rokuprof.cli.wall_unit import DEFAULT_UNIT, WallUnit, WallUnitOption


@app.command()
def inspect(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            help="A .bsprof file (complete, cut short or corrupt), `-` for standard input, "
            "or a session directory.",
        ),
    ],
    top: Annotated[
        int,
        typer.Option(
            "--top",
            "-n",
            min=0,
            metavar="N",
            help="How many functions and leak sites to list (0: all, as for diff).",
        ),
    ] = 15,
    as_json: JsonFlag = False,
    wall_unit: WallUnitOption = DEFAULT_UNIT,
) -> None:
    """Summarise a capture: app, device, totals, top functions, memory and leaks.

    `-` reads standard input as it arrives (`curl -N http://ROKU:8090/bsprof/channel.bsprof |
    rokuprof inspect -`). Written to a pipe or a file, every column is kept and nothing wraps.

    Exit status: 0 complete; 3 incomplete or corrupt (what could be read is still shown);
    2 bad usage, or an input that is missing, unreadable or not a .bsprof.
    """
    from rokuprof.profile.reader import ProfileReader  # the command's, not its help's
    from rokuprof.profile.report import inspect_report
    from rokuprof.views.inspect_view import render_inspect

    err = stderr_console()
    try:
        source = open_capture(file)
    except CaptureInputError as exc:
        exits.fail(exc)
    reader = ProfileReader()
    try:
        source.read(reader.feed, err)
    except OSError as exc:
        exits.fail(f"cannot read {source.label}: {exc.strerror or exc}")
    reader.close()
    report = inspect_report(reader, top or sys.maxsize)
    if as_json:
        print_json(report)
    else:
        render_inspect(report, stdout_console(), WallUnit(wall_unit).value)
    raise typer.Exit(exits.OK if reader.complete else exits.INCOMPLETE)
