"""Every key of the daemon's config file in one table: section, key, type, range or choices,
default and help (:data:`KEYS`).

Reading (:class:`Reader`), range checks, unknown-key suggestions and the commented default
config (:func:`default_toml`) are all derived from it. A reader collects every problem as
``"<section>.<key>: <why>"`` instead of stopping at the first. Rules that join several keys
(the chunk settings, a DSN the environment overrides, devices that clash) are
:mod:`rokuprof.daemon.config`'s.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from rokuprof.bsprof.model import Limits
from rokuprof.capture.exports import FORMATS, export_formats
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.daemon import registry as found
from rokuprof.daemon.config_values import BINARY_UNITS, format_host, parse_listen, parse_size
from rokuprof.daemon.recovery_policy import RecoveryBudget
from rokuprof.device.constants import CONSOLE_PORT, ECP_PORT, PROFILER_PORT
from rokuprof.device.hosts import Resolver, host_problem
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.files import DEFAULT_FILE_MODE, check_file_mode
from rokuprof.store.pyroscope import check_url
from rokuprof.store.spool import DEFAULT_MAX_BYTES as DEFAULT_SPOOL_BYTES
from rokuprof.store.uploader import MAX_IN_FLIGHT
from rokuprof.store.writable import out_write_problem

#: What a device's host must not carry, and the keys that take it instead.
HOST_PORT_KEYS = "profiler_port, ecp_port and console_port"
#: The most devices ``[discovery] max_devices`` may allow (each is a capture loop).
MAX_DISCOVERED_DEVICES = 4096


def show(value: object) -> str:
    """``value`` as an error message quotes it (at most 60 characters)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# -- types -----------------------------------------------------------------------------------


class Type(StrEnum):
    TEXT = "text"  # a string; non-empty when low = 1
    NUMBER = "number"  # low < x <= high
    WHOLE = "whole"  # low <= n <= high
    PORT = "port"  # 1-65535
    COUNT = "count"  # a whole number, then low <= n <= high (each said its own way)
    BOOL = "bool"
    SIZE = "size"  # "20GiB" or bytes; at least low bytes
    LISTEN = "listen"  # "HOST:PORT", "" for off
    MODE = "mode"  # "0640" or 0o640, within the rules of check_file_mode
    FORMATS = "formats"  # export format names, or ["all"]
    RULED = "ruled"  # any value: checked by a rule that joins keys (see its help)


@dataclass(frozen=True)
class Context:
    """What some checks need beyond the value: ``runnable`` (the daemon will write to the
    output now) and a ``resolver`` for host names (None: names are not looked up)."""

    runnable: bool = False
    resolver: Resolver | None = None


@dataclass(frozen=True)
class Key:
    """One config key: its type, range or choices, default (as the daemon uses it) and help;
    ``rule``: a further check of a well-typed value (why not, or None)."""

    section: str
    name: str
    type: Type
    default: object
    help: str
    low: float = 0
    high: float = math.inf
    choices: tuple[str, ...] = ()
    required: str = ""  # what a missing required key is (empty: not required)
    rule: Callable[[object, Context], str | None] | None = None


class Bad(ValueError):
    """A value its key does not take (the message says why)."""


def _number(key: Key, v: object) -> float:
    ok = isinstance(v, int | float) and not isinstance(v, bool)
    if not ok or not math.isfinite(v) or not key.low < v <= key.high:
        bound = f" and <= {key.high:g}" if math.isfinite(key.high) else ""
        raise Bad(f"must be a number > {key.low:g}{bound}, got {show(v)}")
    return float(v)


def _whole(noun: str) -> Callable[[Key, object], int]:
    def parse(key: Key, v: object) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not key.low <= v <= key.high:
            raise Bad(f"must be a {noun} {key.low:g}-{key.high:g}, got {show(v)}")
        return v

    return parse


def _count(key: Key, v: object) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise Bad(f"must be a whole number, got {show(v)}")
    if not key.low <= v <= key.high:
        raise Bad(f"must be {key.low:g} to {key.high:g}, got {v}")
    return v


