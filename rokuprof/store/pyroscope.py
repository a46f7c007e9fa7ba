"""Pushes each finished session's pprof export to Grafana Pyroscope (``POST /ingest``).

Works from the disk like the Sentry uploader: every ``rescan_seconds`` it looks for finished
sessions (not ``streaming``) that hold ``capture.pb.gz`` and no ``pyroscope.json`` marker,
oldest first, and sends them one at a time::

    POST {url}/ingest?name=<name>{device=...,app=...}&from=<start>&until=<end>&format=pprof
         &spyName=rokuprof     (multipart/form-data: the file as "profile", as Pyroscope's
                                own clients send it, and a "sample_type_config")

When to send again is the pure :class:`~rokuprof.store.push_policy.PushPolicy` (Sentry's rules
where the two agree): 2xx is done and ``pyroscope.json`` records when (written atomically, so a
restart resumes); 400, 413, 415 and 422 refuse the profile for good (the marker records why);
429 waits as told; 401/403, 5xx, network errors and timeouts send the same session again after
a capped backoff with full jitter (at most 60 s apart). Nothing is lost meanwhile: the file
stays.

Every request has a timeout and its answer is read up to
:data:`~rokuprof.httpbody.MAX_ANSWER_BYTES` (:func:`~rokuprof.httpbody.read_capped`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from rokuprof.export_names import FORMATS
from rokuprof.httpbody import IDENTITY, MAX_ANSWER_BYTES, answer_text, read_capped
from rokuprof.store.files import write_atomic
from rokuprof.store.layout import PYROSCOPE_MARKER, SessionDir, SessionStatus, sessions
from rokuprof.store.push_policy import Again, Pushed, PushPolicy, Refused
from rokuprof.timefmt import parse_iso, utc_iso

log = logging.getLogger(__name__)

PPROF_SUFFIX = FORMATS["pprof"].suffix  # the session's capture.pb.gz
MARKER = PYROSCOPE_MARKER
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)
#: How Pyroscope should read our pprof sample types (units it knows; live heap is averaged).
SAMPLE_TYPE_CONFIG = {
    "wall": {"units": "samples", "display-name": "wall_time"},
    "cpu": {"units": "samples", "display-name": "cpu_operations"},
    "calls": {"units": "samples", "display-name": "calls"},
    "alloc_objects": {"units": "objects"},
    "alloc_space": {"units": "bytes"},
    "inuse_objects": {"units": "objects", "aggregation": "average"},
    "inuse_space": {"units": "bytes", "aggregation": "average"},
}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def check_url(url: str) -> str | None:
    """Why ``url`` cannot be a Pyroscope base URL, or ``None`` when it can."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"expected http(s)://HOST[:PORT][/PATH], got {url!r}"
    if parts.query or parts.fragment:
        return "must not have a query or a fragment"
    return None


def _label(value: object) -> str:
    return _UNSAFE.sub("_", str(value)).strip("_")[:100] or "unknown"


