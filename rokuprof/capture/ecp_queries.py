"""The capture loop's ECP queries: who the device is (``device-info``, as the device machine's
:class:`~rokuprof.capture.device_machine.EcpAnswered`) and which app runs (``active-app``), each
within the capture's ECP timeout."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from rokuprof.capture.config import CaptureConfig
from rokuprof.capture.device_machine import EcpAnswered
from rokuprof.device.ecp import ActiveApp, DeviceInfo, EcpClient
from rokuprof.device.errors import DeviceError, DeviceTimeout, DeviceUnavailable, LimitedModeError


async def ask_device_info(
    cfg: CaptureConfig,
    clock: Callable[[], float],
    turn: contextlib.AbstractAsyncContextManager[bool] | None = None,
) -> tuple[EcpAnswered, DeviceInfo | None]:
    """Ask ``device-info``: what the answer tells the machine, and the device's info if any.
    With a ``turn`` (of a fleet's probes), asked once it is granted; no word if it is not."""
    try:
        async with turn or contextlib.nullcontext(True) as granted:
            if not granted:
                return EcpAnswered(clock(), None), None
            async with EcpClient(cfg.host, cfg.ecp_port, cfg.ecp_timeout) as ecp:
                info = await ecp.device_info()
    except (DeviceUnavailable, DeviceTimeout) as error:
        return EcpAnswered(clock(), False, str(error)), None
    except LimitedModeError as error:  # 403: it answers, but will not say who it is
        return EcpAnswered(clock(), True, str(error), mode="limited"), None
    except DeviceError as error:  # it answers, with something we cannot use
        return EcpAnswered(clock(), True, str(error)), None
    return EcpAnswered(clock(), True, mode=info.ecp_mode, identified=True), info


async def ask_active_app(cfg: CaptureConfig) -> ActiveApp | None:
    """The app ECP says runs (``None``: it did not say)."""
    with contextlib.suppress(DeviceError):
        async with EcpClient(cfg.host, cfg.ecp_port, cfg.ecp_timeout) as ecp:
            return await ecp.active_app()
    return None
