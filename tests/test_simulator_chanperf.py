"""The simulated app's chanperf figures follow its work, deterministically, and the console and
ECP say the same (issue 21 D)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from types import SimpleNamespace

from rokuprof.bsprof.model import ALLOC, MEMORY
from rokuprof.device.chanperf import chanperf_from_xml, parse_chanperf
from rokuprof.simulator import chanperf
from rokuprof.simulator.app import AppConfig, SyntheticApp


def fake_device(app: SyntheticApp | None, run_as_process: bool = True, installed=None):
    return SimpleNamespace(
        app_vitals=lambda: None if app is None else app.vitals,
        installed=installed,
        config=SimpleNamespace(run_as_process=run_as_process),
    )


def figures_after(seconds: float, seed: int = 3) -> chanperf.Figures:
    app = SyntheticApp(AppConfig(seed=seed))
    app.advance(seconds)
    figures = chanperf.figures(fake_device(app))
    assert figures is not None
    return figures


def test_the_figures_follow_the_apps_work_and_repeat_for_a_seed() -> None:
    idle = chanperf.figures(fake_device(SyntheticApp(AppConfig(seed=3))))
    assert idle == chanperf.Figures(0, 0, chanperf.ANON_BASE_KIB)
    busy = figures_after(3.0)
    assert busy == figures_after(3.0)  # the same seed and app time: the same figures
    assert busy.cpu > 0 and busy.anon_kib > chanperf.ANON_BASE_KIB  # work and a live heap
    assert busy != figures_after(3.0, seed=4)


def test_the_live_heap_is_what_the_stream_allocated_and_did_not_free() -> None:
    app = SyntheticApp(AppConfig(seed=3, memory_ops=True))
    live: dict[int, int] = {}
    for entry in app.advance(4.0):
        if entry[0] == MEMORY:
            _, _, op, _, addr, size = entry
            if op == ALLOC:
                live[addr] = size
            else:  # a free, or the free half of a realloc (unknown addresses: freed before)
                live.pop(addr, None)
    assert app.vitals.heap_bytes == sum(live.values()) > 0


def test_console_and_ecp_give_the_same_figures() -> None:
    app = SyntheticApp(AppConfig(seed=5))
    app.advance(2.5)
    device = fake_device(app)
    console = parse_chanperf(chanperf.console_line(device))
    ecp = chanperf_from_xml(ET.fromstring(chanperf.xml(device)))
    assert console is not None and ecp is not None
    assert (console.mem_kib, console.cpu_percent, console.mem, console.cpu) == (
        ecp.mem_kib,
        ecp.cpu_percent,
        ecp.mem,
        ecp.cpu,
    )


def test_without_run_as_process_there_are_no_figures() -> None:
    app = SyntheticApp(AppConfig(seed=3))
    for device in (
        fake_device(app, run_as_process=False),
        fake_device(app, installed={"title": "x"}),  # an installed app without the key
        fake_device(None),
    ):
        assert chanperf.console_line(device) == chanperf.NOT_AVAILABLE
        assert chanperf_from_xml(ET.fromstring(chanperf.xml(device))) is None
    assert chanperf.figures(fake_device(app, installed={"run_as_process": "1"})) is not None
