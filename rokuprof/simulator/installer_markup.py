"""The Application Installer's pages as firmware writes them (pure).

Clients read a page's outcome from its script, not from the HTTP status (200 for success and
failure alike). Devices write the messages two ways, by page:

* ``var params = JSON.parse('{"messages":[{"text":…,"text_type":"text","type":"error"}],…}')``
  on the install and packaging pages (read by roku-deploy and, key order included, by
  @dlenroc's developer-server client);
* ``Shell.create('Roku.Message').trigger('Set message type', 'error').trigger('Set message
  content', '…').trigger('Render', node)`` on the inspect page (screenshots, rekeying, the
  profile; read by both);
* ``<font color="red">…</font>`` with the outcome (the last message), kept by firmware "so old
  scripts can continue to work" (read by rokuprof's own client and by roku-deploy's rekey
  check).

A message's text can hold what a client sent (an unknown ``mysubmit`` value): it is data. In the
HTML it is entity-escaped; in the script every character outside a plain set (letters, digits,
space and ``.,:;_-()/=+?!%#*@[]{}``) is written as a ``\\uXXXX`` escape, so no quote, backslash,
``<`` or line break can end the string, the script or the element.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

SUCCESS, INFO, ERROR = "success", "info", "error"

_PLAIN = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,:;_-()/=+?!%#*@[]{}"
)


def js_text(text: str) -> str:
    """``text`` for the inside of a quoted JavaScript (or JSON) string: plain characters as
    they are, every other one (each UTF-16 unit) as ``\\uXXXX``."""
    out: list[str] = []
    for char in text:
        if char in _PLAIN:
            out.append(char)
            continue
        units = char.encode("utf-16-be")
        out.extend(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2))
    return "".join(out)


def _json_in_js(text: str) -> str:
    """``text`` as a JSON string's inside, inside a single-quoted JavaScript string: the JSON
    escapes' backslash is itself escaped, so ``JSON.parse`` receives ``\\uXXXX``."""
    return js_text(text).replace("\\", "\\\\")


def params_script(messages: Sequence[tuple[str, str]], dev_id: str) -> str:
    """The ``var params = JSON.parse('…');`` line."""
    items = ",".join(
        f'{{"text":"{_json_in_js(text)}","text_type":"text","type":"{kind}"}}'
        for kind, text in messages
    )
    return (
        f'var params = JSON.parse(\'{{"messages":[{items}],'
        f'"metadata":{{"dev_id":"{js_text(dev_id)}","dev_key":true,"voice_sdk":false}},'
        '"packages":[]}\');'
    )


def shell_script(kind: str, text: str) -> str:
    """One ``Shell.create('Roku.Message')…`` line."""
    return (
        f"Shell.create('Roku.Message').trigger('Set message type', '{kind}')"
        f".trigger('Set message content', '{js_text(text)}').trigger('Render', node);"
    )


def page(
    messages: Sequence[tuple[str, str]], body: str = "", dev_id: str = "", *, params: bool = True
) -> bytes:
    """An installer page saying ``messages`` (``(type, text)``: :data:`SUCCESS`, :data:`INFO`
    or :data:`ERROR`), with ``body`` (trusted markup) after them: in the ``params`` JSON
    (``params``: the install and packaging pages) or else as ``Shell.create`` lines (the inspect
    page: screenshots, rekeying, the profile), and the outcome in red in both cases."""
    said = [(kind, text) for kind, text in messages if text]
    outcome = f'<font color="red">{html.escape(said[-1][1])}</font>\n' if said else ""
    if params:
        script = params_script(said, dev_id) + "\n"
    else:
        script = "".join(shell_script(kind, text) + "\n" for kind, text in said)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
        "<title>Roku Development Application Installer</title></head><body>\n"
        "<h1>Development Application Installer</h1>\n"
        '<div id="root"></div>\n'
        f'<div style="display:none">\n{outcome}</div>\n{body}'
        '<form method="post" action="plugin_install" enctype="multipart/form-data">'
        '<input type="file" name="archive"><input type="submit" name="mysubmit" '
        'value="Replace"><input type="submit" name="mysubmit" value="Delete"></form>\n'
        "<script>\nvar node = document.getElementById('root');\n"
        f"{script}</script>\n</body></html>\n"
    ).encode()
