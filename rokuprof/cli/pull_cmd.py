"""``rokuprof pull HOST``: download the profile a device kept (``bsprof_data_dest=local``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.checks import host_problem
from rokuprof.cli.options import (
    EcpPortOption,
    HostArgument,
    InstallerPortOption,
    JsonFlag,
    SessionsDirOption,
)
from rokuprof.cli.output import print_json, stderr_console
from rokuprof.cli.root import app
from rokuprof.device.constants import ECP_PORT, INSTALLER_PORT, PASSWORD_VARIABLE
from rokuprof.device.hosts import plain_host
from rokuprof.device.limits import INSTALLER_DOWNLOAD_TIMEOUT
from rokuprof.views.text import printable

PORTS = "--installer-port and --ecp-port"


@app.command()
def pull(
    host: HostArgument,
    out: SessionsDirOption = Path("rokuprof-data"),
    installer_port: InstallerPortOption = INSTALLER_PORT,
    ecp_port: EcpPortOption = ECP_PORT,
    password_file: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help=f"Read the developer password from this file's first line (else from "
            f"{PASSWORD_VARIABLE}).",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(min=0.1, metavar="SECONDS", help="Seconds the whole download may take."),
    ] = INSTALLER_DOWNLOAD_TIMEOUT,
    as_json: JsonFlag = False,
) -> None:
    """Download the profile the device kept after the app exited (apps built with
    bsprof_data_dest=local, the default) into a session directory like a captured one (its
    capture.bsprof, session.json, chunks/ and report.html), and print its path. The developer
    password comes from ROKU_DEV_PASSWORD or --password-file (never from the command line); the
    user is rokudev.

    Exit status: 0 the whole profile was pulled (session complete); 1 the device could not be
    reached, the download failed before any byte, or the session could not be written midway;
    2 bad usage, no password, a malformed host, an output that cannot be written, or the device
    refused the developer password; 3 the device had no profile ("No profiling data
    available"), or the profile pulled is cut short or corrupt (session truncated or failed).
    """
    import asyncio  # the command's, not its help's

    from rokuprof.device.errors import DeviceError
    from rokuprof.device.installer import InstallerAuthError, PasswordError, read_password
    from rokuprof.store.layout import SessionStatus
    from rokuprof.store.writable import output_dir_problem
    from rokuprof.workflows.pull import PullPlan
    from rokuprof.workflows.pull import pull as run_pull

    if (problem := host_problem(host, ports=PORTS)) is not None:
        exits.fail(problem)
    try:
        password = read_password(password_file, os.environ)
    except PasswordError as error:
        exits.fail(error)
    if password is None:
        exits.fail(f"no developer password: set {PASSWORD_VARIABLE} or give --password-file FILE")
    if (problem := output_dir_problem(out)) is not None:
        exits.fail(problem)
    plan = PullPlan(plain_host(host), password, out, installer_port, ecp_port, timeout)
    try:
        pulled = asyncio.run(run_pull(plan))
    except InstallerAuthError as error:
        exits.fail(error, exits.USAGE)
    except DeviceError as error:
        exits.fail(error, exits.FAILED)
    except OSError as error:  # the output filled up or went away midway
        where = error.filename or out
        exits.fail(
            f"cannot write the session under {where}: {error.strerror or error}", exits.FAILED
        )
    if pulled is None:
        if as_json:
            print_json({"path": None, "status": None, "said": "No profiling data available"})
        else:
            stderr_console().print(
                printable(f"{host}: No profiling data available (nothing was written)"),
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        raise typer.Exit(exits.INCOMPLETE)
    record = pulled.record
    if as_json:
        print_json({"path": str(pulled.path), **record})
    else:
        print(printable(pulled.path), flush=True)
        if pulled.status != SessionStatus.COMPLETE:
            exits.warn(f"the profile is {pulled.status}: {record['end_reason']}")
    complete = pulled.status == SessionStatus.COMPLETE
    raise typer.Exit(exits.OK if complete else exits.INCOMPLETE)
