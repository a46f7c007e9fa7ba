"""``rokuprof daemon --config FILE``: capture every configured Roku and upload to Sentry."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.config_cmd import load_or_fail
from rokuprof.cli.options import choice
from rokuprof.cli.root import app
from rokuprof.log_formats import FORMATS

LogFormat = choice("LogFormat", *FORMATS)
LogLevel = choice("LogLevel", "debug", "info", "warning", "error")


@app.command()
def daemon(
    config: Annotated[
        Path, typer.Option("--config", "-c", metavar="FILE", help="The daemon's TOML config.")
    ],
    log_format: Annotated[
        LogFormat, typer.Option(help="Log lines for people (human) or for a collector (json).")
    ] = LogFormat("human"),  # noqa: B008 - an enum member, not a call with effects
    log_level: Annotated[
        LogLevel, typer.Option(help="The least severe log lines shown.")
    ] = LogLevel("info"),  # noqa: B008
    log_libraries: Annotated[
        bool,
        typer.Option(
            "--log-libraries",
            help="Also show the HTTP libraries' own log lines at --log-level (else warnings only).",
        ),
    ] = False,
) -> None:
    """Run the capture daemon (systemd Type=notify service; SIGTERM stops it cleanly).

    Exit status: 0 after a clean stop, whatever its sessions' outcomes (each is in the logs,
    the metrics and its session.json; a non-zero status would make systemd count a normal stop
    as a failure); 1 it could not start; 2 bad usage or a bad config (every problem is listed),
    or, running as root, an output directory another user owns or may write to.
    """
    import asyncio  # the command's, not its help's

    from rokuprof.daemon.daemon import Daemon  # the command's, not its help's
    from rokuprof.daemon.logs import setup_logging
    from rokuprof.store.ownership import root_output_problem

    cfg = load_or_fail(config, owners=False, resolve=False)  # a name may resolve later
    if (problem := root_output_problem(cfg.capture.out)) is not None:
        exits.fail(problem)  # one line, nothing written
    dsn = cfg.sentry.dsn
    secrets = [dsn.public_key, dsn.secret_key or ""] if dsn is not None else []
    try:
        setup_logging(
            LogFormat(log_format).value,
            LogLevel(log_level).value.upper(),
            secrets=secrets,
            libraries=log_libraries,
        )
    except ValueError as error:
        exits.fail(error)
    raise typer.Exit(asyncio.run(Daemon(cfg).run()))
