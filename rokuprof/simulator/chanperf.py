"""The simulated app's vitals, as ``chanperf`` shows them on the console and ECP.

:class:`AppVitals` follows the synthetic app's work: its live heap (every allocation until it is
freed, leaks included) and the share of busy thread walks over the last second of app time. The
figures are therefore deterministic for the same seed and the same app time. The console line
mimics a device's; the ECP XML is our choice of shape (see :mod:`rokuprof.device.chanperf`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rokuprof.simulator.xml_text import quoteattr

if TYPE_CHECKING:
    from rokuprof.simulator.config import DeviceConfig


class Running(Protocol):
    """What the app's vitals need of a device, and all they may touch."""

    config: DeviceConfig
    installed: dict[str, str] | None

    def app_vitals(self) -> AppVitals | None: ...


NOT_AVAILABLE = "channel: mem and cpu data not available"
WINDOW_TICKS = 100  # one second of 10 ms ticks
FILE_KIB = 12392  # the app's mapped files (constant)
SHARED_KIB = 44
SWAP_KIB = 0  # newer firmware prints swap= in the console line (the app never swaps here)
ANON_BASE_KIB = 2600  # the app's memory before anything the model allocates


class AppVitals:
    """The synthetic app's live heap and recent busy share (fed by
    :class:`~rokuprof.simulator.app.SyntheticApp`)."""

    def __init__(self) -> None:
        self.heap_bytes = 0
        self._sizes: dict[int, int] = {}  # allocation sequence number -> size, until freed
        self._walks = 0  # busy walks in the current tick
        self._ticks: deque[tuple[int, int]] = deque(maxlen=WINDOW_TICKS)  # (busy, possible)

    def allocated(self, size: int) -> None:
        self.heap_bytes += size

    def will_free(self, seq: int, size: int) -> None:
        """The allocation of ``size`` bytes will be freed as number ``seq``."""
        self._sizes[seq] = size

    def freed(self, seq: int | None = None, size: int = 0) -> None:
        """A free: of the allocation numbered ``seq``, or of ``size`` bytes."""
        self.heap_bytes -= self._sizes.pop(seq, 0) if seq is not None else size

    def walked(self) -> None:
        self._walks += 1

    def tick(self, possible: int) -> None:
        """A scheduling tick ended, with ``possible`` thread walks it could have had."""
        self._ticks.append((self._walks, possible))
        self._walks = 0

    def cpu_percent(self) -> int:
        possible = sum(p for _, p in self._ticks)
        busy = sum(b for b, _ in self._ticks)
        return min(100, round(100 * busy / possible)) if possible else 0


@dataclass(frozen=True)
class Figures:
    user: int
    sys: int
    anon_kib: int

    @property
    def cpu(self) -> int:
        return self.user + self.sys

    @property
    def mem_kib(self) -> int:
        return self.anon_kib + FILE_KIB + SHARED_KIB


def figures(device: Running) -> Figures | None:
    """The running app's figures; ``None`` when none: no app, a replay run, or the app was
    not built with ``run_as_process=1`` (the device's config, or the installed manifest)."""
    vitals = device.app_vitals()
    installed = device.installed
    as_process = device.config.run_as_process and (
        not isinstance(installed, dict) or installed.get("run_as_process") == "1"
    )
    if vitals is None or not as_process:
        return None
    cpu = vitals.cpu_percent()
    user = cpu // 3
    return Figures(user, cpu - user, ANON_BASE_KIB + max(0, vitals.heap_bytes) // 1024)


def console_line(device: Running) -> str:
    f = figures(device)
    if f is None:
        return NOT_AVAILABLE
    return (
        f"channel: mem={f.mem_kib}KiB{{anon={f.anon_kib},file={FILE_KIB},shared={SHARED_KIB},"
        f"swap={SWAP_KIB}}},"
        f"%cpu={f.cpu}{{user={f.user},sys={f.sys}}}"
    )


def xml(device: Running) -> bytes:
    """The ``/query/chanperf`` document (memory in bytes)."""
    f = figures(device)
    if f is None:
        body = "\t<status>FAILED</status>\n\t<error>mem and cpu data not available</error>\n"
    else:
        memory = "".join(
            f"<{name}>{kib * 1024}</{name}>"
            for name, kib in (
                ("anon", f.anon_kib),
                ("file", FILE_KIB),
                ("shared", SHARED_KIB),
                ("swap", SWAP_KIB),
                ("used", f.mem_kib),
            )
        )
        body = (
            f"\t<plugin id={quoteattr('dev')}>\n"
            f"\t\t<cpu-percent><user>{f.user}</user><sys>{f.sys}</sys></cpu-percent>\n"
            f"\t\t<memory>{memory}</memory>\n"
            "\t</plugin>\n\t<status>OK</status>\n"
        )
    return f'<?xml version="1.0" encoding="UTF-8" ?>\n<chanperf>\n{body}</chanperf>\n'.encode()
