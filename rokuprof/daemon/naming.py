"""The one rule naming a daemon's device, for its directory under ``out``, its ``device``
metric label and its log lines (pure).

A device is named by the config's ``name`` when given, else by the serial number ECP reports,
else by its host; when several configured devices share one host (a rack of simulators behind
one address), the host alone is ``<host>-<profiler port>``. Names are file-name safe
(:func:`~rokuprof.store.layout.safe_name`). Two configured devices that would start with one
name are a config error; two live devices reporting one serial are told apart at run time
(:class:`~rokuprof.daemon.registry.DeviceNames`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from typing import Protocol

from rokuprof.store.layout import safe_name


class Entry(Protocol):
    host: str
    name: str
    profiler_port: int


def shared_hosts(devices: Sequence[Entry]) -> frozenset[str]:
    """The hosts two or more of ``devices`` share (one pass: a fleet's names cost O(devices))."""
    counts = Counter(d.host for d in devices)
    return frozenset(host for host, n in counts.items() if n > 1)


def host_name(entry: Entry, shared: Collection[str]) -> str:
    """``entry``'s name while no serial is known: its host, with its port if the host is one of
    the ``shared`` ones (:func:`shared_hosts`)."""
    return safe_name(f"{entry.host}-{entry.profiler_port}" if entry.host in shared else entry.host)


def host_label(entry: Entry, shared: Collection[str]) -> str:
    """How logs and the ``name`` label of ``rokuprof_device_info`` say :func:`host_name`: the
    host as written (``::1``), with its port if shared (``127.0.0.1-9000``, ``[::1]-9000``)."""
    if entry.host not in shared:
        return entry.host
    host = f"[{entry.host}]" if ":" in entry.host else entry.host
    return f"{host}-{entry.profiler_port}"


def label(entry: Entry, shared: Collection[str]) -> str:
    """How logs and metrics name ``entry`` before ECP answers: its config ``name``, else
    :func:`host_label`."""
    return entry.name or host_label(entry, shared)


def first_name(entry: Entry, shared: Collection[str]) -> str:
    """The name ``entry`` starts with: its config ``name``, else :func:`host_name`."""
    return safe_name(entry.name) if entry.name else host_name(entry, shared)


def name_clashes(devices: Sequence[Entry]) -> list[str]:
    """One sentence per name two or more configured devices would start with."""
    shared = shared_hosts(devices)
    where: dict[str, list[int]] = {}
    for i, device in enumerate(devices):
        where.setdefault(first_name(device, shared), []).append(i)
    problems = []
    for name in sorted(n for n, at in where.items() if len(at) > 1):
        which = " and ".join(f"devices[{i}]" for i in where[name])
        problems.append(
            f"{which} would all be named {name!r} (their directory and metric label):"
            " give each its own name"
        )
    return problems
