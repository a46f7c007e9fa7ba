"""Sentry envelopes carrying one profile chunk: encode, decode, check (pure, no I/O).

The wire form is newline-separated JSON::

    {"event_id":"<32 hex>","sent_at":"<RFC 3339>","sdk":{"name":"rokuprof","version":"..."}}
    {"type":"profile_chunk","platform":"brightscript","length":<payload bytes>}
    {...the chunk JSON...}

One ``profile_chunk`` item per envelope (Relay rejects the whole envelope for a second one), and
the item header's ``platform`` equals the payload's. The body may be gzip-compressed for HTTP
(``Content-Encoding: gzip``); :func:`gzip_body` does it deterministically.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from rokuprof.sentry.assemble import CLIENT_SDK, PLATFORM, Chunk, new_uuid
from rokuprof.sentry.validate import INVALID_PROFILE_TYPE, Problem, validate_chunk
from rokuprof.timefmt import utc_iso

PROFILE_CHUNK = "profile_chunk"
CONTENT_TYPE = "application/x-sentry-envelope"
_GZIP_MAGIC = b"\x1f\x8b"


class EnvelopeError(ValueError):
    """Bytes that are not a well-formed envelope (or not the one expected)."""


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def rfc3339(t: float | datetime) -> str:
    """``2026-11-21T15:04:05.123456Z`` for an epoch time or an aware datetime."""
    return utc_iso(t, "microseconds")


@dataclass
class EnvelopeItem:
    headers: dict
    payload: bytes

    @property
    def type(self) -> str | None:
        return self.headers.get("type")

    def json(self) -> object:
        try:
            return json.loads(self.payload)
        except ValueError as exc:
            raise EnvelopeError(f"item payload is not JSON: {exc}") from None


@dataclass
class Envelope:
    headers: dict
    items: list[EnvelopeItem] = field(default_factory=list)

    def to_bytes(self) -> bytes:
        """The envelope's wire form; every item carries its ``length``."""
        parts = [_dumps(self.headers), b"\n"]
        for item in self.items:
            headers = {k: v for k, v in item.headers.items() if k != "length"}
            headers["length"] = len(item.payload)
            parts += [_dumps(headers), b"\n", item.payload, b"\n"]
        return b"".join(parts)

    @classmethod
    def from_bytes(cls, data: bytes) -> Envelope:
        """Parse an envelope (gzip-compressed or not). Items with a ``length`` take exactly that
        many bytes; without one, the payload runs to the next newline."""
        if data[:2] == _GZIP_MAGIC:
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as exc:
                raise EnvelopeError(f"bad gzip data: {exc}") from None
        line, pos = _line(data, 0)
        headers = _json_object(line, "envelope header")
        items = []
        while pos < len(data):
            line, pos = _line(data, pos)
            if not line.strip():
                continue  # a trailing newline
            item_headers = _json_object(line, "item header")
            length = item_headers.get("length")
            if length is None:
                payload, pos = _line(data, pos)
            else:
                if not isinstance(length, int) or isinstance(length, bool) or length < 0:
                    raise EnvelopeError(f"bad item length {length!r}")
                if pos + length > len(data):
                    raise EnvelopeError("item payload is cut short")
                payload = data[pos : pos + length]
                pos += length
                if pos < len(data) and data[pos : pos + 1] == b"\n":
                    pos += 1
            items.append(EnvelopeItem(item_headers, payload))
        return cls(headers, items)

    def profile_chunk(self) -> dict:
        """The payload of the envelope's only item, which must be a profile chunk."""
        if len(self.items) != 1 or self.items[0].type != PROFILE_CHUNK:
            kinds = [item.type for item in self.items]
            raise EnvelopeError(f"expected one profile_chunk item, found {kinds}")
        payload = self.items[0].json()
        if not isinstance(payload, dict):
            raise EnvelopeError("the profile chunk is not a JSON object")
        return payload


def _line(data: bytes, pos: int) -> tuple[bytes, int]:
    end = data.find(b"\n", pos)
    if end < 0:
        return data[pos:], len(data)
    return data[pos:end], end + 1


def _json_object(line: bytes, what: str) -> dict:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise EnvelopeError(f"{what} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise EnvelopeError(f"{what} is not a JSON object")
    return value


def chunk_envelope(
    chunk: Chunk | Mapping | bytes,
    *,
    sent_at: float | datetime,
    event_id: str | None = None,
    sdk: Mapping[str, str] = CLIENT_SDK,
) -> Envelope:
    """The envelope for one chunk. ``event_id`` defaults to the chunk's ``chunk_id`` (so a
    re-sent chunk keeps its envelope id); ``sent_at`` is when it is sent (epoch seconds)."""
    if isinstance(chunk, Chunk):  # the builder's own: no need to parse it again
        payload, data = {"platform": PLATFORM, "chunk_id": chunk.chunk_id}, chunk.data
    elif isinstance(chunk, bytes | bytearray):
        data = bytes(chunk)
        try:
            payload = json.loads(data)
        except ValueError as exc:
            raise EnvelopeError(f"chunk is not JSON: {exc}") from None
    else:
        payload, data = chunk, _dumps(chunk)
    if not isinstance(payload, Mapping) or not isinstance(payload.get("platform"), str):
        raise EnvelopeError("chunk has no platform")
    if event_id is None:
        chunk_id = payload.get("chunk_id")
        event_id = chunk_id if isinstance(chunk_id, str) else new_uuid()
    headers = {"event_id": event_id, "sent_at": rfc3339(sent_at), "sdk": dict(sdk)}
    item = EnvelopeItem({"type": PROFILE_CHUNK, "platform": payload["platform"]}, data)
    return Envelope(headers, [item])


def check_envelope(envelope: Envelope) -> list[Problem]:
    """Relay's view of an envelope carrying a chunk: exactly one ``profile_chunk`` item whose
    ``platform`` header equals the payload's, and a chunk :func:`validate_chunk` accepts."""
    chunks = [item for item in envelope.items if item.type == PROFILE_CHUNK]
    if len(chunks) != 1:
        return [Problem("envelope_rejected", f"{len(chunks)} profile_chunk items (need one)")]
    item = chunks[0]
    problems = validate_chunk(item.payload)
    try:
        platform = json.loads(item.payload).get("platform")
    except (ValueError, AttributeError):
        platform = None
    if item.headers.get("platform") != platform:
        problems.insert(
            0,
            Problem(
                INVALID_PROFILE_TYPE,
                f"item header platform {item.headers.get('platform')!r} "
                f"differs from the payload's {platform!r}",
            ),
        )
    return problems


def gzip_body(data: bytes) -> bytes:
    """Gzip for ``Content-Encoding: gzip``; deterministic (no timestamp in the header)."""
    return gzip.compress(data, compresslevel=6, mtime=0)
