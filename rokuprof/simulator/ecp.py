"""ECP (External Control Protocol) of the simulated device: HTTP/1.1, XML replies."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import TYPE_CHECKING, Protocol

from rokuprof.simulator import chanperf, ecp_queries, identity, remote
from rokuprof.simulator.http import BadRequest, Request, read_request, response
from rokuprof.simulator.tracing import ENABLE_PREFIX, SESSION_PATH
from rokuprof.simulator.xml_text import escape, quoteattr

if TYPE_CHECKING:
    from rokuprof.simulator.app_tracing import AppTracing


class Ecp(remote.Controlled, chanperf.Running, ecp_queries.Showing, Protocol):
    """What ECP needs of a device (its queries, the remote, the vitals), and all it may touch."""

    ecp_mode: str
    ecp_requests: deque[str]
    started_at: float
    tracing: AppTracing


XML = {"Content-Type": 'text/xml; charset="utf-8"'}
TEXT = {"Content-Type": 'text/plain; charset="utf-8"'}

LIMITED_BODY = b"ECP command not allowed in Limited mode."
DISABLED_BODY = b"ECP command not allowed."

#: Commands refused in limited mode. Roku's documentation lists keypress/keydown/keyup, exit-app
#: and a few queries as needing "Enabled"; device-info, active-app, apps and launch stay
#: available.
LIMITED_BLOCKS = (
    "/keypress/",
    "/keydown/",
    "/keyup/",
    "/exit-app/",
    "/query/icon/",
    "/query/chanperf",
)

DEV_APP_ID = "dev"
OTHER_APPS = (("12", "Netflix", "5.2.1"), ("837", "YouTube", "2.23.4"))


def server_header(device: Ecp) -> str:
    version = device.config.software_version
    return f"Roku/{version} UPnP/1.0 Roku/{version}"


_hex = identity.digest_hex


def udn(serial: str) -> str:
    h = _hex("udn:" + serial, 12)
    return f"29380000-0800-1025-80a4-{h}"


def device_info_xml(device: Ecp) -> bytes:
    """The ``/query/device-info`` document."""
    cfg = device.config
    fields = [
        ("udn", udn(cfg.serial)),
        ("serial-number", cfg.serial),
        ("device-id", "S" + _hex("id:" + cfg.serial, 11).upper()),
        ("advertising-id", _hex("ad:" + cfg.serial, 32)),
        ("vendor-name", cfg.vendor),
        ("model-name", cfg.model_name),
        ("model-number", cfg.model_number),
        ("model-region", "US"),
        ("is-tv", "false"),
        ("is-stick", "false"),
        ("supports-ethernet", "true"),
        ("wifi-mac", identity.mac_address(cfg.serial, "wifi")),
        ("ethernet-mac", identity.mac_address(cfg.serial, "ethernet")),
        ("network-type", cfg.network_type),
        ("friendly-device-name", cfg.name),
        ("friendly-model-name", cfg.model_name),
        ("default-device-name", f"{cfg.model_name} - {cfg.serial}"),
        ("user-device-name", cfg.name),
        ("user-device-location", "Lab"),
        ("build-number", f"{cfg.software_version}.{cfg.software_build}"),
        ("software-version", cfg.software_version),
        ("software-build", cfg.software_build),
        ("secure-device", "true"),
        ("language", "en"),
        ("country", "US"),
        ("locale", "en_US"),
        ("time-zone-auto", "true"),
        ("time-zone", "US/Pacific"),
        ("power-mode", "PowerOn"),
        ("supports-suspend", "false"),
        ("developer-enabled", "true" if cfg.developer_enabled else "false"),
        ("keyed-developer-id", identity.developer_id(cfg.serial)),
        ("search-enabled", "true"),
        ("uptime", str(int(cfg.monotonic() - device.started_at))),
        ("ecp-setting-mode", device.ecp_mode),
    ]
    body = "".join(f"\t<{name}>{escape(value)}</{name}>\n" for name, value in fields)
    return (
        f'<?xml version="1.0" encoding="UTF-8" ?>\n<device-info>\n{body}</device-info>\n'.encode()
    )


def _app(app_id: str, name: str, version: str) -> str:
    return (
        f'<app id={quoteattr(app_id)} type="appl" version={quoteattr(version)}>{escape(name)}</app>'
    )


def active_app_xml(device: Ecp) -> bytes:
    cfg = device.config
    if device.current is None:
        app = "<app>Roku</app>"
    else:
        app = _app(DEV_APP_ID, cfg.app_name, cfg.app_version)
    return (
        f'<?xml version="1.0" encoding="UTF-8" ?>\n<active-app>\n\t{app}\n</active-app>\n'.encode()
    )


def installed_apps(device: Ecp) -> list[tuple[str, str, str]]:
    """The device's apps: (id, name, version), the dev app first."""
    cfg = device.config
    return [(DEV_APP_ID, cfg.app_name, cfg.app_version), *OTHER_APPS]


