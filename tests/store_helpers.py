"""Helpers for spool and uploader tests: valid chunk payloads and session directories on disk."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from rokuprof.store.files import write_atomic


def make_chunk(t0: float = 1_800_000_000.0, chunk_id: str | None = None) -> dict:
    """A small V2 chunk that passes :func:`rokuprof.sentry.validate_chunk`."""
    samples = [{"timestamp": t0 + i / 101, "thread_id": "1", "stack_id": 0} for i in range(3)]
    samples.append({"timestamp": t0 + 3 / 101, "thread_id": "1", "stack_id": 1})
    return {
        "version": "2",
        "platform": "brightscript",
        "chunk_id": chunk_id or uuid.uuid4().hex,
        "profiler_id": uuid.uuid4().hex,
        "client_sdk": {"name": "rokuprof", "version": "0.1.0"},
        "release": "app@1.0",
        "environment": "test",
        "profile": {
            "samples": samples,
            "stacks": [[0], []],
            "frames": [
                {
                    "function": "main",
                    "filename": "pkg:/source/main.brs",
                    "lineno": 1,
                    "in_app": True,
                }
            ],
            "thread_metadata": {"1": {"name": "main"}},
        },
    }


def write_chunks(
    root: Path, device: str, session: str, count: int, start: int = 1
) -> list[tuple[Path, str]]:
    """Write ``count`` chunk files into ``root/device/session/chunks``; (path, chunk_id)."""
    out = []
    for i in range(start, start + count):
        chunk = make_chunk()
        path = root / device / session / "chunks" / f"{i:06d}.json"
        write_atomic(path, json.dumps(chunk))
        out.append((path, chunk["chunk_id"]))
    return out
