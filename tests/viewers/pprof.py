"""``go tool pprof`` (Debian ``golang-go``) as the reader of pprof exports.

Always ``-symbolize=none`` (otherwise pprof looks for the "main binary" and complains on stderr).
``raw()`` parses ``-raw`` (every sample with its values, location IDs and labels, every location
with its function, file and line), ``top()`` parses ``-top`` (pprof's own per-function flat/cum),
``traces()`` parses ``-traces`` (each sample's labels and stack).
"""

from __future__ import annotations

import re
import subprocess
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tests.viewers import need_command

TIMEOUT_S = 60


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


def go() -> str:
    return need_command("go", "apt-get install golang-go")


def run(path: Path, *options: str) -> Result:
    proc = subprocess.run(
        [go(), "tool", "pprof", "-symbolize=none", *options, str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def run_ok(path: Path, *options: str) -> str:
    """stdout of a run that must succeed quietly: exit 0 and nothing on stderr."""
    result = run(path, *options)
    assert result.returncode == 0 and result.stderr == "", (
        f"go tool pprof {' '.join(options)} exited {result.returncode}: {result.stderr}"
    )
    return result.stdout


# -- -raw -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    function: str
    file: str
    line: int
    start_line: int = 0


@dataclass
class Sample:
    values: list[int]
    locations: list[int]  # leaf first
    labels: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class RawProfile:
    sample_types: list[str]  # "cpu/operations", ...
    default_type: str | None
    samples: list[Sample]
    locations: dict[int, list[Line]]  # innermost (inlined) line first
    mappings: list[str]

    def index(self, sample_type: str) -> int:
        names = [t.split("/")[0] for t in self.sample_types]
        return names.index(sample_type)

    def unit(self, sample_type: str) -> str:
        return self.sample_types[self.index(sample_type)].split("/")[1]

    def frames(self, sample: Sample) -> list[Line]:
        """A sample's stack, leaf first, inlined lines expanded."""
        return [line for loc in sample.locations for line in self.locations[loc]]

    def function_totals(self, sample_type: str, thread_label: str = "thread") -> dict:
        """{(thread, function, file): [flat, cum]}; cum counts a function once per sample."""
        i = self.index(sample_type)
        out: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0])
        for s in self.samples:
            value = s.values[i]
            if not value:
                continue
            thread = ",".join(s.labels.get(thread_label, []))
            frames = self.frames(s)
            leaf = frames[0]
            out[(thread, leaf.function, leaf.file)][0] += value
            for fn, file in {(f.function, f.file) for f in frames}:
                out[(thread, fn, file)][1] += value
        return dict(out)


_SAMPLE = re.compile(r"^\s*((?:-?\d+\s+)*-?\d+):((?:\s+\d+)*)\s*$")
_LABEL = re.compile(r"^\s+(\S+?):\[(.*)\]\s*$")
_LOCATION = re.compile(r"^\s*(\d+): 0x[0-9a-f]+(?: M=\d+)?(?: (.*))?$")


def _line(text: str) -> Line:
    # "function file:line s=startline" (file and line may be missing)
    start = re.search(r"\s+s=(\d+)\S*$", text)
    text = text[: start.start()].strip() if start else text.strip()
    start_line = int(start.group(1)) if start else 0
    m = re.match(r"^(.*?) (\S*):(\d+)$", text)
    if m:
        return Line(m.group(1), m.group(2), int(m.group(3)), start_line)
    return Line(text, "", 0, start_line)


def parse_raw(text: str) -> RawProfile:
    lines = text.splitlines()
    section = None
    sample_types: list[str] = []
    default = None
    samples: list[Sample] = []
    locations: dict[int, list[Line]] = {}
    mappings: list[str] = []
    current_loc: int | None = None
    for line in lines:
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            if not sample_types:
                for t in line.split():
                    if t.endswith("[dflt]"):
                        t = t[: -len("[dflt]")]
                        default = t.split("/")[0]
                    sample_types.append(t)
                continue
            m = _SAMPLE.match(line)
            if m:
                values = [int(v) for v in m.group(1).split()]
                samples.append(Sample(values, [int(v) for v in m.group(2).split()]))
                continue
            m = _LABEL.match(line)
            if m and samples:
                samples[-1].labels[m.group(1)] = m.group(2).split()
                continue
            raise ValueError(f"unexpected line in pprof -raw samples: {line!r}")
        elif section == "Locations":
            m = _LOCATION.match(line)
            if m:
                current_loc = int(m.group(1))
                locations[current_loc] = [_line(m.group(2))] if m.group(2) else []
            elif line.strip() and current_loc is not None:
                locations[current_loc].append(_line(line))
        elif section == "Mappings" and line.strip():
            mappings.append(line.strip())
    return RawProfile(sample_types, default, samples, locations, mappings)