def _text(key: Key, v: object) -> str:
    if not isinstance(v, str) or (key.low and not v.strip()):
        raise Bad(f"must be a non-empty string, got {show(v)}")
    return v


def _bool(key: Key, v: object) -> bool:
    if not isinstance(v, bool):
        raise Bad(f"must be true or false, got {show(v)}")
    return v


def _size(key: Key, v: object) -> int:
    try:
        size = parse_size(v)  # type: ignore[arg-type]
    except (ValueError, TypeError) as exc:
        raise Bad(str(exc)) from None
    if size < key.low:
        raise Bad(f"must be more than {key.low - 1:g} bytes")
    return size


def _listen(key: Key, v: object) -> tuple[str, int] | None:
    if not isinstance(v, str):
        raise Bad(f"must be a string HOST:PORT, got {show(v)}")
    try:
        return parse_listen(v)
    except ValueError as exc:
        raise Bad(str(exc)) from None


def _mode(key: Key, v: object) -> int:
    mode = None
    if isinstance(v, int) and not isinstance(v, bool):
        mode = v
    elif isinstance(v, str) and re.fullmatch(r"(0o?)?[0-7]{1,4}", v.strip()):
        mode = int(v.strip().removeprefix("0o"), 8)
    if mode is None:
        raise Bad(f'must be an octal mode such as "0600", got {show(v)}')
    if problem := check_file_mode(mode):
        raise Bad(problem)
    return mode


def _formats(key: Key, v: object) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(n, str) for n in v):
        raise Bad(f'must be a list of format names such as ["pprof"], got {show(v)}')
    try:
        return export_formats(v)
    except ValueError as exc:
        raise Bad(str(exc)) from None


PARSERS: dict[Type, Callable[[Key, object], object]] = {
    Type.TEXT: _text,
    Type.NUMBER: _number,
    Type.WHOLE: _whole("whole number"),
    Type.PORT: _whole("port number"),
    Type.COUNT: _count,
    Type.BOOL: _bool,
    Type.SIZE: _size,
    Type.LISTEN: _listen,
    Type.MODE: _mode,
    Type.FORMATS: _formats,
    Type.RULED: lambda key, v: v,
}


# -- rules of one value ----------------------------------------------------------------------


def _out_problem(out: object, ctx: Context) -> str | None:
    path = Path(str(out)).expanduser()
    if path.exists() and not path.is_dir():
        return f"{out} exists and is not a directory"
    return out_write_problem(str(out)) if ctx.runnable else None


def _host_problem(host: object, ctx: Context) -> str | None:
    host = str(host).strip()
    return host_problem(host, HOST_PORT_KEYS, ctx.resolver) if host else None


def _url_problem(url: object, ctx: Context) -> str | None:
    return check_url(str(url).strip()) if str(url).strip() else None


def _app_name_problem(name: object, ctx: Context) -> str | None:
    name = str(name).strip()
    if re.fullmatch(r"[A-Za-z0-9._-]+", name):
        return None
    return f"letters, digits, '.', '_' and '-' only, got {show(name)}"


# -- the table -------------------------------------------------------------------------------

