"""Scale run: the daemon capturing N simulated Rokus for a few minutes, uploading to a fake Sentry.

The simulated devices and the fake Sentry run in this process; the daemon runs as a real
``rokuprof daemon`` subprocess, whose CPU time and memory are read from ``/proc`` every few
seconds. Loopback only.

    python benchmarks/daemon_scale.py --devices 32 --seconds 180
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

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


def write_config(path: Path, out: Path, devices: list[SimulatedDevice], dsn: str) -> None:
    lines = [
        "[capture]",
        f'out = "{out}"',
        "chunk_seconds = 60",
        "[sentry]",
        f'dsn = "{dsn}"',
        "[metrics]",
        'listen = "127.0.0.1:0"',
    ]
    for dev in devices:
        lines += [
            "[[devices]]",
            'host = "127.0.0.1"',
            f'name = "{dev.config.serial}"',
            f"profiler_port = {dev.profiler_port}",
            f"ecp_port = {dev.ecp_port}",
            f"console_port = {dev.console_port}",
        ]
    path.write_text("\n".join(lines) + "\n")


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
        write_config(config, out, sims, sentry.dsn)
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
                samples.append((time.monotonic() - start, *proc_figures(proc.pid)))
                t, cpu, rss, _ = samples[-1]
                print(f"{t:6.0f} s  cpu {cpu:7.1f} s  rss {rss / 2**20:6.1f} MiB", flush=True)
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
        result = {
            "devices": n,
            "seconds": round(elapsed, 1),
            "daemon_cpu_seconds": round(cpu_end, 1),
            "daemon_cpu_percent_of_one_core": round(100 * cpu_end / max(elapsed, 1e-9), 1),
            "daemon_peak_rss_mib": round(peak / 2**20, 1),
            "exit_code": code,
            "stop_seconds": round(stop_seconds, 1),
            "sessions": len(sessions),
            "bytes_captured": sum(s["bytes"] for s in sessions),
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
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main(args.devices, args.seconds, args.run_seconds)), indent=2))
