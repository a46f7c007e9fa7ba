"""What a fleet of devices costs one daemon, as ``config check`` and the daemon's log say it
(pure: figures measured by ``benchmarks/fleet.py``, documented in docs/daemon.md).

A configured device that never answers costs its capture loop's state and a timer (about
:data:`PER_DEVICE_KIB` of memory), and a turn of the fleet's probe budget now and then
(:mod:`rokuprof.capture.probes`: at most ``DEFAULT_PROBE_RATE`` probes a second in all). Past
:data:`WARN_DEVICES` devices (configured, plus what discovery may add) one daemon still works,
but a silent device is tried less often than every minute and a ``/metrics`` scrape takes
about a second: ``config check`` and the daemon's start say so.
"""

from __future__ import annotations

from typing import Protocol

from rokuprof.capture.probes import DEFAULT_PROBE_RATE

#: Resident memory of a daemon with a handful of devices (MiB), and what each more device
#: adds (KiB), rounded up from benchmarks/fleet.py: 1,000 devices 73 MiB, 3,000 130 MiB,
#: 10,000 240-270 MiB.
BASE_MIB = 50
PER_DEVICE_KIB = 25
#: Above this many devices, config check warns.
WARN_DEVICES = 2000
#: Probes a silent device takes per round (a connect, and an ECP query).
PROBES_PER_ROUND = 2


class Discovery(Protocol):
    enabled: bool
    max_devices: int


def fleet_devices(configured: int, discovery: Discovery) -> int:
    """The devices a daemon may capture at once: the configured ones and discovery's cap."""
    return configured + (discovery.max_devices if discovery.enabled else 0)


def memory_mib(devices: int) -> int:
    """About how much resident memory a daemon of ``devices`` takes (MiB, rounded up)."""
    return BASE_MIB + -(-devices * PER_DEVICE_KIB // 1024)


def cost_line(configured: int, discovery: Discovery) -> str:
    """``N devices: about X MiB``, for the config summary."""
    devices = fleet_devices(configured, discovery)
    return f"{devices:,} device(s) at most: about {memory_mib(devices):,} MiB of memory"


def fleet_warnings(configured: int, discovery: Discovery) -> tuple[str, ...]:
    """The config's warnings about its fleet: none, or :func:`fleet_warning`'s."""
    warning = fleet_warning(fleet_devices(configured, discovery))
    return (warning,) if warning else ()


def fleet_warning(devices: int) -> str | None:
    """A warning above :data:`WARN_DEVICES` devices (``None`` below)."""
    if devices <= WARN_DEVICES:
        return None
    every = devices * PROBES_PER_ROUND / DEFAULT_PROBE_RATE
    return (
        f"{devices:,} devices (above {WARN_DEVICES:,}): one daemon captures them, but one that"
        f" does not answer is tried only about every {every:,.0f} s (probes are shared, "
        f"{DEFAULT_PROBE_RATE:g} a second), and /metrics grows slow; about "
        f"{memory_mib(devices):,} MiB of memory. Consider several daemons, each with a part of"
        " the fleet"
    )
