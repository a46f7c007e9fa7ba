"""``rokuprof report INPUT [-o FILE|DIR] [--open]``: a capture as one self-contained HTML page."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.chunk_options import DEFAULT_UNIT, WallUnitOption
from rokuprof.cli.inputs import STDIN, CaptureInputError, open_capture
from rokuprof.cli.options import EditorUrlOption, InputArgument, OpenFlag
from rokuprof.cli.output import stderr_console, stdout_console, write_bytes
from rokuprof.cli.root import app
from rokuprof.export_names import DEFAULT_EDITOR_URL
from rokuprof.store.files import follow_umask
from rokuprof.views.text import printable

if TYPE_CHECKING:
    from rich.console import Console

SUFFIX = ".report.html"

HELP = f"""Write an interactive HTML report of a capture: flame graph, call tree, functions,
lines, memory, timeline and the run's facts, in one file.

INPUT is a .bsprof file, `-` for standard input, or a session directory (its capture.bsprof;
the session's marks and device vitals are drawn on the timeline).
The page is self-contained: its script, style and data are inline and it makes no network
request, so it opens offline anywhere and can be attached to a bug. Figures are the profile
tables' exact counters (the numbers `inspect` shows); the timeline is the 101 Hz synthetic
samples `convert` lays out, and selecting a time range there makes every view follow it.

`--source DIR|APP.zip`: the app's source (`rokuprof profile` passes its own). The hot
functions' source is embedded with each line's CPU, wall time and allocations in the margin,
the hottest lines marked (only those files are read, each up to 1 MiB, 8 MiB in all; a
`pkg:/` path maps only inside the source). Every `file:line` in the page is then a link built
from `--editor-url` (default `{DEFAULT_EDITOR_URL}`; `{{path}}` is the local file, `{{line}}`
the line).

Output: `-o FILE`, or `-o DIR` (an existing directory: `DIR/<stem>{SUFFIX}`, as `export -o DIR`
names its files), by default next to the input as `<stem>{SUFFIX}` (a session directory:
inside it; standard input: `profile{SUFFIX}` in the current directory), replaced atomically;
`-o -` writes the page to standard output. `--open` then opens it in the default browser.

Exit status: 0 the report was written from a complete capture; 3 the capture is incomplete or
corrupt (the report is written from what was read and shows where it stopped; a line on stderr
says so); 2 bad usage or a problem found before any work started (an input missing, unreadable
or not a .bsprof, an output that cannot be written, a `--source` missing or unreadable, a refused
`--editor-url`; nothing is written); 1 the report could not
be written midway."""


@app.command(name="report", help=HELP)
def report_command(
    input_: InputArgument,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            "--output",
            metavar="FILE|DIR",
            help=f"The HTML file to write (`-`: standard output; a directory: "
            f"`DIR/<stem>{SUFFIX}`; default: next to the input, `<stem>{SUFFIX}`).",
        ),
    ] = None,
    open_: OpenFlag = False,
    wall_unit: WallUnitOption = DEFAULT_UNIT,
    app_source: Annotated[
        Path | None,
        typer.Option(
            "--source",
            metavar="DIR|ZIP",
            help="The app's source directory or .zip: the hot functions' source with per-line "
            "figures, and file:line links to it.",
        ),
    ] = None,
    editor_url: EditorUrlOption = None,
) -> None:
    """Write an HTML report (see HELP)."""
    from rokuprof.cli.layout import load_capture  # the command's, not its help's
    from rokuprof.export.report.session import report_page
    from rokuprof.export.report.source import editor_url_problem
    from rokuprof.store.files import write_atomic

    err = stderr_console()
    follow_umask()  # a command-line tool's files: the user's umask decides
    to_stdout = out is not None and str(out) == STDIN
    if to_stdout and open_:
        exits.fail("--open needs a file: -o - writes the page to standard output")
    if editor_url is not None and (problem := editor_url_problem(editor_url)) is not None:
        exits.fail(problem)
    app = None
    if app_source is not None:
        from rokuprof.app.source import SourceError, open_source

        try:
            app = open_source(app_source)
        except SourceError as exc:
            exits.fail(exc)
    try:
        source = open_capture(input_)
    except CaptureInputError as exc:
        exits.fail(exc)
    if out is None:
        out = (source.directory or Path(".")) / f"{source.stem}{SUFFIX}"
    elif not to_stdout and out.is_dir():  # as `export -o DIR`: the file named from the input
        out = out / f"{source.stem}{SUFFIX}"
    if not to_stdout and (problem := _output_problem(out)) is not None:
        source.stream.close()
        exits.fail(problem)

    inp = load_capture(source, err, wall_unit.value)
    html = report_page(inp, source.session, source=app, editor_url=editor_url)
    if to_stdout:
        write_bytes(html)
    else:
        try:
            write_atomic(out, html)
        except OSError as exc:
            exits.fail(f"cannot write {out}: {exc.strerror or exc}", status=exits.FAILED)
        stdout_console().print(
            f"report: {printable(out)} ({len(html):,} bytes)", markup=False, soft_wrap=True
        )
    if open_:
        open_in_browser(out, err)
    if inp.run.problem:
        exits.warn(f"{source.label}: {inp.run.problem}; the report shows what was read")
        raise typer.Exit(exits.INCOMPLETE)
    raise typer.Exit(exits.OK)


def _output_problem(path: Path) -> str | None:
    """Why ``path`` cannot be written (checked before any work), or ``None``."""
    if path.is_dir():
        return f"cannot write {path}: it is a directory"
    parent = path.parent
    if not parent.is_dir():
        return f"cannot write {path}: no directory {parent}"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"cannot write {path}: {parent} is not writable"
    return None


def open_in_browser(path: Path, err: Console) -> None:
    """Open the report in a browser; say so (and where the file is) when there is none."""
    import webbrowser

    try:
        opened = webbrowser.open(path.resolve().as_uri())
    except webbrowser.Error:
        opened = False
    if not opened:
        err.print(
            f"no web browser found to open it; open {printable(path.resolve())} yourself",
            markup=False,
            soft_wrap=True,
            highlight=False,
        )
