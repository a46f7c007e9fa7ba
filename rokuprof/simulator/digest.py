"""HTTP Digest authentication, the server's side, as a Roku's developer web UI does it: realm
``rokudev``, MD5, ``qop=auth`` (RFC 7616). Pure: the nonce source and the clock are injected.

A request is let in only with a nonce this server issued, not older than ``lifetime`` seconds,
with a nonce count above the last one seen for that nonce (no replay), for the request's own
method and URI (as the request target, or without its leading ``/`` as @dlenroc's client
writes it and devices accept), and a response digest equal (compared in constant time) to the
one the password gives. An expired nonce with a right digest is answered with a fresh
challenge marked ``stale=true`` (the client retries without asking the user again).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

REALM = "rokudev"
USER = "rokudev"
#: Nonces remembered at once (the oldest is forgotten first).
MAX_NONCES = 256
#: Seconds a nonce stays valid.
NONCE_LIFETIME = 300.0

_PARAM = re.compile(r'\s*([A-Za-z0-9_-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^,\s]*)\s*(?:,|$)')

OK = "ok"
STALE = "stale"
REFUSED = "refused"


def _md5(text: str) -> str:
    return hashlib.md5(text.encode("utf-8")).hexdigest()


def parse_authorization(header: str) -> dict[str, str] | None:
    """The parameters of a ``Digest`` Authorization header (lower-case names), or None when it
    is not one."""
    scheme, _, rest = header.strip().partition(" ")
    if scheme.lower() != "digest":
        return None
    params: dict[str, str] = {}
    for match in _PARAM.finditer(rest[:4096]):
        value = match.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        params[match.group(1).lower()] = value
    return params


@dataclass(frozen=True)
class Verdict:
    """``outcome``: :data:`OK`, :data:`STALE` (right password, expired nonce) or
    :data:`REFUSED`; ``why`` says which check failed (for tests and debug logs; never the
    password)."""

    outcome: str
    why: str = ""


@dataclass(eq=False)
class DigestServer:
    """Issues challenges and checks Authorization headers against one password."""

    password: str = field(repr=False)
    _: KW_ONLY
    token: Callable[[], str]  # a new nonce (and, once, the opaque value)
    clock: Callable[[], float]  # monotonic seconds: a nonce's age
    realm: str = REALM
    user: str = USER
    lifetime: float = NONCE_LIFETIME
    opaque: str = field(init=False)
    _nonces: OrderedDict[str, list[float]] = field(  # nonce -> [issued, last nc]
        init=False, default_factory=OrderedDict
    )

    def __post_init__(self) -> None:
        self.opaque = self.token()

    def challenge(self, stale: bool = False) -> str:
        """A ``WWW-Authenticate`` value with a new nonce."""
        nonce = self.token()
        self._nonces[nonce] = [self.clock(), 0]
        while len(self._nonces) > MAX_NONCES:
            self._nonces.popitem(last=False)
        value = (
            f'Digest realm="{self.realm}", qop="auth", nonce="{nonce}", '
            f'opaque="{self.opaque}", algorithm=MD5'
        )
        return value + (", stale=true" if stale else "")

    def check(self, method: str, uri: str, header: str | None) -> Verdict:
        """Whether a request (its method, its request target as sent, its Authorization
        header) may pass."""
        if not header:
            return Verdict(REFUSED, "no Authorization header")
        p = parse_authorization(header)
        if p is None:
            return Verdict(REFUSED, "not Digest")
        if p.get("username") != self.user or p.get("realm") != self.realm:
            return Verdict(REFUSED, "wrong user or realm")
        if p.get("algorithm", "MD5").upper() != "MD5" or p.get("qop") != "auth":
            return Verdict(REFUSED, "not MD5 with qop=auth")
        said = p.get("uri", "")
        if said != uri and "/" + said != uri:  # devices take the URI without its leading "/"
            return Verdict(REFUSED, "uri is not the request's")
        nonce, nc, cnonce = p.get("nonce", ""), p.get("nc", ""), p.get("cnonce", "")
        if not cnonce or not re.fullmatch(r"[0-9a-fA-F]{8}", nc):
            return Verdict(REFUSED, "bad nc or cnonce")
        ha1 = _md5(f"{self.user}:{self.realm}:{self.password}")
        ha2 = _md5(f"{method}:{said}")  # the digest covers the URI as the client wrote it
        expected = _md5(f"{ha1}:{nonce}:{nc}:{cnonce}:auth:{ha2}")
        if not hmac.compare_digest(expected.encode(), p.get("response", "").lower().encode()):
            return Verdict(REFUSED, "wrong response digest")
        state = self._nonces.get(nonce)
        if state is None:
            return Verdict(REFUSED, "unknown nonce")
        if self.clock() - state[0] > self.lifetime:
            del self._nonces[nonce]
            return Verdict(STALE, "expired nonce")
        if int(nc, 16) <= state[1]:
            return Verdict(REFUSED, "nonce count replayed")
        state[1] = int(nc, 16)
        return Verdict(OK)
