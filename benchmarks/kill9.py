"""Proof: ``kill -9`` the daemon at random moments while simulated devices stream and a loopback
Sentry misbehaves; nothing the process had read is lost and every sample ends up in a chunk.

Each round starts ``rokuprof daemon`` (a subprocess), lets it run for a random time, freezes it
(SIGSTOP), takes a snapshot of every device's connection, then kills it (SIGKILL). At the
snapshot each device's simulator says how many bytes it has sent on the current run, and
``/proc/net/tcp`` says how many of them still sit in the kernel: unread in the daemon's socket
(``rx_queue``) or not yet sent from the simulator's (``tx_queue``), plus the simulator's asyncio
buffer. So per kill and device::

    gap  = sent - archived       (bytes the archive does not have)
    lost = gap - unread          (bytes the daemon had read and not yet archived)

Body bytes are archived inside the transport's ``data_received``, before the event loop runs
anything else, so a daemon frozen while its loop waits for events (its main thread in
``epoll_wait``, read from ``/proc/PID/syscall``) must have lost nothing. A daemon frozen in the
middle of a callback (the kernel can stop it between the ``recv`` that moved bytes to user space
and the ``write`` that hands them to the page cache) may lose that one read, and no more: at most
:data:`MAX_READ` bytes, the most asyncio's transport reads at once.

After the last kill the daemon runs once more: it recovers the crashed sessions (their archived
but unchunked data becomes chunks) and uploads everything; the devices stop, Sentry starts
answering 200, and once every chunk on disk was accepted the daemon gets SIGTERM. Then, per
session: the archive is a prefix of what its device sent, and per call path the samples in all
its chunks equal ``rokuprof convert`` of its archive within one sample.

    python benchmarks/kill9.py                   # 50 kills (a few minutes)
    python benchmarks/kill9.py --kills 3 --json result.json

Exit status 0 when every check holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from daemon_helpers import (
    log_size,
    sim,
    start_daemon,
    until_a_session_starts,
    write_config_file,
)
from fake_sentry import FakeSentry, Reply, Request

from rokuprof.sentry import ChunkSettings
from rokuprof.sentry.convert import OfflineConverter
from rokuprof.simulator import SimulatedDevice

CHUNK_SECONDS = 2.0


# -- the daemon --------------------------------------------------------------------------------


#: The most one read of asyncio's socket transport moves to user space (its ``max_size``).
MAX_READ = 256 * 1024

#: System calls in which an event loop waits for events (x86_64 and aarch64 numbers).
_WAITING = {
    "x86_64": {
        7: "poll",
        23: "select",
        232: "epoll_wait",
        270: "pselect6",
        271: "ppoll",
        281: "epoll_pwait",
        441: "epoll_pwait2",
    },
    "aarch64": {22: "epoll_pwait", 72: "pselect6", 73: "ppoll", 441: "epoll_pwait2"},
}.get(platform.machine(), {})


def frozen_in(pid: int) -> str:
    """Where a stopped process's main thread is: ``waiting`` (its event loop blocked waiting for
    events: no callback was running) or ``busy`` (in Python code or another system call)."""
    try:
        field = Path(f"/proc/{pid}/syscall").read_text().split()[0]
    except (OSError, IndexError):
        return "busy"
    return "waiting" if field.isdigit() and int(field) in _WAITING else "busy"


def stopped(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("T", "t", "Z")


# -- kernel socket queues ----------------------------------------------------------------------


def tcp_queues(port: int) -> tuple[int, int]:
    """(bytes the simulator's sockets on ``port`` have not sent yet, bytes the peers' sockets
    connected to ``port`` have not read yet), from ``/proc/net/tcp``."""
    tx = rx = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            local, remote, state, queues = parts[1], parts[2], parts[3], parts[4]
            if state != "01":  # ESTABLISHED only: not the dead connections of earlier kills
                continue
            txq, rxq = (int(x, 16) for x in queues.split(":"))
            if int(local.rsplit(":", 1)[1], 16) == port:
                tx += txq
            elif int(remote.rsplit(":", 1)[1], 16) == port:
                rx += rxq
    return tx, rx


def user_buffer(dev: SimulatedDevice) -> int:
    """Bytes written to the simulator's asyncio transport and not yet given to the kernel."""
    run = getattr(dev, "_current", None)
    output = getattr(run, "output", None)
    writer = getattr(output, "writer", None)
    if writer is None or writer.transport.is_closing():
        return 0
    return writer.transport.get_write_buffer_size()


