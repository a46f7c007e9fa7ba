"""Daemon logs: human or JSON lines, and secrets never printed."""

from __future__ import annotations

import io
import json
import logging

import pytest

from rokuprof.daemon.logs import setup_logging

SECRET = "0123456789abcdef0123456789abcdef"


@pytest.fixture
def restore_logging():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    root.setLevel(level)


def test_json_lines_with_extra_fields_and_redaction(restore_logging) -> None:
    out = io.StringIO()
    setup_logging("json", stream=out, secrets=[SECRET])
    log = logging.getLogger("rokuprof.test")
    log.info("sending to %s", f"https://{SECRET}@sentry.example/1", extra={"device": "tv-1"})
    try:
        raise RuntimeError(f"boom {SECRET}")
    except RuntimeError:
        log.exception("failed")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["message"] == "sending to https://<redacted>@sentry.example/1"
    assert first["level"] == "info" and first["logger"] == "rokuprof.test"
    assert first["device"] == "tv-1" and first["time"].endswith("Z")
    assert "RuntimeError: boom <redacted>" in second["exception"]
    assert SECRET not in out.getvalue()


def test_human_lines(restore_logging) -> None:
    out = io.StringIO()
    setup_logging("human", stream=out)
    logging.getLogger("rokuprof.daemon").warning("device %s is gone", "tv-1")
    line = out.getvalue().strip()
    assert line.endswith("WARNING rokuprof.daemon: device tv-1 is gone")
    with pytest.raises(ValueError):
        setup_logging("xml")
