"""The report page: one self-contained HTML string (style, script and data inline).

The data is JSON inside ``<script type="application/json">``; every ``<``, ``>``, ``&``, U+2028
and U+2029 in it is written as a ``\\uXXXX`` escape, so no text from a device (a function named
``</script>``, say) can end the element or be read as markup. The ``<title>`` (app, version,
capture) is device text too: HTML-escaped, control characters replaced. The page's own script is
allowed by its hash in a Content-Security-Policy that also forbids every network request. The
stylesheet is the package's ``assets/report.css``; the script is assembled from the ES modules in
``assets/src/`` by :mod:`.script` (in Python, at render time: a pip install needs no Node). Both
are read once, as package data, not files the user gives.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
from array import array
from collections.abc import Callable
from functools import cache
from importlib import resources

import orjson

from rokuprof.export.report.script import page_script

#: (character, its JSON escape): what may not appear as itself inside a ``<script>`` element
_ESCAPES = (
    ("<", "\\u003c"),
    (">", "\\u003e"),
    ("&", "\\u0026"),
    ("\u2028", "\\u2028"),
    ("\u2029", "\\u2029"),
)


@cache
def asset(name: str) -> str:
    """A bundled asset's text (``report.css``)."""
    text = resources.files(__package__).joinpath("assets", name).read_text("utf-8")
    if "</" in text and name.endswith(".js"):
        raise ValueError(f"{name} must not contain '</' (it is inlined in a <script>)")
    return text


def _plain(value: object) -> object:
    """A model's number array (its call tree's columns) as the list JSON writes."""
    if isinstance(value, array):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON")


#: A list this long whose items are all integers (or lists of them) is written by orjson, whose
#: integers are the json module's digits, several times faster; shorter ones are not worth it.
_LONG = 1024
#: What ``json.dumps`` writes for :class:`_Written`: replaced by the text orjson wrote.
_MARK = '"\\u0000rokuprof-json\\u0000"'
#: The only bytes in orjson's text of a list of integers (nested or not).
_INTEGER_JSON = b"0123456789-,[]"


class _Written:
    """A long list already written as JSON (integers only)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _integers(values: list | array) -> _Written | None:
    """``values`` written by orjson when that text is exactly the json module's: integers only
    (a float, string, bool or null leaves another byte in it; past 64 bits orjson refuses)."""
    try:
        raw = orjson.dumps(values.tolist() if isinstance(values, array) else values)
    except TypeError:
        return None
    return _Written(raw.decode()) if not raw.translate(None, _INTEGER_JSON) else None


def _long_lists_written(value: object, long: int) -> object:
    """``value`` (a model: dicts and lists) with its lists of at least ``long`` integers as
    :class:`_Written` (new dicts and lists along the way; the model is not changed)."""
    kind = type(value)
    if kind is dict:
        return {k: _long_lists_written(v, long) for k, v in value.items()}  # type: ignore[attr-defined]
    if kind is list:
        if len(value) >= long and (written := _integers(value)) is not None:  # type: ignore[arg-type]
            return written
        if any(type(v) is list or type(v) is dict for v in value):  # type: ignore[attr-defined]
            return [_long_lists_written(v, long) for v in value]  # type: ignore[attr-defined]
    return value


def _dumps(data: object, long: int = _LONG) -> str:
    """``json.dumps(data)``, compact, with the lists of at least ``long`` integers written by
    orjson and put in place of a marker; the same text, byte for byte. (A model whose text holds
    the marker already, from a device's string, is written by the json module alone.)"""
    written: list[str] = []

    def marked(value: object) -> object:
        if isinstance(value, array) and len(value) >= long:  # the call tree's columns
            value = _integers(value) or value
        if isinstance(value, _Written):
            written.append(value.text)
            return "\0rokuprof-json\0"
        return _plain(value)

    def dumps(value: object, default: Callable[[object], object]) -> str:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=default
        )

    parts = dumps(_long_lists_written(data, long), marked).split(_MARK)
    if len(parts) != len(written) + 1:
        return dumps(data, _plain)
    out = [parts[0]]
    for text, part in zip(written, parts[1:], strict=True):
        out += (text, part)
    return "".join(out)


def embed_json(data: object) -> str:
    """Compact JSON that is safe inside a ``<script>`` element (see the module docstring)."""
    text = _dumps(data)
    for char, escaped in _ESCAPES:  # one replace per character: a scan in C, unlike translate
        text = text.replace(char, escaped)
    return text


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")


def page_title(model: dict) -> str:
    """The page's title: the app, its version and the capture (a diff page: the two captures)."""

    def app_of(facts: dict) -> str:
        return " ".join(
            str(x) for x in (facts.get("app") or "(unnamed app)", facts.get("appVersion")) if x
        )

    app = app_of(model["facts"])
    diff = model.get("diff")
    if diff and "sides" in diff:  # both builds when they differ, A → B
        before, after = (app_of(side) for side in diff["sides"])
        app = after if before == after else f"{before} → {after}"
    capture = (
        f"diff {diff.get('label') or 'A → B'}"
        if diff
        else model["facts"].get("capture") or "capture"
    )
    return _CONTROLS.sub("\ufffd", f"{app} — {capture} — rokuprof report")


def _csp(script: str) -> str:
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    return (
        "default-src 'none'; "
        f"script-src 'sha256-{digest}'; "
        "style-src 'unsafe-inline'; img-src data:; connect-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


def render_html(model: dict[str, object]) -> str:
    """The whole page for a model from :func:`~rokuprof.export.report.model.build_model`."""
    script, style = "\n" + page_script(), asset("report.css")
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{_csp(script)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="rokuprof">\n'
        f"<title>{html.escape(page_title(model), quote=False)}</title>\n"
        f"<style>\n{style}</style>\n"
        "</head><body>\n"
        '<noscript><p class="noscript">This report needs JavaScript.</p></noscript>\n'
        '<div id="app"></div>\n'
        f'<script id="report-data" type="application/json">{embed_json(model)}</script>\n'
        f"<script>{script}</script>\n"
        "</body></html>\n"
    )
