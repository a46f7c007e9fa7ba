"""What ``benchmarks/soak.py`` prints: the accounting of its raw figures (pure: a dict in,
lines out).

Bytes, per run (a device's run is matched to the daemon's session by the stream header's start
time, ``profiler.start_ms`` in ``session.json``)::

    expected = sent                          a run no kill touched
             = sent_at_freeze - unread       a run streaming when the daemon was killed: unread is
                                             what the kernel and the device's write buffer held
             = sent_at_death - buffer        a run whose device was killed: its write buffer
                                             died with it, the kernel's queue still arrives
    lost     = expected - archived

A daemon frozen while its loop waited for events may lose nothing; one frozen mid-callback may
lose the one read it was in (``kill9.MAX_READ``). A session the daemon ended itself
(``truncated``: below ``min_free_bytes``; ``failed``) did not take the rest of its run on
purpose: counted apart, as refused, not lost. Lost bytes of a session that ended at a write to
the full disk (the filler takes every byte at once, as another process filling the disk would)
are shown apart too, and still count as lost.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from kill9 import MAX_READ

MIB = 1 << 20
REFUSED = ("truncated", "failed")


def full_disk(session: dict, result: dict) -> bool:
    """The session ended at a write to the full disk: its record says so, or its archive last
    grew while the filler held every byte (its record could not be written then)."""
    plan, grew = result["plan"], session["grew_at"] - result["t0"]
    return "No space left" in session["why"] or plan["fill_at"] - 1 <= grew <= plan["free_at"] + 1


def account_bytes(result: dict) -> dict:
    sessions = {(s["serial"], s["start_ms"]): s for s in result["sessions"] if s["start_ms"]}
    at_kill: dict[tuple[str, int], tuple[dict, str]] = {}
    for kill in result["kills"]:
        for snap in kill["snaps"]:
            key = (snap["serial"], snap["start_ms"])
            if snap["status"] == "streaming" and key not in at_kill:
                at_kill[key] = (snap, kill["frozen"])
    died = {(r["serial"], r["start_ms"]): r for r in result["deaths"] if r["start_ms"]}
    runs = {(r["serial"], r["start_ms"]): r for r in result["ends"] if r["start_ms"]}
    for key, row in died.items():
        runs.setdefault(key, row)
    daemon_ports = set(result["client_ports"])
    totals: Counter = Counter()
    worst: list[tuple[int, str]] = []
    for key, run in runs.items():
        sent = run["sent"]
        if not sent:
            continue
        if run.get("client") not in daemon_ports and key not in sessions:
            totals["foreign_runs"] += 1  # streamed to a client that was not the daemon
            totals["foreign"] += sent
            continue
        totals["runs"] += 1
        totals["sent"] += sent
        session = sessions.get(key)
        archived = session["size"] if session else 0
        totals["archived"] += archived
        allowed = 0
        if key in died and key not in at_kill:  # (a daemon killed first took the rest)
            expected = died[key]["sent"] - died[key]["buffer"]
            totals["device_kill_buffer"] += died[key]["buffer"]
            totals["device_kill_runs"] += 1
        elif key in at_kill:
            snap, frozen = at_kill[key]
            unread = snap["tx"] + snap["rx"] + snap["buffer"]
            expected = snap["sent"] - unread
            totals["daemon_kill_unread"] += unread
            totals["after_kill"] += run["sent"] - snap["sent"]  # to a dead connection
            totals["daemon_kill_runs"] += 1
            allowed = MAX_READ if frozen != "waiting" else 0
        else:
            expected = sent
        if session is None:
            totals["no_session_runs"] += 1
        if session is not None and session["status"] in REFUSED:
            totals["refused"] += max(0, expected - archived)
            totals["refused_runs"] += 1
            continue
        lost = expected - archived
        if lost > allowed:
            totals["lost"] += lost
            totals["lost_runs"] += 1
            if session is not None and full_disk(session, result):
                totals["lost_enospc"] += lost
            worst.append((lost, f"{key[0]} run at {key[1]}: {session and session['status']}"))
        elif lost > 0:
            totals["lost_in_one_read"] += lost
    matched = set(runs)
    totals["sessions_without_run"] = sum(
        1 for key, s in sessions.items() if key not in matched and s["size"]
    )
    return {"totals": totals, "worst": sorted(worst, reverse=True)[:5]}


def stalls(samples: list, free_at: float) -> dict:
    """The longest time no byte was archived while a device had a run waiting or streaming,
    and how long after ``free_at`` archiving went on again."""
    longest, longest_from, since, prev = 0.0, 0.0, None, None
    resumed = None
    last_growth = 0.0
    base_at_free = None
    for t, archived, active, _free in samples:
        grew = prev is not None and archived > prev
        if grew:
            last_growth = t
        if since is None or grew or not active:
            since = t
        if t - since > longest:
            longest, longest_from = t - since, since
        if t >= free_at and base_at_free is None:
            base_at_free = archived
        elif base_at_free is not None and resumed is None and archived > base_at_free:
            resumed = t - free_at
        prev = archived
    end = samples[-1][0] if samples else 0.0
    return {
        "longest": longest,
        "longest_from": longest_from,
        "resumed": resumed,
        "left_after_free": end - free_at,
        "last_growth": last_growth,
        "min_free": min((s[3] for s in samples), default=0),
    }


def rss_table(rss: list, ticks_per_second: int) -> list[str]:
    """Per minute: the daemon's RSS (lowest and highest sample), its CPU (user + system, share
    of one core) and how many daemon processes ran in it."""
    per_minute: dict[int, list[int]] = defaultdict(list)
    cpu: dict[tuple[int, int], list[int]] = defaultdict(list)  # (minute, pid) -> ticks
    for t, kib, pid, ticks in rss:
        per_minute[int(t // 60)].append(kib)
        cpu[(int(t // 60), pid)].append(ticks)
    lines = ["  minute   daemon RSS MiB (min - max)   CPU % of a core   processes"]
    for minute in sorted(per_minute):
        values = per_minute[minute]
        runs = [v for (m, _pid), v in cpu.items() if m == minute]
        used = sum(max(v) - min(v) for v in runs) / ticks_per_second
        span = 60.0  # a partial last minute shows a lower share
        lines.append(
            f"  {minute:>6}   {min(values) / 1024:>6.1f} - {max(values) / 1024:<6.1f}"
            f"            {100 * used / span:>5.0f}            {len(runs)}"
        )
    return lines


def report(result: dict, args) -> list[str]:
    plan = result["plan"]
    lines = [""]
    acc = account_bytes(result)
    tot = acc["totals"]
    lines.append(
        f"bytes: {tot['runs']} runs sent {tot['sent']:,} B; archived {tot['archived']:,} B "
        f"({tot['archived'] / max(1, tot['sent']):.1%})"
    )
    lines.append(
        f"  in flight at {len(result['kills'])} daemon kill(s) ({tot['daemon_kill_runs']} runs): "
        f"{tot['daemon_kill_unread']:,} B unread in the kernel and the devices' buffers; "
        f"{tot['after_kill']:,} B sent after the kills to dead connections"
    )
    lines.append(
        f"  in flight at {len(result['device_kills'])} device kill(s) "
        f"({tot['device_kill_runs']} runs): {tot['device_kill_buffer']:,} B in the devices' "
        "own buffers"
    )
    lines.append(
        f"  refused by the daemon (sessions it ended truncated/failed: {tot['refused_runs']}): "
        f"{tot['refused']:,} B not archived"
    )
    lines.append(
        f"  lost within one read at a kill mid-callback: {tot['lost_in_one_read']:,} B; "
        f"lost otherwise: {tot['lost']:,} B in {tot['lost_runs']} run(s) ({tot['lost_enospc']:,} B "
        "of them in sessions that ended at a write to the full disk); runs with no "
        f"session: {tot['no_session_runs']}; sessions with no run record: "
        f"{tot['sessions_without_run']}"
    )
    if tot["foreign_runs"]:
        lines.append(
            f"  not counted: {tot['foreign_runs']} run(s) streamed to a client that was not the "
            f"daemon ({tot['foreign']:,} B; another process on this machine connected first)"
        )
    for lost, what in acc["worst"]:
        lines.append(f"    {lost:,} B: {what}")

    sentry = result["sentry"]
    accepted = sentry["accepted"]
    seen, on_disk = set(result["chunks_seen"]), set(result["chunks_on_disk"])
    dup = sum(n - 1 for n in accepted.values() if n > 1)
    most = max(accepted.items(), key=lambda kv: kv[1], default=("-", 0))
    lines.append(
        f"chunks: {len(seen):,} seen on disk, {len(accepted):,} accepted by Sentry "
        f"({sum(accepted.values()):,} answers 200): {dup} duplicate(s)"
        + (f", one chunk {most[1]} times" if most[1] > 1 else "")
    )
    lines.append(
        f"  seen on disk and never accepted: {len(seen - set(accepted)):,} "
        f"({len((seen - set(accepted)) - on_disk):,} deleted undelivered, "
        f"{len(on_disk - set(accepted)):,} still on disk at the end); accepted and never seen "
        f"on disk: {len(set(accepted) - seen)}"
    )
    answers = ", ".join(f"{k} {v}" for k, v in sorted(sentry["answers"].items()))
    lines.append(
        f"  Sentry answered: {answers}; closed mid-answer {sentry['closed_mid']}, hangs the "
        f"client gave up {sentry['hangs_given_up']}, unreadable {sentry['unreadable']}"
    )

    statuses = Counter(s["status"] or "?" for s in result["sessions"])
    unfinished = [s for s in result["sessions"] if s["present"] and s["status"] == "streaming"]
    lines.append(
        f"sessions: {len(result['sessions'])} ("
        + ", ".join(f"{k} {v}" for k, v in statuses.most_common())
        + f"); left unfinished: {len(unfinished)}"
    )
    exits = result["daemon_exits"]
    lines.append(
        f"daemon: {len(exits)} exit(s): {sum(e['killed'] for e in exits)} kill -9, others "
        + (", ".join(f"code {e['code']} at {e['t']} s" for e in exits if not e["killed"]) or "-")
    )
    lines += rss_table(result["rss"], result["ticks_per_second"])

    st = stalls(result["samples"], plan["free_at"])
    lines.append(
        f"capture: longest stall {st['longest']:.1f} s (from {st['longest_from']:.0f} s; no "
        f"byte archived while a device had a run); last byte archived at "
        f"{st['last_growth']:.0f} s of {plan['seconds']:.0f}"
    )
    resumed = (
        f"{st['resumed']:.1f} s"
        if st["resumed"] is not None
        else f"never (in the {st['left_after_free']:.0f} s left)"
    )
    if st["resumed"] is not None:  # a start runs retention: say when one came first
        window = (plan["free_at"], plan["free_at"] + st["resumed"])
        starts = [e["t"] for e in result["daemon_exits"] if window[0] <= e["t"] <= window[1]]
        if starts:
            resumed += f" (after a daemon restart at {starts[0]:.0f} s)"
    lines.append(
        f"  disk filled at {plan['fill_at']:.0f} s, space returned at {plan['free_at']:.0f} s; "
        f"capture resumed after {resumed}; least free {st['min_free'] / MIB:.2f} MiB"
    )
    if "usage" in result:
        files, size, blocks = result["usage"]
        lines.append(
            f"  out at the end: {files:,} files, {size / MIB:.1f} MiB in sizes, "
            f"{blocks / MIB:.1f} MiB in blocks (retention max_bytes {args.retention_mib} MiB, "
            f"min_free {args.min_free_mib} MiB, tmpfs {args.tmpfs_mib} MiB)"
        )

    lines.append("wanted:")
    lines.append(f"  {'PASS' if dup == 0 else 'MISS'}  0 duplicates: {dup}")
    ok = st["resumed"] is not None and st["resumed"] <= 60
    lines.append(
        f"  {'PASS' if ok else 'MISS'}  capture resumed within a minute of space returning: "
        f"{resumed}"
    )
    lost = tot["lost"]
    lines.append(
        f"  {'PASS' if lost == 0 else 'MISS'}  0 bytes lost beyond what was in flight at a "
        f"kill: {lost:,} B"
    )
    return lines
