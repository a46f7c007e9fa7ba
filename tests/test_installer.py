"""The Application Installer end to end on loopback: rokuprof's client (rokuprof.device.installer)
against the simulated device's installer, which then runs the app as its manifest says."""

from __future__ import annotations

import asyncio
import hashlib
import io
import logging
import re
import shutil
import zipfile

import httpx
import pytest

from rokuprof.device.errors import DeviceTimeout, DeviceUnavailable, ProtocolError
from rokuprof.device.installer import (
    InstallerAuthError,
    InstallerClient,
    InstallFailed,
    PasswordError,
    read_password,
)
from rokuprof.profile.reader import ProfileReader
from rokuprof.simulator import DeviceConfig, SimulatedDevice
from rokuprof.simulator.digest import DigestServer, parse_authorization
from rokuprof.simulator.probe import read_stream
from rokuprof.simulator.runs import COMPLETE, EXITED

PASSWORD = "pa55-Wörd"
MANIFEST = "title=Demo App\nmajor_version=3\nminor_version=1\nbuild_version=7\n"


def app_zip(manifest: str, extra: str = "") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest", manifest)
        z.writestr("source/main.brs", 'sub Main()\n  print "hi"\nend sub\n' + extra)
    return buf.getvalue()


def device(**overrides) -> SimulatedDevice:
    config = dict(auto_launch=False, speed=20.0, run_seconds=2.0, dev_password=PASSWORD)
    return SimulatedDevice(DeviceConfig(**(config | overrides)))


def installer(dev: SimulatedDevice, password: str = PASSWORD, **kw) -> InstallerClient:
    return InstallerClient("127.0.0.1", password, port=dev.installer_port, timeout=10, **kw)


async def refused(port: int) -> bool:
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port)
    except ConnectionRefusedError:
        return True
    writer.close()
    return False


async def test_sideload_network_app_streams_what_its_manifest_asks():
    manifest = MANIFEST + (
        "bsprof_enable=1\nbsprof_data_dest=network\nbsprof_enable_lines=1\n"
        "bsprof_sample_ratio=0.5\nrsg_version=1.2\n"
    )
    async with device() as dev, installer(dev) as client:
        assert dev.installed is None and await refused(dev.profiler_port)
        outcome = await client.sideload(app_zip(manifest))
        assert (outcome.kind, outcome.message) == ("installed", "Install Success.")
        assert dev.installed is not None and dev.installed["title"] == "Demo App"
        run = await dev.wait_listening(5)  # the install launched it, waiting for its client
        stream = await read_stream("127.0.0.1", dev.profiler_port)
        await dev.wait_run_end(run.index, 10)
    header = ProfileReader.from_bytes(stream).header
    assert (header.target_name, header.target_version) == ("Demo App", "3.1.7")
    assert (header.line_data, header.memory_ops) == (True, False)
    assert header.requested_sample_ratio == 0.5
    assert dev.runs[0].status == COMPLETE


async def test_an_app_without_bsprof_enable_runs_with_nothing_on_the_profiler_port():
    async with device() as dev, installer(dev) as client:
        await client.sideload(app_zip(MANIFEST))
        assert dev.current is not None  # the app runs...
        assert await refused(dev.profiler_port)  # ...and nothing listens for a profiler
        assert dev.profiling_status() is None  # the console: no profiling session
        run = await dev.wait_run_end(0, 10)  # it runs its length and exits
    assert (run.status, run.exit_reason, run.bytes_sent) == (EXITED, "run-length", 0)


