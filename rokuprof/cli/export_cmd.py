"""``rokuprof export INPUT --format F[,F...] [-o PATH|DIR]``: a capture in viewers' formats."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.chunk_options import DEFAULT_UNIT, WallUnit, WallUnitOption
from rokuprof.cli.inputs import STDIN, CaptureInputError, open_capture
from rokuprof.cli.options import InputArgument, choice
from rokuprof.cli.output import stderr_console, write_pieces, write_text
from rokuprof.cli.root import EXIT_INCOMPLETE, EXIT_OK, app
from rokuprof.export_names import FORMATS, METRICS
from rokuprof.store.files import follow_umask

if TYPE_CHECKING:
    from rich.console import Console

EXIT_FAILED = 1  # an output could not be written
Metric = choice("Metric", *METRICS)
DEFAULT_METRIC = Metric("wall")


def parse_formats(text: str) -> list[str]:
    """``"pprof,speedscope"`` -> ``["pprof", "speedscope"]``; ``all`` -> every format."""
    from rokuprof.capture.exports import export_formats  # the command's, not its help's

    try:
        names = list(export_formats(text.split(",")))
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    if not names:
        raise typer.BadParameter(f"no format given; choose from {', '.join(FORMATS)} or all")
    return names


def _format_help() -> str:
    return "; ".join(f"`{name}` ({info.description})" for name, info in FORMATS.items())


HELP = f"""Export a capture for a profile viewer: pprof, speedscope, Chrome trace, .cpuprofile,
nflxprofile, folded stacks, Sentry V1 profiles or a Perfetto trace.

INPUT is a .bsprof file, `-` for standard input, or a session directory (its capture.bsprof).
Totals come from the profile tables (the numbers `inspect` shows); timelines are the 101 Hz
synthetic samples `convert` lays out for Sentry.

Output: by default next to the input (a session directory: inside it), as `<stem><suffix>`
(`run.bsprof` gives `run.pb.gz`, `run.speedscope.json`, ...; standard input: `profile.*` in the
current directory). `-o FILE` with one format writes that file (`-o -`: standard output);
`-o DIR` (an existing directory, a path ending in `/`, or any path with several formats) writes
`DIR/<stem><suffix>` for each. `sentry-v1` is a directory of NNNNNN.profile.json,
.transaction.json and .envelope files; `cpuprofile` is a file per thread,
`<stem>.<thread>.cpuprofile` (`-o run.cpuprofile`: `run.<thread>.cpuprofile`; the thread's
name kept to letters, digits, `_` and `-`). `perfetto` of a session directory holds its app
trace (trace.perfetto-trace) and the capture's timeline as tracks beside it. A binary format
(pprof, nflxprofile, perfetto) is not written to a terminal: `-o -` then needs a redirection.
Files are replaced atomically; large ones are written as they are made, never held whole in
memory.

Formats: {_format_help()}.

Exit status: 0 exported completely; 3 the capture is incomplete or corrupt (what was read is
exported, and a line on stderr says what is missing); 2 bad usage or an input that is missing,
unreadable or not a .bsprof (nothing is written); 1 an output could not be written."""


@app.command(name="export", help=HELP)
def export_command(
    input_: InputArgument,
    formats: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="FORMATS",
            help=f"Comma-separated formats: {', '.join(FORMATS)}, or all.",
        ),
    ],
    out: Annotated[
        str | None,
        typer.Option(
            "--output",
            "--out",
            "-o",
            metavar="PATH",
            help="Output file (one format; `-` = standard output) or directory "
            "(default: next to the input).",
        ),
    ] = None,
    metric: Annotated[Metric, typer.Option(help="Weight of `folded` stacks.")] = DEFAULT_METRIC,
    wall_unit: WallUnitOption = DEFAULT_UNIT,
) -> None:
    """Export a capture (see HELP)."""
    from rokuprof.capture.exports import (  # the command's, not its help's
        output_name,
        thread_file,
        write_parts,
    )
    from rokuprof.cli.layout import load_aggregates, load_capture
    from rokuprof.export.aggregate import AGGREGATE_FORMATS
    from rokuprof.export.report.session import export_with_session
    from rokuprof.store.writable import output_dir_problem

    err = stderr_console()
    follow_umask()  # a command-line tool's files: the user's umask decides
    names = parse_formats(formats)
    metric, wall_unit = Metric(metric).value, WallUnit(wall_unit).value
    to_stdout = out == STDIN
    if to_stdout and (len(names) != 1 or _several_files(names[0])):
        _fail(err, "-o - takes exactly one single-file format (cpuprofile is a file per thread)")
    if to_stdout and FORMATS[names[0]].binary and _is_terminal(sys.stdout):
        exits.fail(
            f"{names[0]} is binary: not written to a terminal; redirect standard output "
            f"(`> {output_name('profile', names[0], metric)}`) or give -o FILE"
        )
    try:
        source = open_capture(input_)
    except CaptureInputError as exc:
        _fail(err, str(exc))

    targets: dict[str, Path] = {}
    if not to_stdout:
        targets = _targets(out, names, source.stem, source.directory, metric)
        for fmt, target in targets.items():
            where = target if FORMATS[fmt].multi_file else target.parent
            if (problem := output_dir_problem(where)) is not None:
                source.close()
                _fail(err, problem)
    load = load_aggregates if AGGREGATE_FORMATS.issuperset(names) else load_capture
    inp = load(source, err, wall_unit)

    def files_of(fmt: str) -> tuple[dict, list[str]]:
        return export_with_session(inp, fmt, source.session, metric=metric)

    if to_stdout:
        (data,) = files_of(names[0])[0].values()
        write_pieces((data,) if isinstance(data, bytes) else data)
    else:
        for fmt in names:
            files, notes = files_of(fmt)
            try:
                written = write_parts(targets[fmt], files, fmt)
            except OSError as exc:
                exits.fail(f"cannot write {targets[fmt]}: {exc.strerror or exc}", EXIT_FAILED)
            where = targets[fmt]
            if FORMATS[fmt].per_thread:
                where = thread_file(where, fmt, "*")  # run.*.cpuprofile: one per thread
            write_text("; ".join([f"{fmt}: {where} ({written:,} bytes)", *notes]) + "\n")
    if inp.run.problem:
        exits.warn(f"{source.label}: {inp.run.problem}; exported what was read")
        raise typer.Exit(EXIT_INCOMPLETE)
    raise typer.Exit(EXIT_OK)


def _several_files(fmt: str) -> bool:
    return FORMATS[fmt].multi_file or FORMATS[fmt].per_thread


def _is_terminal(stream: object) -> bool:
    try:
        return stream.isatty()  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def _fail(err: Console, message: str) -> None:
    exits.fail(message)


def _targets(
    out: str | None, names: list[str], stem: str, directory: Path | None, metric: str
) -> dict[str, Path]:
    """Where each format goes (see HELP)."""
    from rokuprof.capture.exports import output_name

    if out is None:
        base = directory if directory is not None else Path(".")
        return {fmt: base / output_name(stem, fmt, metric) for fmt in names}
    path = Path(out)
    as_dir = path.is_dir() or out.endswith(("/", "\\")) or len(names) > 1
    if as_dir:
        return {fmt: path / output_name(stem, fmt, metric) for fmt in names}
    return {names[0]: path}
