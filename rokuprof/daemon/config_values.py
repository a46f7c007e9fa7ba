"""The config's value syntaxes: sizes (``"20GiB"``, ``"500MB"``) and listen addresses
(``"127.0.0.1:9464"``, ``"[::1]:9464"``), both ways."""

from __future__ import annotations

import re

_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3}
_UNITS |= {"gb": 1000**3, "t": 1000**4, "tb": 1000**4}
_UNITS |= {"kib": 1024, "mib": 1024**2, "gib": 1024**3, "tib": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([A-Za-z]*)\s*$")
BINARY_UNITS = (("TiB", 1024**4), ("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


def parse_size(text: str | int) -> int:
    """``"20GiB"`` -> bytes (``KB``/``MB``/``GB`` are powers of 1000, ``KiB``... of 1024)."""
    if isinstance(text, bool):
        raise ValueError("expected a size such as '20GiB'")
    if isinstance(text, int):
        if text < 0:
            raise ValueError("a size cannot be negative")
        return text
    m = _SIZE.match(text)
    if not m or m.group(2).lower() not in _UNITS:
        raise ValueError(f"expected a size such as '500MB' or '20GiB', got {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def format_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def parse_listen(text: str) -> tuple[str, int] | None:
    """``"127.0.0.1:9464"`` / ``"[::1]:9464"`` -> (host, port); ``""`` -> None (off)."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("["):
        host, sep, port = text[1:].partition("]:")
    else:
        host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"expected HOST:PORT such as '127.0.0.1:9464', got {text!r}")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"port must be a number 0-65535, got {port!r}")
    return host, int(port)