async def test_identical_package_is_not_reinstalled_and_a_new_one_replaces_the_running_app():
    package = app_zip(MANIFEST + "bsprof_enable=1\nbsprof_data_dest=network\n")
    async with device(run_seconds=30.0) as dev, installer(dev) as client:
        assert (await client.sideload(package)).kind == "installed"
        again = await client.sideload(package)
        assert (again.kind, again.message) == (
            "identical",
            "Application Received: Identical to previous version -- not replacing.",
        )
        assert len(dev.runs) == 1  # not relaunched
        changed = app_zip(MANIFEST + "bsprof_enable=1\nbsprof_data_dest=network\n", "' v2\n")
        assert (await client.sideload(changed)).kind == "installed"
        assert len(dev.runs) == 2 and dev.runs[0].exit_reason == "home"  # the old one exited


async def test_wrong_password_is_refused_and_nothing_is_installed():
    async with device() as dev, installer(dev, "not-it") as client:
        with pytest.raises(InstallerAuthError) as caught:
            await client.sideload(app_zip(MANIFEST))
        assert dev.installed is None and dev.runs == []
    message = str(caught.value)
    assert message.startswith("the device refused the developer password")
    assert "not-it" not in message and PASSWORD not in message


async def test_a_failure_is_the_devices_words_unescaped_and_nothing_runs():
    bad = MANIFEST + '<script>alert("x")</script> & more\n'
    async with device() as dev, installer(dev) as client:
        with pytest.raises(InstallFailed) as caught:
            await client.sideload(app_zip(bad))
        with pytest.raises(InstallFailed, match="not a zip archive"):
            await client.sideload(b"PK\x03\x04 broken")
        assert dev.installed is None and dev.runs == []
    words = 'Install Failure: manifest line 5 is not key=value: <script>alert("x")</script> & more'
    assert caught.value.words == words
    assert str(caught.value).endswith(f"did not install the app: {words}")


async def test_local_mode_keeps_the_profile_for_plugin_inspect():
    async with device() as dev, installer(dev) as client:
        assert await client.pull_profile() is None  # before any run: no profiling data
        await client.sideload(app_zip(MANIFEST + "bsprof_enable=1\nbsprof_enable_mem=1\n"))
        assert await refused(dev.profiler_port)
        assert await client.pull_profile() is None  # the run has not ended yet
        await dev.wait_run_end(0, 10)
        profile = await client.pull_profile()
        pieces: list[bytes] = []
        size = await client.pull_profile_into(pieces.append)
    reader = ProfileReader.from_bytes(profile)
    assert reader.complete and reader.header.memory_ops and not reader.header.line_data
    assert size == len(profile) == len(b"".join(pieces))
    assert dev.runs[0].status == COMPLETE


async def test_a_profile_past_the_cap_is_refused():
    async with device() as dev, installer(dev, max_profile_bytes=100) as client:
        await client.sideload(app_zip(MANIFEST + "bsprof_enable=1\n"))
        await dev.wait_run_end(0, 10)
        with pytest.raises(ProtocolError, match="larger than 100 B"):
            await client.pull_profile()


async def test_delete_returns_to_the_built_in_app():
    async with device() as dev, installer(dev) as client:
        await client.sideload(app_zip(MANIFEST))
        assert await client.delete() == "Uninstall Success."
        assert dev.installed is None and dev.config.app_name == "Café TV"


def _authorization(challenge: str, uri: str, nc: str, nonce: str | None = None) -> str:
    params = parse_authorization(challenge)
    nonce = nonce or params["nonce"]

    def md5(text: str) -> str:
        return hashlib.md5(text.encode()).hexdigest()

    ha1, ha2 = md5(f"rokudev:rokudev:{PASSWORD}"), md5(f"GET:{uri}")
    response = md5(f"{ha1}:{nonce}:{nc}:c0ffee:auth:{ha2}")
    return (
        f'Digest username="rokudev", realm="rokudev", nonce="{nonce}", uri="{uri}", '
        f'response="{response}", qop=auth, nc={nc}, cnonce="c0ffee", algorithm=MD5'
    )


