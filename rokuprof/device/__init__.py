"""Network clients for Roku devices: SSDP discovery, ECP, the profiler stream, the console, the
Application Installer.

Names load on first use: a pure module below (``constants``, ``hosts``, ``errors``) imports no
asyncio or HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rokuprof._lazy import lazy_names

if TYPE_CHECKING:
    from rokuprof.device.chanperf import ChanPerf, parse_chanperf
    from rokuprof.device.console import BsprofStatus, ConsoleClient, parse_bsprof_status
    from rokuprof.device.ecp import (
        ActiveApp,
        DeviceInfo,
        EcpClient,
        parse_active_app,
        parse_device_info,
    )
    from rokuprof.device.errors import (
        DeviceError,
        DeviceTimeout,
        DeviceUnavailable,
        HttpStatusError,
        LimitedModeError,
        ProtocolError,
    )
    from rokuprof.device.installer import (
        InstallerAuthError,
        InstallerClient,
        InstallFailed,
        InstallOutcome,
        read_password,
    )
    from rokuprof.device.response import ResponseReader
    from rokuprof.device.ssdp import SsdpDevice, discover
    from rokuprof.device.stream import ConnectionLost, ProfilerStream

#: Public name → the module that defines it.
_HOMES = {
    **dict.fromkeys(["ChanPerf", "parse_chanperf"], "chanperf"),
    **dict.fromkeys(["BsprofStatus", "ConsoleClient", "parse_bsprof_status"], "console"),
    **dict.fromkeys(
        ["ActiveApp", "DeviceInfo", "EcpClient", "parse_active_app", "parse_device_info"], "ecp"
    ),
    **dict.fromkeys(
        [
            "DeviceError",
            "DeviceTimeout",
            "DeviceUnavailable",
            "HttpStatusError",
            "LimitedModeError",
            "ProtocolError",
        ],
        "errors",
    ),
    "SsdpDevice": "ssdp",
    "discover": "ssdp",
    **dict.fromkeys(["ConnectionLost", "ProfilerStream"], "stream"),
    "ResponseReader": "response",
    **dict.fromkeys(
        ["InstallerAuthError", "InstallerClient", "InstallFailed", "InstallOutcome"], "installer"
    ),
    "read_password": "installer",
}

__all__ = [
    "ActiveApp",
    "BsprofStatus",
    "ChanPerf",
    "ConnectionLost",
    "ConsoleClient",
    "DeviceError",
    "DeviceInfo",
    "DeviceTimeout",
    "DeviceUnavailable",
    "EcpClient",
    "HttpStatusError",
    "InstallFailed",
    "InstallOutcome",
    "InstallerAuthError",
    "InstallerClient",
    "LimitedModeError",
    "ProfilerStream",
    "ProtocolError",
    "ResponseReader",
    "SsdpDevice",
    "discover",
    "parse_active_app",
    "parse_bsprof_status",
    "parse_chanperf",
    "parse_device_info",
    "read_password",
]

__getattr__ = lazy_names(__name__, _HOMES)
