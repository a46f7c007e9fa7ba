"""The simulated installer's pure parts: server-side HTTP Digest (rokuprof.simulator.digest) on a
scripted clock and nonce source, the multipart/form-data reader, and the package checks."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest

from rokuprof.simulator.config import DeviceConfig
from rokuprof.simulator.digest import OK, REFUSED, STALE, DigestServer, parse_authorization
from rokuprof.simulator.installer import LOCAL, NETWORK, OFF, app_settings, check_package, data_dest
from rokuprof.simulator.multipart import MultipartError, parse_form


def md5(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def server(clock: Clock) -> DigestServer:
    tokens = iter(f"n{i:03d}" for i in range(1000))
    return DigestServer("s3cret", token=lambda: next(tokens), clock=clock)


def authorization(
    nonce: str,
    *,
    password: str = "s3cret",
    method: str = "POST",
    uri: str = "/plugin_install",
    nc: str = "00000001",
    user: str = "rokudev",
) -> str:
    ha1 = md5(f"{user}:rokudev:{password}")
    ha2 = md5(f"{method}:{uri}")
    response = md5(f"{ha1}:{nonce}:{nc}:abc:auth:{ha2}")
    return (
        f'Digest username="{user}", realm="rokudev", nonce="{nonce}", uri="{uri}", '
        f'response="{response}", qop=auth, nc={nc}, cnonce="abc", algorithm=MD5'
    )


def nonce_of(challenge: str) -> str:
    params = parse_authorization(challenge)
    assert params is not None
    return params["nonce"]


def test_challenge_names_realm_md5_and_qop():
    digest = server(Clock())
    challenge = digest.challenge()
    assert challenge.startswith("Digest ")
    params = parse_authorization(challenge)
    assert params == {
        "realm": "rokudev",
        "qop": "auth",
        "nonce": "n001",
        "opaque": "n000",
        "algorithm": "MD5",
    }
    assert digest.challenge(stale=True).endswith("stale=true")


def test_the_right_password_passes_and_counts_must_grow():
    digest = server(Clock())
    nonce = nonce_of(digest.challenge())
    assert digest.check("POST", "/plugin_install", authorization(nonce)).outcome == OK
    replay = digest.check("POST", "/plugin_install", authorization(nonce))
    assert (replay.outcome, replay.why) == (REFUSED, "nonce count replayed")
    again = authorization(nonce, method="GET", uri="/pkgs/channel.bsprof", nc="00000002")
    assert digest.check("GET", "/pkgs/channel.bsprof", again).outcome == OK


def test_a_uri_without_its_leading_slash_passes_as_devices_take_it():
    """@dlenroc's developer-server client signs ``plugin_install`` for ``/plugin_install``."""
    digest = server(Clock())
    nonce = nonce_of(digest.challenge())
    bare = authorization(nonce, uri="plugin_install")
    assert digest.check("POST", "/plugin_install", bare).outcome == OK
    other = authorization(nonce, uri="plugin_inspect", nc="00000002")
    assert digest.check("POST", "/plugin_install", other).why == "uri is not the request's"
    signed_for_slash = authorization(nonce, uri="/plugin_install", nc="00000003")
    said_bare = signed_for_slash.replace('uri="/plugin_install"', 'uri="plugin_install"')
    assert digest.check("POST", "/plugin_install", said_bare).why == "wrong response digest"


@pytest.mark.parametrize(
    ("header", "why"),
    [
        (None, "no Authorization header"),
        ("Basic cm9rdWRldjpzM2NyZXQ=", "not Digest"),
        (authorization("n001", password="wrong"), "wrong response digest"),
        (authorization("n001", user="admin"), "wrong user or realm"),
        (authorization("n001", uri="/plugin_inspect"), "uri is not the request's"),
        (authorization("forged"), "unknown nonce"),
        (authorization("n001", nc="zz"), "bad nc or cnonce"),
    ],
)
def test_refusals(header, why):
    digest = server(Clock())
    digest.challenge()
    verdict = digest.check("POST", "/plugin_install", header)
    assert (verdict.outcome, verdict.why) == (REFUSED, why)


