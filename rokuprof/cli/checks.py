"""Checks a command makes before any work starts, so a bad output directory or host fails at
once with one line (exit status 2) instead of a traceback when the first run arrives.

Each returns ``None`` when all is well, else the problem as one sentence for ``exits.fail``.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

#: How long a host name may take to resolve before the check gives up.
RESOLVE_TIMEOUT = 10.0

# RFC 1123 labels; an address with a port, a URL or a path is not a host name.
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
WATCH_PORTS = "--profiler-port, --ecp-port and --console-port"


def output_dir_problem(path: Path) -> str | None:
    """Create ``path`` (with its parents) if needed and prove it writable by creating and
    removing a file in it."""
    if path.exists() and not path.is_dir():
        return f"{path} exists and is not a directory"
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".rokuprof-probe-"):
            pass
    except OSError as exc:
        where = exc.filename or path
        return f"cannot write to {where}: {exc.strerror or exc}"
    return None


def host_form_problem(host: str, ports: str = WATCH_PORTS) -> str | None:
    """Why ``host`` is not an IP address or a host name (``None`` if it is one); ``ports``
    names the options that take the ports instead."""
    shown = repr(host)
    if not host.strip():
        return f"{shown} is not a host name: give the Roku's address, e.g. 192.168.1.50"
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None
    except ValueError:
        pass
    if "://" in host:
        return f"{shown} is a URL, not a host name: give the address alone (ports: {ports})"
    name, colon, port = host.rpartition(":")
    if colon and port.isdigit():
        return f"{shown} is not a host name: give {name!r} alone and the port with {ports}"
    labels = host.removesuffix(".").split(".")
    if len(host) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return f"{shown} is not a host name (letters, digits, '-' and '.' only)"
    return None


Resolver = Callable[[str], object]


def _getaddrinfo(host: str) -> object:
    return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)


#: The resolver ``host_problem`` uses by default (tests put a loopback-only one here).
resolve: Resolver = _getaddrinfo


def host_problem(
    host: str,
    ports: str = WATCH_PORTS,
    resolver: Resolver | None = None,
    timeout: float = RESOLVE_TIMEOUT,
) -> str | None:
    """Why ``host`` cannot be used (malformed, or it does not resolve within ``timeout``)."""
    problem = host_form_problem(host, ports)
    if problem is not None:
        return problem
    try:
        ipaddress.ip_address(host.strip("[]"))
        return None  # an address needs no look-up
    except ValueError:
        pass
    outcome: list[BaseException | None] = []

    def look_up() -> None:
        try:
            (resolver or resolve)(host)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=look_up, name="resolve-host", daemon=True)
    thread.start()
    thread.join(timeout)
    if not outcome:
        return f"cannot resolve host {host!r}: no answer within {timeout:g} s"
    error = outcome[0]
    if error is None:
        return None
    if isinstance(error, OSError):
        reason = error.strerror or str(error)
        return f"cannot resolve host {host!r}: {reason}"
    return f"cannot resolve host {host!r}: {error}"
