"""Every export format, decoded by small independent readers here, carries the totals of
``inspect`` (exactly, where the format holds integers) and the samples of the Sentry chunks (where
it holds a timeline), for sample files and generated streams. No viewer needed (see
tests/viewers/ for the real ones)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import struct
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

import pytest
from export_checks import (
    check_cdp_profile,
    check_folded,
    check_pprof,
    group,
    inspect_functions,
    varints,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import streams

from rokuprof.bsprof.grammar import build_stream
from rokuprof.bsprof.model import CPU, Footer
from rokuprof.export import (
    FORMATS,
    UnknownFormat,
    export,
    export_parts,
    export_pieces,
    input_from_bytes,
)
from rokuprof.export.names import NAME_LIMIT, JsonWriter
from rokuprof.export.sentry_v1 import IDLE_FRAME, UNNAMED
from rokuprof.export.sentry_v1 import build as build_v1
from rokuprof.sentry.assemble import HEAP_MEASUREMENT
from rokuprof.sentry.convert import convert_bytes
from rokuprof.sentry.envelope import Envelope
from rokuprof.sentry.validate_v1 import relay_kept_samples, validate_envelope_v1
from rokuprof.simulator.worst_cases import deep_chain

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
START_MS = 1_795_273_445_000
HZ = 101
PERIOD_US = 1e6 / HZ

# --- references ------------------------------------------------------------------------------


def chunk_samples(data: bytes) -> Counter:
    """Busy samples per function (leaf) in the Sentry chunks of the same file."""
    chunks, _ = convert_bytes(data)
    out: Counter = Counter()
    for chunk in chunks:
        profile = chunk.payload["profile"]
        names = {tid: m["name"] for tid, m in profile["thread_metadata"].items()}
        for s in profile["samples"]:
            stack = profile["stacks"][s["stack_id"]]
            if stack:
                f = profile["frames"][stack[0]]
                out[(names[s["thread_id"]], f["function"], f["abs_path"])] += 1
    return out


def chunk_heap(data: bytes) -> list[int]:
    chunks, _ = convert_bytes(data)
    return [
        v["value"]
        for c in chunks
        for v in c.payload.get("measurements", {}).get(HEAP_MEASUREMENT, {}).get("values", [])
    ]


def no_nulls(value: object) -> bool:
    if value is None:
        return False
    if isinstance(value, dict):
        return all(no_nulls(v) for v in value.values())
    if isinstance(value, list):
        return all(no_nulls(v) for v in value)
    return True


# --- per format ------------------------------------------------------------------------------


def check_speedscope(inp, samples: Counter) -> None:
    doc = json.loads(export(inp, "speedscope"))
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    assert no_nulls(doc)
    frames = doc["shared"]["frames"]
    ref = inspect_functions(inp)
    weighted = {"wall": defaultdict(Counter), "cpu": defaultdict(Counter)}
    timeline: Counter = Counter()
    for profile in doc["profiles"]:
        thread, _, kind = profile["name"].rpartition(" — ")
        if profile["type"] == "sampled":
            assert len(profile["samples"]) == len(profile["weights"])
            assert profile["endValue"] == sum(profile["weights"])
            if kind not in weighted:
                continue
            for stack, w in zip(profile["samples"], profile["weights"], strict=True):
                assert isinstance(w, int) and w > 0
                keys = [(thread, frames[i]["name"], frames[i]["file"]) for i in stack]
                weighted[kind]["self"][keys[-1]] += w
                for key in set(keys):
                    weighted[kind]["total"][key] += w
        else:
            assert kind == "timeline" and profile["unit"] == "microseconds"
            open_: list[tuple[int, float]] = []
            last = profile["startValue"]
            for e in profile["events"]:
                assert e["at"] >= last
                if open_:
                    f = frames[open_[-1][0]]
                    timeline[(thread, f["name"], f["file"])] += e["at"] - last
                last = e["at"]
                if e["type"] == "O":
                    open_.append((e["frame"], e["at"]))
                else:
                    assert open_.pop()[0] == e["frame"]
            assert not open_ and last == profile["endValue"]
    for kind in ("wall", "cpu"):
        for part in ("self", "total"):
            want = Counter({k: f[f"{part}_{kind}"] for k, f in ref.items()})
            assert +weighted[kind][part] == +want, (kind, part)
    assert_times_match(timeline, samples, "speedscope timeline")


def assert_times_match(got_us: Counter, samples: Counter, what: str, slack_us: float = 1) -> None:
    """Time per function (µs) equals its sample count x period, within ``slack_us`` per sample
    (whole-microsecond rounding)."""
    for key in got_us.keys() | samples.keys():
        want = samples[key] * PERIOD_US
        assert abs(got_us[key] - want) <= slack_us * max(1, samples[key]), (what, key)


def check_chrome_trace(inp, samples: Counter, heap: list[int]) -> None:
    events = json.loads(export(inp, "chrome-trace"))
    assert isinstance(events, list)  # the JSON Array Format (FlameScope reads no other)
    assert all("pid" in e and "tid" in e for e in events)
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
    assert set(names) == set(inp.threads)
    self_us: Counter = Counter()
    stacks: dict[int, list[dict]] = defaultdict(list)
    last: dict[int, int] = {}
    for e in events:
        assert e["ph"] in ("M", "B", "E", "C")
        if e["ph"] not in ("B", "E"):
            continue
        tid, ts = e["tid"], e["ts"]
        assert ts >= last.get(tid, 0)
        assert isinstance(ts, int) or (e["ph"] == "E" and abs(ts + 0.001 - round(ts)) < 1e-6)
        stack = stacks[tid]
        if stack:
            top = stack[-1]
            self_us[(names[tid], top["name"], top["args"]["file"])] += ts - last[tid]
        last[tid] = ts
        if e["ph"] == "B":
            stack.append(e)
        else:  # an end names the frame on top, with the same args
            top = stack.pop()
            assert (e["name"], e["args"]) == (top["name"], top["args"])
    assert not any(stacks.values())
    assert_times_match(self_us, samples, "chrome-trace")
    assert [e["args"]["bytes"] for e in events if e["name"] == "live heap"] == heap


def check_cpuprofile(inp, samples: Counter) -> None:
    """One CDP profile per thread, each from the run's start to its end."""
    profiles = {
        t: json.loads(data)
        for t, data in zip(
            inp.thread_order(), export_parts(inp, "cpuprofile").values(), strict=True
        )
    }
    assert json.loads(export(inp, "cpuprofile")) == list(profiles.values())
    count: Counter = Counter()
    us: Counter = Counter()
    for thread, doc in profiles.items():
        check_one_cpuprofile(inp, thread, doc, count, us)
    assert +count == +samples
    assert_times_match(us, samples, "cpuprofile")


