"""The HTTP client of one device port (ECP, the Application Installer): one httpx client that
never goes through a proxy, follows no redirect, names rokuprof, and times out as a whole.

The ports are plain HTTP, never TLS: every client shares one TLS context that is never used
(:func:`no_tls`), because httpx would otherwise build one per client, loading the system's CA
bundle (about 40 ms of CPU each: a fleet of devices asked every few seconds would spend its
event loop on it); for the same reason a module httpx imports on every request is looked up once
(:mod:`rokuprof.device.lazy_imports`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ssl
from collections.abc import AsyncIterator
from typing import Self

import httpx

from rokuprof.device.endpoint import PortClient
from rokuprof.device.errors import DeviceTimeout, DeviceUnavailable
from rokuprof.device.hosts import url_host
from rokuprof.device.lazy_imports import remember_missing
from rokuprof.httpbody import IDENTITY

remember_missing()  # httpx's per-request import of an absent module: searched once, not each time


@functools.cache
def no_tls() -> ssl.SSLContext:
    """The TLS context of every device client: built once, without loading any certificate (an
    ``https`` URL is never asked for, and none is followed: it would fail verification)."""
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


class HttpPortClient(PortClient):
    """A :class:`PortClient` over HTTP. Use as ``async with``; :meth:`aclose` ends it."""

    #: how an error names what the device sends back ("no complete answer within 5 s")
    answer = "answer"

    def __init__(self, name: str, host: str, port: int, timeout: float) -> None:
        super().__init__(name, host, port, timeout)
        self.base_url = f"http://{url_host(host)}:{port}"
        self._client = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout),
            trust_env=False,  # never route device traffic (or a password) through a proxy
            follow_redirects=False,
            headers=IDENTITY,  # the caps count the bytes kept
            verify=no_tls(),  # plain HTTP: no CA bundle loaded per client
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._client.aclose()

    @contextlib.asynccontextmanager
    async def _deadline(self, path: str) -> AsyncIterator[None]:
        """One exchange's total deadline (``timeout``); transport errors said as device errors
        naming the port and ``path``."""
        try:
            async with asyncio.timeout(self.timeout):
                yield
        except (TimeoutError, httpx.TimeoutException) as error:
            raise DeviceTimeout(
                f"{self.where} {path}: no complete {self.answer} within {self.timeout:g} s; gave up"
            ) from error
        except httpx.TransportError as error:
            raise DeviceUnavailable(
                f"cannot reach {self.where} ({error.__class__.__name__}: {error})"
            ) from error
