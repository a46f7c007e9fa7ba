"""The daemon's pure device policies (rokuprof/daemon/registry.py): the cap on devices found by
SSDP, their expiry (time given by the caller), and one name per live device."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.daemon.registry import Admission, DeviceNames, DiscoveredDevices


def test_at_most_max_devices_are_admitted_and_the_cap_is_said_once() -> None:
    found = DiscoveredDevices(max_devices=3, expire_seconds=100, max_unconfirmed=3)
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
    found = DiscoveredDevices(
        max_devices=3, expire_seconds=100, confirm_seconds=20, max_unconfirmed=3
    )
    for key in ("a", "b", "c"):
        found.offer(key, 10.0)
    found.answered("a", 11.0)
    found.answered("b", 50.0)
    found.answered("b", 40.0)  # an older answer changes nothing
    found.answered("stranger", 60.0)  # not admitted: ignored
    assert found.expire(29.999) == [] and found.on_trial == 1
    assert found.expire(30.0) == ["c"]  # on trial: confirm_seconds without an answer
    assert found.expire(110.999) == []
    assert found.expire(111.0) == ["a"]  # confirmed: silent for exactly expire_seconds
    assert "a" not in found and "b" in found and found.expired == 2 and found.unconfirmed == 1
    assert found.expire(149.999) == [] and found.expire(150.0) == ["b"]
    assert found.expired == 3 and len(found) == 0


def test_expiry_makes_room_and_the_cap_is_said_again_when_reached_again() -> None:
    found = DiscoveredDevices(
        max_devices=2, expire_seconds=10, confirm_seconds=10, max_unconfirmed=2
    )
    assert [found.offer(k, 0.0) for k in "abc"][-1] is Admission.CAP_REACHED
    assert found.offer("d", 5.0) is Admission.FULL
    found.answered("a", 0.0)
    found.answered("b", 0.0)
    assert found.expire(10.0) == ["a", "b"]
    assert found.offer("c", 10.0) is Admission.NEW  # added again once it answers SSDP again
    assert found.offer("d", 10.0) is Admission.NEW
    assert found.offer("e", 10.0) is Admission.CAP_REACHED
    found.forget("c")
    assert found.offer("e", 11.0) is Admission.NEW


def test_at_most_max_unconfirmed_are_on_trial_and_the_confirmed_keep_their_slots() -> None:
    found = DiscoveredDevices(
        max_devices=6, expire_seconds=100, confirm_seconds=10, max_unconfirmed=2
    )
    assert [found.offer(k, 0.0) for k in "abc"] == [
        Admission.NEW,
        Admission.NEW,
        Admission.ON_TRIAL,
    ]
    found.answered("a", 1.0)  # its ECP answered: a slot of its own, room on trial
    assert found.offer("c", 2.0) is Admission.NEW and found.on_trial == 2
    assert found.expire(10.0) == ["b"] and found.offer("d", 10.0) is Admission.NEW
    assert found.penalized == 1 and found.unconfirmed == 1 and "a" in found


def test_a_source_whose_ecp_never_answers_waits_longer_each_time_until_one_answers() -> None:
    found = DiscoveredDevices(max_devices=8, expire_seconds=100, confirm_seconds=10)
    assert found.offer("x:8090", 0.0, source="x") is Admission.NEW
    assert found.expire(10.0) == ["x:8090"]
    assert found.offer("x:8090", 109.999, source="x") is Admission.PENALIZED  # expire_seconds
    assert found.offer("x:8090", 110.0, source="x") is Admission.NEW
    assert found.expire(120.0) == ["x:8090"]
    assert found.offer("x:8090", 319.999, source="x") is Admission.PENALIZED  # twice as long
    assert found.offer("x:8090", 320.0, source="x") is Admission.NEW
    found.answered("x:8090", 321.0)  # a device there answers: forgiven
    found.forget("x:8090")
    assert found.offer("x:8090", 322.0, source="x") is Admission.NEW
    assert found.expire(332.0) == ["x:8090"]
    assert found.offer("x:8090", 431.999, source="x") is Admission.PENALIZED  # from the start


@settings(max_examples=60)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["offer", "answer", "expire"]), st.integers(0, 30), st.floats(0, 50)
        ),
        max_size=80,
    ),
    st.integers(1, 4),
)
def test_spoofed_replies_never_hold_more_than_max_unconfirmed_slots(
    events: list[tuple[str, int, float]], max_unconfirmed: int
) -> None:
    """Over any sequence of offers (real devices 0-4, answering ECP; spoofed 5-30, never),
    answers and expiries: at most max_unconfirmed spoofed devices hold slots, a real device that
    answered is never dropped while it keeps answering, and one is refused for lack of room on
    trial only while max_unconfirmed are on trial."""
    found = DiscoveredDevices(
        max_devices=max_unconfirmed + 5,
        expire_seconds=1000,
        confirm_seconds=5,
        max_unconfirmed=max_unconfirmed,
    )
    now = 0.0
    for kind, device, step in events:
        now += step
        key = f"10.0.0.{device}:8090"
        real = device < 5
        if kind == "offer":
            admission = found.offer(key, now, source=key.partition(":")[0])
            if real and admission is Admission.ON_TRIAL:
                assert found.on_trial == max_unconfirmed
        elif kind == "answer" and real and key in found:
            found.answered(key, now)
        elif kind == "expire":
            confirmed = [f"10.0.0.{d}:8090" for d in range(5)]
            confirmed = [k for k in confirmed if k in found and not found.is_on_trial(k)]
            for real_key in confirmed:
                found.answered(real_key, now)  # it keeps answering
            assert not set(found.expire(now)) & set(confirmed)
        spoofed = [f"10.0.0.{d}:8090" for d in range(5, 31) if f"10.0.0.{d}:8090" in found]
        assert len(spoofed) <= max_unconfirmed
        assert found.on_trial <= max_unconfirmed


def test_an_eighth_of_the_slots_at_most_are_on_trial_by_default_or_four() -> None:
    assert (
        DiscoveredDevices(64).max_unconfirmed == 8 and DiscoveredDevices(100).max_unconfirmed == 12
    )
    assert DiscoveredDevices(17).max_unconfirmed == 4 and DiscoveredDevices(3).max_unconfirmed == 3


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
