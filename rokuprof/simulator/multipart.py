"""A ``multipart/form-data`` body read into its fields (pure; RFC 7578), as much as the
Application Installer's forms need: each part's name, file name, type and bytes."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Parts read from one body at most (the installer's forms have three).
MAX_PARTS = 32

_BOUNDARY = re.compile(r'boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;]{1,200}))', re.IGNORECASE)
_DISPOSITION_PARAM = re.compile(r';\s*([A-Za-z*]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]*))')


class MultipartError(ValueError):
    """The body is not the multipart/form-data its Content-Type says."""


@dataclass(frozen=True)
class Part:
    name: str
    data: bytes
    filename: str | None = None
    content_type: str = ""

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


def boundary_of(content_type: str) -> str:
    """The boundary of a ``multipart/form-data`` Content-Type (MultipartError otherwise)."""
    if not content_type.lower().startswith("multipart/form-data"):
        raise MultipartError(f"not multipart/form-data: {content_type[:80]!r}")
    found = _BOUNDARY.search(content_type)
    if found is None:
        raise MultipartError("multipart/form-data without a boundary")
    return found.group(1) or found.group(2)


def parse_form(content_type: str, body: bytes) -> dict[str, Part]:
    """The parts of a form by field name (a later part of the same name wins)."""
    delimiter = b"--" + boundary_of(content_type).encode("latin-1")
    first = body.find(delimiter)
    if first < 0:
        raise MultipartError("no boundary in the body")
    parts: dict[str, Part] = {}
    pos = first + len(delimiter)
    for _ in range(MAX_PARTS):
        if body[pos : pos + 2] == b"--":
            return parts
        if body[pos : pos + 2] != b"\r\n":
            raise MultipartError("a boundary line is not followed by a line end")
        end = body.find(b"\r\n" + delimiter, pos + 2)
        if end < 0:
            raise MultipartError("a part has no closing boundary")
        part = _read_part(body[pos + 2 : end])
        if part is not None:
            parts[part.name] = part
        pos = end + 2 + len(delimiter)
    raise MultipartError(f"more than {MAX_PARTS} parts")


def _read_part(raw: bytes) -> Part | None:
    head, sep, data = raw.partition(b"\r\n\r\n")
    if not sep:
        raise MultipartError("a part has no blank line after its headers")
    headers: dict[str, str] = {}
    for line in head.decode("utf-8", "replace").split("\r\n"):
        name, colon, value = line.partition(":")
        if colon:
            headers[name.strip().lower()] = value.strip()
    disposition = headers.get("content-disposition", "")
    if not disposition.lower().startswith("form-data"):
        return None
    params = {}
    for match in _DISPOSITION_PARAM.finditer(disposition):
        value = match.group(2) if match.group(2) is not None else match.group(3)
        params[match.group(1).lower()] = re.sub(r"\\(.)", r"\1", value)
    if "name" not in params:
        return None
    return Part(params["name"], data, params.get("filename"), headers.get("content-type", ""))