@dataclass
class Snapshot:
    device: str
    run: int | None
    sent: int
    unread: int


@dataclass
class KillResult:
    round: int
    after_seconds: float
    frozen: str = "busy"  # frozen_in(): "waiting" (nothing may be lost) or "busy"
    devices: list[dict] = field(default_factory=list)


def snapshot(devices: list[SimulatedDevice], seen: set[tuple[str, int]]) -> list[Snapshot]:
    """Taken while the daemon is frozen, with no await in between: consistent figures. A run
    already looked at belongs to an earlier, dead connection (the simulator may keep it going
    for a while): it is not this daemon's."""
    out = []
    for dev in devices:
        current = dev.current
        if current is None or (dev.config.serial, current.index) in seen:
            out.append(Snapshot(dev.config.serial, None, 0, 0))
            continue
        tx, rx = tcp_queues(dev.profiler_port)
        unread = tx + rx + user_buffer(dev)
        out.append(Snapshot(dev.config.serial, current.index, current.bytes_sent, unread))
        seen.add((dev.config.serial, current.index))
    return out


def archives(out: Path, device: str) -> list[bytes]:
    return [p.read_bytes() for p in sorted((out / device).glob("*/capture.bsprof"))]


def account(out: Path, dev: SimulatedDevice, snap: Snapshot) -> dict:
    """How many bytes of the run at the snapshot the archive has, misses and lost."""
    if snap.run is None:
        return {"device": snap.device, "sent": 0, "archived": 0, "gap": 0, "unread": 0, "lost": 0}
    data = dev.sent_bytes(snap.run)[: snap.sent]
    archived = max(
        (len(a) for a in archives(out, snap.device) if a and data.startswith(a)), default=0
    )
    gap = snap.sent - archived
    return {
        "device": snap.device,
        "sent": snap.sent,
        "archived": archived,
        "gap": gap,
        "unread": snap.unread,
        "lost": gap - snap.unread,
    }


# -- samples per call path ---------------------------------------------------------------------


def stack_counts(payload: dict) -> Counter:
    """Busy samples per call path (its frames, leaf first) in one chunk payload."""
    profile = payload["profile"]
    frames = [json.dumps(f, sort_keys=True) for f in profile["frames"]]
    keys = [tuple(frames[i] for i in stack) for stack in profile["stacks"]]
    counts: Counter = Counter()
    for sample in profile["samples"]:
        key = keys[sample["stack_id"]]
        if key:
            counts[key] += 1
    return counts


def session_chunks(session: Path) -> list[dict]:
    files = list((session / "chunks").glob("*.json")) + [
        p for p in (session / "rejected").glob("*.json") if not p.name.endswith(".reason.json")
    ]
    return [json.loads(p.read_bytes()) for p in sorted(files)]


def converted_counts(archive: Path) -> Counter:
    converter = OfflineConverter(
        ChunkSettings(chunk_seconds=CHUNK_SECONDS, environment="test"),
        total_bytes=archive.stat().st_size,
    )
    with archive.open("rb") as f:
        while block := f.read(1 << 20):
            converter.feed(block)
    counts: Counter = Counter()
    for chunk in converter.chunks():
        counts += stack_counts(chunk.payload)
    return counts


@dataclass
class SessionCheck:
    session: str
    status: str
    crashed: bool
    prefix: bool
    chunk_samples: int
    convert_samples: int
    paths: int
    worst_path_diff: int
    chunk_ids: list[str]


def check_session(session: Path, runs: list[bytes]) -> SessionCheck:
    record = json.loads((session / "session.json").read_text())
    archive = session / "capture.bsprof"
    data = archive.read_bytes()
    chunks = session_chunks(session)
    have: Counter = Counter()
    for payload in chunks:
        have += stack_counts(payload)
    want = converted_counts(archive)
    keys = set(have) | set(want)
    worst = max((abs(have[k] - want[k]) for k in keys), default=0)
    return SessionCheck(
        session=f"{session.parent.name}/{session.name}",
        status=record.get("status", "?"),
        crashed=any(e.get("kind") == "crash" for e in record.get("errors", [])),
        prefix=any(run.startswith(data) for run in runs),
        chunk_samples=sum(have.values()),
        convert_samples=sum(want.values()),
        paths=len(keys),
        worst_path_diff=worst,
        chunk_ids=[p["chunk_id"] for p in chunks],
    )


# -- the proof ---------------------------------------------------------------------------------


