"""``rokuprof daemon --config FILE``: capture every configured Roku and upload to Sentry."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from rokuprof.cli.app import EXIT_USAGE, app
from rokuprof.daemon.config import ConfigError, load_config
from rokuprof.daemon.daemon import Daemon
from rokuprof.daemon.logs import FORMATS, setup_logging


@app.command()
def daemon(
    config: Annotated[Path, typer.Option("--config", "-c", help="The daemon's TOML config.")],
    log_format: Annotated[
        str, typer.Option("--log-format", help=f"Log lines: {' or '.join(FORMATS)}.")
    ] = "human",
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning...")] = "info",
) -> None:
    """Run the capture daemon (systemd Type=notify service; SIGTERM stops it cleanly).

    Exit status: 0 after a clean stop, 1 if it could not start, 2 for a bad config.
    """
    if log_format not in FORMATS:
        typer.echo(f"error: --log-format must be one of {', '.join(FORMATS)}", err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        cfg = load_config(config)
    except ConfigError as error:
        typer.echo(f"{error.source}: {len(error.errors)} problem(s)", err=True)
        for line in error.errors:
            typer.echo(f"  {line}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    dsn = cfg.sentry.dsn
    secrets = [dsn.public_key, dsn.secret_key or ""] if dsn is not None else []
    try:
        setup_logging(log_format, log_level.upper(), secrets=secrets)
    except ValueError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    raise typer.Exit(asyncio.run(Daemon(cfg).run()))
