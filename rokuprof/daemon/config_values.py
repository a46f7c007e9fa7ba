"""The config's value syntaxes: listen addresses (``"127.0.0.1:9464"``, ``"[::1]:9464"``), both
ways, and sizes (``"20GiB"``, ``"500MB"``: rokuprof's one size syntax,
:func:`rokuprof.units.parse_size`)."""

from __future__ import annotations

from rokuprof.units import BINARY_UNITS, parse_size

__all__ = ["BINARY_UNITS", "format_host", "parse_listen", "parse_size"]


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
