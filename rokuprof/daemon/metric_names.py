"""Every metric the daemon exposes, in one place: its name and help text. The type follows
from the name, by Prometheus's rule: a counter's name ends in ``_total``, every other metric here
is a gauge. :mod:`rokuprof.daemon.collect` fills the families; ``docs/daemon.md`` lists them."""

from __future__ import annotations

from collections.abc import Mapping

from rokuprof.daemon.exposition import Family

HELP = {
    "rokuprof_device_bytes_total": "Profiler bytes received.",
    "rokuprof_device_entries_total": "Entries decoded.",
    "rokuprof_device_state": "Device state (1 = current, else 0).",
    "rokuprof_device_info": "A device's names: directory, config, ECP (1).",
    "rokuprof_device_last_data_age_seconds": (
        "Seconds since the device's last profiler byte (absent before any)."
    ),
    "rokuprof_device_worst_tick_seconds": (
        "The longest tick of the device's capture (decoding, deltas, chunks) so far."
    ),
    "rokuprof_device_ecp_limited": "1 while the device's ECP is limited.",
    "rokuprof_sessions_total": "Finished sessions by final status.",
    "rokuprof_sessions_streaming": "Sessions being captured.",
    "rokuprof_chunks_written_total": "Chunks written.",
    "rokuprof_chunks_uploaded_total": "Chunks Sentry accepted (2xx).",
    "rokuprof_chunks_rejected_total": "Chunks refused for good.",
    "rokuprof_chunks_dropped_total": (
        "Undelivered chunks dropped: spool full, or the disk below its floor."
    ),
    "rokuprof_capture_restarts_total": "Capture loop restarts.",
    "rokuprof_last_error_info": "The latest error (labels), 1 when present.",
    "rokuprof_last_error_timestamp_seconds": "When the latest error happened.",
    "rokuprof_discovery_devices": "Devices found by SSDP captured.",
    "rokuprof_discovery_ignored_total": "SSDP devices ignored: [discovery] max_devices reached.",
    "rokuprof_discovery_expired_total": (
        "SSDP devices dropped after expire_seconds unreachable (or confirm_seconds on trial)."
    ),
    "rokuprof_discovery_on_trial": "SSDP devices captured whose ECP has not answered yet.",
    "rokuprof_discovery_unconfirmed_total": (
        "SSDP devices dropped because their ECP never answered within confirm_seconds."
    ),
    "rokuprof_discovery_penalized_total": (
        "SSDP devices ignored: too many on trial, or their address penalized."
    ),
    "rokuprof_discovery_replies_dropped_total": (
        "SSDP datagrams dropped unread: over the rate per source address."
    ),
    "rokuprof_uploads_enabled": "1 with a Sentry DSN, 0 without.",
    "rokuprof_spool_pending_chunks": "Chunks waiting for upload.",
    "rokuprof_spool_pending_bytes": "Bytes of chunks to upload.",
    "rokuprof_spool_oldest_pending_age_seconds": (
        "Age of the oldest chunk not yet delivered (0 when none)."
    ),
    "rokuprof_upload_errors_total": "Failed upload attempts.",
    "rokuprof_upload_rate_limited_total": "429 answers.",
    "rokuprof_upload_paused": "1 while Sentry refuses the key (401/403).",
    "rokuprof_upload_key_refused_total": "401/403 answers.",
    "rokuprof_spool_dropped_bytes_total": "Bytes of chunks dropped.",
    "rokuprof_spool_limit_bytes": "Undelivered chunk bytes allowed.",
    "rokuprof_disk_waiting": (
        "1 while capture waits below min_free_bytes with nothing left to delete."
    ),
    "rokuprof_disk_min_free_bytes": "The free-space floor (0: none).",
    "rokuprof_retention_sessions_deleted_total": "Sessions retention deleted.",
    "rokuprof_retention_deleted_bytes_total": (
        "Allocated bytes retention deleted (sessions and chunks)."
    ),
    "rokuprof_retention_chunks_dropped_total": (
        "Undelivered chunks retention deleted (with their session, or alone at the floor)."
    ),
    "rokuprof_chunks_markers_owed": (
        "Chunks Sentry accepted whose delivered marker waits for disk space."
    ),
    "rokuprof_disk_free_bytes": "Free bytes of the output file system.",
    "rokuprof_build_info": "rokuprof version.",
    "rokuprof_start_time_seconds": "Daemon start (Unix time).",
}


def family(name: str) -> Family:
    """The empty family ``name`` (a counter if it ends in ``_total``, else a gauge)."""
    return Family(name, "counter" if name.endswith("_total") else "gauge", HELP[name])


def singles(values: Mapping[str, float]) -> list[Family]:
    """A family of one unlabelled sample for each ``name: value``, in that order."""
    return [family(name).add(value) for name, value in values.items()]