def check_one_cpuprofile(inp, thread: int, doc: dict, count: Counter, us: Counter) -> None:
    start = round(inp.run.start * 1_000_000)
    assert doc["startTime"] == start
    assert doc["endTime"] == start + round((inp.run.end - inp.run.start) * 1_000_000)
    check_cdp_profile(doc)
    nodes = {n["id"]: n for n in doc["nodes"]}
    times, t = [], doc["startTime"]
    for d in doc["timeDeltas"]:
        t += d
        times.append(t)
    assert times[-1] == doc["endTime"]  # a last idle sample at the run's end
    for i, node_id in enumerate(doc["samples"]):
        node = nodes[node_id]
        frame = node["callFrame"]
        if frame["functionName"] in ("(idle)", "(root)"):
            continue
        key = (inp.threads[thread], frame["functionName"], frame["url"])
        count[key] += 1
        end = times[i + 1] if i + 1 < len(times) else doc["endTime"]
        us[key] += end - times[i]


def check_nflxprofile(inp, samples: Counter) -> None:
    g = group(export(inp, "nflxprofile"))
    (start,) = g[1]
    (end,) = g[2]
    ids = [v for packed in g[3] for v in varints(packed)]
    deltas = [
        v
        for packed in g[4]
        for v in struct.unpack(f"<{len(packed) // 8}d", packed)  # type: ignore[arg-type]
    ]
    assert len(ids) == len(deltas)
    assert all(d >= 0 for d in deltas)
    assert start + sum(deltas) <= end + 1e-6
    nodes = {}
    for entry in g[5]:
        eg = group(entry)
        nodes[eg.get(1, [0])[0]] = group(eg[2][0])
    assert 0 in nodes
    for n in nodes.values():  # required fields
        assert 1 in n and 2 in n
    assert sum(n[2][0] for n in nodes.values()) == len(ids)
    assert Counter(ids) == Counter({k: n[2][0] for k, n in nodes.items() if n[2][0]})
    parent = {c: k for k, n in nodes.items() for c in n.get(3, [])}
    count: Counter = Counter()
    for node_id, n in nodes.items():
        if not n[2][0]:
            continue
        top = node_id
        while parent[top] != 0:
            top = parent[top]
        file = group(n[11][0])[1][0].decode()
        key = (nodes[top][1][0].decode(), n[1][0].decode(), file)
        count[key] += n[2][0]
    assert +count == +samples


