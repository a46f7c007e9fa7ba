"""One chunk to Sentry: read and check it, build its envelope, POST it (an asyncio I/O shell).

What the answer means is not decided here (see :mod:`rokuprof.store.delivery`). The status and
the first :data:`~rokuprof.httpbody.MAX_ANSWER_BYTES` of the answer are read (for messages),
however long it is; the connection is then closed. The DSN's key never appears in what this
returns (nor is the ``X-Sentry-Auth`` header logged). How an envelope is built is a parameter
(``build_body``), by default :func:`rokuprof.sentry.chunk_envelope` + gzip.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx

from rokuprof.httpbody import IDENTITY, MAX_ANSWER_BYTES, answer_text, read_capped
from rokuprof.sentry.dsn import Dsn
from rokuprof.sentry.envelope import EnvelopeError, chunk_envelope, gzip_body
from rokuprof.sentry.validate import validate_chunk
from rokuprof.store.spool import Spool, SpoolItem

DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=5.0)

BodyBuilder = Callable[[bytes, float], tuple[bytes, str]]
"""(chunk JSON bytes, send time) -> (gzip-compressed envelope body, chunk id)."""


def sentry_body(data: bytes, sent_at: float) -> tuple[bytes, str]:
    """The default :data:`BodyBuilder`: one ``profile_chunk`` envelope, gzip-compressed."""
    envelope = chunk_envelope(data, sent_at=sent_at)
    return gzip_body(envelope.to_bytes()), str(envelope.headers["event_id"])


def check_chunk_bytes(data: bytes) -> str | None:
    """Why Sentry would drop this chunk after accepting it, or ``None`` when it is valid."""
    problems = validate_chunk(data)
    return "; ".join(map(str, problems[:3])) if problems else None


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str]
    text: str  # the start of the answer, the key scrubbed


class Sender:
    """Prepares and POSTs envelopes for one DSN (a client of its own unless given one)."""

    def __init__(
        self,
        spool: Spool,
        dsn: Dsn,
        *,
        client: httpx.AsyncClient | None,
        timeout: httpx.Timeout | float,
        request_deadline: float,
        build_body: BodyBuilder,
        check_chunk: Callable[[bytes], str | None] | None,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.spool = spool
        self.dsn = dsn
        self.client = client
        self._own_client = client is None
        self.timeout = timeout
        self.request_deadline = request_deadline
        self.build_body = build_body
        self.check_chunk = check_chunk
        self.wall_clock = wall_clock

    def open(self) -> None:
        if self.client is None:
            self.client = httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)

    async def aclose(self) -> None:
        if self._own_client and self.client is not None:
            await self.client.aclose()
            self.client = None

    def prepare(self, item: SpoolItem) -> tuple[bytes, str] | str | None:
        """In a worker thread: the gzip-compressed envelope and chunk id to send, the reason
        the chunk is not valid, or ``None`` when it was delivered or refused already."""
        data = item.path.read_bytes()
        if self.spool.is_done(item.path):
            return None
        if self.check_chunk is not None:
            problem = self.check_chunk(data)
            if problem is not None:
                return f"not a valid chunk, not sent: {problem}"
        try:
            return self.build_body(data, self.wall_clock())
        except (EnvelopeError, ValueError) as exc:
            return f"not a valid chunk, not sent: cannot build an envelope: {exc}"

    async def post(self, body: bytes) -> Answer | str:
        """POST one envelope: Sentry's :class:`Answer`, or the network problem as text."""
        dsn = self.dsn
        headers = dsn.request_headers(gzipped=True) | IDENTITY
        try:
            async with asyncio.timeout(self.request_deadline):
                async with self.client.stream(
                    "POST", dsn.envelope_url, content=body, headers=headers
                ) as response:
                    answer, _ = await read_capped(response, MAX_ANSWER_BYTES)
        except TimeoutError:
            return f"no answer from Sentry within {self.request_deadline:g} s"
        except httpx.TimeoutException as exc:
            return f"timed out talking to Sentry ({exc.__class__.__name__})"
        except httpx.HTTPError as exc:
            return f"cannot reach Sentry: {exc.__class__.__name__}: {self.scrub(str(exc))}"
        text = self.scrub(answer_text(response, answer)[:200])
        return Answer(response.status_code, response.headers, text)

    def scrub(self, text: str) -> str:
        key = self.dsn.public_key
        return text.replace(key, "<key>") if key else text
