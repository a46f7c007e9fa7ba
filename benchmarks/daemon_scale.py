"""Scale run: the daemon capturing N simulated Rokus for a few minutes, uploading to a fake Sentry.

The simulated devices and the fake Sentry run in this process; the daemon runs as a real
``rokuprof daemon`` subprocess, whose CPU time and memory are read from ``/proc`` every few
seconds. Loopback only.

Lag: every few seconds the bytes the devices have sent are compared with the bytes the daemon
has received (its ``rokuprof_device_bytes_total`` metric). A daemon that keeps up shows a small,
flat lag; one that falls behind shows it growing. Baseline: the same measurement with one device
first (``--baseline-seconds``), so CPU per MB at scale is reported as a ratio to it.

    python benchmarks/daemon_scale.py --devices 32 --seconds 180
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from daemon_helpers import write_config_file  # noqa: E402
from fake_sentry import FakeSentry  # noqa: E402

from rokuprof.simulator import DeviceConfig, SimulatedDevice  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")


def proc_figures(pid: int) -> tuple[float, int, int]:
    """(CPU seconds, current RSS bytes, peak RSS bytes) of ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    status = Path(f"/proc/{pid}/status").read_text()
    values = {
        line.split(":")[0]: int(line.split()[1]) * 1024
        for line in status.splitlines()
        if line.startswith(("VmRSS", "VmHWM"))
    }
    return cpu, values.get("VmRSS", 0), values.get("VmHWM", 0)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def received_bytes(metrics_port: int) -> int | None:
    """Sum of the daemon's per-device ``rokuprof_device_bytes_total`` (None if unreachable)."""
    try:
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return None
    return sum(
        int(float(line.rsplit(" ", 1)[1]))
        for line in text.splitlines()
        if line.startswith("rokuprof_device_bytes_total{")
    )


def sent_bytes(devices: list[SimulatedDevice]) -> int:
    return sum(run.bytes_sent for dev in devices for run in dev.runs)


async def main(n: int, seconds: float, run_seconds: float) -> dict:
    work = Path(tempfile.mkdtemp(prefix="rokuprof-scale-"))
    out = work / "out"
    async with FakeSentry() as sentry:
        sims = [
            SimulatedDevice(
                DeviceConfig(
                    serial=f"SCALE{i:03d}",
                    seed=i,
                    runs=None,
                    run_seconds=run_seconds,
                    run_gap=1.0,
                    keep_bytes=False,
                )
            )
            for i in range(n)
        ]
        for dev in sims:
            await dev.start()
        config = work / "rokuprof.toml"
        metrics_port = free_port()
        write_config_file(config, out, sims, sentry.dsn, metrics_listen=f"127.0.0.1:{metrics_port}")
        log = (work / "daemon.log").open("wb")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "rokuprof", "daemon", "--config", str(config),
            stdout=asyncio.subprocess.DEVNULL, stderr=log, cwd=ROOT,
        )  # fmt: skip
        start = time.monotonic()
        samples = []
        try:
            while time.monotonic() - start < seconds:
                await asyncio.sleep(5)
                sent = sent_bytes(sims)
                got = await asyncio.to_thread(received_bytes, metrics_port)
                lag = None if got is None else max(0, sent - got)
                samples.append((time.monotonic() - start, *proc_figures(proc.pid), lag))
                t, cpu, rss, _, _ = samples[-1]
                shown = "?" if lag is None else f"{lag / 1024:8.1f} KiB"
                print(
                    f"{t:6.0f} s  cpu {cpu:7.1f} s  rss {rss / 2**20:6.1f} MiB  "
                    f"sent {sent / 2**20:7.2f} MiB  lag {shown}",
                    flush=True,
                )
            cpu_end, _, peak = proc_figures(proc.pid)
            proc.send_signal(signal.SIGTERM)
            stop_t0 = time.monotonic()
            code = await asyncio.wait_for(proc.wait(), 120)
            stop_seconds = time.monotonic() - stop_t0
        finally:
            log.close()
            if proc.returncode is None:
                proc.kill()
            for dev in sims:
                await dev.stop()
        elapsed = samples[-1][0] if samples else 0.0
        sessions = [json.loads(p.read_text()) for p in out.glob("*/*/session.json")]
        lags = [s[4] for s in samples if s[4] is not None]
        half = len(lags) // 2
        captured = sum(s["bytes"] for s in sessions)
        result = {
            "devices": n,
            "seconds": round(elapsed, 1),
            "daemon_cpu_seconds": round(cpu_end, 1),
            "daemon_cpu_percent_of_one_core": round(100 * cpu_end / max(elapsed, 1e-9), 1),
            "daemon_peak_rss_mib": round(peak / 2**20, 1),
            "exit_code": code,
            "stop_seconds": round(stop_seconds, 1),
            "sessions": len(sessions),
            "bytes_captured": captured,
            "daemon_cpu_seconds_per_mb": round(cpu_end / max(captured / 1e6, 1e-9), 2),
            "lag_kib_first_half_max": round(max(lags[:half] or [0]) / 1024, 1),
            "lag_kib_second_half_max": round(max(lags[half:] or [0]) / 1024, 1),
            "statuses": {
                st: sum(1 for s in sessions if s["status"] == st)
                for st in sorted({s["status"] for s in sessions})
            },
            "chunks_on_disk": len(list(out.glob("*/*/chunks/*.json"))),
            "chunks_accepted": len(set(sentry.chunk_ids())),
            "work_dir": str(work),
        }
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--run-seconds", type=float, default=90.0, help="app seconds per run")
    parser.add_argument(
        "--baseline-seconds", type=float, default=40.0, help="one-device baseline (0: skip)"
    )
    args = parser.parse_args()
    base = None
    if args.baseline_seconds > 0:
        print(f"baseline: 1 device for {args.baseline_seconds:.0f} s", flush=True)
        base = asyncio.run(main(1, args.baseline_seconds, args.run_seconds))
        print(json.dumps(base, indent=2), flush=True)
    print(f"scale: {args.devices} devices for {args.seconds:.0f} s", flush=True)
    result = asyncio.run(main(args.devices, args.seconds, args.run_seconds))
    print(json.dumps(result, indent=2))
    if base:
        ratio = result["daemon_cpu_seconds_per_mb"] / max(base["daemon_cpu_seconds_per_mb"], 1e-9)
        print(
            f"CPU per MB captured: {result['daemon_cpu_seconds_per_mb']} s with "
            f"{args.devices} devices vs {base['daemon_cpu_seconds_per_mb']} s with 1 device "
            f"({ratio:.2f}x); lag max {result['lag_kib_first_half_max']} KiB (first half) vs "
            f"{result['lag_kib_second_half_max']} KiB (second half)"
        )
