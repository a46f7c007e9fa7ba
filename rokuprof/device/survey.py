"""Discovery with details: SSDP, then ECP ``device-info`` of every device that answered."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from rokuprof.device.ecp import DeviceInfo, EcpClient
from rokuprof.device.errors import DeviceError
from rokuprof.device.ssdp import SSDP_GROUP, SSDP_PORT, SsdpDevice, discover


@dataclass(frozen=True)
class FoundDevice:
    """A device that answered SSDP, with its ECP device-info (or why there is none)."""

    ssdp: SsdpDevice
    info: DeviceInfo | None
    error: str = ""

    @property
    def serial(self) -> str:
        return (self.info.serial if self.info else "") or self.ssdp.serial

    def to_json(self) -> dict[str, object]:
        info = self.info
        return {
            "serial": self.serial,
            "name": info.name if info else "",
            "model": " ".join(p for p in (info.model_name, info.model_number) if p) if info else "",
            "address": self.ssdp.address,
            "ecp_port": self.ssdp.ecp_port,
            "software": info.software if info else "",
            "developer_mode": info.developer_enabled if info else None,
            "ecp_mode": info.ecp_mode if info else "",
            "location": self.ssdp.location,
            "location_trusted": self.ssdp.location_trusted,
            "usn": self.ssdp.usn,
            "error": self.error,
        }


async def _describe(device: SsdpDevice, timeout: float) -> FoundDevice:
    try:
        async with EcpClient(device.address, device.ecp_port, timeout) as ecp:
            return FoundDevice(device, await ecp.device_info())
    except DeviceError as error:
        return FoundDevice(device, None, str(error))


async def survey(
    timeout: float = 3.0,
    *,
    targets: Iterable[tuple[str, int]] = ((SSDP_GROUP, SSDP_PORT),),
    bind: tuple[str, int] = ("0.0.0.0", 0),
    ecp_timeout: float = 3.0,
) -> list[FoundDevice]:
    """Discover devices for ``timeout`` seconds, then ask each for its device-info (at once)."""
    found = await discover(timeout, targets=targets, bind=bind)
    described = await asyncio.gather(*(_describe(d, ecp_timeout) for d in found))
    return sorted(described, key=lambda d: (d.serial or "~", d.ssdp.address))
