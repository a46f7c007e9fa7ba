"""The daemon's config in words: what ``rokuprof config check`` prints and the daemon logs at start.

One line a subject (output, archive limits, devices, discovery, Sentry, spool, retention, metrics,
Pyroscope, recovery), sizes as a setting is written, and never a secret.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from rokuprof import units
from rokuprof.daemon.config_values import format_host
from rokuprof.daemon.fleet_cost import cost_line
from rokuprof.store.files import dir_mode_for

if TYPE_CHECKING:
    from rokuprof.daemon.config import DaemonConfig


def summary(config: DaemonConfig) -> list[str]:
    """Human-readable lines describing ``config`` (no secrets)."""
    size = functools.partial(units.size, exact=True)  # as a setting is written
    lines = [f"output: {config.capture.out} (chunks of {config.capture.chunks.chunk_seconds:g} s)"]
    arc = config.capture.archive
    parts = [
        f"at most {size(arc.max_session_bytes)} per session"
        if arc.max_session_bytes
        else "no cap per session",
        f"{size(arc.max_bytes_after_error)} kept after corrupt data",
        f"stop below {size(arc.min_free_bytes)} free" if arc.min_free_bytes else "no floor",
    ]
    lines.append("archive: " + ", ".join(parts))
    mode = config.capture.file_mode
    lines.append(f"files: mode {mode:04o}, directories {dir_mode_for(mode):04o}")
    export = config.capture.export
    lines.append(f"exports at each run's end: {', '.join(export)}" if export else "exports: none")
    lines.append(
        f"devices: {len(config.devices)}; {cost_line(len(config.devices), config.discovery)}"
    )
    for d in config.devices:
        name = f" ({d.name})" if d.name else ""
        lines.append(
            f"  {d.host}{name}: profiler {d.profiler_port}, ecp {d.ecp_port}, "
            f"console {d.console_port}"
        )
    lines.append(config.discovery.describe())
    lines.append(f"sentry: {config.sentry.describe()}")
    lines.append(
        f"spool: at most {size(config.spool.max_bytes)} of undelivered chunks, then the"
        " oldest are dropped"
        if config.sentry.dsn is not None
        else "spool: no uploads, nothing dropped (only retention deletes chunks)"
    )
    ret = config.retention
    parts = []
    if ret.max_age_days is not None:
        days = ret.max_age_days
        parts.append(f"older than {days:g} day{'' if days == 1 else 's'}")
    if ret.max_bytes is not None:
        parts.append(f"beyond {size(ret.max_bytes)} (allocated blocks)")
    if parts and arc.min_free_bytes:
        parts.append(f"while less than {size(arc.min_free_bytes)} is free")
    lines.append(
        "retention: delete sessions " + " or ".join(parts)
        if parts
        else "retention: keep everything"
    )
    m = config.metrics.listen
    lines.append(f"metrics: http://{format_host(m[0])}:{m[1]}/metrics" if m else "metrics: off")
    pyro = config.pyroscope
    lines.append(
        f"pyroscope: {pyro.url} as {pyro.name}{{device,app}}, each session's pprof"
        if pyro.url
        else "pyroscope: off"
    )
    rec = config.recovery
    lines.append(
        f"recovery: each crashed session within {rec.max_seconds:g} s and"
        f" {size(rec.max_memory)} more memory, set aside once the daemon has died in"
        f" {rec.max_attempts} conversion(s) of it"
    )
    return lines
