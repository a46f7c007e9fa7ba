"""Checks a command makes before any work starts, so a bad host (and, with
:func:`rokuprof.store.writable.output_dir_problem`, a bad output directory) fails at
once with one line (exit status 2) instead of a traceback when the first run arrives.

Each returns ``None`` when all is well, else the problem as one sentence for ``exits.fail``.
"""

from __future__ import annotations

import socket

from rokuprof.device import hosts
from rokuprof.device.hosts import RESOLVE_TIMEOUT, WATCH_PORTS, Resolver
from rokuprof.device.hosts import host_form_problem as host_form_problem


def _getaddrinfo(host: str) -> object:
    return socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)


#: The resolver ``host_problem`` uses by default (tests put a loopback-only one here).
resolve: Resolver = _getaddrinfo


def host_problem(host: str, ports: str = WATCH_PORTS) -> str | None:
    """:func:`rokuprof.device.hosts.host_problem` looking names up with :data:`resolve`
    (``ports``: the options that give the device's ports, named when a port is in ``host``)."""
    return hosts.host_problem(host, ports, resolve, RESOLVE_TIMEOUT)
