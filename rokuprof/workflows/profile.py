"""``rokuprof profile`` end to end: what it checks before it installs anything, and how it
says the run.

:func:`prepare` turns the options into a :class:`~rokuprof.workflows.profile_run.ProfilePlan` and
the loaded baseline, stopping (:class:`~rokuprof.workflows.errors.Stop`, exit status 2) before
any work on anything wrong (no password, a bad scenario or app, an unreadable baseline).
:func:`run_profile` runs the plan, prints the run's summary, writes the report, applies the gate
and returns the exit status. How a capture given by name is opened (with progress on a
terminal) is the caller's: it hands in a ``load`` function.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from rokuprof.app.manifest import MANIFEST_KEYS_DOC, ProfilerKeys
from rokuprof.app.package import PackagedApp, PackageError, package_app
from rokuprof.capture.config import DeviceAddress, capture_config
from rokuprof.capture.exports import export_formats
from rokuprof.capture.record import FAILED, TRUNCATED
from rokuprof.device.errors import DeviceError
from rokuprof.device.installer import InstallerAuthError, InstallFailed, read_password
from rokuprof.exit_status import FAILED as EXIT_FAILED
from rokuprof.exit_status import INCOMPLETE, OK, USAGE
from rokuprof.export.aggregate import AnyInput
from rokuprof.scenario.model import ScenarioError, load_scenario
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.units import size
from rokuprof.views.text import printable
from rokuprof.workflows.errors import Stop
from rokuprof.workflows.gate import gate
from rokuprof.workflows.profile_run import ProfileFailed, ProfilePlan, profile
from rokuprof.workflows.trace_gate import compare_sessions, say_trace
from rokuprof.workflows.watch import summary_lines


@dataclass(frozen=True)
class Prepared:
    plan: ProfilePlan
    baseline: AnyInput | None
    baseline_label: str
    #: The app's source (its directory or zip): the report shows the hot functions' lines.
    app_path: Path | None = None
    #: The baseline's session directory (its app trace, if any, is compared too).
    baseline_session: Path | None = None


#: Opens a capture given by name (a ``.bsprof`` file or a session directory) and lays it out:
#: ``(capture, how messages name it)``; ``quiet``: no progress shown. Raises :class:`Stop` when
#: the input cannot be read as a capture.
Load = Callable[[str, bool], tuple[AnyInput, str]]


def prepare(
    app_path: Path,
    *,
    host: str,
    password_file: Path | None,
    environ: Mapping[str, str],
    scenario: Path | None,
    duration: float | None,
    keys: tuple[bool, bool, float | None],
    out: Path,
    chunks: ChunkSettings,
    exports: str | None,
    ports: tuple[int, int, int, int],
    start_timeout: float,
    baseline: str | None,
    load: Load,
    trace: bool = False,
) -> Prepared:
    """Everything checked and loaded before the device is touched (:class:`Stop`, exit status
    2, on a problem)."""
    try:
        password = read_password(password_file, environ)
    except (OSError, ValueError) as error:
        raise Stop(f"cannot read the developer password: {error}") from None
    if not password:
        raise Stop(
            "no developer password: set ROKU_DEV_PASSWORD or pass --password-file FILE "
            "(it is never read from the command line)"
        )
    try:
        steps = load_scenario(scenario) if scenario is not None else None
    except ScenarioError as error:
        raise Stop(error) from None
    mem, lines, ratio = keys
    try:
        packaged = package_app(app_path, ProfilerKeys(mem=mem, lines=lines, sample_ratio=ratio))
    except (PackageError, ValueError) as error:
        raise Stop(error) from None
    try:
        formats = export_formats(exports.split(",")) if exports else ()
    except ValueError as error:
        raise Stop(f"--export: {error}") from None
    loaded = None
    label = ""
    if baseline is not None:
        try:
            loaded, label = load(baseline, True)
        except Stop as error:
            raise Stop(f"--baseline: {error}", error.status) from None
    installer_port, ecp_port, profiler_port, console_port = ports
    device = DeviceAddress(host, profiler_port, ecp_port, console_port)
    capture = capture_config(device, out=out, chunks=chunks, runs=1, exports=formats, trace=trace)
    plan = ProfilePlan(
        app=packaged,
        capture=capture,
        password=password,
        installer_port=installer_port,
        scenario=steps,
        duration=duration,
        start_timeout=start_timeout,
    )
    session = Path(baseline) if baseline is not None and Path(baseline).is_dir() else None
    return Prepared(plan, loaded, label, app_path, session)


def packaged_line(app: PackagedApp) -> str:
    """``packaged NAME VERSION: N file(s), SIZE, with KEY=VALUE, ...`` (the profiler keys set)."""
    version = f" {app.version}" if app.version else ""
    keys = ", ".join(
        f"{key}={app.manifest[key]}" for key, _, _ in MANIFEST_KEYS_DOC if key in app.manifest
    )
    zipped = size(len(app.zip_bytes))
    return f"packaged {app.title}{version}: {app.files} file(s), {zipped}, with {keys}"


async def run_profile(
    prepared: Prepared,
    *,
    view: str,
    out: Console,
    fail_over: float | None,
    min_share: float,
    load: Load,
    warn: Callable[[str], None],
    open_report: Callable[[Path], None] | None = None,
    editor_url: str | None = None,
) -> int:
    """Run the plan; print the summary, the report's path and the gate; the exit status
    (:class:`Stop` when the run could not be made). ``warn`` says what went wrong without
    stopping; ``open_report`` shows the report when given."""
    plan = prepared.plan

    def say(line: str) -> None:
        if view != "quiet":
            out.print(printable(line), markup=False, highlight=False, soft_wrap=True)

    say(packaged_line(plan.app))
    try:
        result = await profile(plan, say=say, view=view, console=out)
    except InstallerAuthError as error:
        raise Stop(error, USAGE) from None
    except InstallFailed as error:
        raise Stop(error, EXIT_FAILED) from None  # names the installer, quotes the device
    except ProfileFailed as error:
        raise Stop(error, USAGE if error.usage else EXIT_FAILED) from None
    except DeviceError as error:
        raise Stop(error, EXIT_FAILED) from None
    for line in summary_lines(result.summary):
        out.print(printable(line), markup=False, highlight=False, soft_wrap=True)
    if result.summary.failure:
        raise Stop(result.summary.failure, EXIT_FAILED)
    session = result.summary.sessions[0]
    wall_unit = plan.capture.chunk_settings.wall_unit
    report = _write_report(session.path, wall_unit, prepared.app_path, editor_url, warn)
    if report is not None:
        out.print(f"report: {printable(report)}", markup=False, highlight=False, soft_wrap=True)
        if open_report is not None:
            open_report(report)
    failed = _gate(prepared, session.path, out, fail_over, min_share, load, warn)
    if failed:
        return EXIT_FAILED
    if session.record.status in (TRUNCATED, FAILED):
        return INCOMPLETE
    return OK


def _write_report(
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


def _gate(
    prepared: Prepared,
    session: Path,
    out: Console,
    fail_over: float | None,
    min_share: float,
    load: Load,
    warn: Callable[[str], None],
) -> bool:
    if prepared.baseline is None:
        return False
    try:
        run, label = load(str(session), False)
    except Stop as error:
        warn(f"cannot compare with the baseline: {error}")
        return False
    out.print("")
    failed = gate(
        prepared.baseline,
        run,
        out,
        labels=(prepared.baseline_label, label),
        fail_over=fail_over,
        min_share=min_share,
    )
    traces = compare_sessions(prepared.baseline_session, session)
    failed_trace = say_trace(out, traces, fail_over) if traces is not None else []
    return bool(failed) or bool(failed_trace)
