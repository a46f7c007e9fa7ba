"""The daemon's TOML config file: typed sections with defaults and errors that name the key.

::

    [capture]   out = "/var/lib/rokuprof", chunk_seconds = 60, file_mode = "0600"
                max_bytes_after_error = "16MiB", max_session_bytes = "4GiB",
                min_free_bytes = "1GiB", export = ["pprof", "speedscope"]
    [[devices]] host = "192.168.1.20", name = "living-room",
                profiler_port = 8090, ecp_port = 8060, console_port = 8080
    [discovery] enabled = false, interval_seconds = 60, max_devices = 64, expire_seconds = 600,
                confirm_seconds = 30
    [sentry]    dsn = "https://KEY@o1.ingest.sentry.io/2", environment = "production"
    [spool]     max_bytes = "2GiB"   (undelivered chunks; the oldest are dropped past it)
    [retention] max_age_days = 30, max_bytes = "20GiB"
    [metrics]   listen = "127.0.0.1:9464"   ("" turns the endpoint off)
    [pyroscope] url = "http://127.0.0.1:4040", name = "roku"   (push each session's pprof)
    [recovery]  max_seconds = 300, max_memory = "4GiB", max_attempts = 2   (per crashed session)

Every key's type, range or choices, default and help: the table
:data:`rokuprof.daemon.config_keys.KEYS`, which reads them; this module adds the rules that join
keys and builds the typed sections. ``ROKUPROF_SENTRY_DSN`` in the environment overrides
``sentry.dsn``. Every problem is collected and reported at once (:class:`ConfigError`); unknown
keys are errors, with a suggestion.
Error messages never quote a DSN (it holds the project key). A config file that holds a DSN
and is readable by group or others draws a warning (:attr:`DaemonConfig.warnings`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from rokuprof import tomltext
from rokuprof.bsprof.model import Limits
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.daemon.config_keys import KEYS, Context, Reader, default
from rokuprof.daemon.config_values import format_host, parse_listen, parse_size
from rokuprof.daemon.fleet_cost import fleet_warnings
from rokuprof.daemon.naming import name_clashes
from rokuprof.daemon.recovery_policy import RecoveryBudget
from rokuprof.device.hosts import Resolver, plain_host
from rokuprof.sentry.dsn import Dsn, DsnError
from rokuprof.sentry.settings import ChunkSettings, ChunkSettingsError
from rokuprof.store.files import DEFAULT_FILE_MODE
from rokuprof.store.spool import DEFAULT_MAX_BYTES as DEFAULT_SPOOL_BYTES

__all__ = ["DSN_ENV", "ConfigError", "DaemonConfig", "DeviceEntry", "build_config", "load_config"]
__all__ += ["dsn_file_warning", "format_host", "parse_listen", "parse_size"]

DSN_ENV = "ROKUPROF_SENTRY_DSN"
DEFAULT_OUT = Path(str(default("capture", "out")))
#: The config key of each chunk setting the file may set (the rules are ChunkSettings').
CHUNK_KEYS = {
    "chunk_seconds": "capture.chunk_seconds",
    "max_session_chunk_bytes": "capture.max_session_chunk_bytes",
    "environment": "sentry.environment",
}
#: Decoder bounds a config may tighten or widen, per device stream (see ``Limits``).
LIMIT_KEYS = ("max_paths", "max_strings", "max_live_allocations")
#: Archive bounds (sizes such as "4GiB"; see ``ArchiveLimits``).
ARCHIVE_KEYS = ("max_bytes_after_error", "max_session_bytes", "min_free_bytes", "hold_seconds")
PORT_KEYS = ("profiler_port", "ecp_port", "console_port")


class ConfigError(ValueError):
    """A config that cannot be used; ``errors`` lists every problem (one line each)."""

    def __init__(self, errors: list[str], source: str = "config") -> None:
        self.errors = list(errors)
        self.source = source
        super().__init__(f"{source}: " + "; ".join(self.errors))


@dataclass(frozen=True)
class CaptureSection:
    out: Path = DEFAULT_OUT
    # how every chunk is made: capture.chunk_seconds, and sentry.environment
    chunks: ChunkSettings = field(default_factory=ChunkSettings)
    limits: Limits = field(default_factory=Limits)  # per device stream: paths, strings, heap
    archive: ArchiveLimits = field(default_factory=ArchiveLimits)  # archive bytes, free space
    file_mode: int = DEFAULT_FILE_MODE  # of every file written under out (directories follow)
    export: tuple[str, ...] = ()  # formats written into each session directory at a run's end
    vitals_interval: float = 1.0  # seconds between the app's chanperf readings in a run; 0: off
    trace: bool = False  # also capture each run's app trace (a device's own setting wins)


@dataclass(frozen=True)
class DeviceEntry:
    host: str
    name: str = ""
    profiler_port: int = default("devices", "profiler_port")
    ecp_port: int = default("devices", "ecp_port")
    console_port: int = default("devices", "console_port")
    trace: bool | None = None  # the app trace; None: as [capture] trace says


@dataclass(frozen=True)
class DiscoverySection:
    enabled: bool = default("discovery", "enabled")
    interval_seconds: float = default("discovery", "interval_seconds")
    max_devices: int = default("discovery", "max_devices")  # captured at once; more ignored
    expire_seconds: float = default("discovery", "expire_seconds")  # silent this long: dropped
    confirm_seconds: float = default("discovery", "confirm_seconds")  # ECP silent: dropped

    def describe(self) -> str:
        if not self.enabled:
            return "discovery: off"
        return (
            f"discovery: every {self.interval_seconds:g} s, at most {self.max_devices} devices,"
            f" each dropped after {self.expire_seconds:g} s unreachable"
            f" ({self.confirm_seconds:g} s on trial, before its ECP answers)"
        )


@dataclass(frozen=True)
class SentrySection:
    dsn: Dsn | None = None
    environment: str | None = default("sentry", "environment")  # capture.chunks.environment
    dsn_from_env: bool = False
    max_in_flight: int = default("sentry", "max_in_flight")  # uploads at once (one per session)

    def describe(self) -> str:
        """Where chunks go, without the key."""
        if self.dsn is None:
            return "no DSN: chunks stay on disk"
        where = " (from $" + DSN_ENV + ")" if self.dsn_from_env else ""
        return (
            f"{self.dsn.envelope_url}{where}, environment {self.environment!r},"
            f" up to {self.max_in_flight} upload(s) at once"
        )


@dataclass(frozen=True)
class RetentionSection:
    max_age_days: float | None = None
    max_bytes: int | None = None


@dataclass(frozen=True)
class SpoolSection:
    max_bytes: int = DEFAULT_SPOOL_BYTES  # undelivered chunks; the oldest are dropped past it


@dataclass(frozen=True)
class MetricsSection:
    listen: tuple[str, int] | None = default("metrics", "listen")


@dataclass(frozen=True)
class PyroscopeSection:
    url: str | None = None  # Grafana Pyroscope base URL: each session's pprof goes to /ingest
    name: str = default("pyroscope", "name")  # application name; labels device and app added


@dataclass(frozen=True)
class DaemonConfig:
    capture: CaptureSection = field(default_factory=CaptureSection)
    devices: tuple[DeviceEntry, ...] = ()
    discovery: DiscoverySection = field(default_factory=DiscoverySection)
    sentry: SentrySection = field(default_factory=SentrySection)
    retention: RetentionSection = field(default_factory=RetentionSection)
    metrics: MetricsSection = field(default_factory=MetricsSection)
    spool: SpoolSection = field(default_factory=SpoolSection)
    pyroscope: PyroscopeSection = field(default_factory=PyroscopeSection)
    recovery: RecoveryBudget = field(default_factory=RecoveryBudget)  # crashed sessions' budget
    source: str = "defaults"
    warnings: tuple[str, ...] = ()  # usable, but worth telling (e.g. a DSN others can read)

    def summary(self) -> list[str]:
        """Human-readable lines describing the config (no secrets)."""
        from rokuprof.daemon.config_summary import summary

        return summary(self)


# -- building ---------------------------------------------------------------------------------


def build_config(
    data: Mapping,
    *,
    env: Mapping[str, str] | None = None,
    source: str = "config",
    runnable: bool = False,
    resolver: Resolver | None = None,
) -> DaemonConfig:
    """A :class:`DaemonConfig` from parsed TOML; raises :class:`ConfigError` listing every
    problem. ``runnable``: also refuse a config that would capture nothing or whose output
    directory cannot be written. Hosts follow ``watch``'s rules; with a ``resolver`` host names
    must also resolve."""
    r = Reader(Context(runnable, resolver))
    r.unknown(data, tuple(KEYS), "")
    cap = r.section(data, "capture")
    devices = _devices(r, data.get("devices", []))
    disc, sen = r.section(data, "discovery"), r.section(data, "sentry")
    dsn, from_env = _dsn(r, sen["dsn"], os.environ if env is None else env)
    chunks = _chunk_settings(r, cap["chunk_seconds"], cap["max_session_chunk_bytes"], sen)
    spool, ret, met = (r.section(data, name) for name in ("spool", "retention", "metrics"))
    if runnable and not devices and not disc["enabled"]:
        r.error("devices", "no [[devices]] and [discovery] enabled = false: nothing to capture")
    pyro, rec = r.section(data, "pyroscope"), r.section(data, "recovery")
    if r.errors:
        raise ConfigError(r.errors, source)
    url = str(pyro["url"]).strip() or None
    export = cap["export"]
    if url and "pprof" not in export:  # what is pushed is the pprof export
        export = (*export, "pprof")
    capture = CaptureSection(
        out=Path(str(cap["out"])).expanduser(),
        chunks=chunks,
        limits=replace(Limits(), **{k: int(cap[k]) for k in LIMIT_KEYS}),
        archive=replace(ArchiveLimits(), **{k: cap[k] for k in ARCHIVE_KEYS}),
        file_mode=cap["file_mode"],
        export=export,
        vitals_interval=float(cap["vitals_interval"]) if cap["vitals"] else 0.0,
        trace=bool(cap["trace"]),
    )
    return DaemonConfig(
        capture=capture,
        devices=tuple(devices),
        discovery=DiscoverySection(**disc),
        sentry=SentrySection(dsn, chunks.environment, from_env, sen["max_in_flight"]),
        retention=RetentionSection(**ret),
        metrics=MetricsSection(**met),
        spool=SpoolSection(**spool),
        pyroscope=PyroscopeSection(url, str(pyro["name"]).strip()),
        recovery=RecoveryBudget(**rec),
        source=source,
        warnings=fleet_warnings(len(devices), DiscoverySection(**disc)),
    )


def _devices(r: Reader, raw: object) -> list[DeviceEntry]:
    """``[[devices]]``: each table's keys, then no two with one host and profiler port, and no
    two that would start with one name."""
    if not isinstance(raw, list):
        r.error("devices", "must be an array of tables ([[devices]])")
        raw = []
    devices: list[DeviceEntry] = []
    seen: dict[tuple[str, int], int] = {}
    for i, table in enumerate(raw):
        where = f"devices[{i}]"
        if not isinstance(table, Mapping):
            r.error(where, "must be a table with at least 'host'")
            continue
        v = r.values(table, "devices", where)
        host = plain_host(str(v["host"]).strip())
        entry = DeviceEntry(
            host, str(v["name"]).strip(), **{k: v[k] for k in PORT_KEYS}, trace=v["trace"]
        )
        key = (host, entry.profiler_port)
        if host and key in seen:
            r.error(where, f"same host and profiler_port as devices[{seen[key]}] ({host})")
        seen.setdefault(key, i)
        devices.append(entry)
    for problem in name_clashes([d for d in devices if d.host]):
        r.error("devices", problem)
    return devices


def _dsn(r: Reader, raw: object, env: Mapping[str, str]) -> tuple[Dsn | None, bool]:
    """The DSN (``$ROKUPROF_SENTRY_DSN``, else ``sentry.dsn``; None: none) and whether it came
    from the environment. Errors never quote it (it holds the project key)."""
    text = env.get(DSN_ENV) or None
    from_env = text is not None
    if text is None:
        if not isinstance(raw, str):
            r.error("sentry.dsn", "must be a string")
        elif raw.strip():
            text = raw
    if text is None:
        return None, from_env
    key = f"${DSN_ENV}" if from_env else "sentry.dsn"
    try:
        dsn = Dsn.parse(text)
    except DsnError as exc:
        r.error(key, str(exc) if "://" in text else "not a DSN (expected https://KEY@HOST/ID)")
        return None, from_env
    if not dsn.project_id.isdigit():
        r.error(key, f"the project ID must be a number, not {dsn.project_id!r}")
    return dsn, from_env


def _chunk_settings(
    r: Reader, seconds: object, session_bytes: object, sentry: Mapping
) -> ChunkSettings:
    """The chunk settings the file sets (see :data:`CHUNK_KEYS`), checked by their own rules;
    each broken rule is an error naming its key."""
    try:
        return ChunkSettings(
            chunk_seconds=seconds,
            max_session_chunk_bytes=session_bytes,
            environment=sentry["environment"],
        )
    except ChunkSettingsError as exc:
        r.errors.extend(exc.named(CHUNK_KEYS))
        return ChunkSettings()


def dsn_file_warning(path: Path, data: Mapping) -> str | None:
    """A warning when the config file holds a DSN and group or others may read it."""
    sentry = data.get("sentry")
    dsn = sentry.get("dsn") if isinstance(sentry, Mapping) else None
    if not isinstance(dsn, str) or not dsn.strip():
        return None
    try:
        mode = path.stat().st_mode & 0o777
    except OSError:
        return None
    if not mode & 0o044:
        return None
    who = " and ".join(w for w, bit in (("group", 0o040), ("others", 0o004)) if mode & bit)
    return (
        f"{path} holds a Sentry DSN and is readable by {who} (mode {mode:04o}): anyone who can"
        f" read it can send to the project. Run: chmod 600 {path}, or move the DSN to"
        f" ${DSN_ENV} (e.g. an EnvironmentFile= readable only by root)"
    )


def load_config(
    path: Path | str,
    *,
    env: Mapping[str, str] | None = None,
    runnable: bool = False,
    resolver: Resolver | None = None,
) -> DaemonConfig:
    """Read and check a TOML config file; :class:`ConfigError` on any problem. ``runnable``
    and ``resolver``: as :func:`build_config` (``config check`` and ``daemon`` are runnable;
    ``config check`` also resolves host names)."""
    path = Path(path)
    try:
        data = tomltext.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ConfigError([f"cannot read the file: {exc.strerror or exc}"], str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(["the file is not UTF-8 text"], str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"not valid TOML: {exc}"], str(path)) from None
    config = build_config(data, env=env, source=str(path), runnable=runnable, resolver=resolver)
    warning = dsn_file_warning(path, data)
    return replace(config, warnings=(*config.warnings, warning)) if warning else config
