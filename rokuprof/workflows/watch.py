"""``rokuprof watch`` as a library call: one device's capture loop with a view and Ctrl-C handling.

The first Ctrl-C (or SIGTERM) asks the loop to stop: the current run finishes its chunks and is
marked ``interrupted``, and the summary says which signal it was. A second Ctrl-C falls back to
Python's default (immediate exit). See :mod:`rokuprof.capture.signals`.

Any exception inside the loop (a full disk, a bug) ends the watch well: the run in progress is
finished with its cause (:mod:`rokuprof.capture.unfinished`) and the summary's ``failure`` says
it. A :class:`~rokuprof.store.files.SpaceReserve` is held in ``out`` meanwhile and released
first, so that ``session.json`` can be finished on a disk the run filled.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from rich.console import Console

from rokuprof.bsprof.wall_unit import DEFAULT_WALL_UNIT
from rokuprof.capture.loop import CaptureConfig, CaptureSummary, DeviceCapture
from rokuprof.capture.signals import StopRequest, stop_on_signals
from rokuprof.capture.status import CaptureObserver, NullObserver
from rokuprof.capture.unfinished import end_failed_capture
from rokuprof.store.files import SpaceReserve
from rokuprof.store.layout import SessionStatus
from rokuprof.units import size as human_bytes
from rokuprof.views.live_log import PlainLog
from rokuprof.views.live_view import LiveView

VIEWS = ("auto", "live", "plain", "quiet")


def make_observer(
    view: str, console: Console, wall_unit: str = DEFAULT_WALL_UNIT
) -> CaptureObserver:
    if view == "auto":
        view = "live" if console.is_terminal else "plain"
    if view == "live":
        return LiveView(console, wall_unit=wall_unit)
    if view == "plain":
        return PlainLog(
            lambda line: console.print(line, markup=False, highlight=False, soft_wrap=True)
        )
    if view == "quiet":
        return NullObserver()
    raise ValueError(f"unknown view {view!r} (choose one of {', '.join(VIEWS)})")


async def watch(
    config: CaptureConfig,
    *,
    view: str = "auto",
    console: Console | None = None,
    stop: asyncio.Event | StopRequest | None = None,
    signals: bool = True,
    on_capture: Callable[[DeviceCapture], None] | None = None,
) -> CaptureSummary:
    """Capture runs of one device until stopped; return the summary. ``on_capture`` is given
    the capture loop before it starts (``profile`` marks moments and stops it through it)."""
    console = console or Console()
    observer = make_observer(view, console, config.chunk_settings.wall_unit)
    capture = DeviceCapture(config, observer=observer, stop=stop)
    if on_capture is not None:
        on_capture(capture)
    guard = stop_on_signals(capture.request_stop) if signals else contextlib.nullcontext()
    with guard, SpaceReserve(config.out) as reserve:
        try:
            if isinstance(observer, LiveView):
                observer.attach(
                    capture.status,
                    stop=capture.request_stop,
                    profiler=capture.profiler_command,
                )
                async with observer:
                    return await capture.run()
            return await capture.run()
        except Exception as error:  # a full disk, a bug: finish the run, say it in one line
            reserve.release()
            return await end_failed_capture(capture, error)


def summary_json(summary: CaptureSummary) -> dict[str, object]:
    """The closing report as JSON (``--json``): each session's ``session.json`` and path."""
    return {
        "host": summary.host,
        "device": summary.device,
        "stop_reason": summary.stop_reason,
        "problems": list(summary.problems),
        "error": summary.failure or None,
        "sessions": [{"path": str(s.path), **s.record.to_json()} for s in summary.sessions],
    }


def summary_lines(summary: CaptureSummary) -> list[str]:
    """The closing report: each session, its status and where it is."""
    lines = []
    n = len(summary.sessions)
    reason = f" ({summary.stop_reason})" if summary.stop_reason else ""
    device = summary.label or summary.device or summary.host
    lines.append(f"{n} run(s) captured from {device}{reason}")
    for s in summary.sessions:
        r = s.record
        lines.append(
            f"  {r.status:11} {human_bytes(r.bytes):>10}  {r.entries:>9,} entries  "
            f"{r.chunks:>3} chunk(s)  {s.path}"
        )
        if r.status != SessionStatus.COMPLETE and r.end_reason:
            lines.append(f"              {r.end_reason}")
        if r.exports:
            lines.append(f"              exports: {_exports_text(r.exports)}")
    for problem in summary.problems:
        lines.append(f"note: {problem}")
    return lines


def _exports_text(exports: dict[str, object]) -> str:
    """``capture.pb.gz (12.3 KiB), folded failed: ...``."""
    parts = []
    for fmt, e in exports.items():
        if not isinstance(e, dict):
            continue
        if "error" in e:
            parts.append(f"{fmt} failed: {e['error']}")
        else:
            notes = "".join(f"; {n}" for n in e.get("notes", []))
            parts.append(f"{e['file']} ({human_bytes(int(e['bytes']))}{notes})")
    return ", ".join(parts)
