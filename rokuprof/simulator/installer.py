"""The simulated device's Application Installer (port 80 on a Roku): sideloading with HTTP Digest
auth, and the profile a local-mode run kept.

``POST /plugin_install`` (``mysubmit=Install``/``Replace``: check the zip and its manifest,
install, launch; ``Delete``), ``POST /plugin_inspect`` (``mysubmit=dloadProf``) and ``GET
/pkgs/channel.bsprof``, each answered as a device does: ``200`` and a page whose script says
the messages, each typed success, info or error (:mod:`.installer_markup`), the outcome also in
``<font color="red">``. ``HEAD`` of a page answers the head a ``GET`` would have (roku-deploy's
password check). What a profiler's device is not asked for is refused in a device's words:
packaging (``/plugin_package``) and rekeying with the words for a wrong signing password (no
developer key is held), screenshots (no screen). After an install the device honours the
manifest for later launches (:meth:`Installer.settings`, :meth:`Installer.start_run`):
``bsprof_enable`` not 1, nothing listens on the profiler port; ``bsprof_data_dest=local`` (the
default), nothing listens either and the stream's bytes are kept for ``plugin_inspect``; the
metrics, sample ratio, pausing and the app's name and version come from the manifest, and the
app that runs is the package's own (its functions, files, lines and threads, read from its
source: :mod:`.app_package`). Before any install (and after a Delete), or for a package without
BrightScript, the simulator's built-in synthetic Café TV model runs.
"""

from __future__ import annotations

import asyncio
import io
import logging
import zipfile
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from rokuprof.device.constants import LOCAL_PROFILE_PATH
from rokuprof.simulator import identity
from rokuprof.simulator import installer_markup as markup
from rokuprof.simulator.app_package import package_model
from rokuprof.simulator.digest import OK, STALE, DigestServer
from rokuprof.simulator.http import BadRequest, Request, read_request, response
from rokuprof.simulator.multipart import MultipartError, parse_form
from rokuprof.simulator.tcp import TcpService

if TYPE_CHECKING:
    from rokuprof.simulator.app_model import AppModel
    from rokuprof.simulator.config import DeviceConfig
    from rokuprof.simulator.runs import RunRecord

log = logging.getLogger(__name__)


class Claimable(Protocol):
    """A launched run as the installer sees it: a local-mode run is claimed by its sink."""

    claimed: asyncio.Future


class Installing(Protocol):
    """What the installer needs of a device, and all it may touch."""

    config: DeviceConfig
    installed: dict[str, str] | None

    async def home(self, reason: str = ...) -> bool: ...
    async def launch(self) -> RunRecord: ...
    def exit_run(self, run: Claimable, reason: str) -> None: ...


#: Largest request body (an app package) the installer takes.
MAX_UPLOAD_BYTES = 8 << 20
#: Largest manifest read from a package.
MAX_MANIFEST_BYTES = 64 << 10
#: A local-mode run keeps at most this much of its profile (like a device's storage filling).
MAX_LOCAL_PROFILE_BYTES = 256 << 20

INSTALL_SUCCESS = "Install Success."
IDENTICAL = "Application Received: Identical to previous version -- not replacing."
NO_PROFILE = "No profiling data available"
PROFILE_READY = "Profiling data ready"
DELETED = ((markup.SUCCESS, "Delete Succeeded."), (markup.SUCCESS, "Uninstall Success."))
#: What a device says to a wrong signing password (packaging, rekeying): the simulator holds no
#: developer key, so no password is right.
BAD_SIGNING_PASSWORD = "Failed: Invalid Password."
#: The answer to a screenshot: the simulator has no screen (our wording).
NO_SCREENSHOT = "Screenshot failed: this device has no screen to capture."

HTML = {"Content-Type": "text/html; charset=utf-8"}
UNAUTHORIZED = b"<html><body>401 Unauthorized</body></html>\n"

NETWORK, LOCAL, OFF = "network", "local", "off"
#: The pages the installer serves (GET and HEAD answer the form; the last three take POSTs).
PAGES = ("/", "/plugin_install", "/plugin_inspect", "/plugin_package")


# -- packages and manifests (pure) -------------------------------------------------------------


def parse_manifest(text: str) -> dict[str, str] | str:
    """A manifest's keys, or the failure words when a line is not ``key=value``."""
    keys: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        key, sep, value = stripped.partition("=")
        if not sep or not key.strip():
            return f"Install Failure: manifest line {number} is not key=value: {stripped[:80]}"
        keys[key.strip()] = value.strip()
    return keys


