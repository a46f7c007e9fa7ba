"""``rokuprof demo``: ``rokuprof profile`` of the sample app on a simulated Roku, then what was
written."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.chunk_options import chunk_options
from rokuprof.cli.options import JsonFlag, SessionDirOption, View, ViewOption
from rokuprof.cli.output import print_json, stdout_console
from rokuprof.cli.root import app
from rokuprof.demo_settings import DEMO_CHUNKS
from rokuprof.sentry.settings import MAX_CHUNK_SECONDS
from rokuprof.views.text import printable


@app.command()
def demo(
    out: SessionDirOption = Path("rokuprof-demo"),
    scenario: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE", help="Drive the sample app with these steps instead of its own."
        ),
    ] = None,
    seconds: Annotated[
        float | None,
        typer.Option(
            min=0.5,
            max=600,
            metavar="SECONDS",
            help="Let the sample app run this long with no scenario, then exit it.",
        ),
    ] = None,
    chunk_seconds: Annotated[
        float,
        typer.Option(
            metavar="SECONDS",
            help=f"Write Sentry chunks this often (at most {MAX_CHUNK_SECONDS:g}).",
        ),
    ] = DEMO_CHUNKS.chunk_seconds,
    view: ViewOption = View.auto,
    as_json: JsonFlag = False,
) -> None:
    """The whole product in one command, on a simulated Roku started in this process:
    `rokuprof profile` of the sample app built into rokuprof (samples/app in a clone) — package
    it with the profiler on, sideload it, capture its run as `watch` does, press keys from its
    built-in scenario, exit it, and write the report; then show where everything went.

    Exit status: as `rokuprof profile` (0 the run was captured; 3 it ended truncated or failed;
    2 bad usage, a bad scenario or an output directory that cannot be written). With `--json`
    only the summary is printed, as JSON.
    """
    import asyncio  # the command's, not its help's

    from rokuprof.cli.watch_cmd import summary_status
    from rokuprof.scenario.model import ScenarioError, load_scenario
    from rokuprof.store.writable import output_dir_problem
    from rokuprof.workflows.demo import demo_lines, run_demo  # the command's, not its help's
    from rokuprof.workflows.watch import summary_json, summary_lines

    if scenario is not None and seconds is not None:
        exits.fail("--seconds is for a run without a scenario (the scenario sets the length)")
    with chunk_options():
        chunks = replace(DEMO_CHUNKS, chunk_seconds=chunk_seconds)
    if (problem := output_dir_problem(out)) is not None:
        exits.fail(problem)
    try:
        steps = load_scenario(scenario) if scenario is not None else None
    except ScenarioError as error:
        exits.fail(error)
    console = stdout_console()

    def say(line: str) -> None:
        if not as_json:
            console.print(printable(line), markup=False, highlight=False, soft_wrap=True)

    what = f"{seconds:g} s untouched" if seconds is not None else "driven by its scenario"
    say(
        f"Starting a simulated Roku on 127.0.0.1 and profiling the sample app ({what}) "
        f"into {out}/ (Ctrl-C stops early)."
    )
    shown = "quiet" if as_json else View(view).value
    result = asyncio.run(
        run_demo(
            out,
            seconds=seconds,
            scenario=steps,
            chunks=chunks,
            view=shown,
            console=console,
            say=say,
        )
    )
    if as_json:
        print_json(
            {
                **summary_json(result.summary),
                "connect_delay": result.connect_delay,
                "report": str(result.report) if result.report else None,
                "marks": [label for label, _ in result.marks],
            }
        )
    else:
        for line in [*summary_lines(result.summary), "", *demo_lines(result)]:
            console.print(printable(line), markup=False, soft_wrap=True)
    if result.summary.failure:  # as `watch`: the run is finished, one error line says why
        exits.fail(result.summary.failure, exits.FAILED)
    raise typer.Exit(summary_status(result.summary))
