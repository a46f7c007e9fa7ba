"""The one rule for a device's host, shared by ``watch``, ``control`` and the daemon's config:
an IP address (IPv6 bare or in brackets) or an RFC 1123 host name, never a URL or HOST:PORT.

Pure: a name is looked up only through the ``resolver`` the caller passes.
"""

from __future__ import annotations

import ipaddress
import re
import threading
from collections.abc import Callable

#: How long a host name may take to resolve before the check gives up.
RESOLVE_TIMEOUT = 10.0
WATCH_PORTS = "--profiler-port, --ecp-port and --console-port"

# RFC 1123 labels; an address with a port, a URL or a path is not a host name.
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")

Resolver = Callable[[str], object]


def _ipv6(text: str) -> bool:
    try:
        return ipaddress.ip_address(text).version == 6
    except ValueError:
        return False


def plain_host(text: str) -> str:
    """The host as sockets take it: ``[::1]`` -> ``::1``; anything else only trimmed."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]") and _ipv6(text[1:-1]):
        return text[1:-1]
    return text


def url_host(host: str) -> str:
    """The host as a URL or ``HOST:PORT`` writes it (IPv6 in brackets)."""
    return f"[{host}]" if ":" in host else host


def host_form_problem(host: str, ports: str = WATCH_PORTS) -> str | None:
    """Why ``host`` is not an IP address or a host name (``None`` if it is one); ``ports``
    names the options (or keys) that take the ports instead."""
    shown = repr(host)
    text = plain_host(host)
    if not text:
        return f"{shown} is not a host name: give the Roku's address, e.g. 192.168.1.50"
    try:
        ipaddress.ip_address(text)
        return None
    except ValueError:
        pass
    if "://" in text:
        return f"{shown} is a URL, not a host name: give the address alone (ports: {ports})"
    name, colon, port = text.rpartition(":")
    if colon and port.isdigit() and name:
        return f"{shown} is not a host name: give {name!r} alone and the port with {ports}"
    labels = text.removesuffix(".").split(".")
    if len(text) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        return f"{shown} is not a host name (letters, digits, '-' and '.' only)"
    if labels[-1].isdigit():  # no top-level domain is all digits: a mistyped address
        return f"{shown} is not an IP address (four numbers 0-255) nor a host name"
    return None


def host_problem(
    host: str,
    ports: str = WATCH_PORTS,
    resolver: Resolver | None = None,
    timeout: float = RESOLVE_TIMEOUT,
) -> str | None:
    """Why ``host`` cannot be used: malformed, or (with a ``resolver``) a name that does not
    resolve within ``timeout``. An address is never looked up."""
    problem = host_form_problem(host, ports)
    if problem is not None or resolver is None:
        return problem
    host = plain_host(host)
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    outcome: list[BaseException | None] = []

    def look_up() -> None:
        try:
            resolver(host)
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
    reason = (error.strerror or str(error)) if isinstance(error, OSError) else str(error)
    return f"cannot resolve host {host!r}: {reason}"