def raw(path: Path) -> RawProfile:
    return parse_raw(run_ok(path, "-raw"))


# -- -top -------------------------------------------------------------------------------------

_UNITS = {"time": "us", "bytes": "B"}
_TOP_ROW = re.compile(
    r"^\s*(-?[\d.]+)(\S*)\s+[\d.]+%\s+[\d.]+%\s+(-?[\d.]+)(\S*)\s+[\d.]+%\s+(.*)$"
)


def top(path: Path, sample_type: str, kind: str = "count") -> dict[str, tuple[int, int]]:
    """pprof's per-function {name: (flat, cum)} for one sample type, every node shown.

    ``kind`` "time" prints microseconds and "bytes" bytes, so the figures are integers."""
    options = ["-top", "-nodecount=1000000", "-nodefraction=0", "-edgefraction=0"]
    options.append(f"-sample_index={sample_type}")
    if kind in _UNITS:
        options.append(f"-unit={_UNITS[kind]}")
    out: dict[str, tuple[int, int]] = {}
    rows = run_ok(path, *options).splitlines()
    header = next(i for i, r in enumerate(rows) if r.split()[:2] == ["flat", "flat%"])
    for row in rows[header + 1 :]:
        m = _TOP_ROW.match(row)
        if not m:
            raise ValueError(f"unexpected pprof -top row: {row!r}")
        flat, cum = float(m.group(1)), float(m.group(3))
        assert flat == int(flat) and cum == int(cum), f"non-integer figure in {row!r}"
        name = m.group(5)
        prev = out.get(name, (0, 0))
        out[name] = (prev[0] + int(flat), prev[1] + int(cum))
    return out


# -- -traces ----------------------------------------------------------------------------------


@dataclass
class Trace:
    labels: dict[str, str]
    value: str
    stack: list[str]  # leaf first


def traces(path: Path) -> list[Trace]:
    text = run_ok(path, "-traces")
    out: list[Trace] = []
    for block in re.split(r"^-+\+-+$", text, flags=re.M)[1:]:
        if not block.strip():
            continue
        labels: dict[str, str] = {}
        value = ""
        stack: list[str] = []
        for line in block.splitlines():
            if not line.strip():
                continue
            m = re.match(r"^\s+(\S+):\s+(.*)$", line)
            if m and not stack and not value:
                labels[m.group(1)] = m.group(2).strip()
                continue
            m = re.match(r"^\s+(\S+)\s+(.*)$", line)
            if m and not value:
                value, fn = m.group(1), m.group(2)
                stack.append(fn.strip())
            else:
                stack.append(line.strip())
        out.append(Trace(labels, value, stack))
    return out


# -- hand-made files for the harness's own failure tests -----------------------------------------


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, value: int | bytes) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def encode_profile(
    strings: list[str],
    sample_types: list[tuple[int, int]],
    samples: list[tuple[list[int], list[int]]],
    functions: list[tuple[int, int]] = (),
    locations: list[tuple[int, int]] = (),
) -> bytes:
    """A plain (uncompressed) perftools.profiles.Profile, spelled out field by field.

    ``sample_types`` (type, unit) string indexes; ``samples`` (location IDs, values);
    ``functions`` (name, file) string indexes, IDs 1..n; ``locations`` (function ID, line), IDs
    1..n, all in mapping 1. Only for making deliberately broken files."""
    out = bytearray()
    for t, u in sample_types:
        out += _field(1, _field(1, t) + _field(2, u))
    for locs, values in samples:
        body = b"".join(_field(1, x) for x in locs) + b"".join(_field(2, v) for v in values)
        out += _field(2, body)
    out += _field(3, _field(1, 1) + _field(5, 0))
    for i, (fn, line) in enumerate(locations, 1):
        out += _field(4, _field(1, i) + _field(2, 1) + _field(4, _field(1, fn) + _field(2, line)))
    for i, (name, file) in enumerate(functions, 1):
        out += _field(5, _field(1, i) + _field(2, name) + _field(4, file))
    for s in strings:
        out += _field(6, s.encode())
    return bytes(out)
