"""What an app's BrightScript source defines and does, read line by line (pure: text in, facts
out): each ``sub``/``function`` with its file, line and length, its statements and their loop
depth, the functions it calls and from which line, where it creates objects, the observer
callbacks it names, the Task function it sets, and the components' XML (name, what each
extends, its scripts, its ``onChange`` observers, inline scripts at their own lines).

It is a reader for a simulator, not a compiler: it never fails on source it does not
understand, it only finds less in it. BrightScript is case-insensitive (names are compared in
lower case and kept as written); ``'`` and ``REM`` start comments outside strings, and ``""``
is a quote inside one. Cost is linear in the text: lines are cut at :data:`MAX_LINE`, and files,
definitions and calls are capped.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field

MAX_LINE = 4096  # characters of a line that are read
MAX_DEFINITIONS = 5000  # per app
MAX_CALLS = 256  # call sites kept per definition
MAX_TAG = 2000  # characters of an XML tag that are read

_DEF = re.compile(r"\s*(?:(?:public|private)\s+)?(sub|function)\s+([a-z_][a-z0-9_]*)\s*\(", re.I)
_END_DEF = re.compile(r"\s*end\s*(sub|function)\b", re.I)
_ANON = re.compile(r"(?<![\w.])(?:sub|function)\s*\(", re.I)
_LOOP = re.compile(r"\s*(for|while)\b", re.I)
_END_LOOP = re.compile(r"\s*(end\s*for|end\s*while|next)\b", re.I)
_IF = re.compile(r"\s*if\b", re.I)
_ELSE_IF = re.compile(r"\s*else\s*if\b", re.I)
_ELSE = re.compile(r"\s*else\b", re.I)
_END_IF = re.compile(r"\s*end\s*if\b", re.I)
_THEN_TAIL = re.compile(r"\bthen\b\s*(\S)?", re.I)
_CALL = re.compile(r"(?<![\w.])([a-z_][a-z0-9_]*)\s*\(", re.I)
_OBSERVE = re.compile(r"observeField(?:Scoped)?\s*\(\s*\"[^\"]*\"\s*,\s*\"([^\"]*)\"", re.I)
_FUNCTION_NAME = re.compile(r"functionName\s*=\s*\"([^\"]*)\"", re.I)
_CREATE_NODE = re.compile(r"CreateObject\s*\(\s*\"roSGNode\"\s*,\s*\"([^\"]*)\"", re.I)
_CREATE = re.compile(r"(?<![\w.])CreateObject\s*\(|\.createChild\s*\(", re.I)
_LITERAL_OPEN = re.compile(r"(?:^|[^\w)\]\s])\s*\[|\{")
_STRING = re.compile(r"\"([^\"]*)\"")
_REM = re.compile(r"\s*rem(\s|$)", re.I)

_TAG = {
    name: re.compile(rf"<{name}\b([^>]{{0,{MAX_TAG}}})>", re.I)
    for name in ("component", "script", "field")
}
_ATTR = re.compile(r"([\w:-]+)\s*=\s*\"([^\"]*)\"")
CDATA_OPEN, CDATA_CLOSE = "<![CDATA[", "]]>"
_SCRIPT_END = re.compile(r"</script\s*>", re.I)


@dataclass(frozen=True, slots=True)
class Call:
    name: str  # as written
    offset: int  # line offset in the caller (1: the definition's line)
    loops: int  # loops around the call
    #: the ``if`` conditions around the call that compare with string literals, as
    #: ``(True, literals)`` (in one of them) or ``(False, literals)`` (an ``else``: in none)
    guards: tuple[tuple[bool, frozenset[str]], ...] = ()

    def reached_by(self, value: str) -> bool:
        """Whether the call runs when the compared variable holds ``value`` (lower case)."""
        return all((value in literals) == inside for inside, literals in self.guards)


@dataclass(frozen=True, slots=True)
class Definition:
    name: str  # as written
    file: str  # pkg:/ path
    line: int  # 1-based line of ``sub``/``function``
    lines: int  # from the definition's line to its ``end``
    statements: tuple[tuple[int, int], ...]  # (line offset, loop depth) of each code line
    calls: tuple[Call, ...]
    creates: tuple[tuple[int, int], ...]  # (line offset, loop depth) of each object created
    observers: tuple[str, ...]  # callbacks named in observeField
    task_function: str  # the functionName it sets ("" when none)
    nodes: tuple[str, ...]  # components it creates with CreateObject("roSGNode", ...)


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    extends: str
    file: str  # its .xml
    scripts: tuple[str, ...]  # pkg:/ paths of its <script uri=...>
    observers: tuple[str, ...]  # <field onChange="...">
    inline: tuple[Definition, ...]  # definitions in its inline scripts


@dataclass
class _Open:
    name: str
    line: int
    statements: list[tuple[int, int]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    creates: list[tuple[int, int]] = field(default_factory=list)
    observers: list[str] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)
    task_function: str = ""
    loops: int = 0
    anonymous: int = 0
    #: open ``if`` blocks: (literals of the whole chain, this branch's guard or None)
    ifs: list[tuple[set[str], tuple[bool, frozenset[str]] | None]] = field(default_factory=list)


def split_comment(line: str) -> tuple[str, str]:
    """``(code, blanked)``: the line without its comment, and the same with every string's
    contents replaced by spaces (so that nothing inside a string looks like code)."""
    if _REM.match(line):
        return "", ""
    if '"' not in line:
        code = line.split("'", 1)[0]
        return code, code
    out = []
    in_string = False
    for index, char in enumerate(line):
        if char == '"':
            in_string = not in_string
        elif char == "'" and not in_string:
            line = line[:index]
            break
        out.append(" " if in_string and char != '"' else char)
    return line, "".join(out[: len(line)])


def scan_brs(
    text: str, file: str, first_line: int = 1, limit: int = MAX_DEFINITIONS
) -> list[Definition]:
    """The definitions in BrightScript ``text`` from ``file`` (``first_line``: the line the
    text starts at, for scripts inside an XML file)."""
    found: list[Definition] = []
    current: _Open | None = None
    for index, raw in enumerate(text.splitlines()):
        number = first_line + index
        code, blank = split_comment(raw[:MAX_LINE])
        if not blank.strip():
            continue
        if current is None:
            match = _DEF.match(blank)
            if match and len(found) < limit:
                current = _Open(match.group(2), number)
            continue
        if _END_DEF.match(blank):
            if current.anonymous:
                current.anonymous -= 1
                continue
            found.append(_close(current, file, number))
            current = None
            continue
        _read_line(current, number - current.line + 1, code, blank)
    if current is not None:  # no ``end sub``: the definition runs to the end of the text
        found.append(_close(current, file, first_line + max(0, text.count("\n"))))
    return found


def _read_line(fn: _Open, offset: int, code: str, blank: str) -> None:
    if _END_LOOP.match(blank):
        fn.loops = max(0, fn.loops - 1)
        return
    if not (_END_IF.match(blank) or (_ELSE.match(blank) and not _ELSE_IF.match(blank))):
        fn.statements.append((offset, fn.loops))
    fn.anonymous += len(_ANON.findall(blank))
    single_if = _if_line(fn, code, blank)
    literals = frozenset(s.lower() for s in _STRING.findall(code))
    guards = tuple(g for _, g in fn.ifs if g is not None)
    if single_if and literals:
        guards += ((True, literals),)
    for match in _CALL.finditer(blank):
        if len(fn.calls) < MAX_CALLS:
            fn.calls.append(Call(match.group(1), offset, fn.loops, guards))
    creates = len(_CREATE.findall(blank)) + len(_LITERAL_OPEN.findall(blank))
    fn.creates.extend([(offset, fn.loops)] * min(creates, 8))
    fn.observers.extend(_OBSERVE.findall(code))
    fn.nodes.extend(_CREATE_NODE.findall(code))
    task = _FUNCTION_NAME.search(code)
    if task:
        fn.task_function = task.group(1)
    if _LOOP.match(blank):
        fn.loops += 1


def _if_line(fn: _Open, code: str, blank: str) -> bool:
    """Track ``if`` blocks for the guards of calls; True for a one-line ``if ... then x``."""
    literals = {s.lower() for s in _STRING.findall(code)}
    if _END_IF.match(blank):
        if fn.ifs:
            fn.ifs.pop()
        return False
    if _ELSE_IF.match(blank):
        if fn.ifs:
            chain, _ = fn.ifs[-1]
            chain |= literals
            fn.ifs[-1] = (chain, (True, frozenset(literals)) if literals else None)
        return False
    if _ELSE.match(blank):
        if fn.ifs:
            chain, _ = fn.ifs[-1]
            fn.ifs[-1] = (chain, (False, frozenset(chain)) if chain else None)
        return False
    if not _IF.match(blank):
        return False
    tail = _THEN_TAIL.search(blank)
    if tail and tail.group(1):
        return True  # ``if c then statement``: no block
    fn.ifs.append((set(literals), (True, frozenset(literals)) if literals else None))
    return False


def _close(fn: _Open, file: str, end: int) -> Definition:
    return Definition(
        name=fn.name,
        file=file,
        line=fn.line,
        lines=max(1, end - fn.line + 1),
        statements=tuple(fn.statements),
        calls=tuple(fn.calls),
        creates=tuple(fn.creates),
        observers=tuple(dict.fromkeys(fn.observers)),
        task_function=fn.task_function,
        nodes=tuple(dict.fromkeys(fn.nodes)),
    )


def scan_component(text: str, file: str, limit: int = MAX_DEFINITIONS) -> Component | None:
    """A component's XML: None when ``text`` has no ``<component>`` tag."""
    tag = _TAG["component"].search(text)
    if tag is None:
        return None
    attrs = dict(_ATTR.findall(tag.group(1)))
    scripts: list[str] = []
    inline: list[Definition] = []
    folder = posixpath.dirname(file.removeprefix("pkg:/"))
    done = 0  # where the last inline script ended: each stretch of text is read once
    line, line_at = 1, 0  # the line number at offset line_at, counted forward only
    for script in _TAG["script"].finditer(text):
        if script.start() < done:
            continue  # a tag inside the previous script's text: its code, not a script
        uri = dict(_ATTR.findall(script.group(1))).get("uri")
        if uri:
            scripts.append(package_path(uri, folder))
            continue
        end = _SCRIPT_END.search(text, script.end())
        done = end.end() if end else len(text)
        body = text[script.end() : end.start() if end else len(text)]
        opened = body.find(CDATA_OPEN)
        inside = opened + len(CDATA_OPEN)
        closed = body.find(CDATA_CLOSE, inside) if opened >= 0 else -1
        if closed >= 0:
            start, source = script.end() + inside, body[inside:closed]
        else:
            start, source = script.end(), body
        line += text.count("\n", line_at, start)
        line_at = start
        inline.extend(scan_brs(source, file, line, limit - len(inline)))
    observers = []
    for tag_match in _TAG["field"].finditer(text):
        field_attrs = {k.lower(): v for k, v in _ATTR.findall(tag_match.group(1))}
        if field_attrs.get("onchange"):
            observers.append(field_attrs["onchange"])
    return Component(
        name=attrs.get("name", posixpath.splitext(posixpath.basename(file))[0]),
        extends=attrs.get("extends", ""),
        file=file,
        scripts=tuple(dict.fromkeys(scripts)),
        observers=tuple(dict.fromkeys(observers)),
        inline=tuple(inline),
    )


def package_path(uri: str, folder: str = "") -> str:
    """A script's ``pkg:/`` path from its ``uri`` (absolute, or relative to the XML's folder)."""
    if uri.lower().startswith("pkg:/"):
        path = uri[5:]
    elif uri.lower().startswith("pkg:"):
        path = uri[4:]
    else:
        path = posixpath.join(folder, uri)
    return "pkg:/" + posixpath.normpath("/" + path).lstrip("/")