def misbehaving(rng: random.Random, state: dict):
    """Sentry that fails about a third of the requests (500, 503, 429) until told to recover."""

    def policy(request: Request) -> Reply:
        if state["healthy"]:
            return Reply()
        roll = rng.random()
        if roll < 0.15:
            return Reply(500)
        if roll < 0.25:
            return Reply(503)
        if roll < 0.35:
            return Reply(429, {"Retry-After": "1"})
        return Reply()

    return policy


async def until(predicate, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(step)
    return True


async def prove(args: argparse.Namespace, work: Path) -> dict:
    rng = random.Random(args.seed)
    out, config, log = work / "out", work / "rokuprof.toml", work / "daemon.log"
    state = {"healthy": False}
    kills: list[KillResult] = []
    seen: set[tuple[str, int]] = set()
    async with FakeSentry(misbehaving(random.Random(args.seed + 1), state)) as sentry:
        sims = [
            SimulatedDevice(
                sim(f"KILL{i}", seed=30 + i, runs=None, run_seconds=args.run_seconds, run_gap=0.2)
            )
            for i in range(args.devices)
        ]
        for dev in sims:
            await dev.start()
        proc = None
        try:
            write_config_file(config, out, sims, sentry.dsn, chunk_seconds=CHUNK_SECONDS)
            for i in range(args.kills):
                since = log_size(log)
                proc = await start_daemon(config, log)
                await until_a_session_starts(log, since)  # kill in a run, not in start-up
                wait = rng.uniform(args.min_wait, args.max_wait)
                await asyncio.sleep(wait)
                proc.send_signal(signal.SIGSTOP)
                await until(lambda p=proc: stopped(p.pid), 5, 0.005)
                snap = snapshot(sims, seen)
                frozen = frozen_in(proc.pid)
                proc.kill()
                await asyncio.wait_for(proc.wait(), 10)
                result = KillResult(i + 1, round(wait, 2), frozen)
                for dev, s in zip(sims, snap, strict=True):
                    result.devices.append(account(out, dev, s))
                kills.append(result)
                lost = sum(d["lost"] for d in result.devices)
                gaps = " ".join(f"{d['gap']:>6}" for d in result.devices)
                print(
                    f"kill {i + 1:>3} after {wait:4.1f} s ({frozen}): gap per device {gaps} B; "
                    f"lost {lost} B",
                    flush=True,
                )
            proc = await start_daemon(config, log)
            await asyncio.sleep(args.max_wait)
            for dev in sims:
                await dev.stop()
            state["healthy"] = True

            def delivered() -> bool:
                on_disk = set()
                for path in out.glob("*/*/chunks/*.json"):
                    try:
                        on_disk.add(json.loads(path.read_bytes())["chunk_id"])
                    except (OSError, ValueError):
                        return False
                return on_disk <= set(sentry.chunk_ids())

            await asyncio.sleep(2.0)  # the runs end (devices gone) and write their last chunks
            all_delivered = await until(delivered, args.drain_timeout)
            proc.send_signal(signal.SIGTERM)
            code = await asyncio.wait_for(proc.wait(), 60)
            runs = {
                dev.config.serial: [dev.sent_bytes(r) for r in range(len(dev.runs))] for dev in sims
            }
            accepted = set(sentry.chunk_ids())
            requests = len(sentry.requests)
            failed_answers = sum(1 for r in sentry.requests if r.status not in (None, 200))
        finally:
            if proc is not None and proc.returncode is None:
                proc.kill()
                await proc.wait()
            for dev in sims:
                await dev.stop()

    checks = [
        check_session(s, runs.get(s.parent.name, []))
        for s in sorted(p.parent for p in out.glob("*/*/session.json"))
    ]
    return {
        "kills": [asdict(k) for k in kills],
        "sessions": [asdict(c) for c in checks],
        "all_delivered": all_delivered,
        "undelivered": sorted({i for c in checks for i in c.chunk_ids} - accepted),
        "exit_code": code,
        "requests": requests,
        "failed_answers": failed_answers,
        "streaming_left": [c.session for c in checks if c.status == "streaming"],
        "tmp_left": [str(p) for p in out.rglob("*.tmp")],
    }


def losses_by_freeze(kills: list[dict]) -> tuple[list[int], list[int]]:
    """Bytes lost per device, for the kills frozen waiting for events and for the others."""
    waiting = [d["lost"] for k in kills if k["frozen"] == "waiting" for d in k["devices"]]
    busy = [d["lost"] for k in kills if k["frozen"] != "waiting" for d in k["devices"]]
    return waiting, busy


def summarize(result: dict) -> tuple[list[str], bool]:
    lines = []
    per_device = [d for k in result["kills"] for d in k["devices"]]
    gaps = [d["gap"] for d in per_device if d["sent"]]
    lost = [d["lost"] for d in per_device]
    waiting, busy = losses_by_freeze(result["kills"])
    lines.append(
        f"{len(result['kills'])} kills x {len(per_device) // max(1, len(result['kills']))} "
        f"device(s): bytes lost per kill and device: max {max(lost, default=0)}, "
        f"total {sum(x for x in lost if x > 0)}"
    )
    lines.append(
        f"frozen waiting for events: {sum(k['frozen'] == 'waiting' for k in result['kills'])} "
        f"kill(s), {sum(waiting)} B lost (must be 0); mid-callback: "
        f"{sum(k['frozen'] != 'waiting' for k in result['kills'])} kill(s), at most "
        f"{max(busy, default=0)} B lost on a device (one read: {MAX_READ:,} B at most)"
    )
    if gaps:
        lines.append(
            f"gap (unread in the kernel at the kill): min {min(gaps)} B, median "
            f"{statistics.median(gaps):g} B, max {max(gaps)} B"
        )
    sessions = result["sessions"]
    crashed = [s for s in sessions if s["crashed"]]
    bad_samples = [s for s in sessions if s["worst_path_diff"] > 1]
    not_prefix = [s["session"] for s in sessions if not s["prefix"]]
    lines.append(
        f"{len(sessions)} sessions ({len(crashed)} crashed): "
        f"{sum(s['chunk_samples'] for s in sessions):,} samples in chunks vs "
        f"{sum(s['convert_samples'] for s in sessions):,} from convert"
    )
    lines.append(
        f"crashed sessions: {sum(s['chunk_samples'] for s in crashed):,} samples in chunks vs "
        f"{sum(s['convert_samples'] for s in crashed):,} from convert; "
        f"{sum(1 for s in crashed if s['convert_samples'] and not s['chunk_samples'])} with data "
        "and no chunk"
    )
    worst = max((s["worst_path_diff"] for s in sessions), default=0)
    lines.append(
        f"largest per-path difference: {worst} sample(s); sessions over 1: {len(bad_samples)}"
    )
    lines.append(
        f"uploads: {result['requests']} requests, {result['failed_answers']} answered with an "
        f"error; every chunk delivered: {not result['undelivered']}"
    )
    ok = (
        not any(x > 0 for x in waiting)
        and all(x <= MAX_READ for x in busy)
        and not bad_samples
        and not not_prefix
        and not result["undelivered"]
        and result["exit_code"] == 0
        and not result["streaming_left"]
        and not result["tmp_left"]
    )
    for name in not_prefix:
        lines.append(f"FAIL: {name}: archive is not a prefix of what the device sent")
    for s in bad_samples:
        lines.append(
            f"FAIL: {s['session']} ({s['status']}): per-path samples differ by up to "
            f"{s['worst_path_diff']} ({s['chunk_samples']} in chunks, {s['convert_samples']} "
            "from convert)"
        )
    if result["undelivered"]:
        lines.append(f"FAIL: {len(result['undelivered'])} chunk(s) never accepted by Sentry")
    if result["exit_code"] != 0:
        lines.append(f"FAIL: the last daemon exited with {result['exit_code']}")
    for name in result["streaming_left"]:
        lines.append(f"FAIL: {name} left streaming")
    lines.append("result: " + ("every check holds" if ok else "FAILED"))
    return lines, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=50)
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument(
        "--min-wait",
        type=float,
        default=0.8,
        help="seconds before a kill (from the first session's start)",
    )
    parser.add_argument(
        "--max-wait",
        type=float,
        default=3.5,
        help="seconds before a kill (from the first session's start)",
    )
    parser.add_argument("--run-seconds", type=float, default=4.0, help="app time of one run")
    parser.add_argument("--drain-timeout", type=float, default=120.0)
    parser.add_argument("--work", type=Path, help="keep the output here (default: a temp dir)")
    parser.add_argument("--json", type=Path, help="write the raw figures here")
    args = parser.parse_args(argv)
    if not Path("/proc/net/tcp").exists():
        print("needs Linux (/proc/net/tcp)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="kill9-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        result = asyncio.run(prove(args, work))
        result["seconds"] = round(time.monotonic() - started, 1)
    lines, ok = summarize(result)
    for line in lines:
        print(line)
    print(f"({result['seconds']} s)")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
