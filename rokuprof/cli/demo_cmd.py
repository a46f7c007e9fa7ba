"""``rokuprof demo``: watch one run of a simulated Roku, then show what was written."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from rokuprof.capture.demo import DEMO_CHUNKS, demo_lines, run_demo
from rokuprof.capture.watch import summary_json, summary_lines
from rokuprof.cli import exits
from rokuprof.cli.chunk_options import chunk_options
from rokuprof.cli.options import JsonFlag, View
from rokuprof.cli.output import print_json, stdout_console
from rokuprof.cli.root import app
from rokuprof.cli.watch_cmd import summary_status
from rokuprof.sentry.chunk import MAX_CHUNK_SECONDS
from rokuprof.store.writable import output_dir_problem
from rokuprof.views.text import printable


@app.command()
def demo(
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Where the session is written.")
    ] = Path("rokuprof-demo"),
    seconds: Annotated[
        float,
        typer.Option(min=0.5, max=600, metavar="SECONDS", help="Length of the simulated app run."),
    ] = 20.0,
    chunk_seconds: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help=f"Write Sentry chunks this often (at most {MAX_CHUNK_SECONDS:g}).",
        ),
    ] = DEMO_CHUNKS.chunk_seconds,
    view: Annotated[
        View, typer.Option(help="auto: a live view on a terminal, log lines otherwise.")
    ] = View.auto,
    as_json: JsonFlag = False,
) -> None:
    """Start a simulated Roku in this process and capture one app run of it, exactly as
    `rokuprof watch` captures a real device; then show where everything went.

    Exit status: as `rokuprof watch` (0 the run was captured; 3 it ended truncated or failed;
    2 bad usage or an output directory that cannot be written). With `--json` only the summary
    is printed, as JSON.
    """
    with chunk_options():
        chunks = replace(DEMO_CHUNKS, chunk_seconds=chunk_seconds)
    if (problem := output_dir_problem(out)) is not None:
        exits.fail(problem)
    console = stdout_console()
    if not as_json:
        console.print(
            f"Starting a simulated Roku on 127.0.0.1 and capturing one {seconds:g} s app run "
            f"into {out}/ (Ctrl-C stops early).",
            markup=False,
            soft_wrap=True,
        )
    shown = "quiet" if as_json else View(view).value
    result = asyncio.run(run_demo(out, seconds=seconds, chunks=chunks, view=shown, console=console))
    if as_json:
        print_json({**summary_json(result.summary), "connect_delay": result.connect_delay})
    else:
        for line in [*summary_lines(result.summary), "", *demo_lines(result)]:
            console.print(printable(line), markup=False, soft_wrap=True)
    if result.summary.failure:  # as `watch`: the run is finished, one error line says why
        exits.fail(result.summary.failure, exits.FAILED)
    raise typer.Exit(summary_status(result.summary))