def check_package(data: bytes) -> dict[str, str] | str:
    """The manifest of an app package (a zip with ``manifest`` at its root), or the failure
    words a device would show."""
    try:
        package = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, OSError):
        return "Install Failure: the package is not a zip archive."
    with package:
        try:
            info = package.getinfo("manifest")
        except KeyError:
            return "Install Failure: No manifest. The package has no manifest at its root."
        if info.file_size > MAX_MANIFEST_BYTES:
            return "Install Failure: the manifest is too large."
        try:
            text = package.read(info).decode("utf-8-sig")
        except (zipfile.BadZipFile, RuntimeError, OSError, ValueError, EOFError):
            return "Install Failure: the manifest cannot be read."
    return parse_manifest(text)


def data_dest(manifest: dict[str, str] | None) -> str:
    """Where an installed app's profile goes: :data:`NETWORK` (port 8090; also before any
    install), :data:`LOCAL` (kept for plugin_inspect) or :data:`OFF` (not profiled)."""
    if manifest is None:
        return NETWORK
    if manifest.get("bsprof_enable", "0") != "1":
        return OFF
    return NETWORK if manifest.get("bsprof_data_dest", LOCAL).lower() == NETWORK else LOCAL


def app_settings(base: DeviceConfig, manifest: dict[str, str]) -> DeviceConfig:
    """``base`` running the app the manifest describes."""
    version = ".".join(
        manifest[k] for k in ("major_version", "minor_version", "build_version") if k in manifest
    )
    try:
        ratio = min(1.0, max(0.001, float(manifest.get("bsprof_sample_ratio", "1.0"))))
    except ValueError:
        ratio = 1.0
    return replace(
        base,
        app_name=manifest.get("title") or base.app_name,
        app_version=version or base.app_version,
        memory_ops=manifest.get("bsprof_enable_mem") == "1",
        line_data=manifest.get("bsprof_enable_lines") == "1",
        sample_ratio=ratio,
        pause_on_start=manifest.get("bsprof_pause_on_start") == "1",
        vary_runs=False,  # one build, one run: profile's repeated runs compare builds
    )


def page(message: str, body: str = "", kind: str = markup.ERROR) -> bytes:
    """An installer page saying one ``message`` (none when empty) as firmware does
    (:mod:`.installer_markup`)."""
    return markup.page([(kind, message)], body)


class LocalSink:
    """Stands in for the profiler connection of a local-mode run: the stream's bytes are kept
    as the device's profile file. The first write (the HTTP head the stream begins with) is not
    part of the file. An orderly close saves the file; an abort does not."""

    def __init__(self, on_saved: Callable[[bytes], None], cap: int = MAX_LOCAL_PROFILE_BYTES):
        self.data = bytearray()
        self.transport = self
        self._on_saved = on_saved
        self._cap = cap
        self._head = True
        self._closing = self._aborted = False

    def write(self, data: bytes) -> None:
        if self._head:
            self._head = False
            return
        self.data += data[: max(0, self._cap - len(self.data))]

    async def drain(self) -> None:
        await asyncio.sleep(0)

    def is_closing(self) -> bool:
        return self._closing

    def get_extra_info(self, name: str, default: object = None) -> object:
        return ("local", 0) if name == "peername" else default

    def abort(self) -> None:
        self._closing = self._aborted = True

    def close(self) -> None:
        if not self._closing:
            self._closing = True
            self._on_saved(bytes(self.data))

    async def wait_closed(self) -> None:
        return None


