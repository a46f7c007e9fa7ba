"""Readers and checks for the export tests, independent of rokuprof/export: a protobuf reader, the
reference figures (``inspect``'s functions, self bytes straight from the tables), and the pprof
and folded checks (test_export_formats, test_export_on_capture, test_report), and a capture
whose names are full of terminal controls (test_export_cli, test_viewer_folded)."""

from __future__ import annotations

import gzip
import struct
from collections import Counter, defaultdict
from pathlib import Path

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import CPU, MODULE, PATH, STRING, Footer
from rokuprof.export import METRICS, export
from rokuprof.export.folded import clean
from rokuprof.profile.functions import aggregate_functions
from rokuprof.simulator.app import AppConfig, SyntheticApp

# --- names a device may send ------------------------------------------------------------------

#: Function and module names a device may send: a terminal title, a screen clear, a bell, C1's
#: CSI, a start of heading, a tab, line breaks and the folded separator.
LOUD = ["main\x1b]0;pwned\x07", "leaf\x1b[2J\r\n;x\x9b31m\x01\t\x7fé"]


def loud_capture(path: Path) -> Path:
    """A complete capture whose thread and two functions are named :data:`LOUD`."""
    start = 1_700_000_000_000
    header = SyntheticApp(AppConfig(seed=3)).header(start)
    entries: list = [(STRING, 1, "pkg:/source/x.brs"), (STRING, 2, LOUD[0]), (STRING, 3, LOUD[1])]
    entries += [(MODULE, 1, 2), (PATH, 1, 0, 1, 0, 1, 1, 2), (PATH, 2, 1, 0, 3, 1, 10, 3)]
    entries += [(CPU, 1, 2, 700, 1500), (CPU, 2, 2, 900, 2500)]
    body = encode_entries(entries, True)
    path.write_bytes(build_header(header) + body + END_MARKER + build_footer(Footer(start + 2000)))
    return path


#: Its folded stacks (wall): every control character written as \\xNN, ";" as "_".
LOUD_FOLDED = [
    "main\\x1b]0_pwned\\x07;main\\x1b]0_pwned\\x07 (pkg:/source/x.brs:1) 1500",
    "main\\x1b]0_pwned\\x07;main\\x1b]0_pwned\\x07 (pkg:/source/x.brs:1);"
    "leaf\\x1b[2J\\x0d\\x0a_x\\x9b31m\\x01\\x09\\x7fé (pkg:/source/x.brs:10) 2500",
]


# --- a protobuf reader (independent of rokuprof/export/protobuf.py) ----------------------------


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def fields(buf: bytes) -> list[tuple[int, object]]:
    """``(field number, value)``: ints for varints, bytes for length-delimited, floats for
    64-bit."""
    out = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            n, pos = _varint(buf, pos)
            value = buf[pos : pos + n]
            assert len(value) == n, "length-delimited field cut short"
            pos += n
        elif wire == 1:
            (value,) = struct.unpack_from("<d", buf, pos)
            pos += 8
        else:
            raise AssertionError(f"unexpected wire type {wire}")
        out.append((number, value))
    assert pos == len(buf)
    return out


def varints(value: object) -> list[int]:
    """A repeated integer field, packed (bytes) or not (one int)."""
    if isinstance(value, int):
        return [value]
    out, pos = [], 0
    while pos < len(value):
        v, pos = _varint(value, pos)
        out.append(v)
    return out


def group(buf: bytes) -> dict[int, list]:
    out: dict[int, list] = defaultdict(list)
    for number, value in fields(buf):
        out[number].append(value)
    return out


# --- references ------------------------------------------------------------------------------


def inspect_functions(inp) -> dict[tuple[str, str, str], dict]:
    return {
        (f.module, f.function, f.file): f.to_json() for f in aggregate_functions(inp.reader.tables)
    }


def table_self(inp, attr: str) -> Counter:
    """Self ``alloc_bytes`` / ``live_bytes`` per function, straight from the tables."""
    tables = inp.reader.tables
    out: Counter = Counter()
    if attr == "live_bytes":
        for pid, _, size in tables.leak_sites():
            stack = tables.stack(pid)
            if stack:
                out[_key(tables, stack[0])] += size
    else:
        for pid, stats in tables.snapshot().items():
            stack = tables.stack(pid)
            if stack and getattr(stats, attr):
                out[_key(tables, stack[0])] += getattr(stats, attr)
    return +out


def _key(tables, node) -> tuple[str, str, str]:
    return (
        tables.module_name(node.module),
        tables.string(node.function_id),
        tables.string(node.file_id),
    )


# --- pprof and folded ------------------------------------------------------------------------

PPROF_TYPES = ["cpu", "wall", "calls", "alloc_objects", "alloc_space", "inuse_objects"]
PPROF_TYPES.append("inuse_space")


