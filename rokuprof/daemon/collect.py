"""What the daemon tells about itself: its metric families, ``/healthz`` and the status line.

The daemon hands over its state once (:class:`DaemonState`: references to its live parts, read
at each scrape); the functions here only read it, and take the time as arguments. A scrape costs
about 25 samples per device: :func:`collect_in_turns` reads the devices :data:`TURN_DEVICES` at a
time, pausing between turns (where the daemon lets its event loop run), so thousands of devices
never hold the loop for long.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rokuprof import __version__
from rokuprof.capture.status import DeviceState
from rokuprof.daemon.exposition import Family, label_text
from rokuprof.daemon.metric_names import family, singles
from rokuprof.store.layout import SessionStatus
from rokuprof.timefmt import utc_iso

if TYPE_CHECKING:
    from rokuprof.daemon.devices import DeviceSlot
    from rokuprof.daemon.discovery import Discovery
    from rokuprof.daemon.disk import DiskKeeper
    from rokuprof.store.uploader import Uploader

#: The longest error message a ``rokuprof_last_error_info`` label carries.
MAX_ERROR_LABEL = 300
#: Devices read per turn of :func:`collect_in_turns` (about 2 ms of the event loop's time here).
TURN_DEVICES = 100


@dataclass(frozen=True)
class DaemonState:
    """The daemon's live parts, as the metrics, ``/healthz`` and the status line read them."""

    slots: Mapping[str, DeviceSlot]  # device key -> its capture loop (changes as devices come)
    uploader: Uploader
    uploads_on: bool  # a DSN is set (without one nothing is pending upload)
    discovery: Discovery
    disk: DiskKeeper  # retention and the free-space floor
    started_at: float  # Unix time
    stopping: Callable[[], bool]


# -- /healthz and the status line -------------------------------------------------------------


def dead_loops(state: DaemonState) -> list[str]:
    """The devices whose capture loop has ended."""
    return [s.name for s in state.slots.values() if s.task is not None and s.task.done()]


def status_line(state: DaemonState) -> str:
    """One line for systemd's status: devices by state, chunks to upload, a wait for disk
    space, a pause."""
    states: dict[str, int] = {}
    for slot in state.slots.values():
        states[slot.state] = states.get(slot.state, 0) + 1
    parts = ", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "no devices"
    up = state.uploader
    uploads = f"{up.pending} chunk(s) to upload" if state.uploads_on else "uploads off (no DSN)"
    line = f"{len(state.slots)} device(s): {parts}; {uploads}"
    if state.disk.waiting:
        line += "; capture waits for disk space"
    return f"{line} (uploads paused: {up.pause.reason})" if up.pause else line


def health(state: DaemonState) -> tuple[bool, str]:
    """(healthy, text); a paused upload adds a line but is not unhealthy: the capture goes
    on and nothing is lost (``rokuprof_upload_paused`` is the metric to alert on). Nor is a
    capture waiting for disk space (a restart would not bring space back; the metric is
    ``rokuprof_disk_waiting``): it adds its line, why and since when."""
    pause = state.uploader.pause
    note = ""
    if pause is not None:
        since = utc_iso(pause.since, "seconds")
        note = (
            f"\nuploads paused: {pause.reason} since {since};"
            f" {state.uploader.pending} chunk(s) wait on disk"
        )
    if disk := state.disk.note():
        note += "\n" + disk
    if state.stopping():
        return False, "stopping" + note
    dead = dead_loops(state)
    if dead:
        return False, f"capture loop ended: {', '.join(dead)}" + note
    slots = list(state.slots.values())
    if slots and all(s.state is DeviceState.UNREACHABLE for s in slots):
        lines = [
            f"{s.name} ({s.config.host}): {s.status.detail if s.status else ''}" for s in slots
        ]
        return False, "every device is unreachable:\n" + "\n".join(lines) + note
    return True, "ok" + note


# -- metrics ----------------------------------------------------------------------------------


def _families() -> dict[str, Family]:
    """The per-device and per-source families, empty."""
    return {
        "bytes": family("rokuprof_device_bytes_total"),
        "entries": family("rokuprof_device_entries_total"),
        "state": family("rokuprof_device_state"),
        "info": family("rokuprof_device_info"),
        "age": family("rokuprof_device_last_data_age_seconds"),
        "tick": family("rokuprof_device_worst_tick_seconds"),
        "limited": family("rokuprof_device_ecp_limited"),
        "sessions": family("rokuprof_sessions_total"),
        "streaming": family("rokuprof_sessions_streaming"),
        "written": family("rokuprof_chunks_written_total"),
        "uploaded": family("rokuprof_chunks_uploaded_total"),
        "rejected": family("rokuprof_chunks_rejected_total"),
        "dropped": family("rokuprof_chunks_dropped_total"),
        "restarts": family("rokuprof_capture_restarts_total"),
        "error": family("rokuprof_last_error_info"),
        "error_time": family("rokuprof_last_error_timestamp_seconds"),
    }


#: The label text each state and each final session status adds to a device's.
_STATE_LABELS = {state: "," + label_text(state=state.value) for state in DeviceState}
_FINAL_LABELS = {st: "," + label_text(status=st) for st in SessionStatus if st.final}


