"""The decoder's documented error types.

Every problem found in a ``.bsprof`` stream is one of these. Each names *what* went wrong and
*where*: ``offset`` is the absolute byte offset (from the start of the stream) of the header field
or body entry that could not be read.
"""

from __future__ import annotations


class BsprofError(Exception):
    """Base class: a stream that cannot be decoded past ``offset``."""

    kind = "error"

    def __init__(self, offset: int, message: str) -> None:
        super().__init__(f"byte {offset}: {message}")
        self.offset = offset
        self.message = message

    def __eq__(self, other: object) -> bool:
        return (
            type(self) is type(other)
            and self.offset == other.offset  # type: ignore[attr-defined]
            and self.message == other.message  # type: ignore[attr-defined]
        )

    def __hash__(self) -> int:
        return hash((type(self), self.offset, self.message))

    def to_json(self) -> dict[str, object]:
        return {"offset": self.offset, "message": self.message, "kind": self.kind}


class BadMagic(BsprofError):
    """The stream does not start with the ``bsprof\\0\\0`` magic."""

    kind = "bad_magic"


class BadHeader(BsprofError):
    """A header field is inconsistent (for example a header size smaller than its fields)."""

    kind = "bad_header"


class CorruptVarint(BsprofError):
    """A varint runs longer than its field allows (no payload may exceed 32 bits)."""

    kind = "corrupt_varint"


class InvalidValue(BsprofError):
    """A field holds a value the format does not allow (ID 0, memory operation 3, ...)."""

    kind = "invalid_value"


class UnknownEntryType(BsprofError):
    """An entry tag with a type the format does not define (6 or 7); entries have no length
    prefix, so nothing after it can be read."""

    kind = "unknown_entry_type"

    def __init__(self, offset: int, entry_type: int) -> None:
        super().__init__(offset, f"unknown entry type {entry_type}")
        self.entry_type = entry_type


class LimitExceeded(BsprofError):
    """The stream asks for more than a configured bound (string length, IDs, path count...)."""

    kind = "limit_exceeded"

    def __init__(self, offset: int, limit: str, value: int | None, maximum: int) -> None:
        shown = limit if value is None else f"{limit} {value}"
        super().__init__(offset, f"{shown} exceeds the limit of {maximum}")
        self.limit = limit
        self.value = value
        self.maximum = maximum


class DecoderStateError(BsprofError):
    """The decoder was used after :meth:`Decoder.close`."""

    kind = "state"


TAG_PAYLOAD_TOO_LARGE = "entry tag payload exceeds 32 bits"


def varint_too_long(what: str, max_bytes: int) -> str:
    return f"{what}: varint longer than {max_bytes} bytes"


def varint_too_large(what: str, bits: int) -> str:
    return f"{what}: value exceeds {bits} bits"
