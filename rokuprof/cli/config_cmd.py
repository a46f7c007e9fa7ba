"""``rokuprof config check FILE``: is a daemon config file usable, and what does it say."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rokuprof.cli.app import EXIT_OK, EXIT_USAGE, app
from rokuprof.daemon.config import ConfigError, load_config

config_app = typer.Typer(help="Check daemon config files.", no_args_is_help=True)
app.add_typer(config_app, name="config")


@config_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="A rokuprof daemon config file (TOML).")],
) -> None:
    """Print OK and a summary (and warnings, e.g. a DSN others can read), or every problem
    found (exit status 2).

    ``$ROKUPROF_SENTRY_DSN`` overrides ``sentry.dsn`` here as in the daemon.
    """
    try:
        config = load_config(file)
    except ConfigError as error:
        typer.echo(f"{error.source}: {len(error.errors)} problem(s)", err=True)
        for line in error.errors:
            typer.echo(f"  {line}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    typer.echo(f"OK {file}")
    for line in config.summary():
        typer.echo(f"  {line}")
    for warning in config.warnings:
        typer.echo(f"warning: {warning}", err=True)
    raise typer.Exit(EXIT_OK)
