"""One run of ``profile``: install, capture, drive and end it (:mod:`.profile_run`), say it,
write its report and, when its scenario repeats steps, judge it for leaks."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

from rokuprof.capture.signals import StopRequest
from rokuprof.device.errors import DeviceError
from rokuprof.device.installer import InstallerAuthError, InstallFailed
from rokuprof.exit_status import FAILED as EXIT_FAILED
from rokuprof.exit_status import USAGE
from rokuprof.scenario.model import Iterations
from rokuprof.views.text import printable
from rokuprof.workflows.errors import Stop
from rokuprof.workflows.leak_check import LeakCheckError, LeakReport, leak_report
from rokuprof.workflows.profile_run import ProfileFailed, ProfilePlan, profile
from rokuprof.workflows.watch import summary_lines


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
) -> tuple[Path, str, Path | None, LeakReport | None]:
    """One install, run, report and (with iterations) leak check; the session, its status,
    its report and its leak verdicts (:class:`Stop` when the run could not be made)."""
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
    wall_unit = plan.capture.chunk_settings.wall_unit
    # In a worker thread: another device of the series may be streaming meanwhile.
    report = await asyncio.to_thread(
        write_report, session.path, wall_unit, app_path, editor_url, warn
    )
    if report is not None:
        out.print(
            f"{prefix}report: {printable(report)}", markup=False, highlight=False, soft_wrap=True
        )
    leaks = await asyncio.to_thread(_leaks, plan, session.path, warn)
    for line in leaks.lines() if leaks is not None else ():
        out.print(prefix + line, markup=False, highlight=False, soft_wrap=True)
    return session.path, session.record.status, report, leaks


def _leaks(plan: ProfilePlan, session: Path, warn: Callable[[str], None]) -> LeakReport | None:
    """With a scenario that repeats steps (``iterations``): the run's leak verdicts."""
    steps = plan.scenario.steps if plan.scenario is not None else ()
    if not any(isinstance(step, Iterations) for step in steps):
        return None
    try:
        report = leak_report(session)
    except (OSError, LeakCheckError) as error:
        warn(f"cannot judge leaks in {session}: {error}")
        return None
    return report if report.groups or report.notes else None


def write_report(
    session: Path,
    wall_unit: str,
    app_path: Path | None,
    editor_url: str | None,
    warn: Callable[[str], None],
) -> Path | None:
    """The session's report, with the app's source (the one packaged) when it can be read."""
    from rokuprof.app.source import SourceError, open_source
    from rokuprof.export.report.session import write_session_report

    source = None
    if app_path is not None:
        try:
            source = open_source(app_path)
        except SourceError as error:
            warn(f"the report shows no source: {error}")
    try:
        return write_session_report(
            session, wall_unit=wall_unit, source=source, editor_url=editor_url
        )
    except OSError as error:
        warn(f"cannot write the report into {session}: {error.strerror or error}")
        return None
