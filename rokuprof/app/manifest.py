"""A Roku app's ``manifest``: read its keys, and set the profiler's keys in a copy of its text.

The manifest is ``key=value`` lines; a line whose first non-blank character is ``#`` is a
comment, and a line without ``=`` says nothing. :func:`profiled_manifest` changes only the lines
of the keys it sets: an existing key gets its new value in place (its first occurrence; later
lines of the same key are dropped, so the device sees one value whichever it would read), a
missing key is appended at the end. Every other line stays as it was, byte for byte: comments,
blank lines, order, its line ending (``\\r\\n`` or ``\\n``; appended lines take the first line's),
and a leading UTF-8 byte order mark.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

BOM = "\ufeff"
DESTINATIONS = ("network", "local")
MIN_SAMPLE_RATIO, MAX_SAMPLE_RATIO = 0.001, 1.0
#: The SceneGraph version per-line data needs (``bsprof_enable_lines``).
LINES_RSG_VERSION = "1.2"

#: (key, value, why) for each key :func:`profiled_manifest` may set, in the order it appends them.
MANIFEST_KEYS_DOC: tuple[tuple[str, str, str], ...] = (
    ("bsprof_enable", "1", "turns the BrightScript profiler on"),
    (
        "bsprof_data_dest",
        "network",
        "streams the profile on port 8090 while the app runs (local: kept on the device, "
        "for `rokuprof pull`)",
    ),
    ("run_as_process", "1", "lets the device report the app's CPU and memory (chanperf)"),
    (
        "bsprof_enable_mem",
        "1 (--mem)",
        "records every allocation and free; the device then measures every statement "
        "(sample ratio 1.0, whatever bsprof_sample_ratio says)",
    ),
    ("bsprof_enable_lines", "1 (--lines)", "per-line data (Roku OS 9.1+, heavy)"),
    ("rsg_version", "1.2 (--lines)", "per-line data needs it (a higher version is kept)"),
    (
        "bsprof_sample_ratio",
        "R (--sample-ratio)",
        "the share of statements measured, 0.001 to 1.0 (lighter runs)",
    ),
)


@dataclass(frozen=True)
class ProfilerKeys:
    """The profiler options to set in a manifest; ``False``/``None`` leaves that key as it is."""

    mem: bool = False  # bsprof_enable_mem=1
    lines: bool = False  # bsprof_enable_lines=1 (and rsg_version=1.2)
    sample_ratio: float | None = None  # bsprof_sample_ratio=R
    dest: str = "network"  # bsprof_data_dest

    def __post_init__(self) -> None:
        if self.dest not in DESTINATIONS:
            raise ValueError(f"bsprof_data_dest must be network or local, not {self.dest!r}")
        ratio = self.sample_ratio
        if ratio is None:
            return
        if (
            isinstance(ratio, bool)
            or not isinstance(ratio, int | float)
            or not math.isfinite(ratio)
            or not MIN_SAMPLE_RATIO <= ratio <= MAX_SAMPLE_RATIO
        ):
            raise ValueError(
                f"the sample ratio must be a number from {MIN_SAMPLE_RATIO} to "
                f"{MAX_SAMPLE_RATIO}, not {ratio!r}"
            )


def _split_lines(text: str) -> list[str]:
    """``text``'s lines with their endings (only ``\\n`` ends a line; ``\\r\\n`` stays whole)."""
    lines = text.split("\n")
    last = lines.pop()
    return [line + "\n" for line in lines] + ([last] if last else [])


def _line_key(line: str) -> str | None:
    """The key a line sets, or ``None`` for a comment, a blank line or a line without ``=``."""
    body = line.rstrip("\r\n")
    if body.lstrip().startswith("#") or "=" not in body:
        return None
    return body.split("=", 1)[0].strip() or None


def _line_value(line: str) -> str:
    return line.rstrip("\r\n").split("=", 1)[1].strip()


def parse_manifest(text: str) -> dict[str, str]:
    """The manifest's keys and values (whitespace around them removed); a key set twice keeps
    its first value, as :func:`profiled_manifest` does."""
    found: dict[str, str] = {}
    for line in _split_lines(text.removeprefix(BOM)):
        key = _line_key(line)
        if key is not None and key not in found:
            found[key] = _line_value(line)
    return found


def _version_at_least(value: str, wanted: str) -> bool:
    try:
        have = tuple(int(part) for part in value.split("."))
    except ValueError:
        return False
    return have >= tuple(int(part) for part in wanted.split("."))


def profiler_settings(keys: ProfilerKeys, current: dict[str, str] | None = None) -> dict[str, str]:
    """The key → value lines :func:`profiled_manifest` writes for ``keys``, in order.
    ``current`` (the manifest's keys) keeps an ``rsg_version`` already at 1.2 or above."""
    settings = {
        "bsprof_enable": "1",
        "bsprof_data_dest": keys.dest,
        "run_as_process": "1",
    }
    if keys.mem:
        settings["bsprof_enable_mem"] = "1"
    if keys.lines:
        settings["bsprof_enable_lines"] = "1"
        rsg = (current or {}).get("rsg_version")
        if rsg is None or not _version_at_least(rsg, LINES_RSG_VERSION):
            settings["rsg_version"] = LINES_RSG_VERSION
    if keys.sample_ratio is not None:
        settings["bsprof_sample_ratio"] = repr(float(keys.sample_ratio))
    return settings


def profiled_manifest(text: str, keys: ProfilerKeys) -> str:
    """``text`` with the profiler's keys set: ``bsprof_enable=1``, ``bsprof_data_dest``,
    ``run_as_process=1`` and the optional ones of ``keys``; every other line kept as it was."""
    bom = BOM if text.startswith(BOM) else ""
    lines = _split_lines(text.removeprefix(BOM))
    settings = profiler_settings(keys, parse_manifest(text))
    newline = "\r\n" if lines and lines[0].endswith("\r\n") else "\n"
    out: list[str] = []
    done: set[str] = set()
    for line in lines:
        key = _line_key(line)
        if key not in settings:
            out.append(line)
        elif key not in done:
            done.add(key)
            ending = line[len(line.rstrip("\r\n")) :] or newline
            out.append(f"{key}={settings[key]}{ending}")
    if out and not out[-1].endswith("\n") and len(done) < len(settings):
        out[-1] += newline
    out += [f"{key}={value}{newline}" for key, value in settings.items() if key not in done]
    return bom + "".join(out)
