"""Application Installer (port 80) client: sideload an app, download a local-mode profile.

HTTP Digest auth as ``rokudev`` with the developer password; every operation has a total
deadline and every answer is read up to a cap (:mod:`rokuprof.httpbody`), whatever its status:
the 401 challenge's body too (this client answers the challenge itself rather than letting
httpx read that body whole), and past the cap the operation gives up; the pages are read by
:mod:`rokuprof.device.installer_page`. The password is a secret: it is never logged, never put
in an error's text, and :func:`read_password` takes it from the environment or a file only.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Generator, Mapping
from dataclasses import dataclass
from pathlib import Path

import httpx

from rokuprof.device.constants import INSTALLER_PORT, INSTALLER_USER, PASSWORD_VARIABLE
from rokuprof.device.errors import (
    DeviceError,
    HttpStatusError,
    ProtocolError,
)
from rokuprof.device.http_port import HttpPortClient
from rokuprof.device.installer_page import (
    FAILED,
    profile_path,
    read_install_answer,
    words,
)
from rokuprof.device.limits import (
    INSTALLER_MAX_PAGE_BYTES,
    INSTALLER_MAX_PROFILE_BYTES,
    INSTALLER_TIMEOUT,
)
from rokuprof.httpbody import read_capped
from rokuprof.units import size

#: Of a password file, at most this much is read (its first line is the password).
MAX_PASSWORD_FILE_BYTES = 4096


class InstallerAuthError(DeviceError):
    """The installer answered 401: the developer password was refused."""


class InstallFailed(DeviceError):
    """The installer did not install the app; ``words`` is what the device said (show it
    escaped: it is device text)."""

    def __init__(self, message: str, words: str) -> None:
        super().__init__(message)
        self.words = words


class PasswordError(ValueError):
    """The password file cannot be used (the message names the file, never its content)."""


@dataclass(frozen=True)
class InstallOutcome:
    """``kind``: ``installed`` (the device launched the app) or ``identical`` (the device kept
    its copy: launch it with ECP); ``message``: the device's words."""

    kind: str
    message: str


def read_password(password_file: Path | None, environ: Mapping[str, str]) -> str | None:
    """The developer password: the first line of ``password_file`` when given (its line end
    dropped), else ``ROKU_DEV_PASSWORD`` from ``environ``; None when neither has one."""
    if password_file is None:
        return environ.get(PASSWORD_VARIABLE) or None
    try:
        with open(password_file, "rb") as f:
            data = f.read(MAX_PASSWORD_FILE_BYTES)
    except OSError as error:
        raise PasswordError(
            f"cannot read the password file {str(password_file)!r}: {error.strerror or error}"
        ) from None
    line = data.split(b"\n", 1)[0].rstrip(b"\r")
    try:
        password = line.decode("utf-8")
    except UnicodeDecodeError:
        raise PasswordError(f"the password file {str(password_file)!r} is not UTF-8") from None
    if not password:
        raise PasswordError(f"the password file {str(password_file)!r} has an empty first line")
    return password


def _answered(
    flow: Generator[httpx.Request, httpx.Response, None], challenge: httpx.Response
) -> httpx.Request | None:
    """The request again with the answer to ``challenge``; None when it has no Digest one."""
    try:
        return flow.send(challenge)
    except StopIteration:
        return None