class Installer:
    """The installer of one simulated device: its password, what is installed, the kept
    profile, and the HTTP service."""

    def __init__(self, device: Installing) -> None:
        self.device = device
        config = self.base = device.config
        self.password = config.dev_password or config.token()[:16]
        self.digest = DigestServer(self.password, token=config.token, clock=config.monotonic)
        self.package: bytes | None = None
        self.profile: bytes | None = None  # the last local-mode run's file
        self.model: AppModel | None = None  # the installed app's, read from its source
        self._service = TcpService("installer", self.serve)

    async def start(self, host: str, port: int) -> int:
        return await self._service.start(host, port)

    async def stop(self) -> None:
        await self._service.stop()

    @property
    def dest(self) -> str:
        return data_dest(self.device.installed)

    def start_run(self, run: Claimable) -> bool:
        """A launch after an install: False when the run streams on the profiler port as
        before; True when it does not (local mode: kept; not profiled: it runs its length)."""
        dest = self.dest
        if dest == NETWORK:
            return False
        if dest == LOCAL:
            run.claimed.set_result((None, LocalSink(self._saved)))
        else:
            cfg = self.device.config
            loop = asyncio.get_running_loop()
            loop.call_later(cfg.run_seconds / cfg.speed, self.device.exit_run, run, "run-length")
        return True

    def _saved(self, data: bytes) -> None:
        self.profile = data

    # -- HTTP --------------------------------------------------------------------------------

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        timeout = self.device.config.request_timeout
        while True:
            try:
                request = await read_request(reader, timeout, MAX_UPLOAD_BYTES, writer)
            except BadRequest as error:
                writer.write(response(400, f"{error}\n".encode(), {}, keep_alive=False))
                await writer.drain()
                return
            if request is None:
                return
            status, body, headers = await self.handle(request)
            answer = response(status, body, headers, request.keep_alive)
            if request.method == "HEAD":  # the head a GET would have, without its body
                answer = answer[: len(answer) - len(body)]
            writer.write(answer)
            await writer.drain()
            if not request.keep_alive:
                return

    async def handle(self, request: Request) -> tuple[int, bytes, dict[str, str]]:
        """One request: (status, body, headers)."""
        verdict = self.digest.check(
            request.method, request.target, request.headers.get("authorization")
        )
        if verdict.outcome != OK:
            log.debug("installer: %s %s refused (%s)", request.method, request.path, verdict.why)
            challenge = self.digest.challenge(stale=verdict.outcome == STALE)
            return 401, UNAUTHORIZED, {**HTML, "WWW-Authenticate": challenge}
        method, path = request.method, request.path
        if method == "GET" and path == LOCAL_PROFILE_PATH:
            if self.profile is None:
                return 404, b"not found\n", {}
            return 200, self.profile, {"Content-Type": "application/octet-stream"}
        if method in ("GET", "HEAD") and path in PAGES:  # HEAD: roku-deploy's password check
            return 200, self._page(), HTML
        if method != "POST" or path not in PAGES[1:]:
            return 404, b"not found\n", {}
        try:
            form = parse_form(request.headers.get("content-type", ""), request.body)
        except MultipartError as error:
            return 400, f"{error}\n".encode(), {}
        action = form["mysubmit"].text if "mysubmit" in form else ""
        archive = form["archive"].data if "archive" in form else b""
        if path == "/plugin_package":  # signing: the simulator holds no developer key
            return 200, self._page((markup.ERROR, BAD_SIGNING_PASSWORD)), HTML
        if path == "/plugin_inspect":
            return 200, self._inspect(action), HTML
        if action == "Delete":
            return 200, self._page(*await self._delete()), HTML
        if action not in ("Install", "Replace"):
            return 200, self._page((markup.ERROR, f"Unknown action: {action[:40]}")), HTML
        return 200, self._page(*await self._install(archive)), HTML

    def _page(self, *messages: tuple[str, str], body: str = "", params: bool = True) -> bytes:
        dev_id = identity.developer_id(self.device.config.serial)
        return markup.page(messages, body, dev_id, params=params)

    def _inspect(self, action: str) -> bytes:
        """The inspect page's answer (its messages as ``Shell.create`` lines, as devices
        write them there)."""
        if action == "Rekey":
            return self._page((markup.ERROR, BAD_SIGNING_PASSWORD), params=False)
        if action == "Screenshot":
            return self._page((markup.ERROR, NO_SCREENSHOT), params=False)
        if action != "dloadProf":
            return self._page((markup.ERROR, f"Unknown action: {action[:40]}"), params=False)
        if self.profile is None:
            return self._page((markup.INFO, NO_PROFILE), params=False)
        link = LOCAL_PROFILE_PATH.lstrip("/")
        size = len(self.profile)
        body = f'<p><a href="{link}">channel.bsprof</a> ({size} bytes)</p>\n'
        return self._page((markup.INFO, PROFILE_READY), body=body, params=False)

    async def _install(self, archive: bytes) -> tuple[tuple[str, str], ...]:
        if not archive:
            return ((markup.ERROR, "Install Failure: no package was sent."),)
        received = (markup.SUCCESS, f"Application Received: {len(archive)} bytes stored.")
        manifest = check_package(archive)
        if isinstance(manifest, str):
            return received, (markup.ERROR, manifest)
        if archive == self.package:
            return ((markup.INFO, IDENTICAL),)
        model = await asyncio.to_thread(package_model, archive, manifest.get("title", ""))
        device = self.device
        await device.home()  # the running app exits first
        self.package, self.profile, self.model = archive, None, model
        device.installed = manifest
        device.config = app_settings(self.base, manifest)
        await device.launch()
        return received, (markup.SUCCESS, INSTALL_SUCCESS)

    async def _delete(self) -> tuple[tuple[str, str], ...]:
        device = self.device
        await device.home()
        self.package = self.profile = self.model = None
        device.installed = None
        device.config = self.base
        return DELETED
