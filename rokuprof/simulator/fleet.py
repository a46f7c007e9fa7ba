"""Several simulated devices at once, as the ``rokuprof simulate`` command runs them."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace

from rokuprof.simulator.config import DeviceConfig
from rokuprof.simulator.device import SimulatedDevice
from rokuprof.simulator.runs import RunRecord

#: With a base port P, device i listens on P + PORT_STRIDE*i + PORT_OFFSETS[service].
PORT_STRIDE = 10
PORT_OFFSETS = {"ecp": 0, "profiler": 1, "console": 2, "ssdp": 3, "installer": 4}

#: Devices get seeds this far apart, so their runs (seed + run index) never share content.
SEED_STRIDE = 1000


def fleet_configs(
    count: int, base: DeviceConfig | None = None, base_port: int | None = None
) -> list[DeviceConfig]:
    """``count`` device configs derived from ``base``: serials YN00AA000001, ..., names
    "Sim Roku 1", ..., distinct seeds, and ports from ``base_port`` (OS-chosen when None)."""
    base = base or DeviceConfig()
    configs = []
    for i in range(count):
        ports = {f"{name}_port": 0 for name in PORT_OFFSETS}
        if base_port is not None:
            first = base_port + PORT_STRIDE * i
            ports = {f"{name}_port": first + off for name, off in PORT_OFFSETS.items()}
        configs.append(
            replace(
                base,
                serial=f"YN00AA{i + 1:06d}",
                name=f"Sim Roku {i + 1}",
                seed=base.seed + SEED_STRIDE * i,
                **ports,
            )
        )
    return configs


async def run_fleet(
    configs: list[DeviceConfig],
    *,
    on_started: Callable[[list[SimulatedDevice]], None] | None = None,
    on_run_end: Callable[[SimulatedDevice, RunRecord], None] | None = None,
    duration: float | None = None,
) -> list[SimulatedDevice]:
    """Start every device, report each finished run, and return once every device is idle
    (all its runs done) or after ``duration`` seconds; the devices are stopped on the way out
    (also when cancelled, e.g. by Ctrl-C)."""
    async with contextlib.AsyncExitStack() as stack:
        devices = [await stack.enter_async_context(SimulatedDevice(c)) for c in configs]
        if on_started is not None:
            on_started(devices)
        watchers = [asyncio.create_task(_watch(d, on_run_end)) for d in devices]
        try:
            async with asyncio.timeout(duration):
                await asyncio.gather(*watchers)
        except TimeoutError:
            pass
        finally:
            for task in watchers:
                task.cancel()
            await asyncio.gather(*watchers, return_exceptions=True)
    return devices


async def _watch(
    device: SimulatedDevice, on_run_end: Callable[[SimulatedDevice, RunRecord], None] | None
) -> None:
    """Report runs as they end; return when the device is idle (never for a device that does
    not launch by itself: ECP or its Application Installer launches its runs, until stopped)."""
    reported = 0
    while True:
        ended = [r for r in device.runs if not r.active]
        for record in ended[reported:]:
            if on_run_end is not None:
                on_run_end(device, record)
        reported = len(ended)
        if device.config.auto_launch and device.idle():
            return
        count = reported
        await device.wait_until(
            lambda c=count: (
                (device.config.auto_launch and device.idle())
                or sum(not r.active for r in device.runs) > c
            ),
            timeout=None,
        )