T = Type
_LIMITS, _ARCHIVE, _CHUNKS, _RECOVERY = Limits(), ArchiveLimits(), ChunkSettings(), RecoveryBudget()
_LIMIT = {
    "max_paths": "call paths",
    "max_strings": "strings",
    "max_live_allocations": "allocations",
}
_AFTER_ERROR = "archived past corrupt data, then the session ends failed"
_HOLD = "a write the full disk refuses is retried this long, reading paused; 0: end at once"
_KEYS = [
    Key("capture", "out", T.TEXT, "rokuprof-data", "OUT/<device>/<session>/", 1, rule=_out_problem),
    *(
        Key("capture", k, T.NUMBER, getattr(_LIMITS, k), f"most {w} per stream", 0, 2**31)
        for k, w in _LIMIT.items()
    ),
    Key("capture", "max_bytes_after_error", T.SIZE, _ARCHIVE.max_bytes_after_error, _AFTER_ERROR),
    Key("capture", "max_session_bytes", T.SIZE, _ARCHIVE.max_session_bytes, "0: no cap"),
    Key("capture", "min_free_bytes", T.SIZE, _ARCHIVE.min_free_bytes, "kept free; 0: no floor"),
    Key("capture", "hold_seconds", T.NUMBER, _ARCHIVE.hold_seconds, _HOLD, 0, 3600),
    Key("capture", "file_mode", T.MODE, DEFAULT_FILE_MODE, "of every file; directories follow"),
    Key("capture", "export", T.FORMATS, (), "at each run's end", choices=(*FORMATS, "all")),
    Key("capture", "vitals", T.BOOL, True, "read the app's CPU % and memory during runs"),
    Key("capture", "trace", T.BOOL, False, "also the app trace (Roku OS 15.1+) of every run"),
    Key("capture", "vitals_interval", T.NUMBER, 1.0, "seconds between those readings", 0, 3600),
    Key(
        "capture",
        "chunk_seconds",
        T.RULED,
        _CHUNKS.chunk_seconds,
        "seconds of samples per Sentry chunk (ChunkSettings' rules)",
    ),
    Key(
        "capture",
        "max_session_chunk_bytes",
        T.SIZE,
        _CHUNKS.max_session_chunk_bytes,
        "chunk bytes one session may make (and ChunkSettings' rules)",
    ),
    Key(
        "devices",
        "host",
        T.TEXT,
        "",
        "IP address or host name: no URL, no port",
        1,
        required="the device's IP address or host name",
        rule=_host_problem,
    ),
    Key("devices", "name", T.TEXT, "", "directory and metric label (else serial, else host)"),
    Key("devices", "profiler_port", T.PORT, PROFILER_PORT, "the profiler stream", 1, 65535),
    Key("devices", "ecp_port", T.PORT, ECP_PORT, "ECP", 1, 65535),
    Key("devices", "console_port", T.PORT, CONSOLE_PORT, "the debug console", 1, 65535),
    Key("devices", "trace", T.BOOL, None, "this device's app trace (unset: [capture] trace)"),
    Key("discovery", "enabled", T.BOOL, False, "also capture Rokus that answer SSDP"),
    Key("discovery", "interval_seconds", T.NUMBER, 60.0, "between searches"),
    Key(
        "discovery",
        "max_devices",
        T.WHOLE,
        found.DEFAULT_MAX_DEVICES,
        "found devices captured at once (an eighth of them at most on trial)",
        1,
        MAX_DISCOVERED_DEVICES,
    ),
    Key("discovery", "expire_seconds", T.NUMBER, found.DEFAULT_EXPIRE_SECONDS, "silent: dropped"),
    Key("discovery", "confirm_seconds", T.NUMBER, found.DEFAULT_CONFIRM_SECONDS, "ECP silent: out"),
    Key("sentry", "dsn", T.RULED, "", "empty: chunks stay on disk; $ROKUPROF_SENTRY_DSN wins"),
    Key("sentry", "environment", T.RULED, _CHUNKS.environment, "(ChunkSettings' rules)"),
    Key("sentry", "max_in_flight", T.COUNT, 4, "uploads at once", 1, MAX_IN_FLIGHT),
    Key("spool", "max_bytes", T.SIZE, DEFAULT_SPOOL_BYTES, "undelivered chunks kept", 1),
    Key("retention", "max_bytes", T.SIZE, None, "delete the oldest sessions beyond it"),
    Key("retention", "max_age_days", T.NUMBER, None, "delete sessions older than it"),
    Key("metrics", "listen", T.LISTEN, ("127.0.0.1", 9464), '/metrics, /healthz; "": off'),
    Key("pyroscope", "url", T.TEXT, "", "push each session's pprof; empty: off", rule=_url_problem),
    Key("pyroscope", "name", T.TEXT, "roku", "application name", 1, rule=_app_name_problem),
    Key("recovery", "max_seconds", T.NUMBER, _RECOVERY.max_seconds, "to convert a crashed run"),
    Key("recovery", "max_memory", T.SIZE, _RECOVERY.max_memory, "memory it may add", 1),
    Key(
        "recovery",
        "max_attempts",
        T.WHOLE,
        _RECOVERY.max_attempts,
        "conversions it may die in",
        1,
        100,
    ),
]
#: section -> its keys, in the order they are read (and problems listed).
KEYS: dict[str, dict[str, Key]] = {}
for _key in _KEYS:
    KEYS.setdefault(_key.section, {})[_key.name] = _key


