"""The daemon's SSDP discovery: a search every ``interval_seconds``; each device found (and not
configured) is captured, at most ``max_devices`` at once; one unreachable for
``expire_seconds`` is stopped and forgotten, and captured again when it answers SSDP later.
Until its ECP answers a device is on trial (an eighth of ``max_devices`` at once, or 4):
dropped after ``confirm_seconds``, its address then tried again only after a penalty that grows.

The policies are :class:`~rokuprof.daemon.registry.DiscoveredDevices` (the cap, expiry, devices
on trial until their ECP answers, penalties per source address) and the
SSDP :class:`~rokuprof.device.ssdp.ReplyLimiter` (replies per source address); this module
runs the searches and starts and stops the devices' capture loops through the daemon's hooks.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from rokuprof.capture.session import safe_name
from rokuprof.daemon.config import DeviceEntry, DiscoverySection
from rokuprof.daemon.devices import DeviceSlot
from rokuprof.daemon.registry import Admission, DeviceNames, DiscoveredDevices
from rokuprof.device.errors import DeviceError
from rokuprof.device.ssdp import ReplyLimiter, SsdpDevice, discover

log = logging.getLogger(__name__)


def device_key(entry: DeviceEntry) -> str:
    """A device's identity in the daemon: host and profiler port."""
    return f"{entry.host}:{entry.profiler_port}"


@dataclass
class DiscoveryStats:
    """What the searches have done so far."""

    rounds: int = 0  # searches finished (answered or not)
    errors: int = 0  # searches that could not be made
    last_error: str = ""


@dataclass(frozen=True)
class SearchSettings:
    """How each search is made (the daemon's options)."""

    timeout: float
    targets: tuple[tuple[str, int], ...]
    bind: tuple[str, int]
    stop_seconds: float  # for an expired device's capture loop to finish its run


class Discovery:
    """See the module docstring. ``slots`` is the daemon's (device key -> capture loop): it
    adds through ``add_device`` (None when it will not) and this removes the expired."""

    def __init__(
        self,
        section: DiscoverySection,
        search: SearchSettings,
        *,
        configured_hosts: frozenset[str],
        slots: dict[str, DeviceSlot],
        names: DeviceNames,
        add_device: Callable[[DeviceEntry], DeviceSlot | None],
        clock: Callable[[], float],
    ) -> None:
        self.interval = section.interval_seconds
        self.search = search
        self.configured_hosts = configured_hosts
        self.slots = slots
        self.names = names
        self.add_device = add_device
        self.clock = clock
        self.registry = DiscoveredDevices(
            section.max_devices,
            section.expire_seconds,
            confirm_seconds=section.confirm_seconds,
        )
        self.limiter = ReplyLimiter()  # per source address, across searches
        self.stats = DiscoveryStats()

    async def run(self) -> None:
        """Search, expire, admit; again every ``interval`` (until cancelled)."""
        s = self.search
        while True:
            try:
                found = await discover(
                    s.timeout,
                    targets=s.targets,
                    bind=s.bind,
                    limiter=self.limiter,
                    clock=self.clock,
                )
            except DeviceError as exc:
                self.stats.errors += 1
                self.stats.last_error = str(exc)
                log.warning("discovery: %s", exc)
                found = []
            await self.expire()
            for device in found:
                self.offer(device)
            self.stats.rounds += 1
            await asyncio.sleep(self.interval)

    def offer(self, device: SsdpDevice) -> None:
        """Capture ``device`` unless it is configured, captured, or over the cap."""
        if device.address in self.configured_hosts:
            return
        label = device.serial or device.address
        entry = DeviceEntry(host=device.address, name=safe_name(label), ecp_port=device.ecp_port)
        key = device_key(entry)
        if key in self.slots:
            return
        admission = self.registry.offer(key, self.clock(), source=device.address)
        if admission is Admission.CAP_REACHED:
            log.warning(
                "discovery: %d devices found by SSDP are captured, the most [discovery]"
                " max_devices allows; others (%s at %s first) are ignored until one has been"
                " unreachable for %g s",
                self.registry.max_devices,
                label,
                device.address,
                self.registry.expire_seconds,
            )
        if admission is Admission.NEW and self.add_device(entry) is None:
            self.registry.forget(key)  # stopping

    async def expire(self) -> None:
        """Stop and forget the discovered devices unreachable for ``expire_seconds``."""
        for key, slot in self.slots.items():
            if slot.source != "discovery":
                continue
            if self.registry.is_on_trial(key) and not slot.ecp_answered():
                continue  # on trial until its ECP answers (a host that is up is not enough)
            if (at := slot.last_answer()) is not None:
                self.registry.answered(key, at)
        trial = {k for k in self.slots if self.registry.is_on_trial(k)}
        keys = [k for k in self.registry.expire(self.clock()) if k in self.slots]
        gone = [self.slots.pop(k) for k in keys]
        if not gone:
            return
        named = {k: f"{slot.name} ({slot.config.host})" for k, slot in zip(keys, gone, strict=True)}
        silent = [named[k] for k in keys if k not in trial]
        unconfirmed = [named[k] for k in keys if k in trial]
        if silent:
            log.info(
                "discovery: %d device(s) unreachable for %g s are no longer captured (added"
                " again when they answer SSDP): %s",
                len(silent),
                self.registry.expire_seconds,
                _shown(silent),
            )
        if unconfirmed:
            log.info(
                "discovery: %d device(s) whose ECP never answered within %g s are no longer"
                " captured (their addresses are tried again later, each time after longer): %s",
                len(unconfirmed),
                self.registry.confirm_seconds,
                _shown(unconfirmed),
            )
        for slot in gone:
            slot.request_stop()
        tasks = [s.task for s in gone if s.task is not None]
        if tasks:
            _, late = await asyncio.wait(tasks, timeout=self.search.stop_seconds)
            for task in late:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        for key in keys:
            self.names.release(key)


def _shown(names: list[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
