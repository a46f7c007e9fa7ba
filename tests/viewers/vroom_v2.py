"""Sentry's own profile processor (PyPI ``vroomrs``) as the reader of V2 profile chunks, and what
Sentry's rules make of a chunk's samples, written out here to compare with.

vroomrs reads a chunk as Sentry *stores* it, so :func:`ingest` first adds what ingestion adds
(organization, project, received, retention). :func:`read` runs vroomrs in a subprocess, as the
V1 reader does (:mod:`tests.viewers.vroom`): a Rust panic is a ``BaseException``.

What vroomrs does with a V2 chunk (``sample/v2.rs``, ``nodetree.rs`` in getsentry/vroomrs):

* per thread, samples in time order; each sample but the last gets the time until the next one
  on its thread, credited to its stack; an empty stack ``[]`` makes no node, so its time goes to
  no function (an idle gap stays idle; :func:`leaf_times` models exactly that);
* consecutive samples whose stacks share frames from the root extend the same nodes; a
  function's self time is a node's duration minus its in-app children's;
* functions are keyed by (``module`` or package, ``function``) over all threads; a function
  whose nodes with self time hold one sample in all (``sample_count <= 1``) is left out.
"""

from __future__ import annotations

import itertools
import json
from collections import defaultdict
from dataclasses import dataclass

from tests.viewers.vroom import run_reader

#: (frame ``module``, frame ``function``): how vroomrs tells functions apart.
FunctionKey = tuple[str, str]

_READ = r"""
import json, sys
import vroomrs
out = []
for stored in json.load(sys.stdin):
    try:
        chunk = vroomrs.profile_chunk_from_json_str_and_version(json.dumps(stored), "2")
        chunk.normalize()
        functions = chunk.extract_functions_metrics(0, False, None, True)
        out.append({
            "error": None,
            "platform": chunk.get_platform(),
            "duration_ms": chunk.duration_ms(),
            "functions": [
                {
                    "function": f.get_function(),
                    "package": f.get_package(),
                    "in_app": f.get_in_app(),
                    "self_ns": f.get_sum_self_time_ns(),
                    "samples": f.get_sample_count(),
                }
                for f in functions
            ],
        })
    except BaseException as exc:  # a Rust panic is a BaseException
        out.append({"error": f"{type(exc).__name__}: {exc}"})
json.dump(out, sys.stdout)
"""


def ingest(chunk: dict, received: int = 1_800_000_000) -> dict:
    """What Sentry's ingestion makes of a V2 chunk before it is processed."""
    stored = json.loads(json.dumps(chunk))
    stored.update(organization_id=1, project_id=1, received=received, retention_days=90)
    return stored


@dataclass
class Read:
    error: str | None
    platform: str | None = None
    duration_ms: int = 0
    functions: list[dict] | None = None

    def self_ns(self) -> dict[FunctionKey, int]:
        """Self time per function (ns), as vroomrs reports it."""
        assert self.functions is not None, self.error
        out: dict[FunctionKey, int] = defaultdict(int)
        for f in self.functions:
            out[(f["package"], f["function"])] += f["self_ns"]
        return dict(out)


def read(stored: list[dict]) -> list[Read]:
    """vroomrs's reading of each stored chunk: an error, or its per-function self times."""
    return [
        Read(r["error"], r.get("platform"), r.get("duration_ms", 0), r.get("functions"))
        for r in run_reader(_READ, stored)
    ]


@dataclass
class LeafTimes:
    """Sentry's time rule applied to a chunk's samples, per leaf function."""

    seconds: dict[FunctionKey, float]  # time until the next sample on the thread, summed
    samples: dict[FunctionKey, int]  # samples with that leaf that got any time
    idle_seconds: float  # time given to empty-stack samples


def leaf_times(chunk: dict) -> LeafTimes:
    """Each sample (but the last of its thread) gets the time until the next sample on its
    thread, credited to its stack's leaf frame; an empty stack credits nobody."""
    profile = chunk["profile"]
    frames, stacks = profile["frames"], profile["stacks"]
    by_thread: dict[str, list[tuple[float, int]]] = defaultdict(list)
    for s in profile["samples"]:
        by_thread[s["thread_id"]].append((s["timestamp"], s["stack_id"]))
    seconds: dict[FunctionKey, float] = defaultdict(float)
    samples: dict[FunctionKey, int] = defaultdict(int)
    idle = 0.0
    for rows in by_thread.values():
        rows.sort(key=lambda r: r[0])
        for (t, sid), (t_next, _) in itertools.pairwise(rows):
            stack = stacks[sid]
            if not stack:
                idle += t_next - t
                continue
            leaf = frames[stack[0]]
            key = (leaf["module"], leaf["function"])
            seconds[key] += t_next - t
            samples[key] += 1
    return LeafTimes(dict(seconds), dict(samples), idle)
