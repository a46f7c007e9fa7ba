"""``rokuprof watch HOST``: capture every profiled app run of one device."""

from __future__ import annotations

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
    HostArgument,
    JsonFlag,
    ProfilerPortOption,
    QuietFlag,
    SessionsDirOption,
    TraceFlag,
    View,
    ViewOption,
)
from rokuprof.cli.output import on_output_closed, print_json, stdout_console
from rokuprof.cli.root import app
from rokuprof.cli.wall_unit import DEFAULT_UNIT, WallUnit, WallUnitOption
from rokuprof.device.constants import CONSOLE_PORT, ECP_PORT, PROFILER_PORT
from rokuprof.device.hosts import plain_host
from rokuprof.export_names import FORMATS
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.units import parse_size
from rokuprof.views.text import printable

if TYPE_CHECKING:
    from rokuprof.capture.loop import CaptureConfig, CaptureSummary


def _size(option: str):
    def parse(value: str | None) -> int | None:
        if value is None:
            return None
        try:
            return parse_size(value)
        except ValueError as error:
            raise typer.BadParameter(str(error), param_hint=option) from None

    return parse


def _size_option(option: str, help_text: str) -> typer.models.OptionInfo:
    """A byte size (``16MiB``, ``500MB``, ``0``), parsed as given; an error names ``option``."""
    return typer.Option(callback=_size(option), metavar="SIZE", help=help_text)