def test_an_expired_nonce_is_stale_and_then_forgotten():
    clock = Clock()
    digest = server(clock)
    nonce = nonce_of(digest.challenge())
    clock.now += digest.lifetime + 0.001
    assert digest.check("POST", "/plugin_install", authorization(nonce)).outcome == STALE
    again = authorization(nonce, nc="00000002")
    assert digest.check("POST", "/plugin_install", again).why == "unknown nonce"


def test_the_oldest_nonces_are_forgotten_past_the_bound():
    digest = server(Clock())
    first = nonce_of(digest.challenge())
    for _ in range(300):
        digest.challenge()
    assert digest.check("POST", "/plugin_install", authorization(first)).why == "unknown nonce"


def form(*parts: tuple[str, str | None, bytes]) -> bytes:
    out = b""
    for name, filename, data in parts:
        extra = f'; filename="{filename}"' if filename else ""
        out += (
            (
                f'--XyZ\r\nContent-Disposition: form-data; name="{name}"{extra}\r\n'
                f"Content-Type: application/octet-stream\r\n\r\n"
            ).encode()
            + data
            + b"\r\n"
        )
    return out + b"--XyZ--\r\n"


def test_multipart_fields_and_files():
    body = form(("mysubmit", None, b"Install"), ("archive", "app.zip", b"PK\r\n--Xy\x00"))
    parts = parse_form('multipart/form-data; boundary="XyZ"', body)
    assert parts["mysubmit"].text == "Install"
    assert parts["archive"].filename == "app.zip"
    assert parts["archive"].data == b"PK\r\n--Xy\x00"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("application/x-www-form-urlencoded", b"a=b"),
        ("multipart/form-data", b"--XyZ--"),
        ("multipart/form-data; boundary=XyZ", b"nothing"),
        ("multipart/form-data; boundary=XyZ", b"--XyZ\r\nContent-Disposition: form-data"),
        ("multipart/form-data; boundary=XyZ", form(*[("f", None, b"")] * 40)),
    ],
)
def test_multipart_refusals(content_type, body):
    with pytest.raises(MultipartError):
        parse_form(content_type, body)


def package(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


def test_package_checks():
    ok = package({"manifest": "# c\ntitle = Demo\n\nbsprof_enable=1\n", "source/main.brs": ""})
    assert check_package(ok) == {"title": "Demo", "bsprof_enable": "1"}
    assert check_package(b"not a zip").startswith("Install Failure: the package is not a zip")
    nested = package({"app/manifest": "title=x\n"})
    assert check_package(nested).startswith("Install Failure: No manifest")
    bad = check_package(package({"manifest": "title=x\n<oops>\n"}))
    assert bad == "Install Failure: manifest line 2 is not key=value: <oops>"


def test_manifest_settings():
    assert data_dest(None) == NETWORK
    assert data_dest({"title": "x"}) == OFF
    assert data_dest({"bsprof_enable": "1"}) == LOCAL
    assert data_dest({"bsprof_enable": "1", "bsprof_data_dest": "network"}) == NETWORK
    manifest = {
        "title": "Demo",
        "major_version": "3",
        "minor_version": "1",
        "build_version": "7",
        "bsprof_enable_mem": "1",
        "bsprof_sample_ratio": "0.25",
    }
    cfg = app_settings(DeviceConfig(), manifest)
    assert (cfg.app_name, cfg.app_version, cfg.memory_ops, cfg.line_data) == (
        "Demo",
        "3.1.7",
        True,
        False,
    )
    assert cfg.sample_ratio == 0.25 and cfg.app_config(0).sample_ratio == 0.25
    assert app_settings(DeviceConfig(), {"bsprof_sample_ratio": "lots"}).sample_ratio == 1.0
