"""Text put into the simulator's XML answers (ECP, chanperf): escaped so a name from a package
stays data. Written here rather than taken from ``xml.sax.saxutils``, whose import pulls in
``urllib.request`` and with it the socket and TLS modules, which the pure answer builders must
not load."""

from __future__ import annotations

_ELEMENT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTRIBUTE = str.maketrans({"\n": "&#10;", "\r": "&#13;", "\t": "&#9;"})


def escape(text: str) -> str:
    """``text`` as an element's content: ``&``, ``<`` and ``>`` escaped."""
    return text.translate(_ELEMENT)


def quoteattr(text: str) -> str:
    """``text`` as an attribute's value, quotes included: double quotes unless the text holds
    one and no single quote (then single quotes, as XML allows); both: ``"`` escaped. Line
    breaks and tabs are kept as character references so a parser does not fold them."""
    value = escape(text).translate(_ATTRIBUTE)
    if '"' not in value:
        return f'"{value}"'
    if "'" not in value:
        return f"'{value}'"
    return '"' + value.replace('"', "&quot;") + '"'