async def test_digest_on_the_wire_refuses_unknown_and_replayed_nonces():
    async with device() as dev:
        base = f"http://127.0.0.1:{dev.installer_port}"
        async with httpx.AsyncClient(base_url=base, trust_env=False) as http:
            first = await http.get("/")
            assert first.status_code == 401
            challenge = first.headers["www-authenticate"]
            assert 'realm="rokudev"' in challenge and 'qop="auth"' in challenge
            good = _authorization(challenge, "/", "00000001")
            assert (await http.get("/", headers={"Authorization": good})).status_code == 200
            replayed = await http.get("/", headers={"Authorization": good})
            assert replayed.status_code == 401
            forged = _authorization(challenge, "/", "00000001", nonce="0123abcd")
            assert (await http.get("/", headers={"Authorization": forged})).status_code == 401
            other_uri = _authorization(challenge, "/", "00000002")
            answer = await http.get("/plugin_install", headers={"Authorization": other_uri})
            assert answer.status_code == 401


async def test_closed_port_and_silent_peer_name_the_installer():
    async with device() as dev:
        port = dev.installer_port
    async with InstallerClient("127.0.0.1", PASSWORD, port=port, timeout=5) as client:
        with pytest.raises(DeviceUnavailable, match=f"installer 127.0.0.1:{port}"):
            await client.sideload(b"")

    done = asyncio.Event()

    async def silent(reader, writer):  # reads the request, never answers
        await done.wait()
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        async with InstallerClient("127.0.0.1", PASSWORD, port=port, timeout=0.3) as client:
            with pytest.raises(DeviceTimeout, match=rf"installer 127.0.0.1:{port} .*0.3 s"):
                await client.pull_profile()
    finally:
        done.set()
        server.close()
        await server.wait_closed()


async def test_the_password_is_in_no_log_record(caplog):
    caplog.set_level(logging.DEBUG)
    async with device() as dev:
        for password in (PASSWORD, "wrong-" + PASSWORD):
            async with installer(dev, password) as client:
                with pytest.raises((InstallerAuthError, InstallFailed)):
                    await client.sideload(b"not a zip")
        async with installer(dev) as client:
            await client.sideload(app_zip(MANIFEST + "bsprof_enable=1\n"))
            await dev.wait_run_end(0, 10)
            await client.pull_profile()
    assert caplog.records  # httpx and the simulator did log
    for record in caplog.records:
        assert PASSWORD not in record.getMessage()
        assert PASSWORD not in repr(record.__dict__)


def test_read_password(tmp_path):
    assert read_password(None, {"ROKU_DEV_PASSWORD": "env"}) == "env"
    assert read_password(None, {"ROKU_DEV_PASSWORD": ""}) is None
    assert read_password(None, {}) is None
    secret = tmp_path / "pw"
    secret.write_bytes("fïle pw \r\nsecond line\n".encode())
    assert read_password(secret, {"ROKU_DEV_PASSWORD": "env"}) == "fïle pw "
    secret.write_bytes(b"\n")
    with pytest.raises(PasswordError, match="empty first line"):
        read_password(secret, {})
    secret.write_bytes(b"\xff\xfe")
    with pytest.raises(PasswordError, match="not UTF-8") as caught:
        read_password(secret, {})
    assert "\\xff" not in str(caught.value)
    with pytest.raises(PasswordError, match="cannot read the password file"):
        read_password(tmp_path / "missing", {})


