"""``rokuprof convert FILE --to sentry --out DIR``: a .bsprof file as Sentry profile chunks."""

from __future__ import annotations

import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from rokuprof.cli.app import EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, app
from rokuprof.cli.progress import SHOW_FROM, read_with_progress
from rokuprof.sentry.chunk import MAX_CHUNK_SECONDS, ChunkSettings
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.sentry.envelope import chunk_envelope
from rokuprof.sentry.sampling import DEFAULT_WALL_UNIT, WALL_UNITS
from rokuprof.store.files import write_atomic
from rokuprof.views.text import error_line, printable

EXIT_FAILED = 1  # the output could not be written
CHUNKS_DIR = "chunks"
ENVELOPES_DIR = "envelopes"


class OutputFormat(StrEnum):
    sentry = "sentry"


WallUnit = StrEnum("WallUnit", {name: name for name in WALL_UNITS})


def _fail(err: Console, message: str) -> typer.Exit:
    err.print(error_line(message))
    return typer.Exit(EXIT_USAGE)


def _prepare_out(out: Path, subdirs: list[str], force: bool, err: Console) -> None:
    if out.exists() and not out.is_dir():
        raise _fail(err, f"{out} exists and is not a directory")
    patterns = {CHUNKS_DIR: "*.json", ENVELOPES_DIR: "*.envelope"}
    existing = [p for sub in patterns for p in sorted((out / sub).glob(patterns[sub]))]
    if existing and not force:
        raise _fail(
            err,
            f"{out} already holds {len(existing)} converted file(s) "
            f"(e.g. {existing[0]}); use --force to replace them",
        )
    try:
        for path in existing:
            path.unlink()
        for sub in subdirs:
            (out / sub).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _fail(err, f"cannot prepare {out}: {exc.strerror or exc}") from None


HELP = (
    "Convert a .bsprof file into Sentry V2 profile chunks: DIR/chunks/000001.json, ... "
    "(and with --envelopes DIR/envelopes/000001.envelope, ...).\n\n"
    "Samples are synthesised at 101 Hz from each call path's wall time and spread over the "
    "run's start and end from the header and footer (without a footer: over the busiest "
    "thread's busy time).\n\n"
    "Exit status: 0 converted completely; 3 the file is incomplete or corrupt (what was decoded "
    "is converted) or a chunk failed validation; 2 unreadable file or bad usage; 1 the output "
    "could not be written."
)


@app.command(help=HELP)
def convert(
    file: Annotated[Path, typer.Argument(help="A .bsprof file (complete, cut short or corrupt).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")],
    to: Annotated[
        OutputFormat, typer.Option("--to", help="Output format.", case_sensitive=False)
    ] = OutputFormat.sentry,
    envelopes: Annotated[
        bool,
        typer.Option("--envelopes", help="Also write Sentry envelopes to DIR/envelopes/."),
    ] = False,
    release: Annotated[
        str | None,
        typer.Option(help="Sentry release (default: `<app name>@<app version>` from the header)."),
    ] = None,
    environment: Annotated[str, typer.Option(help="Sentry environment.")] = "production",
    wall_unit: Annotated[
        WallUnit,
        typer.Option(
            help="Unit of the .bsprof wall-time field (not published by Roku; "
            "microseconds is the working assumption)."
        ),
    ] = DEFAULT_WALL_UNIT,
    chunk_seconds: Annotated[
        float,
        typer.Option(
            min=0.1, max=MAX_CHUNK_SECONDS, help="Time window of one chunk, at most 60 s."
        ),
    ] = MAX_CHUNK_SECONDS,
    force: Annotated[
        bool, typer.Option("--force", help="Replace chunk and envelope files already in DIR.")
    ] = False,
) -> None:
    """Convert a .bsprof file into Sentry chunks (see HELP)."""
    err = Console(stderr=True, highlight=False)
    if to is not OutputFormat.sentry:  # pragma: no cover - only sentry exists today
        raise _fail(err, f"unsupported format {to.value!r}")
    try:
        settings = ChunkSettings(
            wall_unit=WallUnit(wall_unit).value,
            chunk_seconds=chunk_seconds,
            release=release,
            environment=environment,
        )
    except ValueError as exc:
        raise _fail(err, str(exc)) from None
    try:
        size = file.stat().st_size
    except OSError as exc:
        raise _fail(err, f"cannot read {file}: {exc.strerror or exc}") from None
    if not file.is_file():
        raise _fail(err, f"cannot read {file}: not a file")
    subdirs = [CHUNKS_DIR] + ([ENVELOPES_DIR] if envelopes else [])
    _prepare_out(out, subdirs, force, err)

    converter = OfflineConverter(settings, total_bytes=size)
    try:
        read_with_progress(file, converter.feed, err, what="decoding")
    except OSError as exc:
        raise _fail(err, f"cannot read {file}: {exc.strerror or exc}") from None

    written = 0
    show = err.is_terminal and size >= SHOW_FROM
    with Progress(
        TextColumn("laying out samples"),
        BarColumn(),
        MofNCompleteColumn(),
        console=err,
        transient=True,
        disable=not show,
    ) as progress:
        task = progress.add_task("chunks", total=None)

        def step(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        try:
            for chunk in converter.chunks(step):
                name = f"{chunk.index:06d}"
                write_atomic(out / CHUNKS_DIR / f"{name}.json", chunk.data)
                if envelopes:
                    envelope = chunk_envelope(chunk, sent_at=time.time())
                    write_atomic(out / ENVELOPES_DIR / f"{name}.envelope", envelope.to_bytes())
                written += 1
        except OSError as exc:
            err.print(error_line(f"cannot write to {out}: {exc.strerror or exc}"))
            raise typer.Exit(EXIT_FAILED) from None

    summary = converter.summary
    assert summary is not None
    for line in summary.lines():
        typer.echo(printable(line))  # thread (module) names and warnings come from the device
    where = f"{out / CHUNKS_DIR}" + (f" and {out / ENVELOPES_DIR}" if envelopes else "")
    typer.echo(f"wrote {written} chunk file(s) to {where}")
    lost = bool(summary.report.rejected)
    raise typer.Exit(EXIT_OK if summary.complete and not lost else EXIT_INCOMPLETE)
