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
    AlphaOption,
    ChunkSecondsOption,
    ConsolePortOption,
    CounterOverOption,
    EcpPortOption,
    EditorUrlOption,
    InstallerPortOption,
    JunitOption,
    MinEffectOption,
    MinShareOption,
    OpenFlag,
    ProfilerPortOption,
    QuietFlag,
    SessionDirOption,
    SummaryOption,
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
from rokuprof.store.writable import output_dir_problem, output_file_problem
from rokuprof.verdict.rules import DEFAULT_RULES, Rules

#: At most this many runs a device in one series (``--repeat``, ``--max-repeat``).
MAX_REPEAT = 100

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

`--repeat N` makes N runs of the same build (one session each, the scenario each time) in a
series directory `OUT/series-<UTC>-<id>/`, prints per function the median and spread across the
runs and writes `series.json`; `--device` given more than once runs the series on each device
in parallel. `--baseline` takes a capture, a session, or a directory of sessions (an earlier
series): every function is judged on CPU operations, self wall time, allocated and live bytes,
`regressed`, `improved`, `same` or `unknown`, each verdict explained in one line (see
docs/verdicts.md). A counter (CPU operations) is judged by the size of its change (past
`--counter-over` and the runs' spread), even with one run a side; a clock or byte figure needs
the change past `--fail-over` and the runs' noise, and a p-value (the smaller of Mann-Whitney U
and Kolmogorov-Smirnov) below `--alpha`: else `unknown`, and `--max-repeat M` adds runs (one
per device at a time) while any verdict is. With several device models, each is judged against
the baseline's runs on the same model. `--json` prints the series and its verdicts on stdout
(the rest goes to stderr), `--summary FILE` appends them as Markdown, `--junit FILE` writes
JUnit XML. A scenario step with `iterations = N` marks each iteration; each run then says, per
call path, whether its live bytes keep growing from one iteration to the next after a warm-up
(a leak).

Exit status: 0 the runs were captured (and, with `--fail-over`, no verdict is regressed or
unknown); 1 with `--fail-over` a verdict is regressed or a run's iterations leak, or the device
failed midway (an install
failure in the device's words, the app never streamed); 2 bad usage or a problem found before
anything was installed (no password, a password the device refused, a bad scenario or app, an
output that cannot be written, an unreadable baseline); 3 a run ended truncated or failed (what
arrived is kept); 4 with `--fail-over` no verdict regressed but one is unknown (run more)."""


@app.command(name="profile", help=HELP)
def profile_command(
    app_path: Annotated[
        Path, typer.Argument(metavar="APP", help="The app's source directory or its .zip.")
    ],
    devices: Annotated[
        list[str],
        typer.Option(
            "--device",
            "-d",
            metavar="HOST",
            help="The Roku's address (again for each device of a series run in parallel).",
        ),
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
    repeat: Annotated[
        int,
        typer.Option(min=1, max=MAX_REPEAT, metavar="N", help="Make N runs of the build."),
    ] = 1,
    max_repeat: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=MAX_REPEAT,
            metavar="M",
            help="With --baseline: add runs, up to M per device, while a verdict is unknown.",
        ),
    ] = None,
    baseline: Annotated[
        str | None,
        typer.Option(
            metavar="CAPTURE",
            help="Judge the runs against this: a .bsprof, a session directory, or a directory "
            "of sessions (a series).",
        ),
    ] = None,
    fail_over: Annotated[
        float | None,
        fail_over_option(
            "With --baseline: the exit status follows the verdicts (1 regressed, 4 unknown); a "
            "wall time or byte figure must change by more than PCT percent to count "
            f"(default {DEFAULT_RULES.fail_over:g})."
        ),
    ] = None,
    counter_over: CounterOverOption = DEFAULT_RULES.counter_over,
    min_effect: MinEffectOption = DEFAULT_RULES.min_effect,
    alpha: AlphaOption = DEFAULT_RULES.alpha,
    min_share: MinShareOption = DEFAULT_RULES.min_share,
    as_json: Annotated[
        bool,
        typer.Option("-j", "--json", help="Print the series and its verdicts as JSON."),
    ] = False,
    summary: SummaryOption = None,
    junit: JunitOption = None,
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

    from rokuprof.cli.output import print_json
    from rokuprof.export.report.source import editor_url_problem
    from rokuprof.workflows.errors import Stop
    from rokuprof.workflows.profile import CiOutputs, Repeats, prepare, run_profile

    for device in devices:
        if (problem := host_problem(device)) is not None:
            exits.fail(problem)
    hosts = tuple(dict.fromkeys(plain_host(d) for d in devices))
    if max_repeat is not None and baseline is None:
        exits.fail("--max-repeat needs --baseline (runs are added while a verdict is unknown)")
    if max_repeat is not None and max_repeat < repeat:
        exits.fail(f"--max-repeat {max_repeat} is below --repeat {repeat}")
    for path in (summary, junit):
        if path is not None and (problem := output_file_problem(path)) is not None:
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
            hosts=hosts,
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
        rules = Rules.from_options(fail_over, counter_over, min_effect, alpha, min_share)
        status = asyncio.run(
            run_profile(
                prepared,
                view=shown,
                out=stderr_console() if as_json else stdout_console(),
                rules=rules,
                enforce=fail_over is not None,
                load=load,
                warn=exits.warn,
                repeats=Repeats(repeat, max_repeat or repeat),
                ci=CiOutputs(print_json if as_json else None, summary, junit),
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
