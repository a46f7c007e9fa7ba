"""ECP (External Control Protocol, TCP 8060) client: device info, active app, launch, keypress,
exit-app.

The XML parsers are pure functions; :class:`EcpClient` is a thin async shell over httpx. Every
request is bounded (see :mod:`rokuprof.device.limits`): the body is read incrementally and
abandoned past its byte cap, and connect, head and body together must finish within the
client's timeout. A document type declaration is refused before parsing (no entity expansion,
whatever the XML library's version). A 403 answer means the device's ECP is in limited mode:
that becomes :class:`LimitedModeError`, whose message tells the user which setting to change.
The HTTP client itself (no proxy, no TLS context per client) is
:class:`rokuprof.device.http_port.HttpPortClient`.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Literal, TypeVar
from urllib.parse import quote, urlencode

import httpx

from rokuprof.device.chanperf import ChanPerf, chanperf_from_xml
from rokuprof.device.constants import ECP_PORT
from rokuprof.device.errors import (
    HttpStatusError,
    LimitedModeError,
    ProtocolError,
)
from rokuprof.device.http_port import HttpPortClient
from rokuprof.device.limits import (
    ECP_MAX_ERROR_BYTES,
    ECP_MAX_REPLY_BYTES,
    ECP_TIMEOUT,
)
from rokuprof.httpbody import read_capped
from rokuprof.units import size

MAX_XML_BYTES = ECP_MAX_REPLY_BYTES

T = TypeVar("T")


_DECLARATION = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def _parse_xml(data: bytes | str, root_tag: str) -> ET.Element:
    if len(data) > MAX_XML_BYTES:
        raise ProtocolError(f"reply larger than {size(MAX_XML_BYTES, exact=True)}")
    # Decoded here, so a declared encoding cannot hide a declaration from the check below.
    text = data.decode("utf-8-sig", "replace") if isinstance(data, bytes) else data
    if _DECLARATION.search(text):
        raise ProtocolError(
            "reply contains a <!DOCTYPE> or <!ENTITY> declaration; refused "
            "(a Roku never sends one, and its entities could expand without bound)"
        )
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise ProtocolError(f"reply is not valid XML: {error}") from error
    if root.tag != root_tag:
        raise ProtocolError(f"reply has root <{root.tag}>, expected <{root_tag}>")
    return root


def _flag(value: str | None) -> bool | None:
    if value is None:
        return None
    return value.strip().lower() in ("true", "1", "yes")


@dataclass(frozen=True, slots=True)
class DeviceInfo:
    """The parts of ``/query/device-info`` rokuprof uses; every element is kept in ``fields``."""

    serial: str = ""
    device_id: str = ""
    udn: str = ""
    vendor: str = ""
    model_number: str = ""
    model_name: str = ""
    friendly_name: str = ""
    user_device_name: str = ""
    software_version: str = ""
    software_build: str = ""
    developer_enabled: bool | None = None
    ecp_mode: str = ""
    network_type: str = ""
    fields: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.user_device_name or self.friendly_name or self.model_name or self.serial

    @property
    def software(self) -> str:
        if self.software_version and self.software_build:
            return f"{self.software_version} build {self.software_build}"
        return self.software_version

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data.pop("fields")
        return data


def parse_device_info(data: bytes | str) -> DeviceInfo:
    """Parse a ``<device-info>`` document; unknown elements are kept in ``fields`` only."""
    root = _parse_xml(data, "device-info")
    fields = {child.tag: (child.text or "").strip() for child in root if isinstance(child.tag, str)}
    get = fields.get
    return DeviceInfo(
        serial=get("serial-number", ""),
        device_id=get("device-id", ""),
        udn=get("udn", ""),
        vendor=get("vendor-name", ""),
        model_number=get("model-number", ""),
        model_name=get("model-name", ""),
        friendly_name=get("friendly-device-name", "") or get("friendly-model-name", ""),
        user_device_name=get("user-device-name", ""),
        software_version=get("software-version", ""),
        software_build=get("software-build", ""),
        developer_enabled=_flag(get("developer-enabled")),
        ecp_mode=get("ecp-setting-mode", ""),
        network_type=get("network-type", ""),
        fields=fields,
    )


@dataclass(frozen=True, slots=True)
class ActiveApp:
    """``/query/active-app``: the app in front (no ``id``, name ``Roku`` on the home screen)."""

    id: str
    name: str
    version: str = ""
    type: str = ""

    @property
    def home(self) -> bool:
        return not self.id

    @property
    def is_dev(self) -> bool:
        return self.id == "dev"

    def to_json(self) -> dict[str, object]:
        return asdict(self)


def parse_active_app(data: bytes | str) -> ActiveApp:
    root = _parse_xml(data, "active-app")
    app = root.find("app")
    if app is None:
        return ActiveApp("", "")
    return ActiveApp(
        id=app.get("id", ""),
        name=(app.text or "").strip(),
        version=app.get("version", ""),
        type=app.get("type", ""),
    )


@dataclass(frozen=True)
class PerfettoEnable:
    """The answer to ``POST /perfetto/enable/<app>`` (Roku OS 15.1+): the apps whose launches
    are traced, and whether the device said OK."""

    channels: tuple[str, ...]
    ok: bool
    error: str | None = None
    already_started: bool = False  # the app was running when tracing was enabled


def parse_perfetto_enable(data: bytes | str) -> PerfettoEnable:
    root = _parse_xml(data, "perfetto-enable")
    error = root.find("error")
    status = (root.findtext("status") or "").strip()
    channels = tuple(
        (c.text or "").strip() for c in root.iterfind("enabled-channels/channel") if c.text
    )
    return PerfettoEnable(
        channels=channels,
        ok=error is None and status.upper() == "OK",
        error=None if error is None else ((error.text or "").strip() or "error")[:200],
        already_started=root.find("application-already-started") is not None,
    )


class EcpClient(HttpPortClient):
    """Async ECP client for one device. Use as ``async with EcpClient(host) as ecp:``.

    ``timeout`` is the total deadline of each request; ``max_reply_bytes`` caps each reply.
    """

    answer = "reply"

    def __init__(
        self,
        host: str,
        port: int = ECP_PORT,
        timeout: float = ECP_TIMEOUT,
        *,
        max_reply_bytes: int = ECP_MAX_REPLY_BYTES,
    ) -> None:
        super().__init__("ECP", host, port, timeout)
        self.max_reply_bytes = max_reply_bytes

    async def _request(self, method: str, path: str) -> bytes:
        """The body of a 200 answer (or an error naming the device, the path and the limit)."""
        what = f"{self.where} {path}"
        async with self._deadline(path), self._client.stream(method, path) as response:
            status, reason = response.status_code, response.reason_phrase
            ok = status == 200
            cap = self.max_reply_bytes if ok else ECP_MAX_ERROR_BYTES
            body = await _read_body(response, cap, what, strict=ok)
        if status == 403:
            raise LimitedModeError(self.host, body.decode("utf-8", "replace")[:200])
        if not ok:
            raise HttpStatusError(f"{what} ({method}) answered {status} {reason}".rstrip(), status)
        return body

    async def _query(self, path: str, parse: Callable[[bytes], T]) -> T:
        body = await self._request("GET", path)
        try:
            return parse(body)
        except ProtocolError as error:
            raise ProtocolError(f"{self.where} {path}: {error}") from None

    async def device_info(self) -> DeviceInfo:
        return await self._query("/query/device-info", parse_device_info)

    async def active_app(self) -> ActiveApp:
        return await self._query("/query/active-app", parse_active_app)

    async def chanperf(self) -> ChanPerf | None:
        """The app's CPU and memory (``None``: the device has none); 403 in limited mode."""
        return await self._query(
            "/query/chanperf", lambda data: chanperf_from_xml(_parse_xml(data, "chanperf"))
        )

    async def launch(self, app_id: str = "dev", params: Mapping[str, str] | None = None) -> None:
        """``POST /launch/<app_id>``; ``params`` are deep-link arguments (``contentId``,
        ``mediaType``...), sent as a URL-encoded query string."""
        query = f"?{urlencode(params, quote_via=quote, safe='')}" if params else ""
        await self._request("POST", f"/launch/{_segment(app_id)}{query}")

    async def enable_perfetto(self, app_id: str = "dev") -> PerfettoEnable:
        """``POST /perfetto/enable/<app_id>``: trace the app's launches from now on (until the
        device reboots; there is no disable). Firmware before Roku OS 15.1 answers an error
        status (:class:`~rokuprof.device.errors.HttpStatusError`)."""
        path = f"/perfetto/enable/{_segment(app_id)}"
        body = await self._request("POST", path)
        try:
            return parse_perfetto_enable(body)
        except ProtocolError as error:
            raise ProtocolError(f"{self.where} {path}: {error}") from None

    async def keypress(self, key: str) -> None:
        """``POST /keypress/<key>``: ``Down``, ``Lit_a``... (``Lit_ `` goes as ``Lit_%20``)."""
        await self._request("POST", f"/keypress/{_segment(key)}")

    async def exit_app(self, app_id: str = "dev") -> Literal["exit-app", "home"]:
        """Exit the app so that it closes its profiler stream with the footer: ``POST
        /exit-app/<app_id>`` (Roku OS 13+), else Home. A 404 is either firmware without
        exit-app or the app not running, which the device does not tell apart: both get Home,
        which exits the app when it runs and is harmless when it does not. Returns what was
        used. In limited mode both are refused (:class:`LimitedModeError`)."""
        try:
            await self._request("POST", f"/exit-app/{_segment(app_id)}")
        except HttpStatusError as error:
            if error.status != 404:
                raise
            await self.keypress("Home")
            return "home"
        return "exit-app"


def _segment(text: str) -> str:
    """``text`` as one URL path segment: every byte but letters, digits and ``_.-~`` escaped
    (UTF-8 for the rest: ``Lit_é`` is ``Lit_%C3%A9``)."""
    return quote(text, safe="")


async def _read_body(response: httpx.Response, cap: int, what: str, *, strict: bool) -> bytes:
    """Read at most ``cap`` body bytes. Past the cap: an error when ``strict``, else cut there."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise ProtocolError(f"{what}: compressed reply (Content-Encoding: {encoding[:40]}) refused")
    limit = size(cap, exact=True)
    announced = response.headers.get("content-length", "").strip()
    if strict and announced.isdigit() and int(announced) > cap:
        raise ProtocolError(
            f"{what}: reply announced as {int(announced):,} bytes, larger than {limit}; gave up"
        )
    body, more = await read_capped(response, cap)
    if more and strict:
        raise ProtocolError(f"{what}: reply larger than {limit}; gave up")
    return body
