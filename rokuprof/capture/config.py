"""What one device's capture loop is given (:class:`CaptureConfig`) and what it reports
(:class:`CaptureSummary`), and the device's one display name (:func:`device_dir`).

The device's display name is its directory name: the ``device_dir`` override, else its serial
number from ECP ``device-info``, else ``host_name`` (the daemon's ``<host>-<port>`` for a host
several devices share) or the host; a ``name_claim`` (the daemon's) may change it, so that two
live devices reporting one serial never share it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from rokuprof.bsprof.model import Limits
from rokuprof.capture.exports import export_formats
from rokuprof.capture.limits import ArchiveLimits, free_bytes
from rokuprof.capture.record import SessionRecord
from rokuprof.device.constants import CONSOLE_PORT, ECP_PORT, PROFILER_PORT
from rokuprof.device.limits import TRACE_MAX_RUN_BYTES
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.layout import safe_name

if TYPE_CHECKING:
    from rokuprof.device.ecp import DeviceInfo


class DeviceEnd(Protocol):
    """A device as the capture reaches it: its address and its three ports (a daemon's
    ``[[devices]]`` entry, the CLI's options, a simulated device all have them)."""

    @property
    def host(self) -> str: ...
    @property
    def profiler_port(self) -> int: ...
    @property
    def ecp_port(self) -> int: ...
    @property
    def console_port(self) -> int: ...


@dataclass(frozen=True)
class DeviceAddress:
    """A :class:`DeviceEnd` from values (the CLI's options)."""

    host: str
    profiler_port: int = PROFILER_PORT
    ecp_port: int = ECP_PORT
    console_port: int = CONSOLE_PORT


def capture_config(
    device: DeviceEnd, *, out: Path, chunks: ChunkSettings, **options: object
) -> CaptureConfig:
    """The one way a capture's settings are made: the device's address and ports, where its
    sessions go and how chunks are made, and the caller's ``options`` (any other
    :class:`CaptureConfig` field: ``runs``, ``exports``, the daemon's limits and names...)."""
    return CaptureConfig(
        host=device.host,
        out=out,
        profiler_port=device.profiler_port,
        ecp_port=device.ecp_port,
        console_port=device.console_port,
        chunk_settings=chunks,
        **options,  # type: ignore[arg-type]
    )


@dataclass(frozen=True)
class CaptureConfig:
    """Everything one device's capture loop needs."""

    host: str
    out: Path = Path("rokuprof-data")
    profiler_port: int = PROFILER_PORT
    ecp_port: int = ECP_PORT
    console_port: int = CONSOLE_PORT
    chunk_settings: ChunkSettings = field(default_factory=ChunkSettings)  # how chunks are made
    delta_seconds: float = 1.0
    poll_interval: float = 0.25  # between connect attempts while no app runs
    max_backoff: float = 2.0  # after answers that are not a profile
    connect_timeout: float = 2.0
    idle_timeout: float = 120.0  # a run ends as truncated after this long without a byte
    ecp_timeout: float = 3.0
    use_ecp: bool = True
    use_console: bool = True  # ask the debug console for the profiler status during runs
    console_poll: float = 3.0  # seconds between bsprof-status queries while a run streams
    vitals_interval: float = 1.0  # seconds between chanperf readings while a run streams; 0: none
    ecp_recheck: float = 10.0  # seconds between ECP checks while the profiler port refuses
    runs: int | None = None  # stop after this many runs
    duration: float | None = None  # stop after this many seconds
    device_dir: str | None = None  # overrides the serial number / host as directory name
    host_name: str | None = None  # the name while no serial is known (default: the host)
    host_label: str | None = None  # how logs say host_name (default: the host as written)
    chunks: bool = True  # build Sentry chunks (else only the archive and session.json)
    exports: tuple[str, ...] = ()  # formats written into the session directory at a run's end
    limits: Limits = field(default_factory=Limits)  # bounds on what a stream may make us hold
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)  # bytes on the disk
    free_space: Callable[[Path], int] = free_bytes  # bytes free on a path's file system
    name_claim: Callable[[str], str] | None = None  # the name wanted -> the name to use
    trace: bool = False  # also capture the app trace (Roku OS 15.1+) into each session
    trace_max_run_bytes: int = TRACE_MAX_RUN_BYTES  # of one run's trace, the most kept

    def __post_init__(self) -> None:
        for name in (
            "delta_seconds",
            "poll_interval",
            "connect_timeout",
            "idle_timeout",
            "console_poll",
            "ecp_recheck",
        ):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be > 0")
        if not self.vitals_interval >= 0:
            raise ValueError("vitals_interval must be >= 0")
        if self.runs is not None and self.runs < 1:
            raise ValueError("runs must be >= 1")
        if self.duration is not None and self.duration <= 0:
            raise ValueError("duration must be > 0")
        object.__setattr__(self, "exports", export_formats(self.exports))


@dataclass
class CapturedSession:
    record: SessionRecord
    path: Path


@dataclass
class CaptureSummary:
    """What a capture loop did, for the command's final report."""

    host: str
    device: str
    sessions: list[CapturedSession] = field(default_factory=list)
    label: str = ""  # how logs name the device (:func:`device_label`)
    stop_reason: str = ""
    problems: list[str] = field(default_factory=list)
    failure: str = ""  # why the loop ended by an error (``watch``: its one error line)


def device_dir(config: CaptureConfig, info: DeviceInfo | None) -> str:
    """The device's one display name, used for its directory, in logs and in metrics: the
    ``device_dir`` override, else the serial number ECP gave, else ``host_name`` or the host."""
    if config.device_dir:
        return safe_name(config.device_dir)
    if info is not None and info.serial:
        return safe_name(info.serial)
    return safe_name(config.host_name or config.host)


def device_names(config: CaptureConfig, info: DeviceInfo | None) -> tuple[str, str]:
    """The device's directory name (:func:`device_dir`, as ``name_claim`` lets this device
    use it) and how logs name it (:func:`device_label`)."""
    name = device_dir(config, info)
    if config.name_claim is not None:
        name = config.name_claim(name)
    return name, device_label(config, info, name)


def device_label(config: CaptureConfig, info: DeviceInfo | None, name: str) -> str:
    """How logs and views name the device whose directory is ``name``: ``name`` itself, except
    while it is made of the host (no override, no serial), when the host shows as written
    (``::1``, ``[::1]-9000``, not the file-name-safe ``_1``)."""
    if config.device_dir or (info is not None and info.serial) or name != device_dir(config, info):
        return name
    return config.host_label or config.host


def device_record(name: str, host: str, info: DeviceInfo | None) -> dict[str, object]:
    """The device as ``session.json`` describes it: its name and host, and what ECP said."""
    device: dict[str, object] = {"dir": name, "host": host}
    if info is not None:
        device.update(
            serial=info.serial,
            name=info.name,
            model=" ".join(p for p in (info.model_name, info.model_number) if p),
            software=info.software,
            developer_enabled=info.developer_enabled,
            ecp_mode=info.ecp_mode,
        )
    return device
