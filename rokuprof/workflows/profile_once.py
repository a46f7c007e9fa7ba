"""One run of ``profile``: install, capture, drive and end it (:mod:`.profile_run`), say it,
write its report and, when its scenario repeats steps, judge it for leaks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from rokuprof.capture.signals import StopRequest
from rokuprof.device.errors import DeviceError
from rokuprof.device.installer import InstallerAuthError, InstallFailed
from rokuprof.exit_status import FAILED as EXIT_FAILED
from rokuprof.exit_status import USAGE
from rokuprof.export.model import ExportInput
from rokuprof.scenario.model import Iterations
from rokuprof.views.text import printable
from rokuprof.workflows.errors import Stop
from rokuprof.workflows.leak_check import LeakCheckError, LeakReport, leak_report
from rokuprof.workflows.profile_run import ProfileFailed, ProfilePlan, profile
from rokuprof.workflows.watch import summary_lines


@dataclass(frozen=True)
class RunOutcome:
    """What one run made: its session and status, its report and leak verdicts (``None``:
    none), and its capture as the report read it (``None`` when it could not be read)."""

    session: Path
    status: str
    report: Path | None
    leaks: LeakReport | None
    capture: ExportInput | None


async def one_run(
    plan: ProfilePlan,
    app_path: Path | None,
    out: Console,
    *,
    view: str,
    warn: Callable[[str], None],
    editor_url: str | None,
    label: str,
    stop: StopRequest,
) -> RunOutcome:
    """One install, run, report and (with iterations) leak check; the session, its status,
    its report, its leak verdicts and its capture as read (:class:`Stop` when the run could
    not be made)."""
    prefix = f"[{label}] " if label else ""

    def say(line: str) -> None:
        if view != "quiet":
            out.print(printable(prefix + line), markup=False, highlight=False, soft_wrap=True)

    try:
        result = await profile(plan, say=say, view=view, console=out, stop=stop, signals=False)
    except InstallerAuthError as error:
        raise Stop(error, USAGE) from None
    except InstallFailed as error:
        raise Stop(error, EXIT_FAILED) from None  # names the installer, quotes the device
    except ProfileFailed as error:
        raise Stop(error, USAGE if error.usage else EXIT_FAILED) from None
    except DeviceError as error:
        raise Stop(error, EXIT_FAILED) from None
    for line in summary_lines(result.summary):
        out.print(printable(prefix + line), markup=False, highlight=False, soft_wrap=True)
    if result.summary.failure:
        raise Stop(result.summary.failure, EXIT_FAILED)
    session = result.summary.sessions[0]
    # In a worker thread: another device of the series may be streaming meanwhile.
    report, leaks, inp = await asyncio.to_thread(
        _report_and_leaks, plan, session.path, app_path, editor_url, warn
    )
    if report is not None:
        out.print(
            f"{prefix}report: {printable(report)}", markup=False, highlight=False, soft_wrap=True
        )
    for line in leaks.lines() if leaks is not None else ():
        out.print(prefix + line, markup=False, highlight=False, soft_wrap=True)
    return RunOutcome(session.path, session.record.status, report, leaks, inp)


def _report_and_leaks(
    plan: ProfilePlan,
    session: Path,
    app_path: Path | None,
    editor_url: str | None,
    warn: Callable[[str], None],
) -> tuple[Path | None, LeakReport | None, ExportInput | None]:
    """The session's report, with the app's source (the one packaged) when it can be read,
    and, when the scenario repeats steps (``iterations``), its leak verdicts: from one reading
    of the capture, returned too (``None`` when it could not be read)."""
    from rokuprof.app.source import SourceError, open_source
    from rokuprof.export.report.session import load_session_capture, write_session_report

    wall_unit = plan.capture.chunk_settings.wall_unit
    try:
        inp = load_session_capture(session, wall_unit)
    except OSError as error:
        warn(f"cannot write the report into {session}: {error.strerror or error}")
        return None, None, None
    source = None
    if app_path is not None:
        try:
            source = open_source(app_path)
        except SourceError as error:
            warn(f"the report shows no source: {error}")
    report = None
    try:
        report = write_session_report(
            session, wall_unit=wall_unit, source=source, editor_url=editor_url, inp=inp
        )
    except OSError as error:
        warn(f"cannot write the report into {session}: {error.strerror or error}")
    return report, _leaks(plan, session, inp, warn), inp


def _leaks(
    plan: ProfilePlan, session: Path, inp: ExportInput, warn: Callable[[str], None]
) -> LeakReport | None:
    """With a scenario that repeats steps (``iterations``): the run's leak verdicts."""
    steps = plan.scenario.steps if plan.scenario is not None else ()
    if not any(isinstance(step, Iterations) for step in steps):
        return None
    try:
        report = leak_report(session, inp=inp)
    except LeakCheckError as error:
        warn(f"cannot judge leaks in {session}: {error}")
        return None
    return report if report.groups or report.notes else None
