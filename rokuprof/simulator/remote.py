"""The simulated device's remote control over ECP: keys, launch and exit-app.

* ``POST /keypress/<key>`` (and ``/keydown/``): ``Home`` exits the running app; any other key
  (URL-decoded: ``Lit_%20`` is ``Lit_ ``) reaches the running app's
  :meth:`~rokuprof.simulator.app.SyntheticApp.press` at the app time it is now, so the work it
  causes lands where it would on a device. ``/keyup/`` only acknowledges.
* ``POST /launch/<id>[?query]``: the dev app starts (another app takes the screen: the dev app
  exits); the query (deep-link parameters) is recorded as sent, and the app opens the linked
  content (:data:`~rokuprof.simulator.app_keys.DEEP_LINK`), at once if it was already
  running (as the input event a running app gets), at its start otherwise.
* ``POST /exit-app/dev`` (Roku OS 13 and later): the running dev app exits as with Home, its
  stream ends with the end marker and footer; 404 when it is not running, and 404 on firmware
  before 13, as there the command does not exist. Refused in limited mode (ecp.py), as Roku
  lists exit-app among the commands that need "Control by mobile apps" enabled.

Every request that took effect is appended to ``device.remote_log`` as ``(monotonic seconds,
kind, value)``: kind is the ECP command (``keypress``, ``keydown``, ``keyup``, ``launch``,
``exit-app``), value the decoded key, the launch's raw query string, or the app id.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Protocol
from urllib.parse import unquote

from rokuprof.simulator.app_keys import DEEP_LINK

if TYPE_CHECKING:
    from rokuprof.simulator.config import DeviceConfig
    from rokuprof.simulator.http import Request
    from rokuprof.simulator.runs import RunRecord


class Controlled(Protocol):
    """What the remote needs of a device, and all it may touch."""

    config: DeviceConfig
    remote_log: deque[tuple[float, str, str]]

    @property
    def current(self) -> RunRecord | None: ...
    async def home(self, reason: str = ...) -> bool: ...
    async def launch(self) -> RunRecord: ...
    def press(self, key: str) -> None: ...


DEV_APP_ID = "dev"
KEY_COMMANDS = ("keypress", "keydown", "keyup")
EXIT_APP_SINCE = 13  # Roku OS major version that answers POST /exit-app


def firmware_major(version: str) -> int:
    """The major number of a software version such as ``14.1.4`` (unreadable: the newest)."""
    head = version.split(".", 1)[0].strip()
    return int(head) if head.isdigit() else 1 << 16


def _log(device: Controlled, kind: str, value: str) -> None:
    device.remote_log.append((device.config.monotonic(), kind, value))


async def handle(
    device: Controlled, request: Request, other_apps: set[str]
) -> tuple[int, bytes] | None:
    """Answer a remote request: (status, body), or None when it is not one."""
    if request.method != "POST":
        return None
    command, _, rest = request.path[1:].partition("/")
    if command in KEY_COMMANDS:
        key = unquote(rest, errors="replace")
        _log(device, command, key)
        if command != "keyup":  # a press is keydown then keyup: the work is on the way down
            if key.lower() == "home":
                await device.home()
            else:
                device.press(key)
        return 200, b""
    if command == "launch":
        if rest != DEV_APP_ID and rest not in other_apps:
            return 404, b""
        query = request.target.partition("?")[2]
        _log(device, command, query)
        if rest == DEV_APP_ID:
            await device.launch()
            if query:
                device.press(DEEP_LINK)
        else:
            await device.home()  # another app takes the screen: the dev app exits
        return 200, b""
    if command == "exit-app":
        too_old = firmware_major(device.config.software_version) < EXIT_APP_SINCE
        if too_old or rest != DEV_APP_ID or device.current is None:
            return 404, b""
        _log(device, command, rest)
        await device.home(reason="exit-app")
        return 200, b""
    return None
