"""ECP ``/query/chanperf``: the running app's CPU and memory as XML (pure).

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

import xml.etree.ElementTree as ET

from rokuprof.device.console import ChanPerf


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
    parts = {k: v for k, v in mem_bytes.items() if k in ("anon", "file", "shared")}
    used = mem_bytes.get("used", sum(parts.values()) if parts else None)
    return ChanPerf(
        mem_kib=None if used is None else used // 1024,
        cpu_percent=cpu_percent,
        mem={k: v // 1024 for k, v in parts.items()},
        cpu={k: v for k, v in cpu.items() if k in ("user", "sys")},
        raw="",
    )