class InstallerClient(HttpPortClient):
    """The Application Installer of one device. Use as
    ``async with InstallerClient(host, password, port=80, timeout=...) as installer:``.

    ``timeout`` is the total deadline of each operation (``sideload``, ``pull_profile``).
    """

    def __init__(
        self,
        host: str,
        password: str,
        port: int = INSTALLER_PORT,
        timeout: float = INSTALLER_TIMEOUT,
        *,
        max_page_bytes: int = INSTALLER_MAX_PAGE_BYTES,
        max_profile_bytes: int = INSTALLER_MAX_PROFILE_BYTES,
    ) -> None:
        super().__init__("installer", host, port, timeout)
        self.max_page_bytes = max_page_bytes
        self.max_profile_bytes = max_profile_bytes
        # Driven by :meth:`_answer`, not by httpx: httpx reads a challenge's body whole.
        self._auth = httpx.DigestAuth(INSTALLER_USER, password)

    # -- operations --------------------------------------------------------------------------

    async def sideload(self, zip_bytes: bytes) -> InstallOutcome:
        """Install ``zip_bytes`` as the dev app (``mysubmit=Install``). Raises
        :class:`InstallerAuthError`, :class:`InstallFailed` with the device's words, or the
        usual device errors."""
        async with self._deadline("/plugin_install"):
            page = await self._form("/plugin_install", "Install", zip_bytes)
        answer = read_install_answer(page)
        if answer.kind == FAILED:
            raise InstallFailed(
                f"{self.where}: the device did not install the app: {answer.message}",
                answer.message,
            )
        return InstallOutcome(answer.kind, answer.message)

    async def delete(self) -> str:
        """Remove the dev app (``mysubmit=Delete``); the device's words."""
        async with self._deadline("/plugin_install"):
            page = await self._form("/plugin_install", "Delete", b"")
        return read_install_answer(page).message

    async def pull_profile(self) -> bytes | None:
        """The profile the device kept (local mode), or None: "No profiling data available"."""
        pieces: list[bytes] = []
        got = await self.pull_profile_into(pieces.append)
        return None if got is None else b"".join(pieces)

    async def pull_profile_into(self, write: Callable[[bytes], object]) -> int | None:
        """Download the kept profile piece by piece into ``write`` (so a large one is never
        held in memory); its size, or None when the device has none. Past
        ``max_profile_bytes`` it raises :class:`ProtocolError` (what was written is a prefix)."""
        async with self._deadline("/plugin_inspect"):
            page = await self._form("/plugin_inspect", "dloadProf", b"")
            path = profile_path(page)
            if path is None:
                return None
            return await self._download(path, write)

    # -- internals ---------------------------------------------------------------------------

    async def _form(self, path: str, action: str, archive: bytes) -> str:
        """POST the installer's form; the page of a 200 answer, as text."""
        files = {"archive": ("app.zip", archive, "application/octet-stream")}
        data = {"mysubmit": action, "passwd": ""}
        async with self._answer("POST", path, data=data, files=files) as response:
            self._check(response, path)
            body = await self._page(response, path)
        return body.decode(response.encoding or "utf-8", "replace")

    async def _page(self, response: httpx.Response, path: str) -> bytes:
        """The body of an answer that is a page (a 200's, a 401 challenge's), up to the cap."""
        body, more = await read_capped(response, self.max_page_bytes)
        if more:
            raise ProtocolError(
                f"{self.where} {path}: answer ({response.status_code}) larger than "
                f"{size(self.max_page_bytes, exact=True)}; gave up"
            )
        return body

    @contextlib.asynccontextmanager
    async def _answer(
        self, method: str, path: str, **request: object
    ) -> AsyncIterator[httpx.Response]:
        """The device's answer to one request, its body unread, Digest auth done here: a 401
        challenge's body is read up to the page cap (past it: :class:`ProtocolError`) before the
        request is sent again with the answer to the challenge."""
        first = self._client.build_request(method, path, **request)  # type: ignore[arg-type]
        flow = self._auth.auth_flow(first)
        try:
            response = await self._client.send(next(flow), stream=True)
            try:
                if response.status_code == 401:
                    await self._page(response, path)
                    retry = _answered(flow, response)
                    if retry is not None:  # else no Digest challenge: the 401 is the answer
                        await response.aclose()
                        response = await self._client.send(retry, stream=True)
                yield response
            finally:
                await response.aclose()
        finally:
            flow.close()

    async def _download(self, path: str, write: Callable[[bytes], object]) -> int:
        cap = self.max_profile_bytes
        too_big = (
            f"{self.where} {path}: the profile is larger than {size(cap, exact=True)}; "
            "gave up (what was written is its beginning)"
        )
        async with self._answer("GET", path) as response:
            self._check(response, path)
            announced = response.headers.get("content-length", "").strip()
            if announced.isdigit() and int(announced) > cap:
                raise ProtocolError(too_big)
            total = 0
            async for piece in response.aiter_raw():
                room = cap - total
                write(piece[:room])
                total += min(len(piece), room)
                if len(piece) > room:
                    raise ProtocolError(too_big)
        return total

    def _check(self, response: httpx.Response, path: str) -> None:
        status = response.status_code
        if status == 401:
            raise InstallerAuthError(
                f"the device refused the developer password ({self.where}, user {INSTALLER_USER})"
            )
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise ProtocolError(
                f"{self.where} {path}: compressed answer (Content-Encoding: "
                f"{words(encoding, 40)}) refused"
            )
        if status != 200:
            reason = words(response.reason_phrase, 80)
            raise HttpStatusError(
                f"{self.where} {path} answered {status} {reason}".rstrip(), status
            )
