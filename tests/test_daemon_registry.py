"""The daemon's pure device policies (rokuprof/daemon/registry.py): the cap on devices found by
SSDP, their expiry (time given by the caller), and one name per live device."""

from __future__ import annotations

import pytest

from rokuprof.daemon.registry import Admission, DeviceNames, DiscoveredDevices


def test_at_most_max_devices_are_admitted_and_the_cap_is_said_once() -> None:
    found = DiscoveredDevices(max_devices=3, expire_seconds=100)
    assert [found.offer(f"10.0.0.{i}:8090", 0.0) for i in range(6)] == [
        Admission.NEW,
        Admission.NEW,
        Admission.NEW,
        Admission.CAP_REACHED,
        Admission.FULL,
        Admission.FULL,
    ]
    assert len(found) == 3 and found.ignored == 3
    assert found.offer("10.0.0.1:8090", 1.0) is Admission.KNOWN  # known: neither new nor ignored
    assert found.ignored == 3


def test_a_device_expires_after_expire_seconds_without_an_answer() -> None:
    found = DiscoveredDevices(max_devices=3, expire_seconds=100)
    for key in ("a", "b", "c"):
        found.offer(key, 10.0)
    found.answered("b", 50.0)
    found.answered("b", 40.0)  # an older answer changes nothing
    found.answered("stranger", 60.0)  # not admitted: ignored
    assert found.expire(109.999) == []
    assert found.expire(110.0) == ["a", "c"]  # silent for exactly expire_seconds
    assert "a" not in found and "b" in found and found.expired == 2
    assert found.expire(149.999) == [] and found.expire(150.0) == ["b"]
    assert found.expired == 3 and len(found) == 0


def test_expiry_makes_room_and_the_cap_is_said_again_when_reached_again() -> None:
    found = DiscoveredDevices(max_devices=2, expire_seconds=10)
    assert [found.offer(k, 0.0) for k in "abc"][-1] is Admission.CAP_REACHED
    assert found.offer("d", 5.0) is Admission.FULL
    assert found.expire(10.0) == ["a", "b"]
    assert found.offer("c", 10.0) is Admission.NEW  # added again once it answers SSDP again
    assert found.offer("d", 10.0) is Admission.NEW
    assert found.offer("e", 10.0) is Admission.CAP_REACHED
    found.forget("c")
    assert found.offer("e", 11.0) is Admission.NEW


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError):
        DiscoveredDevices(max_devices=0)
    with pytest.raises(ValueError):
        DiscoveredDevices(expire_seconds=0)


def test_the_second_device_claiming_a_name_gets_its_host_added() -> None:
    names = DeviceNames()
    assert names.claim("10.0.0.5:8090", "YN001", "10.0.0.5", 8090) == ("YN001", False)
    assert names.claim("10.0.0.6:8090", "YN001", "10.0.0.6", 8090) == ("YN001-10.0.0.6", True)
    # asked again (each run asks): the same name, no new warning
    assert names.claim("10.0.0.6:8090", "YN001", "10.0.0.6", 8090) == ("YN001-10.0.0.6", False)
    assert names.claim("10.0.0.5:8090", "YN001", "10.0.0.5", 8090) == ("YN001", False)
    # one host, two profiler ports (simulated devices): the port as well
    assert names.claim("10.0.0.6:9000", "YN001", "10.0.0.6", 9000) == ("YN001-10.0.0.6-9000", True)
    # named by its host (no serial yet): the port tells them apart
    assert names.claim("::1:8090", "1", "::1", 8090) == ("1", False)
    assert names.claim("fe80::1:8090", "fe80_1", "fe80::1", 8090) == ("fe80_1", False)
    assert names.claim("fe80::1:9000", "fe80_1", "fe80::1", 9000) == ("fe80_1-9000", True)
    assert names.owner("YN001") == "10.0.0.5:8090"


def test_a_released_name_is_free_and_a_name_made_to_clash_gets_a_number() -> None:
    names = DeviceNames()
    names.claim("a:1", "X", "a", 1)
    names.claim("b:1", "X", "b", 1)
    names.release("a:1")
    assert names.owner("X") is None
    assert names.claim("c:1", "X", "c", 1) == ("X", False)
    # a device whose serial is another device's disambiguated name, from the same host
    assert names.claim("b:2", "X-b", "b", 2) == ("X-b-b", True)
    names.claim("b:3", "X", "b", 3)  # X and X-b taken: X-b-3
    assert names.owner("X-b-3") == "b:3"
    names.claim("b:4", "X-b", "b", 4)  # X-b, X-b-b taken: X-b-b-4
    names.claim("b:5", "X-b", "b", 4)  # every candidate taken: numbered
    assert names.owner("X-b-b-4-2") == "b:5"
    # a device that changes the name it wants gives up the old one
    names.claim("c:1", "Y", "c", 1)
    assert names.owner("X") is None and names.owner("Y") == "c:1"
