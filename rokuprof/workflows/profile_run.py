"""``rokuprof profile`` as a library call: install an app, capture its run, drive it, end it.

The order of one run, each step bounded in time:

1. the packaged app (:mod:`rokuprof.app.package`) goes to the device's Application Installer;
   a refused password or an install failure ends it there (nothing else happens);
2. the capture loop ``watch`` uses starts at once (``runs=1``): the installed app, launched by
   the install (or by ECP when the device kept an identical copy), waits for it;
3. once the run streams, the scenario's steps go to the device over ECP (marks are told to the
   capture), or it waits ``duration`` seconds, or, with neither, until the app exits by itself;
4. the app is asked to exit (``/exit-app/dev``, Home on older firmware), so the device ends the
   stream with its footer and the run is ``complete``.

What is said along the way goes to ``say`` (one line each, device text escaped by the caller's
view). Ctrl-C stops the capture as ``watch`` does (the run ends ``interrupted``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rich.console import Console

from rokuprof.app.package import PackagedApp
from rokuprof.capture.loop import CaptureConfig, CaptureSummary, DeviceCapture
from rokuprof.capture.signals import StopRequest
from rokuprof.capture.stop import StopCause
from rokuprof.capture.tasks import cancel
from rokuprof.device.ecp import EcpClient
from rokuprof.device.errors import DeviceError
from rokuprof.device.installer import InstallerClient, InstallOutcome
from rokuprof.scenario.model import Scenario
from rokuprof.scenario.runner import run_scenario
from rokuprof.workflows.watch import watch


@dataclass(frozen=True)
class ProfilePlan:
    """One ``rokuprof profile`` run: what to install, how to capture and drive it."""

    app: PackagedApp
    capture: CaptureConfig  # runs=1: one app run
    password: str = field(repr=False)
    installer_port: int = 80
    scenario: Scenario | None = None
    duration: float | None = None  # without a scenario: exit the app after this long
    start_timeout: float = 30.0  # seconds for the installed app's stream to start
    end_timeout: float = 15.0  # seconds for the device to end the stream after the exit
    install_timeout: float = 120.0  # the upload and the device's install, in total


class ProfileFailed(Exception):
    """The run could not be made (install refused, the app never streamed): one line."""

    def __init__(self, message: str, *, usage: bool = False) -> None:
        super().__init__(message)
        self.usage = usage  # a problem found before any work (the password): exit 2


#: How long the install waits for the trace socket to open (enable, then connect).
TRACE_READY_SECONDS = 10.0


@dataclass
class ProfileResult:
    summary: CaptureSummary
    install: InstallOutcome
    ended_by: str = ""  # "exit-app", "home", "the app" (it exited by itself) or "stopped"
    marks: list[tuple[str, float]] = field(default_factory=list)


async def install(plan: ProfilePlan) -> InstallOutcome:
    """Sideload the packaged app (raises the installer's errors)."""
    cfg = plan.capture
    async with InstallerClient(
        cfg.host, plan.password, port=plan.installer_port, timeout=plan.install_timeout
    ) as installer:
        return await installer.sideload(plan.app.zip_bytes)


async def profile(
    plan: ProfilePlan,
    *,
    say: Callable[[str], None],
    view: str = "auto",
    console: Console | None = None,
    stop: StopRequest | None = None,
    signals: bool = True,
    clock: Callable[[], float] = time.time,
) -> ProfileResult:
    """Install, capture, drive and end one run (see the module docstring)."""
    cfg = plan.capture
    captures: list[DeviceCapture] = []

    def capture() -> asyncio.Future:
        return asyncio.ensure_future(
            watch(
                cfg,
                view=view,
                console=console,
                stop=stop,
                signals=signals,
                on_capture=captures.append,
            )
        )

    task = None
    if cfg.trace:  # enable -> connect -> launch: the install launches the app
        task = capture()
        await _trace_ready(captures, task, say)
    try:
        outcome = await install(plan)
    except BaseException:
        if task is not None:
            await cancel(task)
        raise
    say(f"installed: {outcome.message}")
    if task is None:
        task = capture()
    result = ProfileResult(CaptureSummary(cfg.host, ""), outcome)
    try:
        async with EcpClient(cfg.host, cfg.ecp_port, cfg.ecp_timeout) as ecp:
            if outcome.kind == "identical":
                say("the device kept the identical copy: launching it")
                await ecp.launch("dev")
            capture = await _streaming(captures, task, plan.start_timeout)
            if capture is not None:
                result.ended_by = await _drive(plan, capture, ecp, task, say, result, clock)
    except DeviceError as error:
        say(f"error: {error}")
        if captures:
            captures[0].request_stop(StopCause.REQUESTED, f"device error: {error}")
    finally:
        if not task.done() and captures and not captures[0].stop.requested:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(task), plan.end_timeout)
        if not task.done() and captures:
            captures[0].request_stop(StopCause.REQUESTED, "the device did not end the run")
        result.summary = await task
    if not result.summary.sessions and not result.summary.failure:
        raise ProfileFailed(
            f"the app never streamed its profile within {plan.start_timeout:g} s "
            "(is it the app that was installed, with bsprof_data_dest=network?)"
        )
    return result


