"""Which devices the daemon captures and under which names: two small pure policies.

* :class:`DiscoveredDevices`: the devices found by SSDP. At most ``max_devices`` are captured
  at once (others are ignored until one leaves; reaching the cap is said once each time); one
  that has not answered for ``expire_seconds`` is dropped, and added again if it answers SSDP
  later. An SSDP reply is only a claim: the device is captured *on trial* until its ECP
  answers, at most ``max_unconfirmed`` on trial at once (an eighth of ``max_devices``, or 4); one
  whose ECP has not answered within ``confirm_seconds`` is dropped and counts against its
  source address, which is not tried again for ``expire_seconds``, twice as long after each
  further failure (up to :data:`MAX_PENALTY_SECONDS`) until a device there answers. So
  replies naming hosts that never answer ECP (spoofed, or stale) hold at most
  ``max_unconfirmed`` slots, each briefly, and the rest stay for devices that answer. The
  caller says what time it is and when a device last answered.
* :class:`DeviceNames`: the directory name of each live device (also its metric label and log
  name). The first device to claim a name keeps it; another live device claiming the same
  name (two devices reporting one serial number) gets ``<name>-<host>``, and
  ``<name>-<host>-<port>`` if that is taken too.

No I/O, no clock, no asyncio: the daemon feeds them and carries out what they decide.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from enum import StrEnum

from rokuprof.store.layout import safe_name

DEFAULT_MAX_DEVICES = 64
DEFAULT_EXPIRE_SECONDS = 600.0
DEFAULT_CONFIRM_SECONDS = 30.0
#: Of ``max_devices``, at most one in this many are on trial (unless told otherwise).
UNCONFIRMED_SHARE = 8
#: The longest a source address whose devices never answered ECP waits before it is tried again.
MAX_PENALTY_SECONDS = 86400.0
#: Source addresses remembered with their failures (the least recently failed are forgotten).
MAX_SOURCES = 1024


class Admission(StrEnum):
    """What :meth:`DiscoveredDevices.offer` decided."""

    NEW = "new"  # capture it from now on (on trial until its ECP answers)
    KNOWN = "known"  # captured already
    FULL = "full"  # the cap is reached: ignored
    CAP_REACHED = "cap reached"  # ignored, and the first such since the cap was reached: say so
    ON_TRIAL = "on trial"  # max_unconfirmed devices are on trial already: ignored
    PENALIZED = "penalized"  # its source's devices did not answer ECP: ignored for now


class DiscoveredDevices:
    """The devices found by SSDP that are captured (see the module docstring).

    A confirmed device expires when ``now - last >= expire_seconds``, ``last`` being when it
    was last known to answer (:meth:`answered`); one on trial when ``now - admitted >=
    confirm_seconds`` without an answer.
    """

    def __init__(
        self,
        max_devices: int = DEFAULT_MAX_DEVICES,
        expire_seconds: float = DEFAULT_EXPIRE_SECONDS,
        *,
        confirm_seconds: float = DEFAULT_CONFIRM_SECONDS,
        max_unconfirmed: int | None = None,
        max_sources: int = MAX_SOURCES,
    ) -> None:
        if max_unconfirmed is None:  # an eighth of the slots (8 of 64), at least 4 of them
            max_unconfirmed = max(min(max_devices, 4), max_devices // UNCONFIRMED_SHARE)
        if max_devices < 1 or not expire_seconds > 0:
            raise ValueError("max_devices must be >= 1 and expire_seconds > 0")
        if max_unconfirmed < 1 or not confirm_seconds > 0 or max_sources < 1:
            raise ValueError("max_unconfirmed must be >= 1 and confirm_seconds > 0")
        self.max_devices = max_devices
        self.expire_seconds = expire_seconds
        self.confirm_seconds = confirm_seconds
        self.max_unconfirmed = max_unconfirmed
        self.max_sources = max_sources
        self._last: dict[str, float] = {}  # key -> when it last answered (or was admitted)
        self._trial: dict[str, tuple[float, str]] = {}  # on trial: key -> (admitted, source)
        self._penalty: OrderedDict[str, tuple[int, float]] = OrderedDict()  # failures, until
        self._cap_said = False
        self.ignored = 0  # offers refused at the cap
        self.expired = 0  # devices dropped for silence (on trial or confirmed)
        self.unconfirmed = 0  # devices dropped on trial: their ECP never answered
        self.penalized = 0  # offers refused: on trial already full, or their source penalized

    def __len__(self) -> int:
        return len(self._last)

    def __contains__(self, key: object) -> bool:
        return key in self._last

    @property
    def on_trial(self) -> int:
        """Devices captured whose ECP has not answered yet."""
        return len(self._trial)

    def is_on_trial(self, key: str) -> bool:
        return key in self._trial

    def offer(self, key: str, now: float, source: str | None = None) -> Admission:
        """A device answered SSDP at ``now`` from ``source`` (its address; default ``key``):
        capture it on trial, if there is room and its source is not penalized."""
        if key in self._last:
            return Admission.KNOWN
        source = key if source is None else source
        penalty = self._penalty.get(source)
        if penalty is not None and now < penalty[1]:
            self.penalized += 1
            return Admission.PENALIZED
        if len(self._last) >= self.max_devices:
            self.ignored += 1
            if self._cap_said:
                return Admission.FULL
            self._cap_said = True
            return Admission.CAP_REACHED
        if len(self._trial) >= self.max_unconfirmed:
            self.penalized += 1
            return Admission.ON_TRIAL
        self._last[key] = now
        self._trial[key] = (now, source)
        return Admission.NEW

    def answered(self, key: str, at: float) -> None:
        """The device was known to answer at ``at`` (an SSDP reply alone does not count): it is
        confirmed, and its source forgiven."""
        if key in self._last:
            self._last[key] = max(self._last[key], at)
            trial = self._trial.pop(key, None)
            if trial is not None:
                self._penalty.pop(trial[1], None)

    def expire(self, now: float) -> list[str]:
        """Forget and return the devices silent for too long at ``now``: ``confirm_seconds``
        on trial (their source is penalized), ``expire_seconds`` once confirmed."""
        gone = []
        for key, last in self._last.items():
            trial = self._trial.get(key)
            if trial is not None:
                if now - trial[0] >= self.confirm_seconds:
                    gone.append(key)
            elif now - last >= self.expire_seconds:
                gone.append(key)
        for key in gone:
            del self._last[key]
            trial = self._trial.pop(key, None)
            if trial is not None:
                self.unconfirmed += 1
                self._penalize(trial[1], now)
        if gone:
            self.expired += len(gone)
            self._cap_said = False  # room again: reaching the cap is said again
        return gone

    def _penalize(self, source: str, now: float) -> None:
        failures = self._penalty.pop(source, (0, now))[0] + 1
        wait = min(MAX_PENALTY_SECONDS, self.expire_seconds * 2.0 ** min(failures - 1, 30))
        self._penalty[source] = (failures, now + wait)
        while len(self._penalty) > self.max_sources:
            self._penalty.popitem(last=False)

    def forget(self, key: str) -> None:
        self._last.pop(key, None)
        self._trial.pop(key, None)


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
