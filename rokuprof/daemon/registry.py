"""Which devices the daemon captures and under which names: two small pure policies.

* :class:`DiscoveredDevices`: the devices found by SSDP. At most ``max_devices`` are captured
  at once (others are ignored until one leaves; reaching the cap is said once each time); one
  that has not answered for ``expire_seconds`` is dropped, and added again if it answers SSDP
  later. The caller says what time it is and when a device last answered.
* :class:`DeviceNames`: the directory name of each live device (also its metric label and log
  name). The first device to claim a name keeps it; another live device claiming the same
  name (two devices reporting one serial number) gets ``<name>-<host>``, and
  ``<name>-<host>-<port>`` if that is taken too.

No I/O, no clock, no asyncio: the daemon feeds them and carries out what they decide.
"""

from __future__ import annotations

import itertools
from enum import StrEnum

from rokuprof.store.layout import safe_name

DEFAULT_MAX_DEVICES = 64
DEFAULT_EXPIRE_SECONDS = 600.0


class Admission(StrEnum):
    """What :meth:`DiscoveredDevices.offer` decided."""

    NEW = "new"  # capture it from now on
    KNOWN = "known"  # captured already
    FULL = "full"  # the cap is reached: ignored
    CAP_REACHED = "cap reached"  # ignored, and the first such since the cap was reached: say so


class DiscoveredDevices:
    """The devices found by SSDP that are captured (see the module docstring).

    A device expires when ``now - last >= expire_seconds``, ``last`` being when it was admitted
    or, later, when it was last known to answer (:meth:`answered`).
    """

    def __init__(
        self,
        max_devices: int = DEFAULT_MAX_DEVICES,
        expire_seconds: float = DEFAULT_EXPIRE_SECONDS,
    ) -> None:
        if max_devices < 1 or not expire_seconds > 0:
            raise ValueError("max_devices must be >= 1 and expire_seconds > 0")
        self.max_devices = max_devices
        self.expire_seconds = expire_seconds
        self._last: dict[str, float] = {}  # key -> when it last answered (or was admitted)
        self._cap_said = False
        self.ignored = 0  # offers refused at the cap
        self.expired = 0  # devices dropped for silence

    def __len__(self) -> int:
        return len(self._last)

    def __contains__(self, key: object) -> bool:
        return key in self._last

    def offer(self, key: str, now: float) -> Admission:
        """A device answered SSDP at ``now``: capture it, if there is room."""
        if key in self._last:
            return Admission.KNOWN
        if len(self._last) >= self.max_devices:
            self.ignored += 1
            if self._cap_said:
                return Admission.FULL
            self._cap_said = True
            return Admission.CAP_REACHED
        self._last[key] = now
        return Admission.NEW

    def answered(self, key: str, at: float) -> None:
        """The device was known to answer at ``at`` (an SSDP reply alone does not count)."""
        if key in self._last:
            self._last[key] = max(self._last[key], at)

    def expire(self, now: float) -> list[str]:
        """Forget and return the devices silent for ``expire_seconds`` or more at ``now``."""
        gone = [key for key, last in self._last.items() if now - last >= self.expire_seconds]
        for key in gone:
            del self._last[key]
        if gone:
            self.expired += len(gone)
            self._cap_said = False  # room again: reaching the cap is said again
        return gone

    def forget(self, key: str) -> None:
        self._last.pop(key, None)


class DeviceNames:
    """The one name of each live device (see the module docstring); ``key`` is the device's
    identity in the daemon (host and profiler port)."""

    def __init__(self) -> None:
        self._owner: dict[str, str] = {}  # name -> key
        self._given: dict[str, tuple[str, str]] = {}  # key -> (name wanted, name given)

    def claim(self, key: str, wanted: str, host: str, port: int) -> tuple[str, bool]:
        """The name ``key`` uses when it wants ``wanted``, and whether that name is new and
        not the one wanted (someone else has it: worth a warning, once)."""
        given = self._given.get(key)
        if given is not None and given[0] == wanted:
            return given[1], False
        self.release(key)
        host_name = safe_name(host)
        candidates = [wanted, f"{wanted}-{host_name}", f"{wanted}-{host_name}-{port}"]
        if wanted == host_name:  # named by its host already: the port tells it apart
            candidates = [wanted, f"{wanted}-{port}"]
        numbered = (f"{candidates[-1]}-{n}" for n in itertools.count(2))  # a name made to clash
        name = next(c for c in itertools.chain(candidates, numbered) if c not in self._owner)
        self._owner[name] = key
        self._given[key] = (wanted, name)
        return name, name != wanted

    def release(self, key: str) -> None:
        """``key`` no longer runs: its name is free again."""
        given = self._given.pop(key, None)
        if given is not None and self._owner.get(given[1]) == key:
            del self._owner[given[1]]

    def owner(self, name: str) -> str | None:
        return self._owner.get(name)
