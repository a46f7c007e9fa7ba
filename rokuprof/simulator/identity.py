"""A simulated device's identifiers, each derived from its serial number (pure): the same serial
always gives the same device, two serials give two devices.

* the two MAC addresses (Wi-Fi and Ethernet) are distinct, unicast (the first octet's lowest bit
  clear) and locally administered (its second-lowest bit set), as no vendor owns them;
* the keyed developer id is 40 lower-case hex digits, as a keyed device reports in device-info
  (``keyed-developer-id``) and its installer's pages (``dev_id``).
"""

from __future__ import annotations

import hashlib


def digest_hex(seed: str, length: int) -> str:
    """``length`` hex digits derived from ``seed``."""
    return hashlib.sha256(seed.encode()).hexdigest()[:length]


def _mac(serial: str, interface: str) -> bytearray:
    octets = bytearray(bytes.fromhex(digest_hex(f"mac:{interface}:{serial}", 12)))
    octets[0] = (octets[0] & 0xFC) | 0x02  # unicast, locally administered
    return octets


def mac_address(serial: str, interface: str) -> str:
    """The MAC address of ``interface`` (``wifi`` or ``ethernet``) of the device ``serial``."""
    octets = _mac(serial, interface)
    if interface == "ethernet" and octets == _mac(serial, "wifi"):
        octets[5] ^= 0x01  # the two always differ
    return ":".join(f"{o:02x}" for o in octets)


def developer_id(serial: str) -> str:
    """The keyed developer id of the device ``serial``."""
    return hashlib.sha1(f"devkey:{serial}".encode()).hexdigest()
