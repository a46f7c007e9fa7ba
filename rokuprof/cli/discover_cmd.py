"""``rokuprof discover``: the Roku devices on this network and how they are set up."""

from __future__ import annotations

from typing import Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.options import JsonFlag
from rokuprof.cli.output import print_json, stderr_console, stdout_console
from rokuprof.cli.root import EXIT_OK, app
from rokuprof.device.hosts import host_form_problem, plain_host, url_host
from rokuprof.views.text import printable, text


def _address(value: str, default_port: int) -> tuple[str, int]:
    """``HOST``, ``HOST:PORT``, ``::1`` or ``[::1]:PORT`` -> (host, port)."""
    value = value.strip()
    if unbracketed := _unbracketed_port(value):
        raise typer.BadParameter(unbracketed)
    if host_form_problem(value) is None:  # an address or a name alone
        return plain_host(value), default_port
    host, sep, port = value.rpartition(":")
    host = plain_host(host)
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535 or host_form_problem(host):
        raise typer.BadParameter(f"expected HOST or HOST:PORT, got {value!r}")
    return host, int(port)


def _unbracketed_port(value: str) -> str | None:
    """Why ``value``, an IPv6 address and a port without brackets (``::1:9``: port 9 of
    ``::1``, or the address ``::1:9``?), is refused; ``None`` for any other form."""
    host, colon, port = value.rpartition(":")
    if value.startswith("[") or not colon or not port.isdigit() or ":" not in host:
        return None
    if host_form_problem(host) is not None:
        return None
    from rokuprof.device.ssdp import SSDP_PORT  # the command's, not its help's

    if host_form_problem(value) is not None:  # not an address itself: only one reading
        return f"{value!r}: write an IPv6 address with a port in brackets: [{host}]:{port}"
    return (
        f"{value!r} is ambiguous: write [{host}]:{port} for port {port} of {host},"
        f" or [{value}] for the address {value} (port {SSDP_PORT})"
    )


@app.command()
def discover(
    timeout: Annotated[
        float, typer.Option(min=0.1, max=60, metavar="SECONDS", help="Seconds to listen.")
    ] = 3.0,
    as_json: JsonFlag = False,
    target: Annotated[
        list[str] | None,
        typer.Option(
            metavar="HOST[:PORT]",
            help="Ask this address instead (unicast M-SEARCH, port 1900 unless given; an IPv6 "
            "address with a port in brackets, [::1]:PORT; repeatable): a Roku on a routed "
            "network, or `rokuprof simulate` (its ssdp port).",
        ),
    ] = None,
    bind: Annotated[
        str, typer.Option(hidden=True, help="Local HOST:PORT of the discovery socket.")
    ] = "0.0.0.0:0",
) -> None:
    """Find Roku devices (SSDP) and show each one's serial, name, model, address, software
    version, developer mode and ECP mode (from ECP device-info).

    Exit status: 0 the search ran (whether or not a Roku answered; `--json` prints `[]` then);
    1 the search could not be sent (no route to the network, a socket error); 2 bad usage.
    """
    import asyncio  # the command's, not its help's

    from rich.table import Table  # the command's, not its help's

    from rokuprof.device.errors import DeviceError
    from rokuprof.device.ssdp import SSDP_GROUP, SSDP_PORT
    from rokuprof.device.survey import survey

    try:
        targets = [_address(t, SSDP_PORT) for t in target] if target else [(SSDP_GROUP, SSDP_PORT)]
        local = _address(bind, 0)
        if bind == "0.0.0.0:0" and all(":" in host for host, _ in targets):
            local = ("::", 0)  # IPv6 targets need an IPv6 socket
    except typer.BadParameter as error:
        exits.fail(error.format_message())
    err = stderr_console()
    try:
        found = asyncio.run(survey(timeout, targets=targets, bind=local))
    except DeviceError as error:
        exits.fail(error, exits.FAILED)
    rows = [d.to_json() for d in found]
    if as_json:
        print_json(rows)
        raise typer.Exit(EXIT_OK)
    if not rows and target:
        asked = ", ".join(f"{url_host(host)}:{port}" for host, port in targets)
        err.print(
            printable(
                f"No Roku answered at {asked} within {timeout:g} s. Is the device on (not "
                "asleep), and is that its address and SSDP port (1900 on a Roku; `rokuprof "
                "simulate` prints its own)?"
            ),
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_OK)
    if not rows:
        err.print(
            f"No Roku answered within {timeout:g} s. Is this machine on the same network, "
            "and is the device on (not asleep)? Across routers, ask it: --target ADDRESS."
        )
        raise typer.Exit(EXIT_OK)
    table = Table(box=None, header_style="bold")
    for column in ("serial", "name", "model", "address", "software", "dev mode", "ECP mode"):
        table.add_column(column)
    for row in rows:
        dev = {True: "yes", False: "no", None: "?"}[row["developer_mode"]]
        table.add_row(
            text(row["serial"] or "?"),
            text(row["name"] or "?"),
            text(row["model"] or "?"),
            text(f"{url_host(str(row['address']))}:{row['ecp_port']}"),
            text(row["software"] or "?"),
            dev,
            text(row["ecp_mode"] or "?"),
        )
    out = stdout_console()
    out.print(table)
    for row in rows:
        if row["error"]:
            out.print(printable(f"{row['address']}: {row['error']}"), markup=False, soft_wrap=True)
        elif row["ecp_mode"] in ("limited", "disabled"):
            out.print(
                f"{row['address']}: ECP is {row['ecp_mode']}; to allow control, set Settings > "
                "System > Advanced system settings > Control by mobile apps > Network access "
                "to 'Permissive' (or 'Default').",
                markup=False,
                soft_wrap=True,
            )
        if row["developer_mode"] is False:
            out.print(
                f"{row['address']}: developer mode is off (needed to sideload a profiled app).",
                markup=False,
            )
        if not row["location_trusted"]:
            out.print(
                printable(
                    f"{row['address']}: its SSDP reply named another host ({row['location']}); "
                    "that address was ignored."
                ),
                markup=False,
                soft_wrap=True,
            )
    raise typer.Exit(EXIT_OK)
