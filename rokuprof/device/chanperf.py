"""``chanperf``: the running app's CPU and memory, from the debug console's line or ECP's XML
(pure).

The console prints one line, ``channel: mem=15156KiB{anon=...},%cpu=7{user=1,sys=6}``
(:func:`parse_chanperf`). ECP ``/query/chanperf`` answers XML (:func:`chanperf_from_xml`).

Roku documents that this query gives "the same data as the console's ``chanperf``" but not its
XML, so the shape read here is our choice, the one the simulator answers with::

    <chanperf>
      <plugin id="dev">
        <cpu-percent><user>1</user><sys>6</sys></cpu-percent>
        <memory><anon>2785280</anon><file>12689408</file><shared>45056</shared>
                <used>15519744</used></memory>          (bytes)
      </plugin>
      <status>OK</status>
    </chanperf>

Read tolerantly: unknown elements are ignored and a missing figure is ``None``; the CPU share is
``<total>`` when given, else user + sys; the memory is ``<used>`` when given, else the sum of
the parts. A ``<status>`` other than ``OK``, or no ``<plugin>``, means no data (``None``, as
the console's "not available").
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field

from rokuprof.device.errors import ProtocolError


@dataclass(frozen=True, slots=True)
class ChanPerf:
    """``chanperf``: memory (KiB) and CPU (%) of the running app, with their breakdowns."""

    mem_kib: int | None
    cpu_percent: int | None
    mem: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, int] = field(default_factory=dict)
    raw: str = ""

    def to_json(self) -> dict[str, object]:
        return asdict(self)


_CHANPERF_FIELD = re.compile(r"([%\w]+)=(\d+)(?:KiB)?(?:\{([^}]*)\})?")


def parse_chanperf(text: str) -> ChanPerf | None:
    """Parse a ``channel: mem=...,%cpu=...`` line; ``None`` when no data is available."""
    for line in text.splitlines():
        line = line.strip()
        if not line.lower().startswith("channel:"):
            continue
        body = line.split(":", 1)[1]
        if "not available" in body:
            return None
        values: dict[str, tuple[int, dict[str, int]]] = {}
        for match in _CHANPERF_FIELD.finditer(body):
            name, value, detail = match.groups()
            parts = {}
            for item in (detail or "").split(","):
                key, eq, number = item.partition("=")
                if eq and number.strip().isdigit():
                    parts[key.strip()] = int(number)
            values[name] = (int(value), parts)
        mem = values.get("mem")
        cpu = values.get("%cpu")
        return ChanPerf(
            mem_kib=mem[0] if mem else None,
            cpu_percent=cpu[0] if cpu else None,
            mem=mem[1] if mem else {},
            cpu=cpu[1] if cpu else {},
            raw=line,
        )
    raise ProtocolError(f"unexpected chanperf reply: {text.strip()[:200]!r}")


def _number(element: ET.Element | None) -> int | None:
    if element is None or element.text is None:
        return None
    text = element.text.strip()
    try:
        return max(0, round(float(text)))
    except ValueError:  # "nan", "12 KB", ...: no figure
        return None
    except OverflowError:
        return None


def _figures(element: ET.Element | None) -> dict[str, int]:
    if element is None:
        return {}
    out = {}
    for child in element:
        if isinstance(child.tag, str):
            value = _number(child)
            if value is not None:
                out[child.tag] = value
    return out


def chanperf_from_xml(root: ET.Element) -> ChanPerf | None:
    """The figures of a parsed ``<chanperf>`` document; ``None`` when it says there are none.
    ``mem`` holds the memory parts in KiB, as the console gives them."""
    status = (root.findtext("status") or "OK").strip().upper()
    plugin = root.find("plugin")
    if status != "OK" or plugin is None:
        return None
    cpu = _figures(plugin.find("cpu-percent"))
    mem_bytes = _figures(plugin.find("memory"))
    if "total" in cpu:
        cpu_percent: int | None = cpu["total"]
    elif "user" in cpu or "sys" in cpu:
        cpu_percent = cpu.get("user", 0) + cpu.get("sys", 0)
    else:
        cpu_percent = None
    parts = {k: v for k, v in mem_bytes.items() if k in ("anon", "file", "shared", "swap")}
    resident = [v for k, v in parts.items() if k != "swap"]  # swapped out is not in use
    used = mem_bytes.get("used", sum(resident) if resident else None)
    return ChanPerf(
        mem_kib=None if used is None else used // 1024,
        cpu_percent=cpu_percent,
        mem={k: v // 1024 for k, v in parts.items()},
        cpu={k: v for k, v in cpu.items() if k in ("user", "sys")},
        raw="",
    )
