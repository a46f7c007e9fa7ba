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

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from rich.console import Console

from rokuprof.app.manifest import MANIFEST_KEYS_DOC, ProfilerKeys
from rokuprof.app.package import PackagedApp, PackageError, package_app
from rokuprof.capture.config import DeviceAddress, capture_config
from rokuprof.capture.exports import export_formats
from rokuprof.capture.record import FAILED, TRUNCATED
from rokuprof.capture.signals import StopRequest, stop_on_signals
from rokuprof.device.installer import read_password
from rokuprof.exit_status import FAILED as EXIT_FAILED
from rokuprof.exit_status import INCOMPLETE
from rokuprof.exit_status import OK as EXIT_OK
from rokuprof.export.aggregate import AnyInput
from rokuprof.export.diff import compare
from rokuprof.scenario.model import ScenarioError, load_scenario
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.units import size
from rokuprof.verdict.judge import UNKNOWN, Judgement, judge_models
from rokuprof.verdict.rules import Rules
from rokuprof.verdict.series import Series
from rokuprof.views.diff_view import render_diff
from rokuprof.views.text import printable
from rokuprof.views.verdict_view import say_judgements, say_spread
from rokuprof.workflows.errors import Stop
from rokuprof.workflows.gate import gate_status, lengths_differ
from rokuprof.workflows.profile_once import one_run
from rokuprof.workflows.profile_run import ProfilePlan
from rokuprof.workflows.series_load import LoadOne, is_session, load_runs
from rokuprof.workflows.series_record import new_series_dir, write_series_record
from rokuprof.workflows.series_runs import NO_CI, CiOutputs, DeviceRuns, ci_outputs
from rokuprof.workflows.trace_gate import compare_sessions, say_trace


@dataclass(frozen=True)
class Prepared:
    plans: tuple[ProfilePlan, ...]  # one a device, in the order given
    baseline: Series | None
    baseline_label: str
    #: The app's source (its directory or zip): the report shows the hot functions' lines.
    app_path: Path | None = None
    #: The baseline's session directory (its app trace, if any, is compared too).
    baseline_session: Path | None = None
    #: The baseline when it is one capture: the one-against-one diff table is drawn from it.
    baseline_input: AnyInput | None = None

    @property
    def plan(self) -> ProfilePlan:
        return self.plans[0]


@dataclass(frozen=True)
class Repeats:
    """How many runs a device makes: ``repeat``, then one more at a time while a verdict is
    unknown, up to ``max_repeat``."""

    repeat: int = 1
    max_repeat: int = 1

    @property
    def series(self) -> bool:
        return self.max_repeat > 1


#: Opens a capture given by name (a ``.bsprof`` file or a session directory) and lays it out:
#: ``(capture, how messages name it)``; ``quiet``: no progress shown. Raises :class:`Stop` when
#: the input cannot be read as a capture.
Load = LoadOne


def prepare(
    app_path: Path,
    *,
    hosts: tuple[str, ...],
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
    series = None
    single = None
    if baseline is not None:
        try:
            runs, single = load_runs(baseline, load)
        except Stop as error:
            raise Stop(f"--baseline: {error}", error.status) from None
        series = Series(baseline, tuple(runs))
    installer_port, ecp_port, profiler_port, console_port = ports
    plans = []
    for host in hosts:
        device = DeviceAddress(host, profiler_port, ecp_port, console_port)
        capture = capture_config(
            device, out=out, chunks=chunks, runs=1, exports=formats, trace=trace
        )
        plans.append(
            ProfilePlan(
                app=packaged,
                capture=capture,
                password=password,
                installer_port=installer_port,
                scenario=steps,
                duration=duration,
                start_timeout=start_timeout,
            )
        )
    session = Path(baseline) if single is not None and is_session(Path(baseline)) else None
    label = series.runs[0].label if series is not None and single is not None else baseline or ""
    return Prepared(tuple(plans), series, label, app_path, session, single)


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
    rules: Rules,
    enforce: bool,
    load: Load,
    warn: Callable[[str], None],
    repeats: Repeats = Repeats(),
    ci: CiOutputs = NO_CI,
    open_report: Callable[[Path], None] | None = None,
    editor_url: str | None = None,
) -> int:
    """Run the plans (``repeats`` times on each device, the devices in parallel); print each
    run's summary and report, the series' spread, the verdicts; the exit status
    (:class:`Stop` when a run could not be made). ``warn`` says what went wrong without
    stopping; ``open_report`` shows the (last) report when given; ``enforce``: the verdicts
    decide the status (``--fail-over``)."""
    plans = prepared.plans
    series_dir = None
    if repeats.series or len(plans) > 1:
        series_dir = new_series_dir(plans[0].capture.out, time.time())
        plans = tuple(replace(p, capture=replace(p.capture, out=series_dir)) for p in plans)
        out.print(f"series: {printable(series_dir)}", markup=False, highlight=False)
    several = len(plans) > 1
    shown = "plain" if several and view not in ("quiet", "plain") else view
    runs = DeviceRuns()

    stop = StopRequest()  # Ctrl-C ends every device's run, and no run starts after it

    async def run_on(plan: ProfilePlan, count: int) -> None:
        for _ in range(count):
            if stop.requested:
                return
            n = len(runs.sessions.get(plan.capture.host, [])) + 1
            outcome = await one_run(
                plan, prepared.app_path, out, view=shown, warn=warn, editor_url=editor_url,
                label=_run_label(plan, n, repeats, several), stop=stop,
            )  # fmt: skip
            runs.add(plan.capture.host, outcome)

    out.print(printable(packaged_line(plans[0].app)), markup=False, highlight=False)
    with stop_on_signals(stop.request):
        await asyncio.gather(*(run_on(plan, repeats.repeat) for plan in plans))
        rejudge = partial(_judge, prepared, runs, rules, load)
        judgements = await _more_runs(plans, runs, rejudge(), repeats, out, run_on, stop, rejudge)
    judged = runs.series(load)
    if len(judged.runs) > 1:
        say_spread(out, judged)
    if open_report is not None and runs.reports:
        open_report(runs.reports[-1])
    trace_failed = False
    if judgements is not None:
        trace_failed = _say_verdicts(prepared, runs, judgements, out, enforce, load, rules)
    if series_dir is not None:
        write_series_record(series_dir, judged, judgements, rules, runs.all(), runs.leaks)
    ci_outputs(ci, rules, judged, judgements, series_dir, runs, warn)
    if enforce and (runs.leaked() or trace_failed):
        return EXIT_FAILED
    if enforce and judgements is not None and (status := gate_status(judgements)) != EXIT_OK:
        return status
    if any(st in (TRUNCATED, FAILED) for st in runs.statuses):
        return INCOMPLETE
    return EXIT_OK


