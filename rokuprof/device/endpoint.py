"""Where a client of one of a device's ports talks to: host and port, the total deadline of each
exchange, and the words that name the port in an error ("cannot reach ECP [::1]:8060")."""

from __future__ import annotations

from rokuprof.device.hosts import url_host


class PortClient:
    """What every client of a device port holds (ECP, the installer, the debug console)."""

    def __init__(self, name: str, host: str, port: int, timeout: float) -> None:
        self.host = host
        self.port = port
        self.timeout = timeout
        self.where = f"{name} {url_host(host)}:{port}"