def default(section: str, name: str) -> Any:
    """The default of ``[section] name`` (what a config that does not set it gets)."""
    return KEYS[section][name].default


# -- reading ---------------------------------------------------------------------------------


class Reader:
    """Reads typed values from TOML tables by :data:`KEYS`, collecting errors."""

    def __init__(self, context: Context | None = None) -> None:
        self.context = context or Context()
        self.errors: list[str] = []

    def error(self, key: str, message: str) -> None:
        self.errors.append(f"{key}: {message}")

    def unknown(self, data: Mapping, allowed: tuple[str, ...], where: str) -> None:
        for key in data:
            if key in allowed:
                continue
            close = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
            hint = f" (did you mean {close[0]!r}?)" if close else f" (known: {', '.join(allowed)})"
            self.error(f"{where}.{key}" if where else key, "unknown key" + hint)

    def section(self, data: Mapping, section: str) -> dict[str, object]:
        """``data[section]``'s values (every key, defaults for the absent)."""
        table = data.get(section, {})
        if not isinstance(table, Mapping):
            self.error(section, f"must be a table ([{section}]), got {show(table)}")
            table = {}
        return self.values(table, section, section)

    def values(self, table: Mapping, section: str, where: str) -> dict[str, object]:
        """``table``'s values as keys of ``section`` (``where`` names it in errors)."""
        self.unknown(table, tuple(KEYS[section]), where)
        return {name: self.value(table, key, where) for name, key in KEYS[section].items()}

    def value(self, table: Mapping, key: Key, where: str) -> object:
        if key.name not in table:
            if key.required:
                self.error(f"{where}.{key.name}", f"missing ({key.required})")
            return key.default
        try:
            value = PARSERS[key.type](key, table[key.name])
            problem = key.rule(value, self.context) if key.rule else None
        except Bad as exc:
            problem = str(exc)
        if problem:
            self.error(f"{where}.{key.name}", problem)
            return key.default
        return value


# -- the documented defaults ----------------------------------------------------------------


def toml_value(key: Key, value: object) -> str:
    """``value`` of ``key`` as a config file writes it."""
    if key.type is Type.SIZE:
        unit = next(((u, s) for u, s in BINARY_UNITS if value and value % s == 0), ("", 1))
        return f'"{value // unit[1]}{unit[0]}"'
    if key.type is Type.MODE:
        return f'"{value:04o}"'
    if key.type is Type.LISTEN:
        return f'"{format_host(value[0])}:{value[1]}"' if value else '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, tuple):
        return "[" + ", ".join(f'"{v}"' for v in value) + "]"
    return str(value)


def default_toml() -> str:
    """Every key with its default and help, as a config file (a key without a default is a
    comment; ``[[devices]]`` is one example device)."""
    lines = []
    for section, keys in KEYS.items():
        lines.append(f"\n[[{section}]]" if section == "devices" else f"\n[{section}]")
        for key in keys.values():
            shown = "192.168.1.20" if key.required else key.default
            value = f"{key.name} = {toml_value(key, shown)}" if shown is not None else ""
            text = key.help + (f" (of {', '.join(key.choices)})" if key.choices else "")
            lines.append(f"{value}  # {text}" if value else f"# {key.name}: {text}")
    return "\n".join(lines).lstrip() + "\n"
