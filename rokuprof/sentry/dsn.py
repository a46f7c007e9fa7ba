"""Sentry DSNs: where envelopes go and how to authenticate (pure, no I/O).

A DSN ``{scheme}://{public_key}[:{secret}]@{host}[:{port}]{path}/{project_id}`` gives the
envelope endpoint (the "store URL" for envelopes)
``{scheme}://{host}[:{port}]{path}/api/{project_id}/envelope/`` and the ``X-Sentry-Auth`` header
``Sentry sentry_key=<public_key>, sentry_version=7, sentry_client=<name>/<version>``.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from rokuprof import __version__
from rokuprof.sentry.envelope import CONTENT_TYPE

SENTRY_VERSION = 7
CLIENT = f"rokuprof/{__version__}"


class DsnError(ValueError):
    """A DSN that cannot be used."""


@dataclass(frozen=True)
class Dsn:
    scheme: str
    public_key: str
    host: str  # host name or bracketed IPv6 address, with ":port" when one is given
    path: str  # prefix before the project ID, "" or "/something"
    project_id: str
    secret_key: str | None = None

    @classmethod
    def parse(cls, text: str) -> Dsn:
        text = text.strip()
        try:
            parts = urlsplit(text)
            port = parts.port  # raises ValueError on a bad port
        except ValueError as exc:
            raise DsnError(f"not a DSN: {exc}") from None
        if parts.scheme not in ("http", "https"):
            raise DsnError(f"DSN scheme must be http or https, not {parts.scheme!r}")
        if not parts.username:
            raise DsnError("DSN has no public key (expected scheme://KEY@host/PROJECT)")
        if not parts.hostname:
            raise DsnError("DSN has no host")
        if parts.query or parts.fragment:
            raise DsnError("DSN must not have a query or fragment")
        prefix, _, project = parts.path.rstrip("/").rpartition("/")
        if not project:
            raise DsnError("DSN has no project ID (expected .../PROJECT_ID at the end)")
        host = parts.hostname
        if ":" in host:
            host = f"[{host}]"
        if port is not None:
            host = f"{host}:{port}"
        return cls(
            scheme=parts.scheme,
            public_key=parts.username,
            host=host,
            path=prefix,
            project_id=project,
            secret_key=parts.password or None,
        )

    @property
    def envelope_url(self) -> str:
        """Where envelopes are posted: ``.../api/{project_id}/envelope/``."""
        return f"{self.scheme}://{self.host}{self.path}/api/{self.project_id}/envelope/"

    def auth_header(self, client: str = CLIENT) -> str:
        """The ``X-Sentry-Auth`` header value."""
        return (
            f"Sentry sentry_key={self.public_key}, sentry_version={SENTRY_VERSION}, "
            f"sentry_client={client}"
        )

    def request_headers(self, *, gzipped: bool = False, client: str = CLIENT) -> dict[str, str]:
        """Headers for posting an envelope body (gzip-compressed when ``gzipped``)."""
        headers = {"Content-Type": CONTENT_TYPE, "X-Sentry-Auth": self.auth_header(client)}
        if gzipped:
            headers["Content-Encoding"] = "gzip"
        return headers

    def __str__(self) -> str:
        secret = f":{self.secret_key}" if self.secret_key else ""
        return f"{self.scheme}://{self.public_key}{secret}@{self.host}{self.path}/{self.project_id}"
