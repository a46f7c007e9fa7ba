"""``rokuprof simulate``: run simulated Roku devices on this machine."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rokuprof.cli import exits
from rokuprof.cli.root import app
from rokuprof.device.constants import INSTALLER_USER
from rokuprof.units import parse_size

if TYPE_CHECKING:
    from rokuprof.simulator import DeviceConfig, SimulatedDevice
    from rokuprof.simulator.runs import RunRecord


def _print_table(devices: list[SimulatedDevice], as_json: bool) -> None:
    if as_json:
        for d in devices:
            row = {
                "serial": d.config.serial,
                "name": d.config.name,
                "host": d.advertise_host,
                "ecp": d.ecp_port,
                "profiler": d.profiler_port,
                "console": d.console_port,
                "ssdp": d.ssdp_port,
                "installer": d.installer_port,
                "password": d.password,  # the simulator's: a test fixture, not a secret
            }
            print(json.dumps(row), flush=True)
        return
    print(f"{'serial':14}{'ecp':>7}{'profiler':>10}{'console':>9}{'ssdp':>7}  name", flush=True)
    for d in devices:
        print(
            f"{d.config.serial:14}{d.ecp_port:>7}{d.profiler_port:>10}{d.console_port:>9}"
            f"{d.ssdp_port:>7}  {d.config.name}",
            flush=True,
        )
    host = devices[0].advertise_host if devices else "-"
    print(f"host {host}; Ctrl-C to stop", flush=True)
    for d in devices:  # the simulator's password is a fixture to type in, not a secret
        print(
            f"{d.config.serial} Application Installer: port {d.installer_port}, user "
            f"{INSTALLER_USER}, developer password {d.password}",
            flush=True,
        )


def _print_run(device: SimulatedDevice, run: RunRecord, as_json: bool) -> None:
    delay = run.connect_delay
    if as_json:
        row = {
            "serial": device.config.serial,
            "run": run.index,
            "status": run.status,
            "exit": run.exit_reason,
            "bytes": run.bytes_sent,
            "entries": run.entries,
            "connect_delay": delay,
        }
        print(json.dumps(row), flush=True)
        return
    waited = f", app waited {delay:.2f} s for its client" if delay is not None else ""
    print(
        f"{device.config.serial} run {run.index}: {run.status} ({run.exit_reason}), "
        f"{run.bytes_sent} bytes, {run.entries} entries{waited}",
        flush=True,
    )


def _replay_config(
    base: DeviceConfig, path: Path | None, rate_text: str | None, seconds: float, as_json: bool
) -> DeviceConfig:
    """``base`` in replay mode: the body read or generated once, shared by every device."""
    from rokuprof.simulator import ReplayBody, ReplayError
    from rokuprof.simulator.replay import DEFAULT_RATE, app_rate_for

    rate = DEFAULT_RATE
    if rate_text is not None:
        try:
            rate = float(parse_size(rate_text))
        except (TypeError, ValueError) as exc:
            raise typer.BadParameter(str(exc), param_hint="--replay-rate") from None
        if rate <= 0:
            raise typer.BadParameter("must be more than 0 bytes", param_hint="--replay-rate")
    if path is not None:
        try:
            body = ReplayBody.from_file(path)
        except ReplayError as exc:
            exits.fail(exc)
    else:
        body = ReplayBody.generate(
            seconds,
            seed=base.seed,
            rate=app_rate_for(rate, base.rate),
            line_data=base.line_data,
            memory_ops=base.memory_ops,
        )
    if not as_json:
        print(
            f"replaying {body.source}: {len(body) / 1e6:.1f} MB at {rate / 1e6:g} MB/s per "
            f"device ({len(body) / rate:.1f} s per run)",
            flush=True,
        )
    return replace(base, replay=body, replay_rate=rate)


def _slower(values: list[str], option: str = "--slower") -> tuple[tuple[str, float], ...]:
    """``--slower renderTile=4`` → ``(("renderTile", 4.0),)`` (also ``--heavier``'s)."""
    out = []
    for value in values:
        name, sep, factor = value.partition("=")
        try:
            number = float(factor)
        except ValueError:
            number = 0.0
        if not sep or not name.strip() or not number > 0 or number == float("inf"):
            raise typer.BadParameter(
                f"{value!r}: expected FUNCTION=FACTOR with a factor > 0", param_hint=option
            )
        out.append((name.strip(), number))
    return tuple(out)


@app.command()
def simulate(
    devices: Annotated[int, typer.Option(min=1, metavar="N", help="How many devices.")] = 1,
    host: Annotated[
        str, typer.Option(metavar="HOST", help="Address every service binds to.")
    ] = "127.0.0.1",
    base_port: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=65535,
            metavar="PORT",
            help="Device i uses P+10i (ECP), +1 (profiler), +2 (console), +3 (SSDP), "
            "+4 (Application Installer). "
            "Default: ports chosen by the OS.",
        ),
    ] = None,
    run_seconds: Annotated[float, typer.Option(min=0.01, help="App time of one run.")] = 30.0,
    runs: Annotated[
        int | None, typer.Option(min=0, help="Runs per device (default: forever).")
    ] = None,
    run_gap: Annotated[float, typer.Option(min=0, help="Seconds between runs.")] = 2.0,
    speed: Annotated[float, typer.Option(min=0.01, help="App seconds per real second.")] = 1.0,
    seed: Annotated[int, typer.Option(help="Seed of the synthetic app content.")] = 1,
    rate: Annotated[float, typer.Option(min=0.01, help="App activity (data rate) factor.")] = 1.0,
    lines: Annotated[bool, typer.Option("--lines/--no-lines", help="Per-line data.")] = True,
    memory: Annotated[bool, typer.Option("--memory/--no-memory", help="Memory operations.")] = True,
    pause_on_start: Annotated[
        bool, typer.Option(help="Start each run paused (bsprof_pause_on_start=1).")
    ] = False,
    limited: Annotated[bool, typer.Option(help="Put ECP in limited mode.")] = False,
    auto_launch: Annotated[
        bool,
        typer.Option(help="Launch the app by itself (else: POST /launch/dev to launch)."),
    ] = True,
    app_tracing: Annotated[
        bool,
        typer.Option(
            help="App tracing with Perfetto (Roku OS 15.1+): POST /perfetto/enable/dev and "
            "the ws://HOST:ECP/perfetto-session trace socket. --no-app-tracing plays older "
            "firmware (both 404).",
        ),
    ] = True,
    duration: Annotated[
        float | None, typer.Option(min=0, help="Stop after this many seconds.")
    ] = None,
    slower: Annotated[
        list[str] | None,
        typer.Option(
            metavar="FUNCTION=FACTOR",
            help="Play another build of the app: FUNCTION's time costs FACTOR times as much "
            "(repeatable; e.g. renderTile=4, to try a profile --fail-over gate).",
        ),
    ] = None,
    heavier: Annotated[
        list[str] | None,
        typer.Option(
            metavar="FUNCTION=FACTOR",
            help="Play another build of the app: FUNCTION counts FACTOR times the CPU "
            "operations in the same wall time (repeatable; a change the clock does not show).",
        ),
    ] = None,
    clock_noise: Annotated[
        float,
        typer.Option(
            min=0,
            max=0.99,
            metavar="F",
            help="Each launch's wall times within ±F of the noiseless ones, as a device's clock "
            "varies from run to run (CPU operation counts do not); 0 turns it off.",
        ),
    ] = 0.04,
    replay: Annotated[
        Path | None,
        typer.Option(
            metavar="FILE",
            help="Replay this .bsprof's entries in every run instead of running the app live "
            "(at --replay-rate, 1MB per second by default).",
        ),
    ] = None,
    replay_rate: Annotated[
        str | None,
        typer.Option(
            metavar="RATE",
            help="Replay mode: stream bytes per second per device (1MB, 512KiB). Without "
            "--replay the entries are generated once by the app (--seed, --rate, --lines, "
            "--memory) and shared by every device.",
        ),
    ] = None,
    replay_seconds: Annotated[
        float,
        typer.Option(min=0.1, help="Replay mode without --replay: app seconds to generate."),
    ] = 10.0,
    as_json: Annotated[
        bool, typer.Option("--json", "-j", help="One JSON object per line instead of tables.")
    ] = False,
) -> None:
    """Run simulated Roku devices (SSDP, ECP, debug console, profiler stream, Application
    Installer) until Ctrl-C or until every device has finished its runs. Each run waits for a
    profiler client. The installer's developer password is printed (user rokudev); an app
    sideloaded there is run as its manifest says (bsprof_enable, bsprof_data_dest, ...).

    With --replay or --replay-rate each run streams pre-encoded entries at a set byte rate
    (cheap: many fast devices fit on one core) instead of running the app live.

    Exit status: 0 stopped (Ctrl-C, --duration, or every run done); 2 bad usage, ports out of
    range, an address or port that cannot be bound, or a --replay file that cannot be read.
    """
    import asyncio  # the command's, not its help's

    from rokuprof.simulator import DeviceConfig  # the command's, not its help's
    from rokuprof.simulator.fleet import PORT_OFFSETS, PORT_STRIDE, fleet_configs, run_fleet

    if base_port is not None:
        last = base_port + PORT_STRIDE * (devices - 1) + max(PORT_OFFSETS.values())
        if last > 65535:
            exits.fail(
                f"--base-port {base_port} with {devices} device(s) needs ports up to {last} "
                f"(at most 65535): use --base-port {65535 - last + base_port} or lower"
            )
    base = DeviceConfig(
        host=host,
        run_seconds=run_seconds,
        runs=runs,
        run_gap=run_gap,
        speed=speed,
        seed=seed,
        rate=rate,
        line_data=lines,
        memory_ops=memory,
        pause_on_start=pause_on_start,
        ecp_mode="limited" if limited else "enabled",
        auto_launch=auto_launch,
        app_tracing=app_tracing,
        app_slower=_slower(slower or []),
        app_heavier=_slower(heavier or [], "--heavier"),
        clock_noise=clock_noise,
        keep_bytes=False,  # runs may go on forever: do not keep every stream in memory
    )
    if replay is not None or replay_rate is not None:
        base = _replay_config(base, replay, replay_rate, replay_seconds, as_json)
    configs = fleet_configs(devices, base, base_port)
    try:
        asyncio.run(
            run_fleet(
                configs,
                on_started=lambda ds: _print_table(ds, as_json),
                on_run_end=lambda d, r: _print_run(d, r, as_json),
                duration=duration,
            )
        )
    except KeyboardInterrupt:
        pass  # Ctrl-C: the devices were stopped on the way out
    except OSError as exc:  # a port in use, an address not on this machine
        exits.fail(f"cannot start the simulated devices: {exc}")
    raise typer.Exit(exits.OK)
