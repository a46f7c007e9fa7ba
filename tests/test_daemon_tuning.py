"""The daemon's typed knobs (DaemonOptions.capture/.uploader/.pyroscope) reach their parts, and
the config file's settings (chunk settings, spool limit, uploads at once) are never overridden by
them: each fact has one source."""

from __future__ import annotations

import inspect
from dataclasses import fields
from pathlib import Path

from rokuprof.capture.loop import CaptureConfig
from rokuprof.daemon.config import build_config
from rokuprof.daemon.daemon import Daemon, DaemonOptions
from rokuprof.daemon.tuning import CaptureTuning, PyroscopeTuning, UploaderTuning
from rokuprof.sentry.settings import ChunkSettings
from rokuprof.store.pyroscope import PyroscopePusher
from rokuprof.store.uploader import Uploader


def test_every_knob_is_an_argument_of_its_part_and_none_is_set_by_the_config() -> None:
    capture_fields = {f.name for f in fields(CaptureConfig)}
    assert CaptureTuning.__optional_keys__ <= capture_fields
    assert UploaderTuning.__optional_keys__ <= set(inspect.signature(Uploader).parameters)
    assert PyroscopeTuning.__optional_keys__ <= set(inspect.signature(PyroscopePusher).parameters)
    from_config = {"host", "out", "chunk_settings", "limits", "archive_limits"}
    assert not CaptureTuning.__optional_keys__ & from_config
    assert not UploaderTuning.__optional_keys__ & {"max_in_flight", "max_spool_bytes"}
    assert not PyroscopeTuning.__optional_keys__ & {"url", "name", "root"}


def test_knobs_reach_their_parts_beside_the_config_settings(tmp_path: Path) -> None:
    config = build_config(
        {
            "capture": {"out": str(tmp_path), "chunk_seconds": 2},
            "devices": [{"host": "127.0.0.1", "name": "tv"}],
            "sentry": {"environment": "qa", "max_in_flight": 3},
            "spool": {"max_bytes": "1MiB"},
            "pyroscope": {"url": "http://127.0.0.1:4040"},
        },
        env={},
    )
    assert config.capture.chunks == ChunkSettings(chunk_seconds=2, environment="qa")
    options = DaemonOptions(
        capture=CaptureTuning(idle_timeout=1.5, poll_interval=0.05),
        uploader=UploaderTuning(probe_base=0.25, rescan_seconds=0.5),
        pyroscope=PyroscopeTuning(rescan_seconds=0.125),
    )
    daemon = Daemon(config, options=options)
    capture = daemon._capture_config(config.devices[0])
    assert (capture.idle_timeout, capture.poll_interval) == (1.5, 0.05)
    assert capture.chunk_settings == ChunkSettings(chunk_seconds=2, environment="qa")  # config's
    up = daemon.uploader
    assert (up.probe_base, up.max_in_flight, up.max_spool_bytes) == (0.25, 3, 1024**2)
    assert daemon.pyroscope is not None and daemon.pyroscope.rescan_seconds == 0.125
    defaults = Daemon(config)
    assert (
        defaults.uploader.probe_base == inspect.signature(Uploader).parameters["probe_base"].default
    )  # a knob left out keeps its part's own default
