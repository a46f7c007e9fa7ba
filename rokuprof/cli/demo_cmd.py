"""``rokuprof demo``: watch one run of a simulated Roku, then show what was written."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from rokuprof.capture.demo import demo_lines, run_demo
from rokuprof.capture.watch import summary_lines
from rokuprof.cli.app import EXIT_OK, app
from rokuprof.views.text import printable


@app.command()
def demo(
    out: Annotated[Path, typer.Option(help="Where the session is written.")] = Path(
        "rokuprof-demo"
    ),
    seconds: Annotated[
        float, typer.Option(min=0.5, max=600, help="Length of the simulated app run.")
    ] = 20.0,
    chunk_seconds: Annotated[
        float, typer.Option(min=0.1, max=60, help="Write Sentry chunks this often.")
    ] = 5.0,
    view: Annotated[
        str, typer.Option(help="auto (live view on a terminal, log lines otherwise), live, plain.")
    ] = "auto",
) -> None:
    """Start a simulated Roku in this process and capture one app run of it, exactly as
    `rokuprof watch` captures a real device; then show where everything went."""
    if view not in ("auto", "live", "plain"):
        raise typer.BadParameter("choose auto, live or plain", param_hint="--view")
    console = Console(highlight=False)
    console.print(
        f"Starting a simulated Roku on 127.0.0.1 and capturing one {seconds:g} s app run "
        f"into {out}/ (Ctrl-C stops early).",
        soft_wrap=True,
    )
    result = asyncio.run(
        run_demo(out, seconds=seconds, chunk_seconds=chunk_seconds, view=view, console=console)
    )
    for line in [*summary_lines(result.summary), "", *demo_lines(result)]:
        console.print(printable(line), markup=False, soft_wrap=True)
    raise typer.Exit(EXIT_OK)
