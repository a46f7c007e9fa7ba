"""Reading the Application Installer's HTML answers (pure: a page's text in, the device's words
out).

The installer answers ``200`` with an HTML page whose message sits in ``<font color="red">…
</font>`` (there can be several; newer firmware also embeds the messages as JSON, which is
ignored here: the font text is what every firmware shows). The words are taken as text: tags
dropped, HTML entities unescaped, whitespace collapsed and the length bounded, so a hostile page
can neither inject markup nor flood a terminal (the caller still shows them escaped).
Each search is linear in the page, whatever the page holds.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

#: What ``sideload`` makes of a page: the app was installed (the device launched it), the same
#: package was installed already (launch it with ECP), or anything else (the device's words).
INSTALLED = "installed"
IDENTICAL = "identical"
FAILED = "failed"

#: The device's words are cut to this many characters (with an ellipsis).
MAX_WORDS = 300
#: At most this many red messages are read from one page.
MAX_MESSAGES = 16
#: The page of ``plugin_inspect`` when the device kept no profile.
NO_PROFILE = "No profiling data available"

_OPEN = re.compile(r"<font\b([^<>]*)>", re.IGNORECASE)
_CLOSE = re.compile(r"</font\s*>", re.IGNORECASE)
_RED = re.compile(r"""\bcolor\s*=\s*["']?\s*(red|#f00\b|#ff0000\b)""", re.IGNORECASE)
_TAG = re.compile(r"<(/?[A-Za-z0-9]*)[^<>]*>")
#: Tags a browser shows as a break between words (others, such as <i>, join their neighbours).
_BREAKS = frozenset({"br", "p", "div", "li", "tr", "td", "th", "h1", "h2", "h3", "hr", "table"})
_SPACE = re.compile(r"\s+")
#: A downloadable profile as the inspect page names it (only these characters are followed).
_PROFILE = re.compile(r"pkgs/[A-Za-z0-9_.-]{1,100}\.bsprof")


def words(fragment: str, limit: int = MAX_WORDS) -> str:
    """An HTML fragment as the words a browser shows: tags dropped, entities unescaped,
    whitespace collapsed to single spaces, at most ``limit`` characters."""
    text = _TAG.sub(_tag_gap, fragment)
    return bounded(_SPACE.sub(" ", html.unescape(text)).strip(), limit)


def _tag_gap(tag: re.Match[str]) -> str:
    return " " if tag.group(1).lstrip("/").lower() in _BREAKS else ""


def bounded(text: str, limit: int = MAX_WORDS) -> str:
    """``text`` cut to ``limit`` characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def red_messages(page: str) -> list[str]:
    """The words of each non-empty ``<font color="red">`` element, in page order."""
    found: list[str] = []
    pos = 0
    while len(found) < MAX_MESSAGES:
        opening = _OPEN.search(page, pos)
        if opening is None:
            break
        closing = _CLOSE.search(page, opening.end())
        if closing is None:
            break  # no closing tag after this one: none after any later one either
        pos = closing.end()
        if _RED.search(opening.group(1)):
            text = words(page[opening.end() : closing.start()])
            if text:
                found.append(text)
    return found


@dataclass(frozen=True)
class InstallAnswer:
    """What an install page said: ``kind`` (:data:`INSTALLED`, :data:`IDENTICAL` or
    :data:`FAILED`) and the device's words."""

    kind: str
    message: str


def read_install_answer(page: str) -> InstallAnswer:
    """The outcome of ``POST /plugin_install`` from its page."""
    messages = red_messages(page)
    said = " / ".join(messages)
    lowered = said.lower()
    if "install success" in lowered:
        return InstallAnswer(INSTALLED, said)
    if "identical to previous version" in lowered:
        return InstallAnswer(IDENTICAL, said)
    if not said:
        title = re.search(r"<title\b[^<>]*>([^<]*)</title", page, re.IGNORECASE)
        shown = f" (page {words(title.group(1), 80)!r})" if title and words(title.group(1)) else ""
        said = f"the installer's answer carried no message{shown}"
    return InstallAnswer(FAILED, bounded(said))


def profile_path(page: str) -> str | None:
    """The path of the profile an inspect page offers (``/pkgs/channel.bsprof``), or None when
    it offers none (it says :data:`NO_PROFILE`, or names no ``pkgs/….bsprof`` file)."""
    if NO_PROFILE.lower() in page.lower():
        return None
    found = _PROFILE.search(page)
    return "/" + found.group() if found else None
