"""The speedscope app (npm ``speedscope``) in headless Chromium (Debian ``chromium``), driven by
``speedscope.mjs`` through npm ``playwright-core``; and speedscope's published JSON schema.

``open_files()`` launches one browser for several files and returns, per file, what the page
did (console, page errors, alerts, blocked requests) and every profile's Sandwich table as the
page prints it. ``figure()`` turns a printed figure back into a number with the tolerance of its
rounding, so tests compare what a person sees with our exact totals.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from tests.viewers import VIEWERS, missing, need_command, need_npm

CHROMIUM = Path("/usr/bin/chromium")
SCRIPT = VIEWERS / "speedscope.mjs"
TIMEOUT_S = 175  # the script gives up on its own a few seconds earlier
#: Chromium's software-GL chatter, not speedscope's.
_NOISE = re.compile(r"^\[\.WebGL-[0-9a-fx]+\]GL Driver Message|GPU stall due to ReadPixels")


def need_browser() -> None:
    need_command("node", "apt-get install nodejs")
    if not CHROMIUM.exists():
        missing("chromium", "apt-get install chromium")
    need_npm("speedscope")
    need_npm("playwright-core")


@dataclass
class Row:
    name: str
    file: str | None
    total: str
    self: str


@dataclass
class Profile:
    name: str
    index: int
    count: int
    rows: list[Row]


@dataclass
class Page:
    file: str
    title: str
    outcome: str
    imported: bool
    error_page: bool
    console: list[dict]
    page_errors: list[str]
    dialogs: list[str]
    blocked_requests: list[str]
    profiles: list[Profile]

    def messages(self, *types: str) -> list[str]:
        return [
            m["text"] for m in self.console if m["type"] in types and not _NOISE.search(m["text"])
        ]

    @property
    def importer(self) -> str | None:
        """speedscope's own "Importing as …" line."""
        lines = [t for t in self.messages("log") if t.startswith("Importing ")]
        return lines[0] if lines else None

    def problems(self) -> list[str]:
        """Everything that says the file was not read cleanly."""
        out = [f"console {t}" for t in self.messages("warning", "error", "assert")]
        out += [f"console {t}" for t in self.messages("log") if t.startswith("Failed to load")]
        out += [f"page error {e}" for e in self.page_errors]
        out += [f"alert {d}" for d in self.dialogs]
        out += [f"request to {u} (blocked)" for u in self.blocked_requests]
        if self.error_page:
            out.append("error page: Something went wrong")
        if not self.imported:
            out.append(f"not imported ({self.outcome})")
        return out

    def profile(self, name: str) -> Profile:
        found = [p for p in self.profiles if p.name == name]
        assert found, f"no profile {name!r} in {[p.name for p in self.profiles]}"
        return found[0]


def open_files(paths: list[Path]) -> list[Page]:
    need_browser()
    proc = subprocess.run(
        ["node", str(SCRIPT), *map(str, paths)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, f"speedscope.mjs failed: {proc.stderr}"
    pages = []
    for r in json.loads(proc.stdout)["results"]:
        profiles = [
            Profile(p["name"], p["index"], p["count"], [Row(**row) for row in p["rows"]])
            for p in r["profiles"]
        ]
        pages.append(
            Page(
                r["file"],
                r["title"],
                r["outcome"],
                r["imported"],
                r["errorPage"],
                r["console"],
                r["pageErrors"],
                r["dialogs"],
                r["blockedRequests"],
                profiles,
            )
        )
    return pages


# -- printed figures -------------------------------------------------------------------------

_TIME_UNITS = {"nanoseconds": 1e-9, "microseconds": 1e-6, "milliseconds": 1e-3, "seconds": 1.0}
_TIME_SUFFIX = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "ns": 1e-9}
_BYTE_SUFFIX = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3}


def figure(text: str, unit: str) -> tuple[float, float]:
    """A Sandwich cell ("1.03s (84%)", "5,555 (100%)", "1.44 MB (3%)") as (value in ``unit``,
    half the printed resolution in ``unit``). ``unit`` is the profile's speedscope unit."""
    shown = text.split(" (")[0].strip()
    if unit == "none":
        digits = shown.replace(",", "")
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        return float(digits), (0.5 * 10**-decimals if decimals else 0.0)
    if unit == "bytes":
        number, suffix = shown.split(" ")
        scale = _BYTE_SUFFIX[suffix]
        decimals = len(number.split(".")[1]) if "." in number else 0
        return float(number) * scale, 0.5 * 10**-decimals * scale if decimals else 0.5
    multiplier = _TIME_UNITS[unit]
    m = re.fullmatch(r"(\d+):(\d\d)", shown)
    if m:  # a minute or more: whole seconds, rounded down
        seconds = int(m.group(1)) * 60 + int(m.group(2))
        return (seconds + 0.5) / multiplier, 0.5 / multiplier
    m = re.fullmatch(r"(-?[\d.]+)(s|ms|µs|ns)", shown)
    assert m, f"unexpected time figure {text!r}"
    scale = _TIME_SUFFIX[m.group(2)] / multiplier
    decimals = len(m.group(1).split(".")[1]) if "." in m.group(1) else 0
    return float(m.group(1)) * scale, 0.5 * 10**-decimals * scale


def sandwich(profile: Profile, unit: str, key=lambda row: row.name) -> dict:
    """{key(row): ((total, tolerance), (self, tolerance))} of one profile's Sandwich table."""
    out = {}
    for row in profile.rows:
        k = key(row)
        assert k not in out, f"two Sandwich rows for {k!r}"
        out[k] = (figure(row.total, unit), figure(row.self, unit))
    return out


# -- the JSON schema -------------------------------------------------------------------------


@cache
def schema_validator():
    from tests.viewers import need_module

    jsonschema = need_module("jsonschema", "pip install -e '.[test]'")
    path = need_npm("speedscope") / "dist/release/file-format-schema.json"
    schema = json.loads(path.read_text())
    return jsonschema.Draft7Validator(schema)


def schema_errors(document: object) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in schema_validator().iter_errors(document)
    ]
