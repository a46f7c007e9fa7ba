"""An HTTP answer's body, read up to a cap and never held past it (the one reader of every
client whose peer may be broken or hostile: a device's ECP, Sentry, Pyroscope).

The body is read as it arrives, as the bytes on the wire (``aiter_raw``: before any
decompression, so a small compressed body cannot expand past the cap), and reading stops at the
cap: the rest is never read, and leaving the ``client.stream(...)`` block then closes the
connection. Requests that only want a message out of the answer send :data:`IDENTITY`, so the
bytes kept are readable text.
"""

from __future__ import annotations

import httpx

#: Of the answer to an upload (Sentry, Pyroscope), this much is read: enough for its message.
MAX_ANSWER_BYTES = 4 * 1024
#: Request headers asking for an answer that is not compressed.
IDENTITY = {"Accept-Encoding": "identity"}


async def read_capped(response: httpx.Response, cap: int) -> tuple[bytes, bool]:
    """At most ``cap`` bytes of the body, and whether more followed (left unread)."""
    body = bytearray()
    async for piece in response.aiter_raw():
        room = cap - len(body)
        body += piece[:room]
        if len(piece) > room:
            return bytes(body), True
    return bytes(body), False


def answer_text(response: httpx.Response, body: bytes) -> str:
    """The answer's text for a message, on one line (a compressed answer is only named)."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        return f"({encoding[:40]}-encoded answer, not shown)"
    return " ".join(body.decode("utf-8", "replace").split())
