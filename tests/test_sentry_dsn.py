"""DSN parsing, the envelope URL and the X-Sentry-Auth header (checked against sentry_sdk)."""

from __future__ import annotations

import pytest
from sentry_sdk.consts import EndpointType
from sentry_sdk.utils import Dsn as SdkDsn

from rokuprof import __version__
from rokuprof.sentry.dsn import Dsn, DsnError


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("https://abc123@o1.ingest.sentry.io/42", "https://o1.ingest.sentry.io/api/42/envelope/"),
        ("http://key@127.0.0.1:9000/7", "http://127.0.0.1:9000/api/7/envelope/"),
        ("http://key@localhost:8000/sentry/prefix/3", "http://localhost:8000/sentry/prefix/api/3/envelope/"),
    ],
)  # fmt: skip
def test_envelope_url_matches_the_official_sdk(text, url):
    dsn = Dsn.parse(text)
    assert dsn.envelope_url == url
    sdk = SdkDsn(text).to_auth(f"rokuprof/{__version__}")
    assert sdk.get_api_url(EndpointType.ENVELOPE) == url


def test_fields_and_auth_header():
    dsn = Dsn.parse(" https://pub:sec@o9.ingest.us.sentry.io/sub/123 ")
    assert (dsn.scheme, dsn.public_key, dsn.secret_key) == ("https", "pub", "sec")
    assert (dsn.host, dsn.path, dsn.project_id) == ("o9.ingest.us.sentry.io", "/sub", "123")
    assert dsn.auth_header() == (
        f"Sentry sentry_key=pub, sentry_version=7, sentry_client=rokuprof/{__version__}"
    )
    assert str(dsn) == "https://pub:sec@o9.ingest.us.sentry.io/sub/123"


def test_a_trailing_slash_is_tolerated():
    assert (
        Dsn.parse("https://k@example.com/5/").envelope_url == "https://example.com/api/5/envelope/"
    )


def test_ipv6_hosts_keep_their_brackets():
    dsn = Dsn.parse("http://k@[::1]:9000/7")
    assert dsn.envelope_url == "http://[::1]:9000/api/7/envelope/"


def test_request_headers():
    dsn = Dsn.parse("http://k@127.0.0.1:1/2")
    assert dsn.request_headers() == {
        "Content-Type": "application/x-sentry-envelope",
        "X-Sentry-Auth": dsn.auth_header(),
    }
    assert dsn.request_headers(gzipped=True)["Content-Encoding"] == "gzip"
    assert "sentry_client=me/1" in dsn.request_headers(client="me/1")["X-Sentry-Auth"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "o1.ingest.sentry.io/42",
        "ftp://k@host/1",
        "https://host/1",
        "https://k@/1",
        "https://k@host",
        "https://k@host/",
        "https://k@host:notaport/1",
        "https://k@host/1?x=1",
    ],
)
def test_bad_dsns(text):
    with pytest.raises(DsnError):
        Dsn.parse(text)
