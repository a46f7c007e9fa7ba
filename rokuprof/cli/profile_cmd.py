"""``rokuprof profile APP --device HOST``: from an app's source to its report in one command."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.checks import host_problem
from rokuprof.cli.chunk_options import chunk_options
from rokuprof.cli.options import (
    ChunkSecondsOption,
    ConsolePortOption,
    EcpPortOption,
    EditorUrlOption,
    InstallerPortOption,
    MinShareOption,
    OpenFlag,
    ProfilerPortOption,
    QuietFlag,
    SessionDirOption,
    TraceFlag,
    View,
    ViewOption,
    fail_over_option,
)
from rokuprof.cli.output import stderr_console, stdout_console
from rokuprof.cli.root import app
from rokuprof.cli.wall_unit import DEFAULT_UNIT, WallUnit, WallUnitOption
from rokuprof.device.constants import CONSOLE_PORT, ECP_PORT, INSTALLER_PORT, PROFILER_PORT
from rokuprof.device.hosts import plain_host
from rokuprof.export_names import FORMATS
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.writable import output_dir_problem

if TYPE_CHECKING:  # the command's, not its help's
    from rich.console import Console

    from rokuprof.export.aggregate import AggregateInput
    from rokuprof.workflows.profile import Load

HELP = """Profile an app in one command: package it with the profiler switched on, sideload it,
capture its run exactly as `watch` does, drive it with a scenario, end it, write its report,
and (with `--baseline`) judge it against an earlier run.

APP is the app's source directory (with its `manifest`) or its `.zip`. A copy is packaged (your
files are never changed; VCS folders and what a `.rokuignore` names are left out) with
`bsprof_enable=1`, `bsprof_data_dest=network` and `run_as_process=1` set in its manifest, and
`--mem`, `--lines`, `--sample-ratio` add theirs. The developer password comes from
`ROKU_DEV_PASSWORD` or `--password-file` (never from the command line).

`--scenario FILE` (TOML) lists the steps: `press = "Down"` (`repeat`, `interval`), `text = "..."`,
`wait = S`, `launch = { contentId = "...", mediaType = "..." }`, `mark = "label"`. When they end,
or after `--duration` without a scenario, the app is asked to exit (`/exit-app/dev`, Home on
older firmware) and the device ends the run with its footer: the session is `complete`. With
neither, the capture lasts until the app exits (or Ctrl-C). The session's `report.html` is
written into its directory, with APP's source: the hot functions' lines with their figures and
every file:line a link (`report --source`; `--editor-url` sets the link).