async def _trace_ready(
    captures: list[DeviceCapture], task: asyncio.Future, say: Callable[[str], None]
) -> None:
    """Wait (bounded) until the capture's trace socket is open, so that the launch the
    install makes is traced; without it the run is still profiled, and that is said."""
    deadline = asyncio.get_running_loop().time() + TRACE_READY_SECONDS
    while asyncio.get_running_loop().time() < deadline and not task.done():
        tap = captures[0].trace_tap if captures else None
        if tap is not None and (tap.connected.is_set() or tap.unsupported):
            return
        await asyncio.sleep(0.05)
    say(f"the app trace socket did not open within {TRACE_READY_SECONDS:g} s: launching anyway")


async def _streaming(
    captures: list[DeviceCapture], task: asyncio.Future, timeout: float
) -> DeviceCapture | None:
    """The capture once its run streams (None when the capture ended first); after ``timeout``
    seconds without a stream the capture is stopped."""
    deadline = time.monotonic() + timeout
    while not task.done():
        if captures and captures[0].status.state.in_run:
            return captures[0]
        if time.monotonic() >= deadline:
            if captures:
                captures[0].request_stop(StopCause.REQUESTED, "the app never streamed")
            return None
        await asyncio.sleep(0.05)
    return None


async def _drive(
    plan: ProfilePlan,
    capture: DeviceCapture,
    ecp: EcpClient,
    task: asyncio.Future,
    say: Callable[[str], None],
    result: ProfileResult,
    clock: Callable[[], float],
) -> str:
    """The scenario (or the wait) while the run streams, then the app's exit; how it ended."""

    def on_mark(label: str, when: float) -> None:
        result.marks.append((label, when))
        capture.mark(label, when)
        say(f"mark: {label}")

    async def steps() -> None:
        if plan.scenario is not None:
            say(f"scenario: {len(plan.scenario.steps)} step(s) from {plan.scenario.source}")
            await run_scenario(plan.scenario, ecp, on_mark=on_mark, clock=clock)
        elif plan.duration is not None:
            await asyncio.sleep(plan.duration)
        else:
            await asyncio.shield(task)  # until the app exits by itself, or Ctrl-C

    driver = asyncio.ensure_future(steps())
    done, _ = await asyncio.wait({driver, task}, return_when=asyncio.FIRST_COMPLETED)
    if task in done:  # the app exited (or the capture was stopped) before the steps ended
        driver.cancel()
        await asyncio.gather(driver, return_exceptions=True)
        return "stopped" if capture.stop.requested else "the app"
    driver.result()  # a device error in a step propagates
    if plan.scenario is None and plan.duration is None:
        return "the app"
    used = await ecp.exit_app("dev")
    say(f"app exit requested ({'POST /exit-app/dev' if used == 'exit-app' else 'Home key'})")
    return used
