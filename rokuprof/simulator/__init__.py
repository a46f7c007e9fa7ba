"""A fake Roku for tests, benchmarks and the demo, faithful to docs/simulator.md.

Public API::

    from rokuprof.simulator import SimulatedDevice, DeviceConfig, Fault

    cfg = DeviceConfig(host="127.0.0.1", ssdp_port=0, ecp_port=0, profiler_port=0,
                       console_port=0, serial="YN00AA000001", name="Sim Roku 1",
                       run_seconds=3.0, runs=1, seed=1, speed=10.0)
    async with SimulatedDevice(cfg) as dev:   # SSDP, ECP, console; launches if auto_launch
        dev.ssdp_port, dev.ecp_port, dev.profiler_port, dev.console_port   # bound ports
        await dev.wait_listening(timeout)     # a launched app waits for its profiler client
        await dev.launch()                    # like POST /launch/dev (no-op while one runs)
        await dev.home()                      # like POST /keypress/Home: the app exits
        await dev.cut(reset=True)             # drop the current stream now (RST or FIN)
        dev.add_fault(Fault("stall", after_bytes=500, run=0))
        dev.set_limited(True)                 # ECP limited mode (403 for keypresses)
        dev.remote_log                        # (monotonic, kind, value) of keys, launches, exit-app
        dev.runs                              # list of RunRecord (times, bytes, status, ...)
        dev.sent_bytes(0)                     # exact stream bytes of run 0
        await dev.wait_run_end(0, timeout)
        await dev.wait_idle(timeout)          # no app runs and none will be auto-launched
        dev.installer_port, dev.password      # the Application Installer (Digest, rokudev)
        dev.installed                         # the sideloaded app's manifest (None: built-in)
        dev.tracing.enabled, dev.tracing.client  # app tracing (Roku OS 15.1+, app_tracing=True)
        dev.runs[0].trace                     # what run 0's trace streamed (None: not traced)

The profiler port stays the same across runs and refuses connections between runs.

Time and randomness are inputs: ``DeviceConfig(clock=..., monotonic=..., token=...)`` (the wall
clock, the monotonic clock, hex tokens) and ``seed`` (each run's stream draws from
``cfg.stream_rng(run)``, its wall figures' noise, ``clock_noise``, from ``cfg.clock_seed(run)``);
nothing else in this package reads a clock or draws a random value.

Replay (cheap, fast devices for scale runs): ``DeviceConfig(replay=body, replay_rate=1e6)`` with
``body = ReplayBody.generate(30, rate=...)`` or ``ReplayBody.from_file("x.bsprof")``; one body is
shared by every device given it. ``RunRecord.behind(now)``, ``max_behind``: bytes behind schedule.
"""

from rokuprof._lazy import lazy_names
from rokuprof.device.constants import PROFILER_PATH

# Each name loads its module on first use: importing a pure part below the package (the app
# model, the runs' records) does not load the servers' asyncio and sockets.
_HOMES = {
    "DeviceConfig": "config",
    "Fault": "config",
    "ReplayBody": "replay",
    "ReplayError": "replay",
    "RunRecord": "runs",
    "SimulatedDevice": "device",
}
__getattr__ = lazy_names(__name__, _HOMES)
__all__ = [
    "PROFILER_PATH",
    "DeviceConfig",
    "Fault",
    "ReplayBody",
    "ReplayError",
    "RunRecord",
    "SimulatedDevice",
]
