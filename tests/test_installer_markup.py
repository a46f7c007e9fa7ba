"""The installer's pages as firmware writes them (rokuprof.simulator.installer_markup) and the
device identifiers clients read (rokuprof.simulator.identity): pure, so checked over generated
text and serials. The clients themselves read these pages in tests/test_real_clients.py."""

from __future__ import annotations

import html
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.device.installer_page import read_install_answer
from rokuprof.simulator import identity
from rokuprof.simulator import installer_markup as markup

#: What a browser's JavaScript makes of a single-quoted string's inside, for the escapes
#: js_text writes (``\\uXXXX``) and the escaped backslash (``\\\\``).
_JS_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|\\)")


def js_string(inside: str) -> str:
    return _JS_ESCAPE.sub(
        lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1)[1:], 16)), inside
    )


def js_unquote(inside: str) -> str:
    """A JS string's inside to its value, UTF-16 pairs joined."""
    value = js_string(inside)
    return value.encode("utf-16", "surrogatepass").decode("utf-16")


TEXT = st.text(max_size=60)


@settings(max_examples=150, deadline=None)
@given(TEXT)
def test_js_text_is_plain_characters_and_u_escapes_that_read_back(text: str) -> None:
    written = markup.js_text(text)
    assert re.fullmatch(r"(?:[A-Za-z0-9 .,:;_\-()/=+?!%#*@\[\]{}]|\\u[0-9a-f]{4})*", written)
    assert js_unquote(written) == text
    assert json.loads(f'"{written}"') == text  # the same escapes read as JSON


@settings(max_examples=100, deadline=None)
@given(TEXT, st.sampled_from([markup.SUCCESS, markup.INFO, markup.ERROR]))
def test_a_message_reads_back_the_three_ways_and_never_leaves_its_string(text, kind) -> None:
    message = "Unknown action: " + text  # client text inside a device's words
    for params in (True, False):
        page = markup.page([(kind, message)], dev_id="ab12", params=params).decode()
        script = page[page.index("<script>") : page.index("</script>")]
        assert "</" not in script and script.count("\n") == 3  # nothing ends the script early
        if params:
            found = re.search(r"JSON\.parse\('([^']*)'\);", script)
            assert found is not None
            said = json.loads(js_string(found.group(1)))
            assert said["messages"] == [{"text": message, "text_type": "text", "type": kind}]
            assert said["metadata"]["dev_id"] == "ab12"
        else:
            found = re.search(
                r"trigger\('Set message type', '(\w+)'\)\.trigger\('Set message content', "
                r"'([^']*)'\)\.trigger\('Render', node\);",
                script,
            )
            assert found is not None
            assert (found.group(1), js_unquote(found.group(2))) == (kind, message)
        red = re.findall(r'<font color="red">([^<]*)</font>', page)
        assert [html.unescape(r) for r in red] == [message]


def test_roku_deploys_patterns_find_the_error_and_the_outcome() -> None:
    """roku-deploy's and @dlenroc's regular expressions (their shapes) over a failure page."""
    received = (markup.SUCCESS, "Application Received: 12 bytes stored.")
    failure = (markup.ERROR, "Install Failure: No manifest. The package has no manifest.")
    page = markup.page([received, failure], dev_id="ab12").decode()
    json_arg = re.search(r"JSON\.parse\(('.+')\);", page)
    assert json_arg is not None and json_arg.group(1).startswith('\'{"messages":[')
    error = re.findall(
        r'\{\s*"text"\s*:\s*("[^"]+")\s*,\s*"text_type"\s*:\s*"text"\s*,'
        r'\s*"type"\s*:\s*"error"',
        page,
    )
    assert [json.loads(e) for e in error] == [failure[1]]
    assert read_install_answer(page).message == failure[1]  # rokuprof's own reader: the outcome


def test_a_page_without_messages_says_nothing() -> None:
    page = markup.page([(markup.ERROR, "")]).decode()
    assert "<font" not in page and 'JSON.parse(\'{"messages":[],' in page


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=20))
def test_mac_addresses_are_two_unicast_locally_administered_ones(serial: str) -> None:
    wifi = identity.mac_address(serial, "wifi")
    ethernet = identity.mac_address(serial, "ethernet")
    for mac in (wifi, ethernet):
        assert re.fullmatch(r"[0-9a-f]{2}(:[0-9a-f]{2}){5}", mac)
        first = int(mac[:2], 16)
        assert first & 0x01 == 0 and first & 0x02 == 0x02  # unicast, locally administered
    assert wifi != ethernet
    assert identity.mac_address(serial, "wifi") == wifi  # the serial decides


def test_keyed_developer_id_is_forty_hex_digits_per_device() -> None:
    ids = {identity.developer_id(f"YN00AA{n:06d}") for n in range(50)}
    assert len(ids) == 50 and all(re.fullmatch(r"[0-9a-f]{40}", i) for i in ids)
