"""``rokuprof daemon``'s logging: the HTTP libraries stay at WARNING unless asked for."""

from __future__ import annotations

import io
import logging

import pytest

from rokuprof.daemon.logs import setup_logging


@pytest.mark.parametrize("libraries", [False, True])
def test_library_loggers_stay_at_warning_unless_asked(libraries: bool) -> None:
    stream = io.StringIO()
    handler = setup_logging("human", "DEBUG", stream=stream, libraries=libraries)
    try:
        logging.getLogger("httpcore.connection").debug("connect_tcp.started host='x'")
        logging.getLogger("httpx").info("HTTP Request: POST ...")
        logging.getLogger("httpcore.http11").warning("a library warning")
        logging.getLogger("rokuprof.daemon").debug("our own debug line")
    finally:
        logging.getLogger().removeHandler(handler)
        logging.getLogger().setLevel(logging.WARNING)
    text = stream.getvalue()
    assert "our own debug line" in text and "a library warning" in text
    assert ("connect_tcp.started" in text) is libraries
    assert ("HTTP Request" in text) is libraries