async def test_expect_100_continue_is_answered_before_the_body():
    async with device() as dev:
        reader, writer = await asyncio.open_connection("127.0.0.1", dev.installer_port)
        try:
            writer.write(
                b"POST /plugin_install HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
                b"Expect: 100-continue\r\nConnection: close\r\n\r\n"
            )
            async with asyncio.timeout(5):
                assert await reader.readuntil(b"\r\n\r\n") == b"HTTP/1.1 100 Continue\r\n\r\n"
                writer.write(b"hello")
                assert (await reader.read()).startswith(b"HTTP/1.1 401 Unauthorized\r\n")
        finally:
            writer.close()


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
async def test_curl_digest_sideloads_as_the_public_build_scripts_do(tmp_path):
    package = tmp_path / "app.zip"
    package.write_bytes(app_zip(MANIFEST + "bsprof_enable=1\nbsprof_data_dest=network\n"))
    async with device() as dev:
        url = f"http://127.0.0.1:{dev.installer_port}/plugin_install"
        curl = await asyncio.create_subprocess_exec(
            *("curl", "-sS", "--digest", "-u", f"rokudev:{PASSWORD}", "-F", "mysubmit=Install"),
            *("-F", f"archive=@{package}", "-F", "passwd=", url),
            stdout=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(20):
            page, _ = await curl.communicate()
        assert '<font color="red">Install Success.</font>' in page.decode()
        assert dev.installed is not None and dev.current is not None


async def test_an_expired_nonce_is_refused_as_stale_and_the_client_recovers():
    now = [0.0]
    tokens = iter(f"{i:08x}" for i in range(100))
    seen: list[str] = []
    async with device() as dev:
        dev._installer.digest = DigestServer(
            PASSWORD, token=lambda: next(tokens), clock=lambda: now[0]
        )
        handle = dev._installer.handle

        async def spy(request):
            answer = await handle(request)
            stale = "stale=true" in answer[2].get("WWW-Authenticate", "")
            seen.append(f"{answer[0]}{' stale' if stale else ''}")
            return answer

        dev._installer.handle = spy
        async with installer(dev) as client:
            await client.sideload(app_zip(MANIFEST))
            now[0] += 301.0  # the nonce httpx keeps is now too old
            assert (await client.sideload(app_zip(MANIFEST))).kind == "identical"
    assert seen == ["401", "200", "401 stale", "200"]


async def curl_digest(url: str, *args: str, password: str = PASSWORD) -> tuple[str, str]:
    """curl --digest (as build scripts call the installer): (status line's code, body)."""
    curl = await asyncio.create_subprocess_exec(
        *("curl", "-sS", "--digest", "-u", f"rokudev:{password}", "-o", "-"),
        *("-w", "\n%{http_code}", *args, url),
        stdout=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(20):
        out, _ = await curl.communicate()
    body, _, code = out.decode().rpartition("\n")
    return code, body


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
async def test_head_checks_the_password_as_roku_deploy_does():
    async with device() as dev:
        url = f"http://127.0.0.1:{dev.installer_port}/plugin_install"
        code, head = await curl_digest(url, "-I")
        assert code == "200" and head.endswith("\r\n\r\n")  # headers only: no body
        code, _ = await curl_digest(url, "-I", password="wrong")
        assert code == "401"
        reader, writer = await asyncio.open_connection("127.0.0.1", dev.installer_port)
        writer.write(b"HEAD /plugin_install HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        async with asyncio.timeout(5):
            raw = await reader.read()
        writer.close()
        assert raw.startswith(b"HTTP/1.1 401 ") and raw.endswith(b"\r\n\r\n")  # no body


@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
@pytest.mark.parametrize(
    ("path", "action", "words"),
    [
        ("/plugin_inspect", "Screenshot", "Screenshot failed"),
        ("/plugin_inspect", "Rekey", "Failed: Invalid Password."),
        ("/plugin_package", "Package", "Failed: Invalid Password."),
    ],
)
async def test_what_a_profiler_does_not_do_is_refused_in_a_devices_words(path, action, words):
    async with device() as dev:
        url = f"http://127.0.0.1:{dev.installer_port}{path}"
        code, page = await curl_digest(url, "-F", f"mysubmit={action}", "-F", "passwd=x")
        assert code == "200"  # devices answer 200 and say it in the page's script
        said = re.findall(r"'Set message type', '(\w+)'\)|\"type\":\"(\w+)\"", page)
        assert ("error", "") in said or ("", "error") in said
        assert words in page and "profil" not in page.lower() and "pkgs/" not in page