def sentry_times_us(profile: dict) -> Counter:
    """Self time per leaf frame (µs) as Sentry derives it from a V1 profile, written here from
    what Relay and Sentry's processor do: Relay drops empty-stack samples at a thread's edges,
    then threads with one sample; the processor fills an empty stack between two busy samples
    with the frames both share (root side), and a sample lasts until its thread's next one (the
    last is not counted). Keys: ``(thread id, leaf frame index)``."""
    stacks = profile["stacks"]
    by_thread = defaultdict(list)
    for s in profile["samples"]:
        by_thread[s["thread_id"]].append((int(s["elapsed_since_start_ns"]), s["stack_id"]))
    out: Counter = Counter()
    for tid, rows in by_thread.items():
        rows.sort()
        busy = [i for i, (_, sid) in enumerate(rows) if stacks[sid]]
        if not busy:
            continue
        rows = rows[busy[0] : busy[-1] + 1]
        if len(rows) < 2:
            continue
        filled = []
        for i, (t, sid) in enumerate(rows):
            stack = stacks[sid]
            if not stack:
                before = next(stacks[s] for _, s in reversed(rows[:i]) if stacks[s])
                after = next(stacks[s] for _, s in rows[i + 1 :] if stacks[s])
                shared = 0
                while shared < min(len(before), len(after)) and (
                    before[-1 - shared] == after[-1 - shared]
                ):
                    shared += 1
                stack = before[len(before) - shared :]
            filled.append((t, stack))
        for (t, stack), (t_next, _) in pairwise(filled):
            if stack:
                out[(tid, stack[0])] += (t_next - t) / 1000
    return out


def v1_key(profile: dict, tid: str, frame_index: int) -> tuple[str, str, str] | None:
    """inspect's key of a V1 frame on a thread; None for the idle frame."""
    f = profile["frames"][frame_index]
    if f == IDLE_FRAME:
        return None
    function = "" if f["function"] == UNNAMED and not f["abs_path"] else f["function"]
    return (profile["thread_metadata"][tid]["name"], function, f["abs_path"])


def check_sentry_v1(inp, samples: Counter) -> None:
    v1 = build_v1(inp)
    parts = export_parts(inp, "sentry-v1")
    assert len(parts) == 3 * len([p for p in v1.profiles if not p.problems])
    assert v1.dropped == {}  # every busy run is closed, so Relay keeps every thread
    count: Counter = Counter()
    us: Counter = Counter()
    for p in v1.profiles:
        assert p.problems == []
        envelope = Envelope.from_bytes(parts[f"{p.index:06d}.envelope"])
        assert validate_envelope_v1(envelope) == []
        assert [i.type for i in envelope.items] == ["transaction", "profile"]
        profile = p.profile["profile"]
        assert relay_kept_samples(profile) == profile["samples"]
        for s in profile["samples"]:
            stack = profile["stacks"][s["stack_id"]]
            assert stack  # an idle sample has the (idle) frame, never []
            if k := v1_key(profile, s["thread_id"], stack[0]):
                count[k] += 1
        for (tid, leaf), t in sentry_times_us(profile).items():
            if k := v1_key(profile, tid, leaf):
                us[k] += t
    assert +count == +samples
    assert_times_match(us, samples, "sentry-v1 as Sentry times it")


