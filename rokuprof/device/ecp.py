"""ECP (External Control Protocol, TCP 8060) client: device info, active app, launch, keypress.

The XML parsers are pure functions; :class:`EcpClient` is a thin async shell over httpx. A 403
answer means the device's ECP is in limited mode: that becomes :class:`LimitedModeError`, whose
message tells the user which setting to change.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field

import httpx

from rokuprof.device.errors import (
    DeviceTimeout,
    DeviceUnavailable,
    HttpStatusError,
    LimitedModeError,
    ProtocolError,
)

DEFAULT_ECP_PORT = 8060
MAX_XML_BYTES = 1 << 20


def _parse_xml(data: bytes | str, root_tag: str) -> ET.Element:
    if len(data) > MAX_XML_BYTES:
        raise ProtocolError(f"ECP reply too large ({len(data)} bytes)")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as error:
        raise ProtocolError(f"ECP reply is not valid XML: {error}") from error
    if root.tag != root_tag:
        raise ProtocolError(f"ECP reply has root <{root.tag}>, expected <{root_tag}>")
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


class EcpClient:
    """Async ECP client for one device. Use as ``async with EcpClient(host) as ecp:``."""

    def __init__(self, host: str, port: int = DEFAULT_ECP_PORT, timeout: float = 5.0) -> None:
        self.host = host
        self.port = port
        shown = f"[{host}]" if ":" in host else host
        self.base_url = f"http://{shown}:{port}"
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout),
            trust_env=False,  # never route device traffic through a proxy
            follow_redirects=False,
        )

    async def __aenter__(self) -> EcpClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    async def _request(self, method: str, path: str) -> httpx.Response:
        try:
            response = await self._client.request(method, path)
        except httpx.TimeoutException as error:
            raise DeviceTimeout(f"ECP {method} {path} on {self.base_url} timed out") from error
        except httpx.TransportError as error:
            raise DeviceUnavailable(
                f"cannot reach ECP at {self.base_url} ({error.__class__.__name__}: {error})"
            ) from error
        if response.status_code == 403:
            raise LimitedModeError(self.host, response.text[:200])
        if response.status_code != 200:
            raise HttpStatusError(
                f"ECP {method} {path} on {self.base_url} answered "
                f"{response.status_code} {response.reason_phrase}".rstrip(),
                response.status_code,
            )
        return response

    async def device_info(self) -> DeviceInfo:
        return parse_device_info((await self._request("GET", "/query/device-info")).content)

    async def active_app(self) -> ActiveApp:
        return parse_active_app((await self._request("GET", "/query/active-app")).content)

    async def launch(self, app_id: str = "dev") -> None:
        await self._request("POST", f"/launch/{app_id}")

    async def keypress(self, key: str) -> None:
        await self._request("POST", f"/keypress/{key}")