Exit status: 0 the run was captured (and passed the gate); 1 `--fail-over` found a function whose
self wall grew more than allowed, or the device failed midway (an install failure in the
device's words, the app never streamed); 2 bad usage or a problem found before anything was
installed (no password, a password the device refused, a bad scenario or app, an output that
cannot be written); 3 the run ended truncated or failed (what arrived is kept)."""


@app.command(name="profile", help=HELP)
def profile_command(
    app_path: Annotated[
        Path, typer.Argument(metavar="APP", help="The app's source directory or its .zip.")
    ],
    device: Annotated[
        str, typer.Option("--device", "-d", metavar="HOST", help="The Roku's address.")
    ],
    scenario: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="The steps that drive the run (TOML, see above)."),
    ] = None,
    duration: Annotated[
        float | None,
        typer.Option(
            min=0.1, metavar="SECONDS", help="Without a scenario: exit the app after this long."
        ),
    ] = None,
    mem: Annotated[
        bool, typer.Option("--mem", help="Record every allocation (bsprof_enable_mem=1).")
    ] = False,
    lines: Annotated[
        bool,
        typer.Option("--lines", help="Per-line data (bsprof_enable_lines=1, rsg_version=1.2)."),
    ] = False,
    sample_ratio: Annotated[
        float | None,
        typer.Option(
            min=0.001, max=1.0, metavar="R", help="Share of statements measured (0.001-1)."
        ),
    ] = None,
    password_file: Annotated[
        Path | None,
        typer.Option(metavar="FILE", help="Read the developer password from FILE's first line."),
    ] = None,
    out: SessionDirOption = Path("rokuprof-data"),
    baseline: Annotated[
        str | None,
        typer.Option(
            metavar="CAPTURE",
            help="Compare the run with this earlier one (a .bsprof or a session directory).",
        ),
    ] = None,
    fail_over: Annotated[
        float | None,
        fail_over_option(
            "With --baseline: exit 1 when a function's self wall grew by more than PCT "
            "percent (per second of run when the runs' lengths differ)."
        ),
    ] = None,
    min_share: MinShareOption = 1.0,
    open_: OpenFlag = False,
    chunk_seconds: ChunkSecondsOption = ChunkSettings.chunk_seconds,
    export: Annotated[
        str | None,
        typer.Option(
            metavar="FORMATS",
            help=f"Also write the run in these formats ({', '.join(FORMATS)}, or all).",
        ),
    ] = None,
    environment: Annotated[
        str | None, typer.Option(metavar="NAME", help="Sentry environment of the chunks.")
    ] = None,
    installer_port: InstallerPortOption = INSTALLER_PORT,
    ecp_port: EcpPortOption = ECP_PORT,
    profiler_port: ProfilerPortOption = PROFILER_PORT,
    console_port: ConsolePortOption = CONSOLE_PORT,
    start_timeout: Annotated[
        float,
        typer.Option(min=1, metavar="SECONDS", help="How long to wait for the app's stream."),
    ] = 30.0,
    view: ViewOption = View.auto,
    quiet: QuietFlag = False,
    wall_unit: WallUnitOption = DEFAULT_UNIT,
    editor_url: EditorUrlOption = None,
    trace: TraceFlag = False,
) -> None:
    """Profile an app (see HELP)."""
    import asyncio  # the command's, not its help's

    from rokuprof.export.report.source import editor_url_problem
    from rokuprof.workflows.errors import Stop
    from rokuprof.workflows.profile import prepare, run_profile

    if (problem := host_problem(device)) is not None:
        exits.fail(problem)
    if editor_url is not None and (problem := editor_url_problem(editor_url)) is not None:
        exits.fail(problem)
    if fail_over is not None and baseline is None:
        exits.fail("--fail-over needs --baseline (the run to compare with)")
    if scenario is not None and duration is not None:
        exits.fail("--duration is for a run without a scenario (the scenario sets the length)")
    with chunk_options():
        chunks = ChunkSettings(
            chunk_seconds=chunk_seconds,
            environment=environment or ChunkSettings.environment,
            wall_unit=WallUnit(wall_unit).value,
        )
    if (problem := output_dir_problem(out)) is not None:
        exits.fail(problem)
    load = _capture_loader(chunks.wall_unit)
    try:
        prepared = prepare(
            app_path,
            host=plain_host(device),
            password_file=password_file,
            environ=os.environ,
            scenario=scenario,
            duration=duration,
            keys=(mem, lines, sample_ratio),
            out=out,
            chunks=chunks,
            exports=export,
            ports=(installer_port, ecp_port, profiler_port, console_port),
            start_timeout=start_timeout,
            baseline=baseline,
            load=load,
            trace=trace,
        )
        shown = "quiet" if quiet else View(view).value
        status = asyncio.run(
            run_profile(
                prepared,
                view=shown,
                out=stdout_console(),
                fail_over=fail_over,
                min_share=min_share,
                load=load,
                warn=exits.warn,
                open_report=_opener(stderr_console()) if open_ else None,
                editor_url=editor_url,
            )
        )
    except Stop as stop:
        exits.fail(stop, stop.status)
    raise typer.Exit(status)


def _capture_loader(wall_unit: str) -> Load:
    """How ``profile`` opens a capture given by name (the baseline, then its own run): the
    commands' opener, decoded to the tables the gate compares (nothing laid out), with progress
    on a terminal unless ``quiet``."""
    from rich.console import Console

    from rokuprof.cli.inputs import CaptureInputError, open_capture
    from rokuprof.cli.layout import load_aggregates
    from rokuprof.workflows.errors import Stop

    def load(name: str, quiet: bool) -> tuple[AggregateInput, str]:
        try:
            source = open_capture(name)
        except CaptureInputError as error:
            raise Stop(error) from None
        err = Console(stderr=True, quiet=True) if quiet else stderr_console()
        return load_aggregates(source, err, wall_unit), source.label

    return load


def _opener(err: Console) -> Callable[[Path], None]:
    def open_report(report: Path) -> None:
        from rokuprof.cli.report_cmd import open_in_browser

        open_in_browser(report, err)

    return open_report