def check_all(data: bytes) -> None:
    inp = input_from_bytes(data)
    samples = chunk_samples(data)
    check_pprof(inp)
    check_folded(inp)
    check_speedscope(inp, samples)
    check_chrome_trace(inp, samples, chunk_heap(data))
    check_cpuprofile(inp, samples)
    check_nflxprofile(inp, samples)
    check_sentry_v1(inp, samples)


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.bsprof")))
def test_sample_files_export_to_every_format_with_inspects_totals(name):
    check_all((SAMPLES / name).read_bytes())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(max_actions=60), st.none() | st.integers(1, 400_000))
def test_generated_streams_export_to_every_format_with_inspects_totals(spec, run_ms):
    header = dataclasses.replace(spec.header, start_ms=START_MS)
    footer = Footer(START_MS + run_ms) if run_ms is not None else None
    entries = [(*e[:4], e[4] % 3_000_000) if e[0] == CPU else e for e in spec.entries]
    check_all(build_stream(header, entries, footer))


@settings(max_examples=15, deadline=None)
@given(streams())
def test_raw_generated_streams_never_break_an_exporter(spec):
    """Whatever the stream says (times far off, huge walls, cut short), every format exports."""
    inp = input_from_bytes(spec.data)
    for fmt in FORMATS:
        assert export_parts(inp, fmt) is not None


def test_exports_are_deterministic():
    data = (SAMPLES / "cafe-tv-full.bsprof").read_bytes()
    a, b = input_from_bytes(data), input_from_bytes(data)
    for fmt in FORMATS:
        assert export_parts(a, fmt) == export_parts(b, fmt), fmt


def test_pprof_puts_line_data_at_the_real_source_line():
    """Locations of a leaf with line data sit at function line + line offset - 1."""
    data = (SAMPLES / "cafe-tv-full.bsprof").read_bytes()
    inp = input_from_bytes(data)
    assert inp.run.line_data
    g = group(gzip.decompress(export(inp, "pprof")))
    lines = set()
    for loc in g[4]:
        (line,) = group(loc)[4]
        lines.add(group(line).get(2, [0])[0])
    leaf_lines = {line for p in inp.paths for line, _, _ in p.line_cpu}
    assert leaf_lines and leaf_lines <= lines
    starts = {inp.frames[p.frames[0]].line for p in inp.paths}
    assert leaf_lines - starts  # lines other than where functions start


def test_one_file_formats_come_in_pieces_that_join_to_the_file():
    """Every one-file format's pieces joined are its file; the timeline formats and folded
    stacks of a deep chain (a file hundreds of times its input) come in blocks of tens of KiB,
    so that a writer never holds the file."""
    inp = input_from_bytes(deep_chain(400, seconds=10, wall_us=20_000))
    for fmt, info in FORMATS.items():
        if info.multi_file or info.per_thread or fmt == "report":
            continue
        pieces = list(export_pieces(inp, fmt))
        assert b"".join(pieces) == export(inp, fmt), fmt
        if fmt in ("speedscope", "chrome-trace", "folded"):
            whole = sum(map(len, pieces))
            assert whole > 1_000_000, (fmt, whole)
            assert len(pieces) > 10, fmt
            assert max(map(len, pieces)) < 4 * JsonWriter.BLOCK + 4 * NAME_LIMIT, fmt
    for several in ("sentry-v1", "cpuprofile"):
        with pytest.raises(UnknownFormat):
            next(export_pieces(inp, several))
