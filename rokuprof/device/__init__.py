"""Network clients for Roku devices: SSDP discovery, ECP, the profiler stream, the console."""

from rokuprof.device.console import (
    BsprofStatus,
    ChanPerf,
    ConsoleClient,
    parse_bsprof_status,
    parse_chanperf,
)
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
from rokuprof.device.ssdp import SsdpDevice, discover
from rokuprof.device.stream import ConnectionLost, ProfilerStream, ResponseReader

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
]
