"""A session with a Perfetto app trace of the same run, for the report's trace lanes
(test_report_trace*.py): ``capture.bsprof`` from the simulated app (report_helpers.stream) and a
``trace.perfetto-trace`` written with Google's protos (trace_helpers.TraceWriter) in the shapes
of Roku's synthetic traces, its clock snapshot placing it ``at`` seconds after the run's start.

The trace (times in ms from its first event): the render loop for ten frames, three of them
missed, one for each cause (48 -> 80 slow render, 130 -> 170 late to render, 170 -> 196 slow
swap); a task thread's two rendezvous on ``Video.content``; nested observers (one outermost);
script slices whose call stacks name the capture's own functions (``parseJSON`` and
``onKeyEvent``) and one naming nothing in it with a hostile name.
"""

from __future__ import annotations

from pathlib import Path

from report_helpers import HOSTILE, START, make_session, stream
from trace_helpers import INSTANT, MS, TraceWriter

RENDER, MAIN, TASK = 10, 12, 13
STACK_PARSE = "parseJSON pkg:/source/utils/json.brs:5"
STACK_KEY = "onKeyEvent pkg:/source/main.brs:141"
STACK_HOSTILE = f"{HOSTILE} pkg:/source/{HOSTILE}.brs:1"
#: Where the missed frames are, ms from the trace's first event, and their causes.
MISSED = [(48, 80, "slow render"), (130, 170, "late to render"), (170, 196, "slow swap")]


def app_trace(at: float | None = 1.0, *, extra: int = 0, interned: bool = True) -> bytes:
    """The trace's bytes; ``at``: seconds after the run's start its first event is at, by its
    clock snapshot (``None``: no snapshot); ``extra``: that many more 0.1 ms getField slices on
    the main thread, from 500 ms."""
    w = TraceWriter(interned=interned)
    if at is not None:
        # trace time base_ns is wall time START + at: REALTIME - BOOTTIME at one moment
        w.clock(0, (START + at) * 1000 - w.base_ns / MS)
    w.thread(RENDER, 100, "RenderThr:Main")
    w.thread(MAIN, 102, "BrightScript")
    w.thread(TASK, 103, f"TN:{HOSTILE}")
    work = {
        16: [(24, 25, "rendezvous-dequeue", {"ends_flows": (77,)})],
        48: [(54, 74, "render", {})],
        80: [(100, 104, "render", {})],
        130: [(134, 160, "consumeAllTasks", {}), (160, 164, "render", {})],
    }
    for t in (0, 16, 32, 48, 80, 130, 170, 196, 212, 228):
        w.slice(t, t + (18 if t == 170 else 2), RENDER, "swapBuffers")
        for a, b, name, kw in work.get(t, []):
            w.slice(a, b, RENDER, name, **kw)
    field = {"component": "Video", "name": "content"}
    w.begin(20, TASK, "roSGNode.getField", args=field)
    w.begin(20.2, TASK, "Rendezvous")
    w.slice(20.5, 20.6, TASK, "rendezvous-enqueue", flows=(77,))
    w.end(26, TASK)
    w.end(26.5, TASK)
    w.begin(30, TASK, "roSGNode.getField", args=field)
    w.slice(30, 31, TASK, "Rendezvous")
    w.end(31.2, TASK)
    for depth, a in enumerate((300, 302, 303), 1):
        w.begin(a, MAIN, "observer.callback", args={"fieldName": "focused", "depth": depth})
    for b in (304, 306, 310):
        w.end(b, MAIN)
    for t, stack, cpu in (
        (320, STACK_PARSE, 9000),
        (340, STACK_KEY, 1000),
        (360, STACK_HOSTILE, 5),
    ):
        w.slice(t, t + 10, MAIN, "ExecBrightScript", args={"callstack": stack, "cpu_us": cpu})
    w.event(INSTANT, 420, MAIN, "keyEvent", args={"key": "OK"})
    for k in range(extra):
        t = 500 + k * 0.2
        w.slice(t, t + 0.1, MAIN, "roSGNode.getField", args=field)
    return w.data()


def trace_session(directory: Path, trace: bytes | None, seconds: float = 6.0) -> Path:
    """A session directory: ``seconds`` of the simulated app, and ``trace`` beside it."""
    session = make_session(directory, stream(seconds))
    if trace is not None:
        (session / "trace.perfetto-trace").write_bytes(trace)
    return session
