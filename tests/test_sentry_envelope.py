"""Envelopes: our encoding read back by the official sentry_sdk parser, and ours reading theirs."""

from __future__ import annotations

import gzip
import json

import pytest
from sentry_helpers import HEADER, START, counter_ids, small_tables
from sentry_sdk.envelope import Envelope as SdkEnvelope
from sentry_sdk.envelope import Item as SdkItem
from sentry_sdk.envelope import PayloadRef

from rokuprof import __version__
from rokuprof.sentry.chunk import ChunkBuilder
from rokuprof.sentry.envelope import (
    Envelope,
    EnvelopeError,
    EnvelopeItem,
    check_envelope,
    chunk_envelope,
    gzip_body,
    rfc3339,
)
from rokuprof.sentry.validate import INVALID_PROFILE_TYPE

SENT = 1_795_000_123.456789


@pytest.fixture(scope="module")
def chunk():
    b = ChunkBuilder(small_tables(), START, header=HEADER, new_id=counter_ids())
    b.add_wall({3: 400_000, 5: 300_000}, START + 1)
    (c,) = b.finish().chunks
    return c


def test_envelope_layout(chunk):
    data = chunk_envelope(chunk, sent_at=SENT).to_bytes()
    head, item_head, payload, rest = data.split(b"\n", 3)
    assert json.loads(head) == {
        "event_id": chunk.chunk_id,
        "sent_at": "2026-11-18T11:08:43.456789Z",
        "sdk": {"name": "rokuprof", "version": __version__},
    }
    assert json.loads(item_head) == {
        "type": "profile_chunk",
        "platform": "brightscript",
        "length": len(chunk.data),
    }
    assert payload == chunk.data and rest == b""


def test_the_official_sdk_parser_reads_our_envelopes(chunk):
    for body in (
        chunk_envelope(chunk, sent_at=SENT).to_bytes(),
        gzip.decompress(gzip_body(chunk_envelope(chunk, sent_at=SENT).to_bytes())),
    ):
        parsed = SdkEnvelope.deserialize(body)
        assert parsed.headers["event_id"] == chunk.chunk_id
        assert parsed.headers["sdk"]["name"] == "rokuprof"
        (item,) = parsed.items
        assert item.type == "profile_chunk"
        assert item.headers["platform"] == "brightscript"
        assert json.loads(item.payload.get_bytes()) == chunk.payload
        assert item.data_category == "profile_chunk"


def test_we_read_the_official_sdks_envelopes(chunk):
    sdk = SdkEnvelope(headers={"event_id": "ab" * 16, "sent_at": rfc3339(SENT)})
    sdk.add_item(
        SdkItem(
            payload=PayloadRef(json=chunk.payload),
            type="profile_chunk",
            headers={"platform": "brightscript"},
        )
    )
    ours = Envelope.from_bytes(sdk.serialize())
    assert ours.headers["event_id"] == "ab" * 16
    assert ours.profile_chunk() == chunk.payload
    assert check_envelope(ours) == []


def test_round_trip_plain_and_gzip(chunk):
    env = chunk_envelope(chunk, sent_at=SENT, event_id="cd" * 16)
    for body in (env.to_bytes(), gzip_body(env.to_bytes())):
        back = Envelope.from_bytes(body)
        assert back.headers == env.headers
        assert back.profile_chunk() == chunk.payload
        assert back.to_bytes() == env.to_bytes()
    assert gzip_body(env.to_bytes()) == gzip_body(env.to_bytes())  # deterministic


def test_items_without_length_end_at_the_newline(chunk):
    body = b'{"event_id":"%s"}\n{"type":"profile_chunk","platform":"brightscript"}\n' % (b"ef" * 16)
    back = Envelope.from_bytes(body + chunk.data)  # no trailing newline either
    assert back.profile_chunk() == chunk.payload


def test_chunk_envelope_accepts_dicts_and_bytes(chunk):
    from_dict = chunk_envelope(chunk.payload, sent_at=SENT).to_bytes()
    from_bytes = chunk_envelope(chunk.data, sent_at=SENT).to_bytes()
    assert from_dict == from_bytes == chunk_envelope(chunk, sent_at=SENT).to_bytes()
    with pytest.raises(EnvelopeError):
        chunk_envelope(b"{oops", sent_at=SENT)
    with pytest.raises(EnvelopeError):
        chunk_envelope({"no": "platform"}, sent_at=SENT)


def test_check_envelope_platform_header_must_match(chunk):
    env = chunk_envelope(chunk, sent_at=SENT)
    env.items[0].headers["platform"] = "python"
    assert check_envelope(env)[0].reason == INVALID_PROFILE_TYPE
    env.items.append(EnvelopeItem({"type": "profile_chunk", "platform": "brightscript"}, b"{}"))
    assert "2 profile_chunk items" in check_envelope(env)[0].detail
    with pytest.raises(EnvelopeError):
        env.profile_chunk()


@pytest.mark.parametrize(
    "body",
    [
        b"not json\n",
        b'{"event_id":"x"}\n[1]\n',
        b'{"event_id":"x"}\n{"type":"profile_chunk","length":50}\n{}',
        b'{"event_id":"x"}\n{"type":"profile_chunk","length":-1}\n{}',
        b"\x1f\x8bnot gzip",
    ],
)
def test_malformed_envelopes_raise(body):
    with pytest.raises(EnvelopeError):
        Envelope.from_bytes(body)


def test_payload_that_is_not_json():
    env = Envelope({}, [EnvelopeItem({"type": "profile_chunk"}, b"{nope")])
    with pytest.raises(EnvelopeError):
        env.profile_chunk()
