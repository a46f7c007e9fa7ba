"""The typer application every command module registers on."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="rokuprof",
    help="Capture Roku BrightScript profiler data (.bsprof) and turn it into profiles.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # reflow docstring paragraphs in --help
)

# Exit statuses shared by the commands.
EXIT_OK = 0
EXIT_USAGE = 2  # bad usage or an unreadable file (typer's own usage errors use 2 as well)
EXIT_INCOMPLETE = 3  # the data was incomplete or corrupt; what could be read was used


def _show_version(value: bool) -> None:
    if value:
        from rokuprof import __version__, _native

        typer.echo(f"rokuprof {__version__}")
        typer.echo(f"decoder core: {_native.describe()}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_show_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Capture Roku BrightScript profiler data (.bsprof) and turn it into profiles."""