def _formats(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    from rokuprof.capture.exports import export_formats  # the command's, not its help's

    try:
        return export_formats(value.split(","))
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--export") from None


def summary_status(summary: CaptureSummary) -> int:
    """3 when a run ended truncated or failed (its data is incomplete or corrupt), else 0."""
    from rokuprof.capture.record import FAILED, TRUNCATED

    cut = any(s.record.status in (TRUNCATED, FAILED) for s in summary.sessions)
    return exits.INCOMPLETE if cut else exits.OK


async def watch_until_closed(config: CaptureConfig, view: str) -> CaptureSummary:
    """:func:`run_watch`, stopped (cause ``output closed``) when standard output's reader goes
    away: the run in progress ends ``interrupted`` with every byte it read."""
    import asyncio  # the command's, not its help's

    from rokuprof.capture.signals import StopRequest
    from rokuprof.capture.stop import StopCause
    from rokuprof.workflows.watch import watch as run_watch

    stop = StopRequest()
    loop = asyncio.get_running_loop()
    undo = on_output_closed(
        lambda: loop.call_soon_threadsafe(stop.request, StopCause.OUTPUT_CLOSED)
    )
    try:
        return await run_watch(config, view=view, console=stdout_console(), stop=stop)
    finally:
        undo()


def report_summary(summary: CaptureSummary, as_json: bool) -> None:
    """The closing report on standard output (JSON with ``--json``); never wrapped."""
    from rokuprof.workflows.watch import summary_json, summary_lines

    if as_json:
        print_json(summary_json(summary))
        return
    console = stdout_console()
    for line in summary_lines(summary):
        console.print(printable(line), markup=False, soft_wrap=True)  # may quote device text


@app.command()
def watch(
    host: HostArgument,
    out: SessionsDirOption = Path("rokuprof-data"),
    chunk_seconds: ChunkSecondsOption = ChunkSettings.chunk_seconds,  # the settings' default
    profiler_port: ProfilerPortOption = PROFILER_PORT,
    ecp_port: EcpPortOption = ECP_PORT,
    console_port: ConsolePortOption = CONSOLE_PORT,
    runs: Annotated[
        int | None, typer.Option(min=1, metavar="N", help="Stop after this many runs.")
    ] = None,
    duration: Annotated[
        float | None,
        typer.Option(min=0.1, metavar="SECONDS", help="Stop after this many seconds."),
    ] = None,
    environment: Annotated[
        str | None,
        typer.Option(
            metavar="NAME", help="Sentry environment of the chunks (default: production)."
        ),
    ] = None,
    release: Annotated[
        str | None,
        typer.Option(metavar="NAME", help="Sentry release (default: `<app name>@<app version>`)."),
    ] = None,
    wall_unit: WallUnitOption = DEFAULT_UNIT,
    idle_timeout: Annotated[
        float,
        typer.Option(
            min=1,
            metavar="SECONDS",
            help="End a run as truncated after this long without data.",
        ),
    ] = 120.0,
    no_ecp: Annotated[
        bool, typer.Option("--no-ecp", help="Do not ask ECP for the serial number and app.")
    ] = False,
    no_console: Annotated[
        bool, typer.Option("--no-console", help="Do not ask the debug console for bsprof-status.")
    ] = False,
    view: ViewOption = View.auto,
    export: Annotated[
        str | None,
        typer.Option(
            metavar="FORMATS",
            help="When a run ends, also write it into its session directory in these formats "
            f"(comma-separated: {', '.join(FORMATS)}, or all): the bytes `rokuprof export` makes.",
        ),
    ] = None,
    quiet: QuietFlag = False,
    as_json: JsonFlag = False,
    trace: TraceFlag = False,
    max_bytes_after_error: Annotated[
        str,
        _size_option(
            "--max-bytes-after-error",
            "After corrupt data keep archiving this much (a later rokuprof may read it), "
            "then close the connection and end the run as failed. Sizes: 16MiB, 500MB, 0.",
        ),
    ] = "16MiB",
    max_session_bytes: Annotated[
        str,
        _size_option(
            "--max-session-bytes",
            "End a run as truncated when its archive reaches this size (0: no cap).",
        ),
    ] = "4GiB",
    min_free_bytes: Annotated[
        str,
        _size_option(
            "--min-free-bytes",
            "End a run, and wait before the next, when the output file system has less "
            "free space than this (0: no floor).",
        ),
    ] = "1GiB",
    hold_seconds: Annotated[
        float,
        typer.Option(
            min=0,
            metavar="SECONDS",
            help="When a write fails for lack of space, pause reading and retry this long "
            "before the run ends as truncated (0: end at once).",
        ),
    ] = 60.0,
) -> None:
    """Wait for profiled app runs on HOST and capture each one.

    Keep this running, then launch the app (sideloaded with bsprof_enable=1 and
    bsprof_data_dest=network in its manifest): the app waits for this client before it starts.
    Each run becomes `OUT/<serial>/<session>/` with `capture.bsprof` (the exact bytes),
    `session.json` and `chunks/*.json` (Sentry V2 profile chunks, written every
    `--chunk-seconds`). Ctrl-C ends the current run as "interrupted". `--export pprof,folded`
    adds `capture.pb.gz`, `capture.folded`, ... when a run ends (in a worker thread; a failed
    export is recorded in session.json and never fails the capture): the very bytes
    `rokuprof export SESSION` makes of it (`cpuprofile`: `capture.<thread>.cpuprofile`).

    A closed standard output (`| head`) ends it as Ctrl-C does (cause "output closed").

    Exit status: 0 every run ended complete or interrupted; 3 a run ended truncated or failed
    (what arrived is kept and converted); 2 bad usage, a host that is malformed or does not
    resolve, an output directory that cannot be written (checked before waiting); 1 the
    capture could not go on (disk full, an error): the run is finished with the cause, one
    error line says it.
    With `--json` the closing summary is one JSON document (each session's session.json and
    path) and the run log goes quiet.
    """
    import asyncio  # the command's, not its help's

    from rokuprof.capture.config import DeviceAddress, capture_config
    from rokuprof.capture.limits import ArchiveLimits  # the command's, not its help's
    from rokuprof.store.writable import output_dir_problem

    if (problem := host_problem(host)) is not None:
        exits.fail(problem)
    host = plain_host(host)  # [::1] -> ::1: URLs add the brackets back
    with chunk_options():
        chunks = ChunkSettings(
            chunk_seconds=chunk_seconds,
            environment=environment or ChunkSettings.environment,
            release=release,
            wall_unit=WallUnit(wall_unit).value,
        )
    try:
        config = capture_config(
            DeviceAddress(host, profiler_port, ecp_port, console_port),
            out=out,
            chunks=chunks,
            runs=runs,
            duration=duration,
            idle_timeout=idle_timeout,
            use_ecp=not no_ecp,
            use_console=not no_console,
            exports=_formats(export),
            trace=trace,
            archive_limits=ArchiveLimits(
                max_bytes_after_error=max_bytes_after_error,  # type: ignore[arg-type]
                max_session_bytes=max_session_bytes,  # type: ignore[arg-type]
                min_free_bytes=min_free_bytes,  # type: ignore[arg-type]
                hold_seconds=hold_seconds,
            ),
        )
    except ValueError as error:
        exits.fail(error)
    if (problem := output_dir_problem(out)) is not None:
        exits.fail(problem)
    shown = "quiet" if quiet or as_json else View(view).value
    summary = asyncio.run(watch_until_closed(config, shown))
    report_summary(summary, as_json)
    if summary.failure:  # the loop failed midway (disk full...): its run is finished, said once
        exits.fail(summary.failure, exits.FAILED)
    raise typer.Exit(summary_status(summary))
