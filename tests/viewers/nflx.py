"""PyPI ``nflxprofile`` (FlameScope's format) as a reader: its generated protobuf classes, and its
CLI, which converts a ``.cpuprofile`` (``--input-format v8``, the strictest .cpuprofile reader
here) and prints an nflxprofile's flame graph tree (``--output-format tree``).
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tests.viewers import need_module

TIMEOUT_S = 120
INSTALL = "pip install -e '.[test]'"


def classes():
    return need_module("nflxprofile.nflxprofile_pb2", INSTALL)


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


def cli(*args: str) -> Result:
    """The ``nflxprofile`` command (its console script's entry point, in this interpreter)."""
    classes()
    code = "import sys; from nflxprofile.cli import main; sys.argv[0] = 'nflxprofile'; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def cli_ok(*args: str) -> None:
    result = cli(*args)
    assert result.returncode == 0 and result.stderr == "", (
        f"nflxprofile {' '.join(args)} exited {result.returncode}: {result.stderr[-2000:]}"
    )


def load(path: Path):
    """Parse with the generated classes; re-serializing with ``SerializeToString`` (which refuses
    a message missing a required field) must give the same bytes back."""
    profile = classes().Profile()
    data = path.read_bytes()
    profile.ParseFromString(data)
    assert profile.IsInitialized(), profile.FindInitializationErrors()
    assert profile.SerializeToString(deterministic=True) == data or profile.SerializeToString()
    return profile


def from_v8(cpuprofile: Path, out: Path):
    cli_ok(
        "--input-format",
        "v8",
        "--output-format",
        "nflxprofile",
        "--output",
        str(out),
        str(cpuprofile),
    )
    return load(out)


def tree(path: Path, out: Path) -> dict:
    import json

    cli_ok(
        "--input-format", "nflxprofile", "--output-format", "tree", "--output", str(out), str(path)
    )
    return json.loads(out.read_text())


def tree_counts(root: dict, thread_depth: int) -> dict[tuple[str, str], list[int]]:
    """{(thread, function): [self samples, total samples]} from a flame graph tree whose thread
    nodes are ``thread_depth`` levels below the root; total counts recursion once."""
    out: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])

    def subtree(node: dict) -> int:
        return node["value"] + sum(subtree(c) for c in node["children"])

    def walk(node: dict, thread: str, above: tuple[str, ...]) -> None:
        key = (thread, node["name"])
        out[key][0] += node["value"]
        if node["name"] not in above:
            out[key][1] += subtree(node)
        for child in node["children"]:
            walk(child, thread, (*above, node["name"]))

    level = [root]
    for _ in range(thread_depth):
        level = [c for n in level for c in n["children"]]
    for thread_node in level:
        for child in thread_node["children"]:
            walk(child, thread_node["name"], ())
    return {k: v for k, v in out.items() if v[0] or v[1]}