async def _more_runs(
    plans: tuple[ProfilePlan, ...],
    runs: DeviceRuns,
    judgements: dict[str, Judgement] | None,
    repeats: Repeats,
    out: Console,
    run_on: Callable[[ProfilePlan, int], Awaitable[None]],
    stop: StopRequest,
    rejudge: Callable[[], dict[str, Judgement] | None],
) -> dict[str, Judgement] | None:
    """``--max-repeat``: one more run on each device whose model has an unknown verdict, then
    judge again, until none has or each has made ``max_repeat`` runs (or Ctrl-C); the last
    judgements."""
    while judgements is not None and repeats.series and not stop.requested:
        undecided = [
            plan
            for plan in plans
            if len(runs.sessions.get(plan.capture.host, [])) < repeats.max_repeat
            and _unknown_on(judgements, runs.models.get(plan.capture.host, ""))
        ]
        if not undecided:
            break
        out.print(
            f"verdict unknown: one more run on {len(undecided)} device(s) "
            f"(at most {repeats.max_repeat} each)",
            markup=False,
            highlight=False,
        )
        await asyncio.gather(*(run_on(plan, 1) for plan in undecided))
        judgements = rejudge()
    return judgements


def _run_label(plan: ProfilePlan, n: int, repeats: Repeats, several: bool) -> str:
    parts = []
    if several:
        parts.append(plan.capture.host)
    if repeats.series:
        parts.append(f"run {n}")
    return " ".join(parts)


def _judge(
    prepared: Prepared, runs: DeviceRuns, rules: Rules, load: Load
) -> dict[str, Judgement] | None:
    if prepared.baseline is None:
        return None
    return judge_models(prepared.baseline, runs.series(load), rules)


def _unknown_on(judgements: dict[str, Judgement], model: str) -> bool:
    j = judgements.get(model)
    return j is not None and bool(j.of(UNKNOWN))


def _say_verdicts(
    prepared: Prepared,
    runs: DeviceRuns,
    judgements: dict[str, Judgement],
    out: Console,
    enforce: bool,
    load: Load,
    rules: Rules,
) -> bool:
    """The one-against-one diff table (when both sides are one capture), every verdict, and
    the app traces' figures; True when the traces' figures fail the gate."""
    sessions = runs.all()
    out.print("")
    if prepared.baseline_input is not None and len(sessions) == 1:
        run, label = runs.first or load(str(sessions[0]), True)
        comparison = compare(
            prepared.baseline_input, run, per_second=lengths_differ(prepared.baseline_input, run)
        )
        render_diff(comparison, out, labels=(prepared.baseline_label, label), top=15)
        out.print("")
    say_judgements(out, judgements, enforce=enforce, fail_over=rules.fail_over)
    if prepared.baseline_session is None or len(sessions) != 1:
        return False
    traces = compare_sessions(prepared.baseline_session, sessions[0])
    failed = say_trace(out, traces, rules.fail_over if enforce else None) if traces else []
    return bool(failed)