def ingest_params(name: str, record: dict) -> dict[str, str]:
    """The query of one session's ``/ingest`` request."""
    device = (record.get("device") or {}).get("dir") or "unknown"
    app = (record.get("app") or {}).get("name") or "unknown"
    start = parse_iso(record.get("start")) or 0.0
    end = max(parse_iso(record.get("end")) or start, start)
    return {
        "name": f"{name}{{device={_label(device)},app={_label(app)}}}",
        "from": str(int(start)),
        "until": str(max(int(start) + 1, int(-(-end // 1)))),
        "format": "pprof",
        "spyName": "rokuprof",
    }


@dataclass
class PusherStats:
    pushed: int = 0
    refused: int = 0
    errors: int = 0
    last_error: str = ""


class PyroscopePusher:
    """See the module docstring. Run :meth:`run` as a task; cancel it to stop."""

    def __init__(
        self,
        root: Path,
        url: str,
        *,
        name: str = "roku",
        client: httpx.AsyncClient | None = None,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        rescan_seconds: float = 15.0,
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
        rng: Callable[[], float] = random.random,
        wall_clock: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        problem = check_url(url)
        if problem:
            raise ValueError(problem)
        self.root = Path(root)
        self.endpoint = url.rstrip("/") + "/ingest"
        self.name = name
        self.client = client
        self.timeout = timeout
        self.rescan_seconds = rescan_seconds
        self.policy = PushPolicy(backoff_base=backoff_base, backoff_cap=backoff_cap, rng=rng)
        self.wall_clock = wall_clock  # the time written into markers and read by Retry-After
        self.clock = clock  # monotonic: when to send again
        self.stats = PusherStats()
        self.current: Path | None = None  # the session being sent (retention keeps it)

    def pending(self) -> list[Path]:
        """Finished sessions with a pprof export and no marker, oldest first (blocking)."""
        out = []
        for session in sessions(self.root):
            if not session.export(PPROF_SUFFIX).is_file() or session.pyroscope_marker.exists():
                continue
            with contextlib.suppress(OSError, ValueError, AttributeError):
                record = session.read_record()
                if record.get("status") not in (None, SessionStatus.STREAMING):
                    out.append((record.get("start") or "", session.path))
        return [s for _, s in sorted(out)]

    async def run(self) -> None:
        client = self.client or httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        try:
            while True:
                for session in await asyncio.to_thread(self.pending):
                    await self._push_until_answered(client, session)
                await asyncio.sleep(self.rescan_seconds)
        finally:
            if self.client is None:
                await client.aclose()

    async def _push_until_answered(self, client: httpx.AsyncClient, session: Path) -> None:
        self.current = session
        try:
            while isinstance(outcome := await self.push(client, session), Again):
                await asyncio.sleep(max(0.0, outcome.at - self.clock()))
        finally:
            self.current = None

    async def push(
        self, client: httpx.AsyncClient, session: Path
    ) -> Pushed | Refused | Again | None:
        """Send one session; what the policy makes of the answer (:class:`Again`: send it again
        then), or ``None`` when the session is gone (deleted by retention meanwhile)."""
        try:
            record, data = await asyncio.to_thread(_read_session, session)
        except (OSError, ValueError):
            return None  # deleted meanwhile (retention), or not a session any more
        params = ingest_params(self.name, record)
        files = {
            "profile": ("profile.pprof", data, "application/octet-stream"),
            "sample_type_config": (
                "sample_type_config.json",
                json.dumps(SAMPLE_TYPE_CONFIG).encode(),
                "application/json",
            ),
        }
        try:
            async with client.stream(
                "POST",
                self.endpoint,
                params=params,
                files=files,
                headers=IDENTITY,
                timeout=self.timeout,
            ) as answer:
                body, _ = await read_capped(answer, MAX_ANSWER_BYTES)
        except httpx.HTTPError as exc:
            return self._again(
                session, self.policy.failed(f"{type(exc).__name__}: {exc}", self.clock())
            )
        text = answer_text(answer, body)[:200]
        headers = {k.lower(): v for k, v in answer.headers.items()}
        outcome = self.policy.answered(
            answer.status_code, headers, text, self.clock(), self.wall_clock()
        )
        match outcome:
            case Pushed(status):
                self.stats.pushed += 1
                marker = {"status": status, "name": params["name"]}
                await asyncio.to_thread(self._mark, session, marker)
                log.info("pushed %s/%s to Pyroscope", session.parent.name, session.name)
            case Refused(status, reason):
                self.stats.refused += 1
                await asyncio.to_thread(self._mark, session, {"status": status, "refused": reason})
                log.error("Pyroscope refused %s (HTTP %d): %s", session.name, status, reason)
            case Again():
                return self._again(session, outcome)
        return outcome

    def _again(self, session: Path, again: Again) -> Again:
        self.stats.errors += 1
        self.stats.last_error = again.say
        if again.logged:
            log.warning("Pyroscope push of %s failed (will retry): %s", session.name, again.say)
        return again

    def _mark(self, session: Path, what: dict) -> None:
        if not session.is_dir():
            return  # deleted meanwhile: do not bring the directory back
        marker = {"at": utc_iso(self.wall_clock(), "seconds"), **what}
        path = SessionDir(session).pyroscope_marker
        try:
            write_atomic(path, json.dumps(marker) + "\n")
        except OSError as exc:
            log.error("cannot write %s: %s", path, exc.strerror or exc)


def _read_session(session: Path) -> tuple[dict, bytes]:
    where = SessionDir(session)
    return where.read_record(), where.export(PPROF_SUFFIX).read_bytes()
