"""``rokuprof inspect FILE``: what a .bsprof file contains."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from rokuprof.cli.app import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, app
from rokuprof.cli.progress import read_with_progress
from rokuprof.profile.reader import ProfileReader
from rokuprof.profile.report import inspect_report
from rokuprof.views.inspect_view import render_inspect
from rokuprof.views.text import error_line, json_dumps


@app.command()
def inspect(
    file: Annotated[Path, typer.Argument(help="A .bsprof file (complete, cut short or corrupt).")],
    top: Annotated[
        int, typer.Option(min=1, help="How many functions and leak sites to list.")
    ] = 15,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Summarise a .bsprof file: app, device, totals, top functions, memory and leaks.

    Exit status: 0 complete, 3 incomplete or corrupt (what could be read is still shown),
    2 unreadable file or bad usage.
    """
    out = Console(highlight=False)
    err = Console(stderr=True, highlight=False)
    reader = ProfileReader()
    try:
        read_with_progress(file, reader.feed, err)
    except OSError as exc:
        err.print(error_line(f"cannot read {file}: {exc.strerror or exc}"))
        raise typer.Exit(EXIT_USAGE) from None
    reader.close()
    report = inspect_report(reader, top)
    if as_json:
        print(json_dumps(report, indent=2))
    else:
        render_inspect(report, out)
    raise typer.Exit(EXIT_OK if reader.complete else EXIT_INCOMPLETE)
