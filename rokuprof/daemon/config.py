"""The daemon's TOML config file: typed sections with defaults and errors that name the key.

::

    [capture]   out = "/var/lib/rokuprof", chunk_seconds = 60, file_mode = "0600"
                max_bytes_after_error = "16MiB", max_session_bytes = "4GiB",
                min_free_bytes = "1GiB", export = ["pprof", "speedscope"]
    [[devices]] host = "192.168.1.20", name = "living-room",
                profiler_port = 8090, ecp_port = 8060, console_port = 8080
    [discovery] enabled = false, interval_seconds = 60, max_devices = 64, expire_seconds = 600
    [sentry]    dsn = "https://KEY@o1.ingest.sentry.io/2", environment = "production"
    [spool]     max_bytes = "2GiB"   (undelivered chunks; the oldest are dropped past it)
    [retention] max_age_days = 30, max_bytes = "20GiB"
    [metrics]   listen = "127.0.0.1:9464"   ("" turns the endpoint off)
    [pyroscope] url = "http://127.0.0.1:4040", name = "roku"   (push each session's pprof)
    [recovery]  max_seconds = 300, max_memory = "4GiB", max_attempts = 2   (per crashed session)

``ROKUPROF_SENTRY_DSN`` in the environment overrides ``sentry.dsn``. Every problem is collected
and reported at once (:class:`ConfigError`); unknown keys are errors, with a suggestion.
Error messages never quote a DSN (it holds the project key). A config file that holds a DSN
and is readable by group or others draws a warning (:attr:`DaemonConfig.warnings`).
"""

from __future__ import annotations

import difflib
import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from rokuprof.bsprof.model import Limits
from rokuprof.capture.exports import export_formats
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.daemon.naming import name_clashes
from rokuprof.daemon.recovery_policy import RecoveryBudget
from rokuprof.daemon.registry import DEFAULT_EXPIRE_SECONDS, DEFAULT_MAX_DEVICES
from rokuprof.device.hosts import Resolver, host_problem, plain_host
from rokuprof.sentry.chunk import ChunkSettings, ChunkSettingsError
from rokuprof.sentry.dsn import Dsn, DsnError
from rokuprof.store.files import DEFAULT_FILE_MODE, check_file_mode, dir_mode_for
from rokuprof.store.pyroscope import check_url
from rokuprof.store.spool import DEFAULT_MAX_BYTES as DEFAULT_SPOOL_BYTES
from rokuprof.store.uploader import MAX_IN_FLIGHT
from rokuprof.store.writable import out_write_problem

DSN_ENV = "ROKUPROF_SENTRY_DSN"
DEFAULT_OUT = Path("rokuprof-data")
#: The config key of each chunk setting the file may set (the rules are ChunkSettings').
CHUNK_KEYS = {
    "chunk_seconds": "capture.chunk_seconds",
    "max_session_chunk_bytes": "capture.max_session_chunk_bytes",
    "environment": "sentry.environment",
}
#: What a device's host must not carry, and the keys that take it instead.
HOST_PORT_KEYS = "profiler_port, ecp_port and console_port"
#: The most devices ``[discovery] max_devices`` may allow (each is a capture loop).
MAX_DISCOVERED_DEVICES = 4096


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


@dataclass(frozen=True)
class DeviceEntry:
    host: str
    name: str = ""
    profiler_port: int = 8090
    ecp_port: int = 8060
    console_port: int = 8080

    @property
    def label(self) -> str:
        """How logs and metrics name the device."""
        return self.name or self.host


@dataclass(frozen=True)
class DiscoverySection:
    enabled: bool = False
    interval_seconds: float = 60.0
    max_devices: int = DEFAULT_MAX_DEVICES  # captured at once; more are ignored until one leaves
    expire_seconds: float = DEFAULT_EXPIRE_SECONDS  # a device silent this long is dropped

    def describe(self) -> str:
        if not self.enabled:
            return "discovery: off"
        return (
            f"discovery: every {self.interval_seconds:g} s, at most {self.max_devices} devices,"
            f" each dropped after {self.expire_seconds:g} s unreachable"
        )


