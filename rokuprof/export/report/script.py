"""The report page's script, assembled at render time from its ES modules in ``assets/src/``.

The modules (entry ``main.js``) are read as package data and joined in ES module evaluation
order: from ``main.js``, each ``import … from "./x.js";`` in source order, depth first, each
module after the modules it imports, each once, ``main.js`` last. Their import lines and
``export {…};`` statements are dropped and the whole is wrapped in one
``(() => { "use strict"; … })();``, so the modules' top-level names stay private to the page and
an imported name is simply the exporter's own binding (live, as an ES import is). A line
``// module: x.js`` before each module says where a browser's error comes from.

Sharing one scope is sound only for modules written to the subset below; anything else is
refused with :class:`ScriptError` naming the module (and, for a name, both modules), never
assembled into a page that would behave differently from the modules:

* imports: ``import {a, b} from "./x.js";`` and ``import "./x.js";`` only (no ``as`` alias, no
  default or namespace import, nothing but a sibling module), of names ``x.js`` exports;
* exports: ``export {a, b};`` (no alias) or ``export`` before a declaration;
* no top-level name declared in two modules; no import cycle (a cycle's modules could read
  each other's ``const`` before it is set); no missing module.

Pure text → text: :func:`assemble` takes a ``{file name: text}`` mapping (the tests feed it
generated module sets); :func:`page_script` is the package's own, read once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources

ENTRY = "main.js"
_IDENT = r"[A-Za-z_$][\w$]*"
_IMPORT = re.compile(r'import\s*(?:\{(?P<names>[^}]*)\}\s*from\s*)?"\./(?P<file>[\w.-]+\.js)"\s*;')
_EXPORT_LIST = re.compile(r"export\s*\{(?P<names>[^}]*)\}\s*;")
_EXPORT_DECL = re.compile(r"export\s+(?=(?:async\s+)?function\b|class\b|const\b|let\b|var\b)")
_STATEMENT = re.compile(r"^[ \t]*(?P<word>import|export)\b", re.M)
_DECLARATION = re.compile(
    rf"^[ \t]*(?P<ex>export\s+)?(?:(?:async\s+)?function\s*\*?\s*(?P<fn>{_IDENT})"
    rf"|class\s+(?P<cls>{_IDENT})|(?P<kw>const|let|var)\b)",
    re.M,
)
_OPEN, _CLOSE = "([{", ")]}"
_KEY_COLON = re.compile(r"\s*:")  # after a name in a pattern: the name is a key, not bound
_REGEX_AFTER = set("(,=:[!&|?{};+-*%<>~^") | {""}
_REGEX_KEYWORDS = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void"}
_REGEX_KEYWORDS |= {"throw", "yield", "await", "instanceof"}
_SPECIAL = re.compile(r"[/'\"`{}]")
_NEW_STATEMENT = re.compile(r"[^\s.?:+\-*/%&|^,=<>)\]}]")


class ScriptError(ValueError):
    """The modules cannot be joined into one script that behaves as they do."""


def _regex_may_start(out: list[str], at: int) -> bool:
    """Whether a ``/`` at ``at`` opens a regular expression (not a division), by the code
    before it (``out``: masked so far, so comments are blank)."""
    k = at - 1
    while k >= 0 and out[k].isspace():
        k -= 1
    if k < 0:
        return True
    if not (out[k].isalnum() or out[k] in "_$"):
        return out[k] in _REGEX_AFTER
    end = k + 1
    while k >= 0 and (out[k].isalnum() or out[k] in "_$"):
        k -= 1
    return "".join(out[k + 1 : end]) in _REGEX_KEYWORDS


def _mask(text: str) -> str:
    """``text`` with the insides of comments, strings, template literals and regular
    expressions blanked (same length, newlines kept), so that brackets and keywords left are
    code."""
    out = list(text)
    n = len(text)
    templates: list[int] = []  # brace depth inside each open template's ${ … }

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    def closing(start: int, stop: str) -> int:  # the index after the first unescaped `stop`
        k = start
        while k < n and text[k] not in stop:
            k += 2 if text[k] == "\\" else 1
        return min(k + 1, n)

    i = 0
    while found := _SPECIAL.search(text, i):
        i, c = found.start(), found.group()
        if text.startswith("//", i):
            end = closing(i, "\n") - 1
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif c in "'\"":
            end = closing(i + 1, c + "\n")
            blank(i + 1, end - 1)
            i = end
        elif c == "`" or (c == "}" and templates and templates[-1] == 0):
            if c == "}":
                templates.pop()
            end = closing(i + 1, "`$")  # a template's text runs to its ` or a ${
            while end < n and text[end - 1] == "$" and text[end : end + 1] != "{":
                end = closing(end, "`$")
            if text[end - 1] == "$":
                templates.append(0)
                end += 1
            blank(i + 1, end - (2 if text[end - 1] == "{" else 1))
            i = end
        elif c == "/" and _regex_may_start(out, i):
            k, in_class = i + 1, False
            while k < n and text[k] != "\n" and (in_class or text[k] != "/"):
                if text[k] == "\\":
                    k += 1
                elif text[k] in "[]":
                    in_class = text[k] == "["
                k += 1
            blank(i + 1, k)
            i = k + 1
        else:
            if templates and c in "{}":
                templates[-1] += 1 if c == "{" else -1
            i += 1
    return "".join(out)


def _top_level(masked: str) -> Callable[[int], int]:
    """The bracket depth at an offset of the masked text (0: the module's top level): the
    brackets before it counted by ``str.count`` from the previous offset asked (offsets asked
    in increasing order cost one pass over the text; a smaller one starts again)."""
    pos = level = 0

    def depth(offset: int) -> int:
        nonlocal pos, level
        if offset < pos:
            pos = level = 0
        part = masked[pos:offset]
        level += sum(map(part.count, _OPEN)) - sum(map(part.count, _CLOSE))
        pos = offset
        return level

    return depth


def _bindings(pattern: str) -> list[str]:
    """The names a declarator's target binds: ``a``, ``{a, b: c, ...d}``, ``[e, [f = 1]]``."""
    names, depth, skip = [], 0, -1
    for token in re.finditer(rf"{_IDENT}|\.\.\.|[\[\]{{}}(),:=]|\S", pattern):
        t = token.group()
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
            if skip > depth:
                skip = -1
        elif t == "," and skip == depth:
            skip = -1
        elif skip >= 0:
            continue
        elif t == "=":
            skip = depth
        elif re.fullmatch(_IDENT, t) and not _KEY_COLON.match(pattern, token.end()):
            names.append(t)
    return names


def _declarators(masked: str, start: int) -> list[str]:
    """The names declared by the ``const``/``let``/``var`` statement whose body starts at
    ``start`` (up to its ``;`` at its own depth, or a line at column 0 that cannot continue it:
    a statement without its semicolon)."""
    names, depth, piece, in_target = [], 0, start, True
    i = start
    while i < len(masked):
        c = masked[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif depth == 0 and c == "=" and in_target and masked[i + 1 : i + 2] not in ("=", ">"):
            names += _bindings(masked[piece:i])
            in_target = False
        elif depth == 0 and (c in ",;" or (c == "\n" and _NEW_STATEMENT.match(masked, i + 1))):
            if in_target:
                names += _bindings(masked[piece:i])
            if c != ",":
                break
            piece, in_target = i + 1, True
        i += 1
    return names


def _names(listed: str, where: str) -> list[str]:
    names = [" ".join(n.split()) for n in listed.split(",") if n.strip()]
    for name in names:
        if re.fullmatch(rf"{_IDENT} as {_IDENT}", name):
            raise ScriptError(f"{where}: `{name}`: an `as` alias cannot be joined into one scope")
        if not re.fullmatch(_IDENT, name):
            raise ScriptError(f"{where}: `{name}` is not a name the page's script can join")
    return names


@dataclass
class _Module:
    name: str
    body: str  # the text with its import and export statements dropped
    imports: list[tuple[str, list[str]]]  # (module, names) in source order
    exports: set[str]
    declared: list[str]


def _read(name: str, text: str) -> _Module:
    masked = _mask(text)
    depth = _top_level(masked)
    cuts: list[tuple[int, int]] = []
    imports: list[tuple[str, list[str]]] = []
    exports: set[str] = set()
    for found in _STATEMENT.finditer(masked):
        at = found.start("word")
        if depth(at):
            continue
        line = text.count("\n", 0, at) + 1
        where = f"{name} line {line}"
        if found["word"] == "import":
            if masked.startswith("import(", at) or masked.startswith("import.", at):
                continue  # a dynamic import or import.meta: an expression, not a statement
            stmt = _IMPORT.match(text, at)
            if not stmt:
                raise ScriptError(
                    f'{where}: only `import {{a, b}} from "./x.js";` or `import "./x.js";` '
                    "can be joined (no default, namespace or `as` import, no other source)"
                )
            imports.append((stmt["file"], _names(stmt["names"] or "", where)))
            cuts.append((at, stmt.end()))
        elif stmt := _EXPORT_LIST.match(text, at):
            exports.update(_names(stmt["names"], where))
            cuts.append((at, stmt.end()))
        elif stmt := _EXPORT_DECL.match(text, at):
            cuts.append((at, stmt.end()))
        else:
            raise ScriptError(
                f"{where}: only `export {{a, b}};` or `export` before a declaration can be "
                "joined (no default export, no `as` alias, no re-export)"
            )
    declared: list[str] = []
    for found in _DECLARATION.finditer(masked):
        if depth(found.start()):
            continue
        names = _declarators(masked, found.end()) if found["kw"] else [found["fn"] or found["cls"]]
        declared += names
        if found["ex"]:
            exports.update(names)
    body, at = [], 0
    for a, b in cuts:
        body.append(text[at:a])
        at = b
    body.append(text[at:])
    return _Module(name, "".join(body), imports, exports, declared)


def assemble(modules: Mapping[str, str], entry: str = ENTRY) -> str:
    """One script from ES modules ``{file name: text}``, entry ``entry`` (see the module
    docstring); raises :class:`ScriptError` for what cannot be joined."""
    read: dict[str, _Module] = {}
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str, importer: str | None) -> None:
        if name in order:
            return
        if name in visiting:
            cycle = " → ".join([*visiting[visiting.index(name) :], name])
            raise ScriptError(f"import cycle: {cycle} (a module would run before one it reads)")
        if name not in modules:
            raise ScriptError(f"{importer or 'the page'} imports ./{name}, which does not exist")
        module = read[name] = _read(name, modules[name])
        visiting.append(name)
        for used, _ in module.imports:
            visit(used, name)
        visiting.pop()
        order.append(name)

    visit(entry, None)
    owner: dict[str, str] = {}
    for name in order:
        module = read[name]
        for used, names in module.imports:
            missing = [n for n in names if n not in read[used].exports]
            if missing:
                raise ScriptError(
                    f"{name} imports `{missing[0]}` from {used}, which does not export it"
                )
        for declared in module.declared:
            if declared in owner:
                where = owner[declared]
                both = f"in both {where} and {name}" if where != name else f"twice in {name}"
                raise ScriptError(f"top-level name `{declared}` is declared {both}")
            owner[declared] = name
        undeclared = sorted(module.exports - set(module.declared))
        if undeclared:
            raise ScriptError(f"{name} exports `{undeclared[0]}`, which it does not declare")
    parts = ['(() => {\n"use strict";\n']
    for name in order:
        parts.append(f"\n// module: {name}\n{read[name].body.strip()}\n")
    parts.append("})();\n")
    return "".join(parts)


@cache
def page_script() -> str:
    """The report page's script: the package's ``assets/src/`` modules assembled."""
    src = resources.files(__package__).joinpath("assets", "src")
    modules = {p.name: p.read_text("utf-8") for p in src.iterdir() if p.name.endswith(".js")}
    script = assemble(modules)
    if "</" in script:
        raise ScriptError("the page's script must not contain '</' (it is inlined in a <script>)")
    return script
