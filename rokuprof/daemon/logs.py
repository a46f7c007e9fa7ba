"""Daemon logging: human lines (default) or JSON lines (``--log-format json``), with secrets
(the Sentry DSN key) replaced by ``<redacted>`` in every record, whatever logged it.

Messages quote device text (names, replies), so neither format lets a control character
through: human lines show it escaped (``\\x1b``; one record is one line, a traceback aside),
JSON lines escape it as ``\\u001b`` and so keep the exact text."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import TextIO

from rokuprof.log_formats import FORMATS as FORMATS  # its home: log_formats
from rokuprof.timefmt import utc_iso
from rokuprof.views.text import json_dumps, printable

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class Redactor(logging.Filter):
    """Replaces each secret in a record's final message (and exception text) by ``<redacted>``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "<redacted>")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            record.msg = self.scrub(record.getMessage())
            record.args = None
            if record.exc_info:
                record.exc_text = self.scrub(logging.Formatter().formatException(record.exc_info))
                record.exc_info = None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, any ``extra=`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        data = {
            "time": utc_iso(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                data[key] = value if isinstance(value, int | float | str | bool) else str(value)
        if record.exc_info:
            data["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            data["exception"] = record.exc_text
        return json_dumps(data)


class HumanFormatter(logging.Formatter):
    """``12:00:00 INFO    rokuprof.daemon: message``, control characters escaped."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s", "%H:%M:%S")

    def formatMessage(self, record: logging.LogRecord) -> str:
        return printable(super().formatMessage(record))  # a newline in the message too

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record), multiline=True)  # the traceback's lines


#: Third-party loggers kept at WARNING unless asked for.
LIBRARY_LOGGERS = ("httpx", "httpcore", "asyncio", "hpack", "h11")


def setup_logging(
    fmt: str = "human",
    level: int | str = logging.INFO,
    *,
    stream: TextIO | None = None,
    secrets: Iterable[str] = (),
    libraries: bool = False,
) -> logging.Handler:
    """Route every log record to ``stream`` (stderr) in ``fmt``; return the handler. The
    libraries' own loggers (httpx, httpcore, asyncio) stay at WARNING unless ``libraries``."""
    if fmt not in FORMATS:
        raise ValueError(f"log format must be one of {', '.join(FORMATS)}")
    handler = logging.StreamHandler(stream or sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(HumanFormatter())
    handler.addFilter(Redactor(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_rokuprof", False):
            root.removeHandler(old)
    handler._rokuprof = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(level)
    for name in LIBRARY_LOGGERS:  # one line per request, per TCP event: noise
        logging.getLogger(name).setLevel(logging.NOTSET if libraries else logging.WARNING)
    return handler