@dataclass(frozen=True)
class SentrySection:
    dsn: Dsn | None = None
    environment: str | None = "production"  # as the chunks say (capture.chunks.environment)
    dsn_from_env: bool = False
    max_in_flight: int = 4  # uploads at once (one per session)

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
    listen: tuple[str, int] | None = ("127.0.0.1", 9464)


@dataclass(frozen=True)
class PyroscopeSection:
    url: str | None = None  # Grafana Pyroscope base URL: each session's pprof goes to /ingest
    name: str = "roku"  # application name; labels device and app are added


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
        lines = [f"output: {self.capture.out} (chunks of {self.capture.chunks.chunk_seconds:g} s)"]
        arc = self.capture.archive
        size = format_size
        parts = [
            f"at most {size(arc.max_session_bytes)} per session"
            if arc.max_session_bytes
            else "no cap per session",
            f"{size(arc.max_bytes_after_error)} kept after corrupt data",
            f"stop below {size(arc.min_free_bytes)} free" if arc.min_free_bytes else "no floor",
        ]
        lines.append("archive: " + ", ".join(parts))
        mode = self.capture.file_mode
        lines.append(f"files: mode {mode:04o}, directories {dir_mode_for(mode):04o}")
        export = self.capture.export
        lines.append(
            f"exports at each run's end: {', '.join(export)}" if export else "exports: none"
        )
        lines.append(f"devices: {len(self.devices)}")
        for d in self.devices:
            name = f" ({d.name})" if d.name else ""
            lines.append(
                f"  {d.host}{name}: profiler {d.profiler_port}, ecp {d.ecp_port}, "
                f"console {d.console_port}"
            )
        lines.append(self.discovery.describe())
        lines.append(f"sentry: {self.sentry.describe()}")
        lines.append(
            f"spool: at most {format_size(self.spool.max_bytes)} of undelivered chunks, then the"
            " oldest are dropped"
            if self.sentry.dsn is not None
            else "spool: no uploads, nothing dropped (only retention deletes chunks)"
        )
        ret = self.retention
        parts = []
        if ret.max_age_days is not None:
            days = ret.max_age_days
            parts.append(f"older than {days:g} day{'' if days == 1 else 's'}")
        if ret.max_bytes is not None:
            parts.append(f"beyond {format_size(ret.max_bytes)}")
        lines.append(
            "retention: delete sessions " + " or ".join(parts)
            if parts
            else "retention: keep everything"
        )
        m = self.metrics.listen
        lines.append(f"metrics: http://{format_host(m[0])}:{m[1]}/metrics" if m else "metrics: off")
        pyro = self.pyroscope
        lines.append(
            f"pyroscope: {pyro.url} as {pyro.name}{{device,app}}, each session's pprof"
            if pyro.url
            else "pyroscope: off"
        )
        rec = self.recovery
        lines.append(
            f"recovery: each crashed session within {rec.max_seconds:g} s and"
            f" {format_size(rec.max_memory)} more memory, set aside once the daemon has died in"
            f" {rec.max_attempts} conversion(s) of it"
        )
        return lines


# -- sizes and addresses ---------------------------------------------------------------------

_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")


def parse_size(text: str | int) -> int:
    """``"20GiB"`` -> bytes (``KB``/``MB``/``GB`` are powers of 1000, ``KiB``... of 1024)."""
    if isinstance(text, bool):
        raise ValueError("expected a size such as '20GiB'")
    if isinstance(text, int):
        if text < 0:
            raise ValueError("a size cannot be negative")
        return text
    m = _SIZE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"expected a size such as '500MB' or '20GiB', got {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def format_size(n: int) -> str:
    for unit, size in (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} B"


