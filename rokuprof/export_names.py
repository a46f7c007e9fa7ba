"""The names the exporters answer to: each format's name, file suffix and one-line description,
the ``folded`` metrics and the figures ``diff`` sorts by. Their one home, light (no imports), so
the commands' help texts and choices list them without loading the exporters
(:mod:`rokuprof.export` re-exports them)."""

from __future__ import annotations

from dataclasses import dataclass

#: ``folded`` weights: self wall time, CPU, calls, allocated bytes, live bytes at the end.
METRICS = ("wall", "cpu", "calls", "alloc_bytes", "live_bytes")


@dataclass(frozen=True, slots=True)
class ExporterInfo:
    name: str
    suffix: str  # file name suffix (a directory name suffix when multi_file)
    binary: bool
    multi_file: bool
    description: str
    module: str  # rokuprof.export.<module> has export(inp, **options) -> bytes | dict
    #: one file per thread, ``<stem>.<thread><suffix>`` (the module's ``parts(inp)`` gives them
    #: in pieces, keyed by the thread's part of the name)
    per_thread: bool = False


FORMATS: dict[str, ExporterInfo] = {
    info.name: info
    for info in (
        ExporterInfo(
            "pprof",
            ".pb.gz",
            True,
            False,
            "gzip protobuf for go tool pprof, Pyroscope, Parca, speedscope",
            "pprof",
        ),
        ExporterInfo(
            "speedscope",
            ".speedscope.json",
            False,
            False,
            "speedscope: timeline plus wall, CPU and allocation profiles per thread",
            "speedscope",
        ),
        ExporterInfo(
            "chrome-trace",
            ".trace.json",
            False,
            False,
            "Trace Event JSON for Perfetto, chrome://tracing, DevTools, FlameScope",
            "chrome_trace",
        ),
        ExporterInfo(
            "cpuprofile",
            ".cpuprofile",
            False,
            False,
            "CDP Profiler.Profile, one file per thread: VS Code, DevTools, speedscope, FlameScope",
            "cpuprofile",
            per_thread=True,
        ),
        ExporterInfo(
            "nflxprofile",
            ".nflxprofile",
            True,
            False,
            "FlameScope's protobuf profile",
            "nflxprofile",
        ),
        ExporterInfo(
            "folded",
            ".folded",
            False,
            False,
            "folded stacks (flamegraph.pl, speedscope, Pyroscope), one metric",
            "folded",
        ),
        ExporterInfo(
            "sentry-v1",
            ".sentry-v1",
            False,
            True,
            "Sentry transaction profiles (V1): profile, transaction and envelope per 30 s",
            "sentry_v1",
        ),
        ExporterInfo(
            "perfetto",
            ".perfetto-trace",
            True,
            False,
            "Perfetto trace for ui.perfetto.dev: a session's app trace plus the timeline as tracks",
            "perfetto",
        ),
        ExporterInfo(
            "report",
            ".report.html",
            False,
            False,
            "rokuprof's own self-contained HTML report (the same as `rokuprof report`)",
            "report",
        ),
    )
}


#: The report's link of ``file:line`` when none is given (VS Code opens the file at the line).
DEFAULT_EDITOR_URL = "vscode://file/{path}:{line}"

#: Every figure ``diff`` compares, in display order; the JSON names them so.
DIFF_FIGURES = (
    "self_wall",
    "total_wall",
    "self_cpu",
    "total_cpu",
    "calls",
    "self_alloc_bytes",
    "total_alloc_bytes",
    "self_live_bytes",
    "total_live_bytes",
)
#: ``diff``'s sort keys: ``change`` (the default, the function's score) or one figure.
SORT_KEYS = ("change", *DIFF_FIGURES)
