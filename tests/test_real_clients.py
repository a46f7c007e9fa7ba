"""Real Roku clients against ``rokuprof simulate`` (a process on 127.0.0.1): roku-deploy,
roku-debug, @dlenroc's roku-ecp, roku-debug-server and roku-developer-server (npm, pinned in
package.json, driven by tests/clients/roku_clients.mjs under node) and rokuecp (Python, Home
Assistant's client). Every call a profiling user, an IDE or a CI script makes must get the
answer the client expects from a device; requests outside a profiler's scope (screenshots,
packaging, rekeying) must be refused as a device refuses them, never with a profiling message.

Ports: every client here takes the device's ports as options (roku-deploy ``packagePort`` /
``remotePort`` / ``port``, roku-debug's console controller, @dlenroc's executors' addresses,
rokuecp's ``port``), so the simulator keeps its OS-chosen loopback ports; nothing binds 80, 8060
or 8080.

The npm clients load from the project's node_modules (``npm ci``; .ci/install-viewers.sh), or
from the directory named by ROKUPROF_CLIENTS_NODE_MODULES; the tests skip, saying so, when the
packages are not installed there, or when node is missing.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from daemon_helpers import start_simulator

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "tests" / "clients" / "roku_clients.mjs"
NODE_MODULES = Path(os.environ.get("ROKUPROF_CLIENTS_NODE_MODULES", ROOT / "node_modules"))
PACKAGES = (
    "roku-deploy",
    "roku-debug",
    "@dlenroc/roku-ecp",
    "@dlenroc/roku-debug-server",
    "@dlenroc/roku-developer-server",
)
MISSING = [p for p in PACKAGES if not (NODE_MODULES / p / "package.json").is_file()]
NODE = shutil.which("node")

MANIFEST = (
    "title=Client Check\nmajor_version=1\nminor_version=2\nbuild_version=3\n"
    "bsprof_enable=1\nrun_as_process=1\n"
)
MAIN_BRS = 'sub Main()\n    print "hello"\nend sub\n'
#: Words that must not appear in a refusal of something outside a profiler's scope.
PROFILING_WORDS = ("profil", "bsprof")


def write_app(root: Path, manifest: str | None) -> Path:
    (root / "source").mkdir(parents=True)
    (root / "source" / "main.brs").write_text(MAIN_BRS)
    if manifest is not None:
        (root / "manifest").write_text(manifest)
    return root


def zip_app(root: Path, target: Path) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as package:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                package.write(path, path.relative_to(root).as_posix())
    return target


async def simulator() -> tuple[asyncio.subprocess.Process, dict]:
    """``rokuprof simulate`` as a process, and its device's row (ports, password). Its output
    after that row is read and dropped as it comes, so no pipe fills up."""
    sim = await start_simulator("--json", "--run-seconds", "600", "--speed", "1")
    assert sim.stdout is not None and sim.stderr is not None
    async with asyncio.timeout(20):
        device = json.loads(await sim.stdout.readline())
    for stream in (sim.stdout, sim.stderr):
        DRAINS.add(asyncio.ensure_future(stream.read()))
    return sim, device


#: The tasks reading the simulators' output (kept so they are not collected mid-read).
DRAINS: set[asyncio.Future] = set()


async def stop(*processes: asyncio.subprocess.Process) -> None:
    """Stop what the test started (terminate; kill after 20 s)."""
    for process in processes:
        if process.returncode is None:
            process.terminate()
            try:
                async with asyncio.timeout(20):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()
    DRAINS.difference_update({d for d in DRAINS if d.done()})


def refused(error_class: str, words: str = ""):
    """A check: the call failed on the device's own words (the client's error for a device's
    error message, on a 200 page: not a 401, a 404 or a timeout), which include ``words`` and
    say nothing about profiling."""

    def check(result: dict) -> bool:
        error = result.get("error", "")
        said = error.lower()
        device_words = error_class != "DeveloperServerError" or (
            "failed: 200 OK" in error and "[errors]" in error
        )
        return (
            not result["ok"]
            and error.startswith(error_class + ":")
            and device_words
            and words in error
            and not any(word in said for word in PROFILING_WORDS)
        )

    return check


#: What each call must answer (the driver's order). ``r``: the driver's line for the call.
EXPECTED = {
    "roku-deploy validateDeveloperPassword": lambda r: r["ok"] and r["value"] is True,
    "roku-deploy validateDeveloperPassword (wrong password)": lambda r: (
        r["ok"] and r["value"] is False
    ),
    "roku-deploy getDeviceInfo": lambda r: (
        r["ok"]
        and r["value"]["serial-number"] == "YN00AA000001"
        and len(r["value"]["keyed-developer-id"]) == 40
        and r["value"]["wifi-mac"] != r["value"]["ethernet-mac"]
    ),
    "roku-deploy deploy": lambda r: r["ok"] and r["value"] == "Successful deploy",
    "roku-deploy publish (no manifest)": refused("FailedDeviceResponseError", "Install Failure"),
    "roku-debug bsprof status": lambda r: (
        r["ok"] and r["value"].strip().startswith("status: running,cpu")
    ),
    "roku-debug bsprof pause": lambda r: r["ok"] and r["value"].strip() == "bsprof paused",
    "roku-debug bsprof resume": lambda r: r["ok"] and r["value"].strip() == "bsprof resumed",
    "roku-debug chanperf": lambda r: r["ok"] and "swap=" in r["value"],
    "roku-debug ChanperfTracker": lambda r: (
        r["ok"] and r["value"]["error"] is None and r["value"]["memory"]["total"] > 0
    ),
    "debug-server getProfilingStatus": lambda r: (
        r["ok"] and r["value"]["resumed"] is True and r["value"]["destination"] == "local"
    ),
    "debug-server pauseProfiling": lambda r: r["ok"],
    "debug-server resumeProfiling": lambda r: r["ok"],
    "debug-server getChannelPerformanceStats": lambda r: (
        r["ok"] and r["value"]["memory"]["total"] > 0 and r["value"]["memory"]["swap"] == 0
    ),
    "roku-ecp queryDeviceInfo": lambda r: r["ok"] and r["value"]["serial-number"] == "YN00AA000001",
    "roku-ecp queryApps": lambda r: r["ok"] and any(a["id"] == "dev" for a in r["value"]),
    "roku-ecp queryActiveApp": lambda r: (
        r["ok"] and r["value"]["app"]["id"] == "dev" and r["value"]["app"]["name"] == "Client Check"
    ),
    "roku-ecp queryAppState": lambda r: r["ok"] and r["value"]["state"] == "active",
    "roku-ecp queryMediaPlayer": lambda r: (
        r["ok"] and r["value"]["error"] is False and r["value"]["plugin"]["id"] == "dev"
    ),
    "roku-ecp keypress": lambda r: r["ok"],
    "roku-ecp exitApp": lambda r: r["ok"] and r["value"] is True,
    "roku-ecp queryAppState (after exit)": lambda r: r["ok"] and r["value"]["state"] == "inactive",
    "developer-server saveProfilingData": lambda r: r["ok"] and r["value"] == "pkgs/channel.bsprof",
    "developer-server installChannel": lambda r: r["ok"],
    "roku-ecp launch": lambda r: r["ok"],
    "developer-server takeScreenshot": refused("DeveloperServerError", "Screenshot"),
    "developer-server packageChannel": refused("DeveloperServerError", "Invalid Password"),
    "developer-server rekey": refused("DeveloperServerError", "Invalid Password"),
    "roku-deploy takeScreenshot": refused("FailedDeviceResponseError", "Screenshot"),
    "roku-deploy rekeyDevice": refused("FailedDeviceResponseError", "Invalid Password"),
    "roku-deploy signExistingPackage": refused("FailedDeviceResponseError", "Invalid Password"),
    "roku-deploy getDevId": lambda r: r["ok"] and re.fullmatch(r"[0-9a-f]{40}", r["value"]),
    "roku-deploy pressHomeButton": lambda r: r["ok"],
    "developer-server deleteChannel": lambda r: r["ok"],
}


def verdicts(lines: list[dict], expected: dict) -> dict[str, bool]:
    """Each expected call: whether its answer is the right one (a call missing, or an answer
    without the expected fields: False)."""
    seen = {line["call"]: line for line in lines}
    return {name: _holds(check, seen.get(name)) for name, check in expected.items()}


def _holds(check, line: dict | None) -> bool:
    try:
        return line is not None and bool(check(line))
    except (KeyError, TypeError, AttributeError):
        return False


@pytest.mark.skipif(NODE is None, reason="node is not installed")
@pytest.mark.skipif(
    bool(MISSING), reason=f"npm clients not installed in {NODE_MODULES} (npm ci): {MISSING}"
)
async def test_the_npm_clients_calls_get_a_devices_answers(tmp_path):
    app = write_app(tmp_path / "app", MANIFEST)
    out = tmp_path / "out"
    out.mkdir()
    zip_app(write_app(tmp_path / "bare", None), out / "nomanifest.zip")
    second = zip_app(
        write_app(tmp_path / "second", MANIFEST.replace("Check", "Two")), out / "2.zip"
    )
    sim, device = await simulator()
    try:
        config = {
            "nodeModules": str(NODE_MODULES),
            "host": device["host"],
            "ecp": device["ecp"],
            "console": device["console"],
            "installer": device["installer"],
            "password": device["password"],
            "appDir": str(app),
            "outDir": str(out),
            "noManifestZip": "nomanifest.zip",
            "secondZip": str(second),
        }
        (tmp_path / "config.json").write_text(json.dumps(config))
        assert NODE is not None
        node = await asyncio.create_subprocess_exec(
            NODE,
            str(DRIVER),
            str(tmp_path / "config.json"),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=tmp_path,
        )
        try:
            async with asyncio.timeout(240):  # each call has its own 10 s timeout
                stdout, stderr = await node.communicate()
        finally:
            await stop(node)
    finally:
        await stop(sim)
    assert node.returncode == 0, stderr.decode(errors="replace")[-2000:]
    lines = [json.loads(line) for line in stdout.decode().splitlines() if line.startswith("{")]
    results = verdicts(lines, EXPECTED)
    failed = {
        name: next((line for line in lines if line["call"] == name), None)
        for name, ok in results.items()
        if not ok
    }
    assert not failed, f"{len(failed)} of {len(results)} calls failed: {failed}"


async def test_rokuecp_reads_the_device_and_drives_it():
    """rokuecp (Home Assistant's client): update() reads device-info, active app, apps and,
    while an app runs, the media player; keys and launch go through. Each call is judged on its
    own, so a failure names every call that went wrong."""
    rokuecp = pytest.importorskip("rokuecp", reason="rokuecp is not installed (the test extra)")
    sim, device = await simulator()
    results: dict[str, object] = {}
    try:
        async with rokuecp.Roku(device["host"], port=device["ecp"]) as roku:

            async def first() -> bool:
                info = await roku.update(full_update=True)
                return (
                    info.info.serial_number == "YN00AA000001"
                    and info.info.ethernet_mac != info.info.wifi_mac
                    and any(app.app_id == "dev" for app in info.apps)
                )

            async def running() -> bool:
                info = await roku.update()  # an app runs: the media player is read too
                return info.app is not None and info.app.app_id == "dev" and info.media is None

            async def home() -> bool:
                info = await roku.update()
                return info.app is not None and info.app.app_id is None  # the home screen

            calls = {
                "update(full_update=True)": first,
                "remote('select')": lambda: roku.remote("select"),
                "launch('dev')": lambda: roku.launch("dev"),
                "update() while the app runs": running,
                "remote('home')": lambda: roku.remote("home"),
                "update() at home": home,
            }
            for name, call in calls.items():
                try:
                    results[name] = await call() is not False
                except rokuecp.RokuError as error:
                    results[name] = f"{type(error).__name__}: {error}"
    finally:
        await stop(sim)
    failed = {name: r for name, r in results.items() if r is not True}
    assert not failed, f"{len(failed)} of {len(results)} rokuecp calls failed: {failed}"
