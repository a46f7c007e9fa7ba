"""Scale run: a real ``rokuprof daemon`` capturing N replay devices, uploading to a fake Sentry.

The devices (simulator replay mode: one pre-encoded body shared by all, streamed at a set byte
rate each) and the fake Sentry run in this process, on loopback; the daemon runs as a
subprocess whose CPU time and memory are read from ``/proc``. Every few seconds it prints, per
run: the daemon's CPU and RSS, bytes **offered** (what the devices' schedules asked for:
sent + still owed) against bytes **absorbed** (what the daemon says it received), the worst
device's lag behind its own schedule, and the upload backlog. Backpressure cannot hide a daemon
that falls behind: a device that cannot write keeps its schedule and reports the bytes it owes.

At the end the devices stop (their runs end with footers), the daemon gets SIGTERM and drains
its uploads; then the figures are checked against the targets:

* every byte offered was absorbed: no device ever fell more than ``--max-behind`` seconds of
  data behind its schedule, and every byte sent is in the daemon's archives;
* daemon CPU-seconds per MB at most ``--target-cpu-per-mb``;
* RSS flat: the second half's peak within 10 % (and 16 MiB) of the first half's;
* every chunk written was uploaded by shutdown.

A one-device run first (``--baseline-seconds``) gives the CPU-per-MB ratio in the same run.
``ROKUPROF_PURE_PYTHON=1`` (or ``--pure``) runs the daemon on the pure-Python core.

    python benchmarks/daemon_scale.py --devices 32 --rate 1MB --seconds 180
    python benchmarks/daemon_scale.py --pure --devices 8 --seconds 60
    python benchmarks/daemon_scale.py --quick          # 3 devices, 10 s: a smoke run

Before/after in the same run: ``--before DIR`` runs the same plan with the daemon of another
checkout (a directory holding ``rokuprof/``, e.g. ``git archive <commit> rokuprof | tar -x -C
DIR`` plus the built ``rokuprof/_native/*.so``), alternating with this one ``--rounds`` times,
and prints each round's CPU-per-MB ratio. ``--profile FILE`` runs the (last) daemon under
cProfile; ``--body-cache FILE`` keeps the generated body for the next run. Each run's work
directory is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pickle
import shutil
import signal
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from daemon_helpers import write_config_file  # noqa: E402
from fake_sentry import FakeSentry  # noqa: E402

from rokuprof.daemon.config import parse_size  # noqa: E402
from rokuprof.simulator import DeviceConfig, ReplayBody, SimulatedDevice  # noqa: E402
from rokuprof.simulator.replay import app_rate_for  # noqa: E402
from rokuprof.store.spool import Spool  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
MB = 1e6


@dataclass
class Plan:
    devices: int
    seconds: float
    rate: float  # bytes per second per device
    body_seconds: float  # app seconds of the shared body (a run lasts about that long)
    chunk_seconds: float
    max_in_flight: int
    sentry_delay: float
    sample_every: float
    pure: bool
    max_behind: float = 0.5  # seconds of data a device may fall behind its schedule
    target_cpu: float | None = 0.03  # daemon CPU-seconds per MB (None: not checked)


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


def scrape(port: int) -> dict[str, dict[str, float]] | None:
    """The daemon's metrics we use: {name: {device label or "": value}} (None: unreachable)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return None
    wanted = ("rokuprof_device_bytes_total", "rokuprof_spool_pending_chunks")
    found: dict[str, dict[str, float]] = {name: {} for name in wanted}
    for line in text.splitlines():
        name = line.split("{", 1)[0].split(" ", 1)[0]
        if name in found:
            label = line.split('device="', 1)[1].split('"', 1)[0] if 'device="' in line else ""
            found[name][label] = float(line.rsplit(" ", 1)[1])
    return found


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def run(
    plan: Plan,
    body: ReplayBody,
    say=print,
    *,
    tree: Path | None = None,
    profile: Path | None = None,
    keep: bool = False,
) -> dict:
    """One run; ``tree``: the daemon's code from another checkout (``rokuprof/`` in it, e.g. a
    ``git archive`` of an earlier commit); ``profile``: run the daemon under cProfile, its
    stats written to that file when it exits; ``keep``: leave the work directory (archives,
    chunks, the daemon's log) in place instead of deleting it (about 1 MB per MB sent)."""
    work = Path(tempfile.mkdtemp(prefix="rokuprof-scale-"))
    out = work / "out"
    cpu0 = time.process_time()
    async with FakeSentry(delay=plan.sentry_delay) as sentry:
        sims = [
            SimulatedDevice(
                DeviceConfig(
                    serial=f"SCALE{i:03d}",
                    runs=None,
                    run_gap=0.5,
                    keep_bytes=False,
                    replay=body,
                    replay_rate=plan.rate,
                )
            )
            for i in range(plan.devices)
        ]
        for dev in sims:
            await dev.start()
        config, port = work / "rokuprof.toml", free_port()
        write_config_file(
            config,
            out,
            sims,
            sentry.dsn,
            chunk_seconds=plan.chunk_seconds,
            metrics_listen=f"127.0.0.1:{port}",
            environment="bench",
            max_in_flight=plan.max_in_flight,
        )
        env = dict(os.environ)
        if plan.pure:
            env["ROKUPROF_PURE_PYTHON"] = "1"
        code_root = ROOT if tree is None else tree.resolve()
        env["PYTHONPATH"] = os.pathsep.join(
            [str(code_root)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        )
        wrap = [] if profile is None else ["-m", "cProfile", "-o", str(profile.resolve())]
        log = (work / "daemon.log").open("wb")
        proc = await asyncio.create_subprocess_exec(
            sys.executable, *wrap, "-m", "rokuprof", "daemon", "--config", str(config),
            stdout=asyncio.subprocess.DEVNULL, stderr=log, cwd=code_root, env=env,
        )  # fmt: skip
        start = time.monotonic()
        samples: list[dict] = []
        max_behind = 0
        worst: dict[str, float] = {}
        try:
            while True:
                await asyncio.sleep(plan.sample_every)
                now = time.monotonic()
                t = now - start
                metrics = await asyncio.to_thread(scrape, port)
                cpu, rss, _ = proc_figures(proc.pid)
                offered = sum(r.offered(now) for d in sims for r in d.runs)
                behind = max((r.behind(now) for d in sims for r in d.runs), default=0)
                max_behind = max(
                    [max_behind, behind] + [r.max_behind for d in sims for r in d.runs]
                )
                absorbed = None if metrics is None else sum(
                    metrics["rokuprof_device_bytes_total"].values()
                )  # fmt: skip
                pending = None if metrics is None else sum(
                    metrics["rokuprof_spool_pending_chunks"].values()
                )  # fmt: skip
                samples.append(
                    {"t": t, "cpu": cpu, "rss": rss, "offered": offered, "absorbed": absorbed,
                     "behind": behind, "pending": pending}
                )  # fmt: skip
                gap = "?" if absorbed is None else f"{(offered - absorbed) / 1024:8.0f} KiB"
                say(
                    f"{t:6.0f} s  cpu {cpu:6.1f} s  rss {rss / 2**20:6.1f} MiB  offered "
                    f"{offered / MB:8.1f} MB  not absorbed {gap}  worst lag now "
                    f"{behind / 1024:6.0f} KiB  backlog {'?' if pending is None else int(pending)}"
                    f" chunk(s)  uploaded {len(sentry.accepted())}"
                )
                if t >= plan.seconds:
                    break
            # the end of the window: who was behind, and by how much
            for dev in sims:
                worst[dev.config.serial] = max(
                    (max(r.max_behind, r.behind(now)) for r in dev.runs), default=0
                )
            cpu_end, _, peak = proc_figures(proc.pid)
            offered_end = samples[-1]["offered"]
            absorbed_end = samples[-1]["absorbed"]
            for dev in sims:  # runs end with end marker and footer
                await dev.stop()
            sent = {d.config.serial: sum(r.bytes_sent for r in d.runs) for d in sims}
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:  # the daemon reads what is still in buffers
                metrics = await asyncio.to_thread(scrape, port)
                got = metrics["rokuprof_device_bytes_total"] if metrics else {}
                if all(got.get(s, 0) >= n for s, n in sent.items()):
                    break
                await asyncio.sleep(0.2)
            cpu_stop = proc_figures(proc.pid)[0]
            proc.send_signal(signal.SIGTERM)
            stop_t0 = time.monotonic()
            code = await asyncio.wait_for(proc.wait(), 120)
            stop_seconds = time.monotonic() - stop_t0
        finally:
            log.close()
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            for dev in sims:
                await dev.stop()
        archived: dict[str, int] = {}
        statuses: dict[str, int] = {}
        for path in out.glob("*/*/session.json"):
            record = json.loads(path.read_text())
            device = path.parent.parent.name
            archived[device] = archived.get(device, 0) + int(record["bytes"])
            statuses[record["status"]] = statuses.get(record["status"], 0) + 1
        _, spool = Spool(out).scan()
        chunks_written = len(list(out.glob("*/*/chunks/*.json")))
        accepted = sentry.chunk_ids()
        bench_cpu = time.process_time() - cpu0
    elapsed = samples[-1]["t"]
    half = len(samples) // 2
    rss_first = max((s["rss"] for s in samples[:half]), default=0)
    rss_second = max((s["rss"] for s in samples[half:]), default=0)
    total_sent = sum(sent.values())
    behind_limit = plan.rate * plan.max_behind
    result = {
        "tree": str(code_root),
        "core": "pure Python" if plan.pure else _core(),
        "devices": plan.devices,
        "rate_mb_per_s": plan.rate / MB,
        "seconds": round(elapsed, 1),
        "body_mb": round(len(body) / MB, 2),
        "offered_mb": round(offered_end / MB, 2),
        "absorbed_mb": round((absorbed_end or 0) / MB, 2),
        "worst_device_max_behind_kib": round(max(worst.values(), default=0) / 1024, 1),
        "devices_behind_over_limit": sorted(s for s, b in worst.items() if b > behind_limit),
        "sent_mb": round(total_sent / MB, 2),
        "archived_mb": round(sum(archived.values()) / MB, 2),
        "devices_not_fully_archived": sorted(s for s, n in sent.items() if archived.get(s) != n),
        "daemon_cpu_seconds": round(cpu_stop, 1),
        "daemon_cpu_percent_of_one_core": round(100 * cpu_end / max(elapsed, 1e-9), 1),
        "daemon_cpu_seconds_per_mb": round(cpu_stop / max(total_sent / MB, 1e-9), 4),
        "bench_process_cpu_seconds_per_mb": round(bench_cpu / max(total_sent / MB, 1e-9), 4),
        "daemon_rss_mib_first_half_max": round(rss_first / 2**20, 1),
        "daemon_rss_mib_second_half_max": round(rss_second / 2**20, 1),
        "daemon_peak_rss_mib": round(peak / 2**20, 1),
        "exit_code": code,
        "stop_seconds": round(stop_seconds, 1),
        "sessions": statuses,
        "chunks_written": chunks_written,
        "chunks_uploaded": len(set(accepted)),
        "chunks_sent_twice": len(accepted) - len(set(accepted)),
        "chunks_pending_at_shutdown": spool.pending,
        "backlog_max_chunks": max((s["pending"] or 0 for s in samples), default=0),
        "work_dir": str(work) if keep else None,
    }
    if not keep:
        shutil.rmtree(work, ignore_errors=True)
    result["checks"] = {
        "every byte offered absorbed": not result["devices_behind_over_limit"]
        and not result["devices_not_fully_archived"],
        "cpu per MB": plan.target_cpu is None
        or result["daemon_cpu_seconds_per_mb"] <= plan.target_cpu,
        "flat rss": rss_second <= max(rss_first * 1.10, rss_first + 16 * 2**20),
        "every chunk uploaded": spool.pending == 0
        and result["chunks_uploaded"] == chunks_written
        and code == 0,
    }
    return result


def _brief(result: dict) -> dict:
    """The figures of one run worth a line while the next one runs."""
    keys = ("tree", "daemon_cpu_seconds_per_mb", "worst_device_max_behind_kib", "sent_mb")
    return {k: result[k] for k in keys} | {"checks": result["checks"]}


def _body(plan: Plan, cache: Path | None) -> ReplayBody:
    """The shared body: generated (about a minute for 30 s at 1 MB/s), or read back from
    ``cache`` when it holds the same plan's body."""
    rate = app_rate_for(plan.rate)
    key = (plan.body_seconds, 1, rate)
    if cache is not None and cache.exists():
        with cache.open("rb") as f:
            found_key, body = pickle.load(f)
        if found_key == key:
            return body
    body = ReplayBody.generate(plan.body_seconds, seed=1, rate=rate)
    if cache is not None:
        part = cache.with_name(cache.name + ".part")
        with part.open("wb") as f:
            pickle.dump((key, body), f, protocol=pickle.HIGHEST_PROTOCOL)
        part.replace(cache)
    return body


def _core() -> str:
    from rokuprof.profile.engine import describe

    return describe()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--rate", default="1MB", help="bytes per second per device (1MB)")
    parser.add_argument("--body-seconds", type=float, default=30.0, help="run length (about)")
    parser.add_argument("--chunk-seconds", type=float, default=10.0)
    parser.add_argument("--max-in-flight", type=int, default=4)
    parser.add_argument("--sentry-delay", type=float, default=0.05, help="fake Sentry's RTT")
    parser.add_argument("--baseline-seconds", type=float, default=30.0, help="1 device; 0: skip")
    parser.add_argument("--max-behind", type=float, default=0.5, help="seconds of data")
    parser.add_argument(
        "--target-cpu-per-mb", type=float, default=0.018, help="issue 30: at 32 x 1 MB/s"
    )
    parser.add_argument("--pure", action="store_true", help="daemon on the pure-Python core")
    parser.add_argument(
        "--quick", action="store_true", help="3 devices x 200 KB/s for 10 s (no CPU target)"
    )
    parser.add_argument("--json", action="store_true", help="only the result as one JSON line")
    parser.add_argument(
        "--tree", type=Path, help="run the daemon from this checkout (a dir holding rokuprof/)"
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="also run the scale plan with this checkout (e.g. a git archive of an earlier "
        "commit), alternating with --tree, and print the CPU-per-MB ratio after/before",
    )
    parser.add_argument("--rounds", type=int, default=1, help="with --before: pairs of runs")
    parser.add_argument(
        "--profile", type=Path, help="cProfile the daemon of the (last) scale run into this file"
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep each run's work directory (its path is printed)"
    )
    parser.add_argument(
        "--body-cache", type=Path, help="keep the generated body in this file (pickle) and reuse it"
    )
    args = parser.parse_args()
    pure = args.pure or os.environ.get("ROKUPROF_PURE_PYTHON") == "1"
    plan = Plan(
        devices=args.devices,
        seconds=args.seconds,
        rate=float(parse_size(args.rate)),
        body_seconds=args.body_seconds,
        chunk_seconds=args.chunk_seconds,
        max_in_flight=args.max_in_flight,
        sentry_delay=args.sentry_delay,
        sample_every=5.0,
        pure=pure,
        max_behind=args.max_behind,
        target_cpu=args.target_cpu_per_mb,
    )
    baseline_seconds = args.baseline_seconds
    if args.quick:
        plan.devices, plan.seconds, plan.rate = 3, 10.0, 200_000.0
        plan.body_seconds, plan.chunk_seconds, plan.sample_every = 4.0, 2.0, 1.0
        plan.target_cpu = None  # start-up dominates a 10 s run: not a CPU figure
        baseline_seconds = 0.0
    say = (lambda *a: print(*a, file=sys.stderr, flush=True)) if args.json else (
        lambda *a: print(*a, flush=True)
    )  # fmt: skip
    t0 = time.process_time()
    body = _body(plan, args.body_cache)
    say(
        f"body: {body.source}: {len(body) / MB:.1f} MB, {len(body) / plan.rate:.1f} s per run "
        f"at {plan.rate / MB:g} MB/s (generated in {time.process_time() - t0:.1f} s CPU, once)"
    )
    base = None
    if baseline_seconds > 0:
        say(f"baseline: 1 device for {baseline_seconds:.0f} s")
        one = Plan(**(plan.__dict__ | {"devices": 1, "seconds": baseline_seconds}))
        base = asyncio.run(run(one, body, say, keep=args.keep))
        say(json.dumps(base, indent=2))
    say(f"scale: {plan.devices} devices x {plan.rate / MB:g} MB/s for {plan.seconds:.0f} s")
    pairs: list[tuple[dict, dict]] = []  # (before, after) per round, with --before
    rounds = max(1, args.rounds) if args.before else 1
    result: dict = {}
    for i in range(rounds):
        before = None
        if args.before:  # alternating: before, after, before, after ...
            say(f"round {i + 1}: before ({args.before})")
            before = asyncio.run(run(plan, body, say, tree=args.before, keep=args.keep))
            say(json.dumps(_brief(before)))
            say(f"round {i + 1}: after ({args.tree or ROOT})")
        profile = args.profile if i == rounds - 1 else None
        result = asyncio.run(run(plan, body, say, tree=args.tree, profile=profile, keep=args.keep))
        if before is not None:
            say(json.dumps(_brief(result)))
            pairs.append((before, result))
    if pairs:
        result["before_cpu_seconds_per_mb"] = [b["daemon_cpu_seconds_per_mb"] for b, _ in pairs]
        result["after_cpu_seconds_per_mb"] = [a["daemon_cpu_seconds_per_mb"] for _, a in pairs]
        result["cpu_per_mb_ratio_after_to_before"] = [
            round(a["daemon_cpu_seconds_per_mb"] / max(b["daemon_cpu_seconds_per_mb"], 1e-9), 3)
            for b, a in pairs
        ]
        result["before_worst_device_max_behind_kib"] = [
            b["worst_device_max_behind_kib"] for b, _ in pairs
        ]
        result["before_checks"] = [b["checks"] for b, _ in pairs]
    if base:
        result["baseline_cpu_seconds_per_mb"] = base["daemon_cpu_seconds_per_mb"]
        result["cpu_per_mb_ratio_to_one_device"] = round(
            result["daemon_cpu_seconds_per_mb"] / max(base["daemon_cpu_seconds_per_mb"], 1e-9), 2
        )
    if args.json:
        print(json.dumps(result), flush=True)
    else:
        print(json.dumps(result, indent=2))
        for name, ok in result["checks"].items():
            print(f"{'PASS' if ok else 'FAIL'}  {name}")
    return 0 if all(result["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
