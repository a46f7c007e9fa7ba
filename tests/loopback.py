"""What loopback this machine has: the IPv6 tests skip, saying why, where ``::1`` is missing."""

from __future__ import annotations

import socket

import pytest


def has_ipv6_loopback() -> bool:
    """Whether a socket can bind ``::1``."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


needs_ipv6 = pytest.mark.skipif(not has_ipv6_loopback(), reason="no IPv6 loopback (::1)")