def format_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def parse_listen(text: str) -> tuple[str, int] | None:
    """``"127.0.0.1:9464"`` / ``"[::1]:9464"`` -> (host, port); ``""`` -> None (off)."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"expected HOST:PORT such as '127.0.0.1:9464', got {text!r}")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"port must be a number 0-65535, got {port!r}")
    return host, int(port)


# -- the checker -----------------------------------------------------------------------------


class _Checker:
    """Reads typed values from TOML tables, collecting errors instead of stopping at the first."""

    def __init__(self) -> None:
        self.errors: list[str] = []

    def error(self, key: str, message: str) -> None:
        self.errors.append(f"{key}: {message}")

    def table(self, data: Mapping, key: str, allowed: tuple[str, ...], where: str) -> Mapping:
        value = data.get(key, {})
        if not isinstance(value, Mapping):
            self.error(where, f"must be a table ([{key}]), got {_show(value)}")
            return {}
        self.unknown(value, allowed, where)
        return value

    def unknown(self, data: Mapping, allowed: tuple[str, ...], where: str) -> None:
        for key in data:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(allowed)})"
            self.error(f"{where}.{key}" if where else key, "unknown key" + hint)

    def string(self, data: Mapping, key: str, where: str, default: str, *, empty=True) -> str:
        value = data.get(key, default)
        if not isinstance(value, str) or (not empty and not value.strip()):
            self.error(f"{where}.{key}", f"must be a non-empty string, got {_show(value)}")
            return default
        return value

    def number(
        self, data: Mapping, key: str, where: str, default, *, low=0.0, high=math.inf
    ) -> float | None:
        value = data.get(key, default)
        if value is None:
            return None
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or not low < value <= high:
            bound = f"<= {high:g}" if math.isfinite(high) else ""
            self.error(
                f"{where}.{key}",
                f"must be a number > {low:g}{' and ' + bound if bound else ''}, got {_show(value)}",
            )
            return default
        return float(value)

    def boolean(self, data: Mapping, key: str, where: str, default: bool) -> bool:
        value = data.get(key, default)
        if not isinstance(value, bool):
            self.error(f"{where}.{key}", f"must be true or false, got {_show(value)}")
            return default
        return value

    def whole(self, data: Mapping, key: str, where: str, default: int, low: int, high: int) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            self.error(f"{where}.{key}", f"must be a whole number {low}-{high}, got {_show(value)}")
            return default
        return value

    def port(self, data: Mapping, key: str, where: str, default: int) -> int:
        value = data.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
            self.error(f"{where}.{key}", f"must be a port number 1-65535, got {_show(value)}")
            return default
        return value


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


_TOP = (
    "capture",
    "devices",
    "discovery",
    "sentry",
    "spool",
    "retention",
    "metrics",
    "pyroscope",
    "recovery",
)
_DEVICE_KEYS = ("host", "name", "profiler_port", "ecp_port", "console_port")


#: Decoder bounds a config may tighten or widen, per device stream (see ``Limits``).
_LIMIT_KEYS = ("max_paths", "max_strings", "max_live_allocations")
#: Archive bounds (sizes such as "4GiB"; see ``ArchiveLimits``).
_ARCHIVE_KEYS = ("max_bytes_after_error", "max_session_bytes", "min_free_bytes")


def _archive_limits(c: _Checker, cap: Mapping) -> ArchiveLimits:
    defaults = ArchiveLimits()
    sizes = {}
    for key in _ARCHIVE_KEYS:
        if key in cap:
            try:
                sizes[key] = parse_size(cap[key])
            except (ValueError, TypeError) as exc:
                c.error(f"capture.{key}", str(exc))
    return replace(defaults, **sizes)


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
    env = os.environ if env is None else env
    c = _Checker()
    c.unknown(data, _TOP, "")

    cap = c.table(
        data,
        "capture",
        (
            "out",
            "chunk_seconds",
            "max_session_chunk_bytes",
            "file_mode",
            "export",
            *_LIMIT_KEYS,
            *_ARCHIVE_KEYS,
        ),
        "capture",
    )
    out = c.string(cap, "out", "capture", str(DEFAULT_OUT), empty=False)
    if Path(out).expanduser().exists() and not Path(out).expanduser().is_dir():
        c.error("capture.out", f"{out} exists and is not a directory")
    elif runnable and (problem := out_write_problem(out)) is not None:
        c.error("capture.out", problem)
    defaults = Limits()
    bounds = {
        key: int(c.number(cap, key, "capture", getattr(defaults, key), low=0, high=2**31) or 0)
        for key in _LIMIT_KEYS
    }
    capture = CaptureSection(
        out=Path(out).expanduser(),
        limits=replace(defaults, **bounds),
        archive=_archive_limits(c, cap),
        file_mode=_file_mode(c, cap),
        export=_export(c, cap),
    )

    devices: list[DeviceEntry] = []
    raw_devices = data.get("devices", [])
    if not isinstance(raw_devices, list):
        c.error("devices", "must be an array of tables ([[devices]])")
        raw_devices = []
    seen: dict[tuple[str, int], int] = {}
    for i, raw in enumerate(raw_devices):
        where = f"devices[{i}]"
        if not isinstance(raw, Mapping):
            c.error(where, "must be a table with at least 'host'")
            continue
        c.unknown(raw, _DEVICE_KEYS, where)
        host = ""
        if "host" not in raw:
            c.error(f"{where}.host", "missing (the device's IP address or host name)")
        else:
            host = c.string(raw, "host", where, "", empty=False).strip()
            if host and (problem := host_problem(host, HOST_PORT_KEYS, resolver)) is not None:
                c.error(f"{where}.host", problem)
            host = plain_host(host)
        entry = DeviceEntry(
            host=host,
            name=c.string(raw, "name", where, "").strip(),
            profiler_port=c.port(raw, "profiler_port", where, 8090),
            ecp_port=c.port(raw, "ecp_port", where, 8060),
            console_port=c.port(raw, "console_port", where, 8080),
        )
        key = (entry.host, entry.profiler_port)
        if host and key in seen:
            c.error(where, f"same host and profiler_port as devices[{seen[key]}] ({host})")
        seen.setdefault(key, i)
        devices.append(entry)
    for problem in name_clashes([d for d in devices if d.host]):
        c.error("devices", problem)

    disc = c.table(
        data,
        "discovery",
        ("enabled", "interval_seconds", "max_devices", "expire_seconds"),
        "discovery",
    )
    discovery = DiscoverySection(
        enabled=c.boolean(disc, "enabled", "discovery", False),
        interval_seconds=c.number(disc, "interval_seconds", "discovery", 60.0, low=0.0),
        max_devices=c.whole(
            disc, "max_devices", "discovery", DEFAULT_MAX_DEVICES, 1, MAX_DISCOVERED_DEVICES
        ),
        expire_seconds=c.number(
            disc, "expire_seconds", "discovery", DEFAULT_EXPIRE_SECONDS, low=0.0
        ),
    )

    sen = c.table(data, "sentry", ("dsn", "environment", "max_in_flight"), "sentry")
    dsn_text = env.get(DSN_ENV) or None
    from_env = dsn_text is not None
    if dsn_text is None:
        raw_dsn = sen.get("dsn", "")
        if not isinstance(raw_dsn, str):
            c.error("sentry.dsn", "must be a string")
        elif raw_dsn.strip():
            dsn_text = raw_dsn
    dsn = None
    if dsn_text is not None:
        key = f"${DSN_ENV}" if from_env else "sentry.dsn"
        try:
            dsn = Dsn.parse(dsn_text)
        except DsnError as exc:
            why = str(exc) if "://" in dsn_text else "not a DSN (expected https://KEY@HOST/ID)"
            c.error(key, why)
        else:
            if not dsn.project_id.isdigit():
                c.error(key, f"the project ID must be a number, not {dsn.project_id!r}")
    chunks = _chunk_settings(c, cap, sen)
    capture = replace(capture, chunks=chunks)
    in_flight = sen.get("max_in_flight", SentrySection.max_in_flight)
    if isinstance(in_flight, bool) or not isinstance(in_flight, int):
        c.error("sentry.max_in_flight", f"must be a whole number, got {_show(in_flight)}")
        in_flight = SentrySection.max_in_flight
    elif not 1 <= in_flight <= MAX_IN_FLIGHT:
        c.error("sentry.max_in_flight", f"must be 1 to {MAX_IN_FLIGHT}, got {in_flight}")
        in_flight = SentrySection.max_in_flight
    sentry = SentrySection(
        dsn=dsn, environment=chunks.environment, dsn_from_env=from_env, max_in_flight=in_flight
    )

    spool = SpoolSection()
    spo = c.table(data, "spool", ("max_bytes",), "spool")
    if "max_bytes" in spo:
        try:
            spool = SpoolSection(parse_size(spo["max_bytes"]))
        except (ValueError, TypeError) as exc:
            c.error("spool.max_bytes", str(exc))
        else:
            if spool.max_bytes <= 0:
                c.error("spool.max_bytes", "must be more than 0 bytes")

    ret = c.table(data, "retention", ("max_age_days", "max_bytes"), "retention")
    max_bytes = None
    if "max_bytes" in ret:
        try:
            max_bytes = parse_size(ret["max_bytes"])
        except (ValueError, TypeError) as exc:
            c.error("retention.max_bytes", str(exc))
    retention = RetentionSection(
        max_age_days=c.number(ret, "max_age_days", "retention", None), max_bytes=max_bytes
    )

    met = c.table(data, "metrics", ("listen",), "metrics")
    listen: tuple[str, int] | None = MetricsSection().listen
    if "listen" in met:
        if not isinstance(met["listen"], str):
            c.error("metrics.listen", f"must be a string HOST:PORT, got {_show(met['listen'])}")
        else:
            try:
                listen = parse_listen(met["listen"])
            except ValueError as exc:
                c.error("metrics.listen", str(exc))

    if runnable and not devices and not discovery.enabled:
        c.error("devices", "no [[devices]] and [discovery] enabled = false: nothing to capture")
    pyroscope = _pyroscope(c, data)
    recovery = _recovery(c, data)
    if pyroscope.url and "pprof" not in capture.export:  # what is pushed is the pprof export
        capture = replace(capture, export=(*capture.export, "pprof"))

    if c.errors:
        raise ConfigError(c.errors, source)
    return DaemonConfig(
        capture=capture,
        devices=tuple(devices),
        discovery=discovery,
        sentry=sentry,
        retention=retention,
        metrics=MetricsSection(listen),
        spool=spool,
        pyroscope=pyroscope,
        recovery=recovery,
        source=source,
    )


def _chunk_settings(c: _Checker, cap: Mapping, sen: Mapping) -> ChunkSettings:
    """The chunk settings the file sets (see :data:`CHUNK_KEYS`), checked by their own rules;
    each broken rule is an error naming its key."""
    default = ChunkSettings()
    cap_bytes = cap.get("max_session_chunk_bytes", default.max_session_chunk_bytes)
    try:
        cap_bytes = parse_size(cap_bytes)
    except (ValueError, TypeError) as exc:
        c.error(CHUNK_KEYS["max_session_chunk_bytes"], str(exc))
        cap_bytes = default.max_session_chunk_bytes
    try:
        return ChunkSettings(
            chunk_seconds=cap.get("chunk_seconds", default.chunk_seconds),
            max_session_chunk_bytes=cap_bytes,
            environment=sen.get("environment", default.environment),
        )
    except ChunkSettingsError as exc:
        for name, rule in exc.problems:
            c.error(CHUNK_KEYS.get(name, name), rule)
        return default


def _pyroscope(c: _Checker, data: Mapping) -> PyroscopeSection:
    """``[pyroscope] url = "http://HOST:4040"`` (off when absent or empty), ``name``."""
    pyr = c.table(data, "pyroscope", ("url", "name"), "pyroscope")
    url = c.string(pyr, "url", "pyroscope", "").strip()
    name = c.string(pyr, "name", "pyroscope", "roku", empty=False).strip()
    if url and (problem := check_url(url)):
        c.error("pyroscope.url", problem)
    if not re.fullmatch(r"[A-Za-z0-9._-]+", name):
        c.error("pyroscope.name", f"letters, digits, '.', '_' and '-' only, got {_show(name)}")
    return PyroscopeSection(url or None, name)


def _recovery(c: _Checker, data: Mapping) -> RecoveryBudget:
    """``[recovery] max_seconds``, ``max_memory`` (a size), ``max_attempts`` (1 or more)."""
    rec = c.table(data, "recovery", ("max_seconds", "max_memory", "max_attempts"), "recovery")
    default = RecoveryBudget()
    seconds = c.number(rec, "max_seconds", "recovery", default.max_seconds, low=0.0)
    memory = default.max_memory
    if "max_memory" in rec:
        try:
            memory = parse_size(rec["max_memory"])
        except (ValueError, TypeError) as exc:
            c.error("recovery.max_memory", str(exc))
        else:
            if memory <= 0:
                c.error("recovery.max_memory", "must be more than 0 bytes")
                memory = default.max_memory
    attempts = rec.get("max_attempts", default.max_attempts)
    if isinstance(attempts, bool) or not isinstance(attempts, int) or not 1 <= attempts <= 100:
        c.error("recovery.max_attempts", f"must be a whole number 1-100, got {_show(attempts)}")
        attempts = default.max_attempts
    return RecoveryBudget(
        max_seconds=seconds or default.max_seconds, max_memory=memory, max_attempts=attempts
    )


def _export(c: _Checker, cap: Mapping) -> tuple[str, ...]:
    """``[capture] export = ["pprof", "speedscope"]`` (or ``["all"]``): known formats only."""
    value = cap.get("export", [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        c.error(
            "capture.export",
            f'must be a list of format names such as ["pprof"], got {_show(value)}',
        )
        return ()
    try:
        return export_formats(value)
    except ValueError as exc:
        c.error("capture.export", str(exc))
        return ()


def _file_mode(c: _Checker, cap: Mapping) -> int:
    """``[capture] file_mode``: ``"0640"`` (octal text) or ``0o640`` (a TOML octal number)."""
    value = cap.get("file_mode", DEFAULT_FILE_MODE)
    mode = None
    if isinstance(value, int) and not isinstance(value, bool):
        mode = value
    elif isinstance(value, str) and re.fullmatch(r"(0o?)?[0-7]{1,4}", value.strip()):
        mode = int(value.strip().removeprefix("0o"), 8)
    if mode is None:
        c.error("capture.file_mode", f'must be an octal mode such as "0600", got {_show(value)}')
        return DEFAULT_FILE_MODE
    problem = check_file_mode(mode)
    if problem:
        c.error("capture.file_mode", problem)
        return DEFAULT_FILE_MODE
    return mode


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
        data = tomllib.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise ConfigError([f"cannot read the file: {exc.strerror or exc}"], str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(["the file is not UTF-8 text"], str(path)) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError([f"not valid TOML: {exc}"], str(path)) from None
    config = build_config(data, env=env, source=str(path), runnable=runnable, resolver=resolver)
    warning = dsn_file_warning(path, data)
    return replace(config, warnings=(warning,)) if warning else config
