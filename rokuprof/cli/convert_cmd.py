"""``rokuprof convert FILE --to sentry --out DIR``: a .bsprof file as Sentry profile chunks."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.chunk_options import DEFAULT_UNIT, WallUnit, WallUnitOption, chunk_options
from rokuprof.cli.inputs import CaptureInputError, CaptureSource, open_capture
from rokuprof.cli.options import JsonFlag
from rokuprof.cli.output import print_json, stderr_console, stdout_console
from rokuprof.cli.root import app
from rokuprof.sentry.settings import MAX_CHUNK_SECONDS, ChunkSettings
from rokuprof.store.files import follow_umask
from rokuprof.store.layout import CHUNKS_DIR
from rokuprof.views.text import printable

if TYPE_CHECKING:
    from rich.console import Console

    from rokuprof.sentry.convert import OfflineConverter

EXIT_FAILED = 1  # the output could not be written


class OutputFormat(StrEnum):
    sentry = "sentry"


HELP = (
    "Convert a .bsprof file into Sentry V2 profile chunks: DIR/chunks/000001.json, ... "
    "(and with --envelopes DIR/envelopes/000001.envelope, ...).\n\n"
    "Samples are synthesised at 101 Hz from each call path's wall time and spread over the "
    "run's start and end from the header and footer (without a footer: over the busiest "
    "thread's busy time).\n\n"
    "FILE may be `-` (standard input) or a session directory (its capture.bsprof). "
    "`--json` prints the summary as JSON.\n\n"
    "Exit status: 0 converted completely; 3 the file is incomplete or corrupt (what was decoded "
    "is converted), a chunk failed validation, or no chunk could be made (the reason is "
    "printed); 2 bad usage, an input that is missing, unreadable or not a .bsprof, or an output "
    "directory that cannot be written (nothing is written); 1 an output file could not be "
    "written midway."
)


@app.command(help=HELP)
def convert(
    file: Annotated[
        str,
        typer.Argument(
            metavar="FILE",
            help="A .bsprof file (complete, cut short or corrupt), `-` (standard input) or a "
            "session directory.",
        ),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", metavar="DIR", help="Output directory.")],
    to: Annotated[
        OutputFormat, typer.Option("--to", help="Output format.", case_sensitive=False)
    ] = OutputFormat.sentry,
    envelopes: Annotated[
        bool,
        typer.Option("--envelopes", help="Also write Sentry envelopes to DIR/envelopes/."),
    ] = False,
    release: Annotated[
        str | None,
        typer.Option(
            metavar="NAME",
            help="Sentry release (default: `<app name>@<app version>` from the header).",
        ),
    ] = None,
    environment: Annotated[
        str, typer.Option(metavar="NAME", help="Sentry environment.")
    ] = "production",
    wall_unit: WallUnitOption = DEFAULT_UNIT,
    chunk_seconds: Annotated[
        float,
        typer.Option(
            metavar="SECONDS", help=f"Time window of one chunk, at most {MAX_CHUNK_SECONDS:g} s."
        ),
    ] = ChunkSettings.chunk_seconds,  # the settings' default
    force: Annotated[
        bool, typer.Option("--force", help="Replace chunk and envelope files already in DIR.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Convert a .bsprof file into Sentry chunks (see HELP)."""
    from rokuprof.capture.chunks import report_json  # the command's, not its help's
    from rokuprof.sentry.convert import OfflineConverter
    from rokuprof.store.chunk_files import ENVELOPES_DIR, OutputError, prepare_output

    err = stderr_console()
    follow_umask()  # a command-line tool's files: the user's umask decides
    if to is not OutputFormat.sentry:  # pragma: no cover - only sentry exists today
        exits.fail(f"unsupported format {to.value!r}")
    with chunk_options():
        settings = ChunkSettings(
            wall_unit=WallUnit(wall_unit).value,
            chunk_seconds=chunk_seconds,
            release=release,
            environment=environment,
        )
    try:
        source = open_capture(file)  # before any output exists: a bad input creates nothing
    except CaptureInputError as exc:
        exits.fail(exc)
    subdirs = [CHUNKS_DIR] + ([ENVELOPES_DIR] if envelopes else [])
    try:
        prepare_output(out, subdirs, force)
    except OutputError as exc:
        source.close()
        exits.fail(exc)
    except BaseException:
        source.close()
        raise
    converter = OfflineConverter(settings, total_bytes=source.size)
    try:
        source.read(converter.feed, err, what="decoding")
    except OSError as exc:
        exits.fail(f"cannot read {source.label}: {exc.strerror or exc}")
    measures = _frame_measures(source, converter)
    written = _write_chunks(converter, source, out, envelopes, err, measures)

    summary = converter.summary
    assert summary is not None
    where = f"{out / CHUNKS_DIR}" + (f" and {out / ENVELOPES_DIR}" if envelopes else "")
    if as_json:
        print_json(
            {
                "input": source.label,
                "status": summary.status,
                "problem": summary.problem,
                "warnings": summary.warnings,
                "bytes_read": summary.bytes_read,
                "entries": summary.entries,
                "wall_unit": summary.wall_unit,
                "chunk_files": written,
                "frame_measurements": len(measures),
                "out": str(out),
                **report_json(summary.report),
            }
        )
    else:
        console = stdout_console()
        for line in summary.lines():  # thread (module) names and warnings come from the device
            console.print(printable(line), markup=False, soft_wrap=True)
        console.print(f"wrote {written} chunk file(s) to {where}", markup=False, soft_wrap=True)
    if written == 0:
        exits.fail(f"no chunk was produced: {summary.no_chunk_reason()}", exits.INCOMPLETE)
    lost = bool(summary.report.rejected)
    raise typer.Exit(exits.OK if summary.complete and not lost else exits.INCOMPLETE)


def _frame_measures(source: CaptureSource, converter: OfflineConverter) -> list:
    """A session's app-trace frames as measurements for its chunks (none without a trace)."""
    from rokuprof.sentry.frame_measures import frame_measures
    from rokuprof.workflows.trace_gate import session_trace

    trace = session_trace(source.session)
    header = converter.reader.header
    if trace is None:
        return []
    return frame_measures(trace, header.start_ms / 1000 if header is not None else None)


def _write_chunks(
    converter: OfflineConverter,
    source: CaptureSource,
    out: Path,
    envelopes: bool,
    err: Console,
    measures: list,
) -> int:
    """Lay out the samples and write each chunk (and envelope) as it is made, with progress on
    a terminal; the number of chunks written."""
    from rich.progress import MofNCompleteColumn

    from rokuprof.cli.progress import SHOW_FROM, progress_bar
    from rokuprof.store.chunk_files import OutputError, conversion_paths, write_chunks

    show = err.is_terminal and (source.size or converter.received) >= SHOW_FROM
    with progress_bar(err, show, MofNCompleteColumn()) as progress:
        task = progress.add_task("laying out samples", total=None)

        def step(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        try:
            chunks = converter.chunks(step, measures)
            written = write_chunks(chunks, conversion_paths(out, envelopes))
        except OutputError as exc:
            exits.fail(exc, exits.FAILED)
    return len(written)
