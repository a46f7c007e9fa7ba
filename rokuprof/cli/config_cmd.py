"""``rokuprof config check FILE``: is a daemon config file usable, and what does it say."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import checks, exits
from rokuprof.cli.options import JsonFlag
from rokuprof.cli.output import print_json, stderr_console, stdout_console
from rokuprof.cli.root import RokuTyper, app, help_when_bare
from rokuprof.views.text import printable

if TYPE_CHECKING:
    from rokuprof.daemon.config import DaemonConfig

config_app = RokuTyper(help="Check daemon config files.", invoke_without_command=True)
config_app.callback()(help_when_bare)  # bare `rokuprof config`: its help, a usage error
app.add_typer(config_app, name="config")


def _problems(
    path: Path, owners: bool = True, resolve: bool = True
) -> tuple[DaemonConfig | None, str, list[str]]:
    """The config (None if unusable), how to name it, and every problem found (``owners``: as
    root, an output directory another user could steer is one; ``resolve``: so is a device
    host name that does not resolve, as ``watch`` says)."""
    from rokuprof.daemon.config import ConfigError, load_config  # the command's, not its help's
    from rokuprof.store.ownership import root_output_problem

    try:
        config = load_config(path, runnable=True, resolver=checks.resolve if resolve else None)
    except ConfigError as error:
        return None, str(error.source), list(error.errors)
    if owners and (problem := root_output_problem(config.capture.out)) is not None:
        return None, str(path), [f"capture.out: {problem}"]
    return _with_disk_warning(config), str(path), []


def _with_disk_warning(config: DaemonConfig) -> DaemonConfig:
    """The config, warning too when retention's budget and the floor exceed the disk."""
    from rokuprof.store.retention import budget_warning

    cap = config.capture
    warning = budget_warning(cap.out, config.retention.max_bytes, cap.archive.min_free_bytes)
    return replace(config, warnings=(*config.warnings, warning)) if warning else config


def load_or_fail(path: Path, owners: bool = True, resolve: bool = True) -> DaemonConfig:
    """The config at ``path``, or every problem on stderr and exit status 2."""
    config, source, problems = _problems(path, owners, resolve)
    if config is None:
        err = stderr_console()
        err.print(printable(f"{source}: {len(problems)} problem(s)"), markup=False)
        for line in problems:
            err.print(f"  {printable(line)}", markup=False, soft_wrap=True)
        raise typer.Exit(exits.USAGE)
    return config


@config_app.command("check")
def check(
    file: Annotated[Path, typer.Argument(help="A rokuprof daemon config file (TOML).")],
    as_json: JsonFlag = False,
) -> None:
    """Print OK and a summary (and warnings, e.g. a DSN others can read), or every problem
    found: device hosts follow `watch`'s rules (an IP address or a host name that resolves,
    no URL, no port), the output directory must be writable.

    `$ROKUPROF_SENTRY_DSN` overrides `sentry.dsn` here as in the daemon. With `--json`:
    `{"ok", "file", "problems", "summary", "warnings"}` on standard output.

    Exit status: 0 usable; 2 a problem was found (each is listed) or bad usage.
    """
    if as_json:
        config, _, problems = _problems(file)
        print_json(
            {
                "ok": config is not None,
                "file": str(file),
                "problems": problems,
                "summary": config.summary() if config is not None else [],
                "warnings": list(config.warnings) if config is not None else [],
            }
        )
        raise typer.Exit(exits.OK if config is not None else exits.USAGE)
    config = load_or_fail(file)
    out = stdout_console()
    out.print(printable(f"OK {file}"), markup=False)
    for line in config.summary():
        out.print(f"  {printable(line)}", markup=False, soft_wrap=True)
    for warning in config.warnings:
        exits.warn(warning)
    raise typer.Exit(exits.OK)
