"""Options several commands share, spelled the same everywhere (see the conventions in root.py):
``-j``/``--json``, ``-q``/``--quiet``, and enumerations whose choices typer lists in help."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

JsonFlag = Annotated[
    bool, typer.Option("--json", "-j", help="Print the result as JSON on standard output.")
]
QuietFlag = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the summary.")]
TraceFlag = Annotated[
    bool,
    typer.Option(
        "--trace",
        help="Also capture the app's Perfetto trace (Roku OS 15.1+) into each session as "
        "trace.perfetto-trace: tracing is enabled for the dev app and its socket opened before "
        "the app launches. Firmware without app tracing is said once; the .bsprof goes on.",
    ),
]


def choice(name: str, *values: str) -> type[StrEnum]:
    """A ``StrEnum`` of ``values`` (each member's name and value are the same): typer validates
    it and lists the choices in help, e.g. ``View = choice("View", "auto", "live", "plain")``."""
    return StrEnum(name, {value: value for value in values})  # type: ignore[return-value]


#: How ``watch`` and ``demo`` show a run while it streams.
View = choice("View", "auto", "live", "plain")


def fail_over_option(help_text: str) -> typer.models.OptionInfo:
    """``--fail-over PCT`` of ``diff`` and ``profile`` (the gate; each says when it applies)."""
    return typer.Option(metavar="PCT", min=0, help=help_text)


#: ``diff --fail-over`` and ``profile --fail-over``: functions under this share are ignored.
MinShareOption = Annotated[
    float,
    typer.Option(
        metavar="PCT",
        min=0,
        max=100,
        help="Verdicts skip a function below PCT percent of its run's total of a figure "
        "(in both sides).",
    ),
]
#: The verdicts' other floors (:class:`rokuprof.verdict.judge.Rules`), shared by diff and profile.
CounterOverOption = Annotated[
    float,
    typer.Option(
        metavar="PCT",
        min=0,
        help="A counter (CPU operations) regressed when its median grew by more than PCT "
        "percent (and past its runs' spread), even with one run a side.",
    ),
]
MinEffectOption = Annotated[
    float,
    typer.Option(
        metavar="K",
        min=0,
        help="A change counts only when it is at least K times the runs' noise (the larger "
        "interquartile range).",
    ),
]
AlphaOption = Annotated[
    float,
    typer.Option(
        metavar="P",
        min=0,
        max=1,
        help="A clock (wall time) or byte figure regressed only when the smaller of the "
        "Mann-Whitney U and Kolmogorov-Smirnov p-values is below P; else unknown.",
    ),
]
#: ``--summary`` and ``--junit`` (CI outputs of diff and profile).
SummaryOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        help="Append the verdicts as Markdown to FILE (e.g. $GITHUB_STEP_SUMMARY).",
    ),
]
JunitOption = Annotated[
    Path | None,
    typer.Option(
        metavar="FILE",
        help="Write the verdicts as JUnit XML (a failure per regression, skipped: unknown).",
    ),
]
#: ``watch`` and ``profile``: how often a run's Sentry chunks are written.
ChunkSecondsOption = Annotated[
    float,
    typer.Option(metavar="SECONDS", help="Write Sentry chunks this often (seconds, <= 60)."),
]


def _port(help_text: str) -> typer.models.OptionInfo:
    return typer.Option(min=1, max=65535, metavar="PORT", help=help_text)


#: The device's ports, for the commands that talk to a Roku (defaults: device/constants.py).
EcpPortOption = Annotated[int, _port("ECP port (serial number, app, launches, keys).")]
ProfilerPortOption = Annotated[int, _port("Profiler stream port (bsprof).")]
ConsolePortOption = Annotated[int, _port("Debug console port (profiler status, chanperf).")]
InstallerPortOption = Annotated[int, _port("Application Installer port.")]

#: ``report`` and ``profile``: the link of each ``file:line`` in the report.
EditorUrlOption = Annotated[
    str | None,
    typer.Option(
        "--editor-url",
        metavar="TEMPLATE",
        help="The report's link of each file:line, with {path} (the local file) and {line} "
        "(default with the app's source: vscode://file/{path}:{line}).",
    ),
]

#: ``watch`` and ``pull``: the device, as an argument.
HostArgument = Annotated[
    str, typer.Argument(help="The Roku's address (IP, IPv6 bare or in [], or host name).")
]


def _out_dir(help_text: str) -> typer.models.OptionInfo:
    return typer.Option("--out", "-o", metavar="DIR", help=help_text)


#: ``watch`` and ``pull`` write a session per run, ``demo`` and ``profile`` one session.
SessionsDirOption = Annotated[Path, _out_dir("Where sessions are written.")]
SessionDirOption = Annotated[Path, _out_dir("Where the session is written.")]

#: ``watch``, ``demo`` and ``profile``: how a run is shown while it streams.
ViewOption = Annotated[
    View, typer.Option(help="auto: a live view on a terminal, log lines otherwise.")
]

#: ``report`` and ``profile``.
OpenFlag = Annotated[
    bool, typer.Option("--open", help="Open the report in the default web browser.")
]


def capture_argument(metavar: str, help_text: str) -> typer.models.ArgumentInfo:
    """A capture named on the command line (a .bsprof file, ``-`` or a session directory)."""
    return typer.Argument(metavar=metavar, help=help_text)


#: ``export`` and ``report``: the one capture they read.
InputArgument = Annotated[
    str, capture_argument("INPUT", "A .bsprof file, `-` (standard input) or a session directory.")
]