def apps_xml(device: Ecp) -> bytes:
    body = "".join(f"\t{_app(i, n, v)}\n" for i, n, v in installed_apps(device))
    return f'<?xml version="1.0" encoding="UTF-8" ?>\n<apps>\n{body}</apps>\n'.encode()


def _allowed(device: Ecp, path: str) -> bytes | None:
    """None when ``path`` may run in the current ECP mode, else the 403 body."""
    if device.ecp_mode == "disabled":
        return DISABLED_BODY
    if device.ecp_mode == "limited" and any(
        path.startswith(p) or path == p.rstrip("/") for p in LIMITED_BLOCKS
    ):
        return LIMITED_BODY
    return None


async def handle(device: Ecp, request: Request) -> tuple[int, bytes, dict[str, str]]:
    """Answer one ECP request: (status, body, headers)."""
    path = request.path
    device.ecp_requests.append(f"{request.method} {path}")
    refused = _allowed(device, path)
    if refused is not None:
        return 403, refused, TEXT
    method = request.method
    if method == "GET" and path == "/query/device-info":
        return 200, device_info_xml(device), XML
    if method == "GET" and path == "/query/active-app":
        return 200, active_app_xml(device), XML
    if method == "GET" and path == "/query/apps":
        return 200, apps_xml(device), XML
    if method == "GET" and path == "/query/chanperf":
        return 200, chanperf.xml(device), XML
    if method == "GET" and path == "/query/media-player":
        return 200, ecp_queries.media_player_xml(device), XML
    if method == "GET" and path.startswith("/query/app-state/"):
        apps = {i: (n, v) for i, n, v in installed_apps(device)}
        return 200, ecp_queries.app_state_xml(device, path[len("/query/app-state/") :], apps), XML
    if method == "POST" and path.startswith(ENABLE_PREFIX):  # app tracing (Roku OS 15.1+)
        status, body = device.tracing.enable(path)
        return status, body, XML if status == 200 else TEXT
    answer = await remote.handle(device, request, {a[0] for a in OTHER_APPS})
    if answer is not None:
        return *answer, TEXT
    return 404, b"", TEXT


async def serve(device: Ecp, reader: asyncio.StreamReader, writer) -> None:
    """One ECP connection: requests until the client closes or asks to."""
    while True:
        try:
            request = await read_request(reader, device.config.request_timeout)
        except BadRequest:
            writer.write(response(400, b"", TEXT, keep_alive=False))
            await writer.drain()
            return
        if request is None:
            return
        if request.path == SESSION_PATH and _allowed(device, request.path) is None:
            device.ecp_requests.append(f"{request.method} {request.path}")
            head = {"Server": server_header(device)}
            await device.tracing.serve_socket(request, reader, writer, head)  # takes it over
            return
        status, body, headers = await handle(device, request)
        headers = {"Server": server_header(device), **headers}
        if request.method == "HEAD":
            body = b""
        writer.write(response(status, body, headers, request.keep_alive))
        await writer.drain()
        if not request.keep_alive:
            return