def _add_device(fam: dict[str, Family], slot: DeviceSlot, now: float) -> None:
    """One device's samples (``now``: the clock of its status, monotonic); its label is
    escaped once, every sample shares the text."""
    d = label_text(device=slot.name)
    c = slot.counters
    st = slot.status
    now_state = slot.state
    fam["bytes"].add_text(slot.bytes_total(), d)
    fam["entries"].add_text(slot.entries_total(), d)
    for state, labels in _STATE_LABELS.items():
        fam["state"].add_text(1 if now_state is state else 0, d + labels)
    fam["info"].add(
        1,
        device=slot.name,
        name=slot.label,
        host=slot.config.host,
        device_name=st.device_name if st is not None else "",
    )
    since = st.since_data(now) if st is not None else None
    if since is not None:
        fam["age"].add_text(round(since, 3), d)
    if st is not None:
        fam["tick"].add_text(round(st.worst_tick_seconds, 6), d)
    fam["limited"].add_text(1 if st is not None and st.limited else 0, d)
    for status, labels in _FINAL_LABELS.items():
        fam["sessions"].add_text(c.sessions.get(status, 0), d + labels)
    fam["streaming"].add_text(1 if c.live else 0, d)
    fam["written"].add_text(c.chunks_written, d)
    fam["restarts"].add_text(c.restarts, d)
    if c.last_error:
        message = c.last_error[:MAX_ERROR_LABEL]
        fam["error"].add(1, source="device", device=slot.name, message=message)
        fam["error_time"].add(c.last_error_at or 0, source="device", device=slot.name)


def _discovery(disc: Discovery) -> list[Family]:
    found = disc.registry
    return singles(
        {
            "rokuprof_discovery_devices": len(found),
            "rokuprof_discovery_ignored_total": found.ignored,
            "rokuprof_discovery_expired_total": found.expired,
            "rokuprof_discovery_on_trial": found.on_trial,
            "rokuprof_discovery_unconfirmed_total": found.unconfirmed,
            "rokuprof_discovery_penalized_total": found.penalized,
            "rokuprof_discovery_replies_dropped_total": disc.limiter.dropped,
        }
    )


def _uploads(state: DaemonState, wall: float) -> list[Family]:
    """The spool's and the uploader's families (``wall``: Unix time now). Without a DSN
    nothing is pending upload: the chunks are the output, ``rokuprof_uploads_enabled`` is 0."""
    up = state.uploader
    on = state.uploads_on
    oldest = up.oldest_pending_mtime() if on else None
    pending, pending_bytes = (up.pending, up.pending_bytes) if on else (0, 0)
    return singles(
        {
            "rokuprof_uploads_enabled": 1 if on else 0,
            "rokuprof_spool_pending_chunks": pending,
            "rokuprof_spool_pending_bytes": pending_bytes,
            "rokuprof_spool_oldest_pending_age_seconds": max(0.0, wall - oldest) if oldest else 0.0,
            "rokuprof_upload_errors_total": up.stats.send_errors,
            "rokuprof_upload_rate_limited_total": up.stats.rate_limited,
            "rokuprof_upload_paused": 1 if up.pause is not None else 0,
            "rokuprof_upload_key_refused_total": up.stats.key_refused,
            "rokuprof_spool_dropped_bytes_total": up.stats.dropped_bytes,
            "rokuprof_spool_limit_bytes": up.max_spool_bytes or 0,
        }
    )


def _disk(state: DaemonState) -> list[Family]:
    """Retention's and the floor's families."""
    disk = state.disk
    f = disk.figures
    values = {
        "rokuprof_disk_waiting": 1 if disk.waiting else 0,
        "rokuprof_disk_min_free_bytes": disk.floor,
        "rokuprof_retention_sessions_deleted_total": f.sessions_deleted,
        "rokuprof_retention_deleted_bytes_total": f.bytes_deleted,
        "rokuprof_retention_chunks_dropped_total": f.chunks_dropped,
        "rokuprof_chunks_markers_owed": len(state.uploader.marks.owed),
    }
    if f.free is not None:
        values["rokuprof_disk_free_bytes"] = f.free
    return singles(values)


def collect(state: DaemonState, *, now: float, wall: float) -> list[Family]:
    """Every metric family at this moment (``now``: monotonic time, ``wall``: Unix time)."""
    fam = _families()
    for slot in state.slots.values():
        _add_device(fam, slot, now)
    return _rest(fam, state, wall)


def collect_in_turns(
    state: DaemonState, *, now: float, wall: float, turn: int = TURN_DEVICES
) -> Generator[None, None, list[Family]]:
    """:func:`collect` as a generator that pauses (yields) after every ``turn`` devices and
    returns the families: the devices of the moment it starts, each device read at once."""
    fam = _families()
    for i, slot in enumerate(list(state.slots.values())):
        if i and not i % turn:
            yield
        _add_device(fam, slot, now)
    return _rest(fam, state, wall)


def _rest(fam: dict[str, Family], state: DaemonState, wall: float) -> list[Family]:
    """The families after the devices': uploads, errors, build, discovery."""
    up = state.uploader
    for device_dir, counts in sorted(up.stats.per_device.items()):  # the display names
        fam["uploaded"].add(counts.uploaded, device=device_dir)
        fam["rejected"].add(counts.rejected, device=device_dir)
        fam["dropped"].add(counts.dropped, device=device_dir)
    if up.stats.last_error:
        message = up.stats.last_error[:MAX_ERROR_LABEL]
        fam["error"].add(1, source="upload", device="", message=message)
        fam["error_time"].add(up.stats.last_error_at or 0, source="upload", device="")
    if error := state.discovery.stats.last_error:
        fam["error"].add(1, source="discovery", device="", message=error)
    build = [
        family("rokuprof_build_info").add(1, version=__version__),
        family("rokuprof_start_time_seconds").add(state.started_at),
    ]
    return [
        *fam.values(),
        *_uploads(state, wall),
        *_disk(state),
        *build,
        *_discovery(state.discovery),
    ]
