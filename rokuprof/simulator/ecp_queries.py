"""ECP queries about the apps' state (pure: a device's state in, XML out).

* ``GET /query/app-state/<id>`` (Roku OS 11.5 and later): ``active`` for the running dev app,
  ``inactive`` for an app that is not running (the dev app after it exited, or one of the other
  apps); the shape Roku documents (``app-id``, ``app-title``, ``app-version``, ``state``,
  ``status``). An id the device does not have: ``status`` ``FAILED`` with an ``error``.
* ``GET /query/media-player``: no app playing media, as a device says it: ``state="none"``
  at the home screen; ``state="close"`` with the ``plugin`` element while an app runs that
  plays nothing (the simulated apps never play media).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from rokuprof.simulator.xml_text import escape, quoteattr

if TYPE_CHECKING:
    from rokuprof.simulator.config import DeviceConfig
    from rokuprof.simulator.runs import RunRecord


class Showing(Protocol):
    """What the app and player queries need of a device, and all they may touch."""

    config: DeviceConfig

    @property
    def current(self) -> RunRecord | None: ...


HEAD = '<?xml version="1.0" encoding="UTF-8" ?>\n'


def app_state_xml(device: Showing, app_id: str, apps: dict[str, tuple[str, str]]) -> bytes:
    """``/query/app-state/<app_id>``; ``apps`` maps the installed apps' ids to (name,
    version)."""
    found = apps.get(app_id)
    if found is None:
        body = f"\t<status>FAILED</status>\n\t<error>App {escape(app_id[:64])} not found</error>\n"
    else:
        name, version = found
        running = app_id == "dev" and device.current is not None
        body = (
            f"\t<app-id>{escape(app_id)}</app-id>\n\t<app-title>{escape(name)}</app-title>\n"
            f"\t<app-version>{escape(version)}</app-version>\n"
            f"\t<state>{'active' if running else 'inactive'}</state>\n\t<status>OK</status>\n"
        )
    return f"{HEAD}<app-state>\n{body}</app-state>\n".encode()


def media_player_xml(device: Showing) -> bytes:
    """``/query/media-player``."""
    if device.current is None:
        return f'{HEAD}<player error="false" state="none"/>\n'.encode()
    cfg = device.config
    return (
        f'{HEAD}<player error="false" state="close">\n'
        f'\t<plugin bandwidth="0 bps" id="dev" name={quoteattr(cfg.app_name)}/>\n'
        '\t<format audio="" captions="" container="" drm="" video="" video_res=""/>\n'
        '\t<buffering current="0" max="0" target="0"/>\n'
        '\t<new_stream speed="0 bps"/>\n'
        "\t<position>0 ms</position>\n"
        '\t<is_live blocked="false">false</is_live>\n'
        "</player>\n"
    ).encode()
