"""``rokuprof inspect FILE``: what a .bsprof capture (or a Perfetto app trace) contains."""

from __future__ import annotations

import sys
from typing import Annotated, NoReturn

import typer

from rokuprof.cli import exits
from rokuprof.cli.inputs import CaptureInputError, CaptureSource, open_capture
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
            help="A .bsprof file (complete, cut short or corrupt), a Perfetto app trace "
            "(recognised by its content), `-` for standard input, or a session directory.",
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
    trace: Annotated[
        bool,
        typer.Option(
            "--trace",
            help="Of a session directory, its app trace (trace.perfetto-trace) instead of its "
            ".bsprof.",
        ),
    ] = False,
    leaks: Annotated[
        bool,
        typer.Option(
            "--leaks",
            help="Of a session directory: live bytes per call path at each iteration of its "
            "scenario's iterations steps, and which keep growing after a warm-up (a capture "
            "with --mem).",
        ),
    ] = False,
) -> None:
    """Summarise a capture: app, device, totals, top functions, memory and leaks.

    `-` reads standard input as it arrives (`curl -N http://ROKU:8090/bsprof/channel.bsprof |
    rokuprof inspect -`). Written to a pipe or a file, every column is kept and nothing wraps.

    A Perfetto app trace (Roku OS 15.1+) gets Roku's analyses instead: frame cadence, rendezvous,
    observers, script CPU against wall time, repeated reads.

    `--leaks` reads a session of `rokuprof profile --scenario` with an iterations step: one
    line per call path whose live bytes keep growing per iteration (or "no leak").

    Exit status: 0 complete; 3 incomplete or corrupt (what could be read is still shown);
    2 bad usage, or an input that is missing, unreadable or neither a .bsprof nor a trace.
    """
    from rokuprof.profile.reader import ProfileReader  # the command's, not its help's
    from rokuprof.profile.report import inspect_report
    from rokuprof.views.inspect_view import render_inspect

    err = stderr_console()
    try:
        source = open_capture(file, allow_trace=True, trace=trace)
    except CaptureInputError as exc:
        exits.fail(exc)
    if source.kind == "trace":
        _inspect_trace(source, top, as_json)
    if leaks:
        _inspect_leaks(source, as_json)
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


def _inspect_leaks(source: CaptureSource, as_json: bool) -> NoReturn:
    from rokuprof.workflows.leak_check import LeakCheckError, leak_report

    source.close()
    if source.session is None:
        exits.fail(f"--leaks reads a session directory (with its marks), not {source.label}")
    try:
        report = leak_report(source.session)
    except (OSError, LeakCheckError) as exc:
        exits.fail(f"cannot read {source.label}: {exc}")
    if as_json:
        print_json(report.to_json())
    else:
        out = stdout_console()
        for line in report.lines():
            out.print(line, soft_wrap=True, markup=False, highlight=False)
    raise typer.Exit(exits.OK)


def _inspect_trace(source: CaptureSource, top: int, as_json: bool) -> NoReturn:
    from rokuprof.trace.reader import TraceReader
    from rokuprof.trace.summary import trace_report
    from rokuprof.views.trace_view import render_trace

    reader = TraceReader()
    try:
        source.read(reader.feed, stderr_console())
    except OSError as exc:
        exits.fail(f"cannot read {source.label}: {exc.strerror or exc}")
    report = trace_report(reader.close(), top or sys.maxsize)
    if as_json:
        print_json(report)
    else:
        render_trace(report, stdout_console())
    raise typer.Exit(exits.OK if report["complete"] else exits.INCOMPLETE)