def check_pprof(inp) -> None:
    raw = gzip.decompress(export(inp, "pprof"))
    g = group(raw)
    strings = [s.decode("utf-8") for s in g[6]]
    assert strings[0] == ""
    types = [strings[group(t)[1][0]] for t in g[1]]
    assert types == PPROF_TYPES
    assert strings[g[14][0]] == "wall"
    assert len(g[3]) == 1
    mapping_id = group(g[3][0])[1][0]
    functions = {}
    for f in g[5]:
        fg = group(f)
        functions[fg[1][0]] = (strings[fg.get(2, [0])[0]], strings[fg.get(4, [0])[0]])
    locations = {}
    for loc in g[4]:
        lg = group(loc)
        assert lg[2] == [mapping_id]
        (line,) = lg[4]
        locations[lg[1][0]] = group(line)[1][0]
    self_: dict[str, Counter] = {t: Counter() for t in PPROF_TYPES}
    total: dict[str, Counter] = {t: Counter() for t in ("cpu", "wall")}
    for sample in g[2]:
        sg = group(sample)
        locs = [v for packed in sg[1] for v in varints(packed)]
        values = [v for packed in sg[2] for v in varints(packed)]
        assert len(values) == 7 and locs
        (label,) = sg[3]
        lg = group(label)
        assert strings[lg[1][0]] == "thread"
        thread = strings[lg.get(2, [0])[0]]
        keys = [(thread, *functions[locations[loc]]) for loc in locs]
        for t, v in zip(PPROF_TYPES, values, strict=True):
            self_[t][keys[0]] += v
        for t in ("cpu", "wall"):
            for key in set(keys):
                total[t][key] += values[PPROF_TYPES.index(t)]
    ref = inspect_functions(inp)
    for attr, t in (("self_cpu", "cpu"), ("self_wall", "wall"), ("calls", "calls")):
        assert +self_[t] == +Counter({k: f[attr] for k, f in ref.items()}), attr
    for attr, t in (("total_cpu", "cpu"), ("total_wall", "wall")):
        assert +total[t] == +Counter({k: f[attr] for k, f in ref.items()}), attr
    assert +self_["alloc_space"] == table_self(inp, "alloc_bytes")
    assert +self_["inuse_space"] == table_self(inp, "live_bytes")


def check_folded(inp) -> None:
    tables = inp.reader.tables
    live = {pid: size for pid, _, size in tables.leak_sites()}
    ref = inspect_functions(inp)
    for metric in METRICS:
        want: Counter = Counter()
        for pid in tables.snapshot().keys() | live.keys():
            stack = tables.stack(pid)
            if not stack:
                continue
            leaf = stack[0]
            file = tables.string(leaf.file_id)
            where = f"{file}:{leaf.line}" if leaf.line else file
            label = clean(f"{tables.string(leaf.function_id)} ({where})")
            stats = tables.stats(pid)
            value = live.get(pid, 0) if metric == "live_bytes" else getattr(stats, metric)
            want[(clean(tables.module_name(leaf.module)), label)] += value
        got: Counter = Counter()
        seen = set()
        for line in export(inp, "folded", metric=metric).decode("utf-8").split("\n")[:-1]:
            stack, _, n = line.rpartition(" ")
            assert n.isdigit() and int(n) > 0, line
            assert stack not in seen
            seen.add(stack)
            parts = stack.split(";")
            assert len(parts) >= 2
            got[(parts[0], parts[-1])] += int(n)
        assert +got == +want, metric
        if metric in ("wall", "cpu", "calls"):
            attr = "calls" if metric == "calls" else f"self_{metric}"
            assert sum(got.values()) == sum(f[attr] for f in ref.values())


# --- .cpuprofile (the CDP Profiler.Profile object) ---------------------------------------------

CDP_KEYS = {"nodes", "startTime", "endTime", "samples", "timeDeltas"}
CALL_FRAME_KEYS = {"functionName", "scriptId", "url", "lineNumber", "columnNumber"}


def check_cdp_profile(doc: object) -> dict[int, int]:
    """What a ``.cpuprofile`` reader (VS Code's profile editor, DevTools, Node's --cpu-prof
    consumers) counts on, checked on the parsed file: the ``Profiler.Profile`` keys and types,
    node ids unique and whole, every child an existing node with one parent, node 1 (the first)
    the ``(root)`` and every node reachable from it, samples naming nodes, as many time deltas
    as samples, none negative, ``startTime + Σ timeDeltas`` within ``[startTime, endTime]``,
    each ``hitCount`` the number of samples naming its node, 0-based ``lineNumber`` and
    ``columnNumber`` (-1: not code). Returns ``{child: parent}``."""
    assert isinstance(doc, dict) and set(doc) >= CDP_KEYS, (
        sorted(doc) if isinstance(doc, dict) else doc
    )
    nodes = doc["nodes"]
    assert isinstance(nodes, list) and nodes
    ids = [n["id"] for n in nodes]
    assert all(type(i) is int and i > 0 for i in ids) and len(set(ids)) == len(ids)
    by_id = {n["id"]: n for n in nodes}
    root = nodes[0]
    assert root["callFrame"]["functionName"] == "(root)"
    parent: dict[int, int] = {}
    for n in nodes:
        frame = n["callFrame"]
        assert set(frame) == CALL_FRAME_KEYS, frame
        assert isinstance(frame["functionName"], str) and isinstance(frame["url"], str)
        assert isinstance(frame["scriptId"], str)
        assert type(frame["lineNumber"]) is int and frame["lineNumber"] >= -1
        assert type(frame["columnNumber"]) is int and frame["columnNumber"] >= -1
        assert type(n["hitCount"]) is int and n["hitCount"] >= 0
        for c in n.get("children", []):
            assert c in by_id and c not in parent and c != root["id"], (n["id"], c)
            parent[c] = n["id"]
    assert set(parent) == set(ids) - {root["id"]}  # one tree: every node below the root
    for node_id in ids:  # and no cycle
        seen, at = 0, node_id
        while at != root["id"]:
            at = parent[at]
            seen += 1
            assert seen <= len(ids)
    samples, deltas = doc["samples"], doc["timeDeltas"]
    assert len(samples) == len(deltas)
    assert all(s in by_id for s in samples)
    assert all(type(d) is int and d >= 0 for d in deltas)
    start, end = doc["startTime"], doc["endTime"]
    assert type(start) is int and type(end) is int and start <= end
    assert start <= start + sum(deltas) <= end
    hits = Counter(samples)
    assert all(n["hitCount"] == hits[n["id"]] for n in nodes)
    return parent
