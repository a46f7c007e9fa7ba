"""Errors the device clients raise: each says what failed, on which device, in plain words."""

from __future__ import annotations

#: Where the ECP access setting lives on the device (Roku OS 14.1 and later).
ECP_SETTING_PATH = (
    "Settings > System > Advanced system settings > Control by mobile apps > Network access"
)


class DeviceError(Exception):
    """Base class of every device-client error."""


class DeviceUnavailable(DeviceError):
    """Nothing answers on that port (refused, unreachable, or the connect timed out).

    On the profiler port this is the normal state between app runs.
    """


class DeviceTimeout(DeviceError):
    """The device stopped answering within the allowed time."""


class ProtocolError(DeviceError):
    """The device answered something this client cannot read."""


class HttpStatusError(DeviceError):
    """The device answered with an HTTP status other than the one expected."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class LimitedModeError(HttpStatusError):
    """ECP answered 403: the device's ECP is in limited mode (or disabled)."""

    def __init__(self, host: str, detail: str = "") -> None:
        said = f" - it said {detail.strip()!r}" if detail.strip() else ""
        mode = (
            "is in limited mode"
            if "limited" in detail.lower()
            else "limits or disables external control (limited mode or disabled)"
        )
        super().__init__(
            f"The Roku at {host} refused the ECP request (403 Forbidden{said}): its "
            f"'Control by mobile apps' setting {mode}. On the device, set {ECP_SETTING_PATH} "
            "to 'Permissive' (or 'Default'), then try again.",
            403,
        )
        self.host = host
