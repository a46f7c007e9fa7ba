"""The simulator's XML answers keep a name as data: what the escaping writes, a real XML parser
reads back as the same text, in an element and in an attribute."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from rokuprof.simulator.xml_text import escape, quoteattr

# What XML 1.0 can carry: no other control characters, no lone surrogates.
XML_TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), whitelist_characters="\t\n\r&<>\"'"),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(XML_TEXT, XML_TEXT)
def test_a_parser_reads_back_what_was_written(content: str, attribute: str) -> None:
    element = ET.fromstring(f"<app id={quoteattr(attribute)}>{escape(content)}</app>")
    assert element.get("id") == attribute
    # In content, a parser folds line ends to \n (XML 1.0 §2.11); nothing else changes.
    assert (element.text or "") == content.replace("\r\n", "\n").replace("\r", "\n")
