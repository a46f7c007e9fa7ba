"""Sentry's own profile processor (PyPI ``vroomrs``) as the reader of V1 (transaction) profiles,
and ``sentry_sdk``'s envelope parser.

vroomrs reads the profile as Sentry *stores* it, so ``ingest()`` first adds what ingestion adds
(organization, project, received, retention, sampled, the transaction's segment id; thread ids
and sample times as numbers). It runs in a subprocess: a Rust panic (e.g. a stack id out of
range) is a ``BaseException`` that would otherwise take the test process down.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass

from tests.viewers import need_module

TIMEOUT_S = 60
INSTALL = "pip install -e '.[test]'"

_READ = r"""
import json, sys
import vroomrs
out = []
for stored in json.load(sys.stdin):
    try:
        profile = vroomrs.profile_from_json_str(json.dumps(stored), stored["platform"])
        profile.normalize()
        functions = profile.extract_functions_metrics(0, False, None, True)
        out.append({
            "error": None,
            "platform": profile.get_platform(),
            "duration_ns": profile.duration_ns(),
            "functions": [
                {
                    "function": f.get_function(),
                    "package": f.get_package(),
                    "thread_id": f.get_thread_id(),
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


def ingest(payload: dict, received: int = 1_800_000_000) -> dict:
    """What Sentry's ingestion makes of an SDK's V1 profile payload before it is processed."""
    stored = json.loads(json.dumps(payload))
    stored.update(
        organization_id=1, project_id=1, received=received, retention_days=90, sampled=True
    )
    transaction = stored["transaction"]
    transaction["active_thread_id"] = int(transaction["active_thread_id"])
    transaction.setdefault("segment_id", transaction["id"][:16])
    for sample in stored["profile"]["samples"]:
        sample["thread_id"] = int(sample["thread_id"])
        sample["elapsed_since_start_ns"] = int(sample["elapsed_since_start_ns"])
    for measurement in stored.get("measurements", {}).values():
        for value in measurement["values"]:
            value["elapsed_since_start_ns"] = int(value["elapsed_since_start_ns"])
    return stored


@dataclass
class Read:
    error: str | None
    duration_ns: int = 0
    functions: list[dict] | None = None


def run_reader(script: str, stored: list[dict]) -> list[dict]:
    """Run a vroomrs reader ``script`` (stored profiles as JSON on stdin, one result each on
    stdout) in a subprocess, so that a Rust panic cannot take the test process down."""
    need_module("vroomrs", INSTALL)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(stored),
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, f"vroomrs reader crashed: {proc.stderr[-2000:]}"
    return json.loads(proc.stdout)


def read(stored: list[dict]) -> list[Read]:
    """vroomrs's reading of each stored profile: an error, or its per-function self times."""
    return [
        Read(r["error"], r.get("duration_ns", 0), r.get("functions"))
        for r in run_reader(_READ, stored)
    ]


def parse_envelope(data: bytes):
    """sentry_sdk's own envelope parser."""
    envelope = need_module("sentry_sdk.envelope", INSTALL)
    return envelope.Envelope.deserialize(data)
