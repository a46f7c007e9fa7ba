"""ECP client: XML parsing, and real requests to the simulated device (limited mode included)."""

from __future__ import annotations

import socket

import pytest

from rokuprof.device.ecp import EcpClient, parse_active_app, parse_device_info
from rokuprof.device.errors import (
    ECP_SETTING_PATH,
    DeviceUnavailable,
    HttpStatusError,
    LimitedModeError,
    ProtocolError,
)
from rokuprof.simulator import DeviceConfig, SimulatedDevice

DEVICE_INFO = b"""<?xml version="1.0" encoding="UTF-8" ?>
<device-info>
    <udn>29380000-0800-1025-80a4-d83154332d7e</udn>
    <serial-number>X00400ABCDEF</serial-number>
    <device-id>S0A123456789</device-id>
    <vendor-name>Roku</vendor-name>
    <model-number>4800X</model-number>
    <model-name>Roku Ultra</model-name>
    <friendly-device-name>Living Room</friendly-device-name>
    <software-version>14.1.4</software-version>
    <software-build>4123</software-build>
    <developer-enabled>true</developer-enabled>
    <ecp-setting-mode>limited</ecp-setting-mode>
    <some-future-element attr="x"><nested>1</nested></some-future-element>
    <network-type>wifi</network-type>
</device-info>
"""


def test_device_info_is_parsed_and_unknown_elements_are_ignored() -> None:
    info = parse_device_info(DEVICE_INFO)
    assert info.serial == "X00400ABCDEF"
    assert info.name == "Living Room"
    assert (info.model_name, info.model_number) == ("Roku Ultra", "4800X")
    assert info.software == "14.1.4 build 4123"
    assert info.developer_enabled is True
    assert info.ecp_mode == "limited"
    assert info.network_type == "wifi"
    assert "some-future-element" in info.fields
    assert "fields" not in info.to_json()


def test_minimal_device_info() -> None:
    info = parse_device_info(b"<device-info><serial-number>A</serial-number></device-info>")
    assert (info.serial, info.name, info.developer_enabled, info.ecp_mode) == ("A", "A", None, "")


@pytest.mark.parametrize(
    "data",
    [b"<device-info><serial-number>", b"<html>nope</html>", b"not xml at all"],
)
def test_bad_device_info_is_a_protocol_error(data: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse_device_info(data)


def test_active_app() -> None:
    dev = parse_active_app(
        b'<active-app><app id="dev" type="appl" version="1.0.0">My App</app></active-app>'
    )
    assert (dev.id, dev.name, dev.version, dev.is_dev, dev.home) == (
        "dev",
        "My App",
        "1.0.0",
        True,
        False,
    )
    home = parse_active_app(b"<active-app>\n  <app>Roku</app>\n</active-app>")
    assert (home.id, home.name, home.home) == ("", "Roku", True)


async def test_client_against_the_simulated_device() -> None:
    cfg = DeviceConfig(serial="YN00AA000007", name="Den", auto_launch=False)
    async with SimulatedDevice(cfg) as dev, EcpClient("127.0.0.1", dev.ecp_port, 2) as ecp:
        info = await ecp.device_info()
        assert (info.serial, info.name, info.ecp_mode) == ("YN00AA000007", "Den", "enabled")
        assert (await ecp.active_app()).home
        await ecp.launch("dev")
        assert (await ecp.active_app()).is_dev
        await dev.wait_listening(5)
        await ecp.keypress("Home")
        await dev.wait_idle(5)
        assert (await ecp.active_app()).home


async def test_limited_mode_gives_the_setting_to_change() -> None:
    async with (
        SimulatedDevice(DeviceConfig(auto_launch=False)) as dev,
        EcpClient("127.0.0.1", dev.ecp_port, 2) as ecp,
    ):
        dev.set_limited(True)
        with pytest.raises(LimitedModeError) as info:
            await ecp.keypress("Home")
    message = str(info.value)
    assert info.value.status == 403
    assert "limited mode" in message
    assert ECP_SETTING_PATH in message
    assert "Settings > System > Advanced system settings > Control by mobile apps" in message
    assert "'Permissive'" in message
    assert "ECP command not allowed in Limited mode." in message
    assert "127.0.0.1" in message


async def test_disabled_ecp_refuses_device_info_with_the_same_advice() -> None:
    cfg = DeviceConfig(auto_launch=False, ecp_mode="disabled")
    async with SimulatedDevice(cfg) as dev, EcpClient("127.0.0.1", dev.ecp_port, 2) as ecp:
        with pytest.raises(LimitedModeError, match="Network access"):
            await ecp.device_info()


async def test_unknown_path_and_dead_port() -> None:
    async with (
        SimulatedDevice(DeviceConfig(auto_launch=False)) as dev,
        EcpClient("127.0.0.1", dev.ecp_port, 2) as ecp,
    ):
        with pytest.raises(HttpStatusError, match="404"):
            await ecp.launch("nope")
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    async with EcpClient("127.0.0.1", port, 1) as ecp:
        with pytest.raises(DeviceUnavailable, match="cannot reach ECP"):
            await ecp.device_info()
