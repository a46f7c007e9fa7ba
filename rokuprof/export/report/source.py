"""The report's source excerpts (``report --source``): which files and lines of the app the page
shows, and the model's ``source`` entry (pure: the files are read by :mod:`rokuprof.app.source`).

The page shows the source of the hot functions only: the most self CPU, the most self wall time
and the most allocated bytes (:func:`hot_functions`), each from a few lines above its first line
to its ``end sub``/``end function`` (or its last line with figures) and a few lines below, merged
per file, bounded in lines per function, characters per line and lines in all. The line figures
themselves are not computed here: the page adds up the model's ``lines`` and ``allocLines``, as
its Lines tab does; this module only reads which lines have figures, to know how far to show.

A capture names files by their ``pkg:/`` path; :func:`pkg_relative` is the one mapping to a path
inside the app (no ``..``, no absolute path, nothing but ``pkg:/``). ``{path}`` in the editor URL
template is the local file under the source directory, or the ``pkg:/`` path where there is
none (a zip, a path that does not map). Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from rokuprof.export.report.model import node_selves
from rokuprof.export_names import DEFAULT_EDITOR_URL as DEFAULT_EDITOR_URL  # its home

#: How many functions by each figure have their source in the page.
HOT_BY = (("cpu", 24), ("wall", 24), ("allocBytes", 12))
CONTEXT = 3  # lines shown above a function and below its end
#: A function's excerpt without its ``end sub``/``end function`` in reach: this many lines.
NO_END_SPAN = 40
MAX_FUNCTION_LINES = 300  # lines per function's excerpt at most
MAX_LINE_CHARS = 400  # characters per source line kept (the rest cut with an ellipsis)
MAX_PAGE_LINES = 6000  # source lines in the page at most
#: A source file read at most this many bytes (the rest is not read), and all of them this many.
MAX_FILE_BYTES = 1 << 20
MAX_TOTAL_BYTES = 8 << 20
PKG = "pkg:/"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
#: Schemes a link must not use: they run script or embed data in the page.
_REFUSED_SCHEMES = frozenset({"javascript", "vbscript", "data", "blob", "about", "filesystem"})
_END = re.compile(r"^\s*end\s*(sub|function)\b", re.IGNORECASE)


def pkg_relative(file: str) -> str | None:
    """The path inside the app of a capture's ``pkg:/`` file name, or ``None`` when it is not
    one or could leave the app (``..``, an empty or ``.`` part, a backslash, a NUL)."""
    if not file.startswith(PKG):
        return None
    rel = file[len(PKG) :]
    if not rel or "\\" in rel or "\0" in rel or rel.startswith("/"):
        return None
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        return None
    return rel


def editor_url_problem(template: str) -> str | None:
    """Why ``template`` cannot be the editor link (``None``: it can). It must start with its own
    scheme, before any placeholder (so a file name cannot choose it), one that does not run
    script or hold data in the page (``javascript:``, ``data:`` ...)."""
    m = _SCHEME.match(template)
    if m is None:
        return (
            f"--editor-url {template!r} does not start with a scheme (like {DEFAULT_EDITOR_URL!r})"
        )
    if m.group(1).lower() in _REFUSED_SCHEMES:
        return f"--editor-url {template!r}: a {m.group(1).lower()}: link is refused"
    if any(c.isspace() or ord(c) < 0x20 or c == "\x7f" for c in template):
        return f"--editor-url {template!r} holds a space or a control character"
    unknown = set(re.findall(r"\{([^{}]*)\}", template)) - {"path", "line"}
    if unknown:
        return f"--editor-url {template!r}: unknown placeholder {{{sorted(unknown)[0]}}}"
    return None


def _fn_selves(model: dict, column: str) -> list[int]:
    per_node = node_selves(model, column)
    out = [0] * len(model["functions"]["name"])
    for node, fn in enumerate(model["nodes"]["fn"]):
        if fn >= 0:
            out[fn] += per_node[node]
    return out


def hot_functions(model: dict) -> list[int]:
    """The functions whose source the page shows (:data:`HOT_BY`), in function order."""
    hot: set[int] = set()
    for column, count in HOT_BY:
        selves = _fn_selves(model, column)
        ranked = sorted((f for f, v in enumerate(selves) if v > 0), key=lambda f: (-selves[f], f))
        hot.update(ranked[:count])
    return sorted(hot)


def figured_lines(model: dict) -> dict[int, tuple[int, int]]:
    """Per function: the first and last source line that has figures (CPU, wall or allocations)
    in the model's ``lines`` and ``allocLines``."""
    node_of_path = model["paths"]["node"]
    fn_of_node = model["nodes"]["fn"]
    out: dict[int, tuple[int, int]] = {}
    for flat in (model["lines"], model["allocLines"]):
        for i in range(0, len(flat), 4):
            fn, line = fn_of_node[node_of_path[flat[i]]], flat[i + 1]
            if line > 0:
                lo, hi = out.get(fn, (line, line))
                out[fn] = (min(lo, line), max(hi, line))
    return out


def wanted_files(model: dict) -> list[str]:
    """The files of the hot functions, sorted (one that does not map into the app is not read,
    and the page says so)."""
    strings, fns = model["strings"], model["functions"]
    return sorted({strings[fns["file"][f]] for f in hot_functions(model)})


@dataclass(frozen=True)
class SourceText:
    """A source file as read: its text (``None``: not read) and why not, or why it is cut."""

    text: str | None
    note: str | None = None


def _end_of_function(lines: list[str], first: int) -> int | None:
    """The line (1-based) of the ``end sub``/``end function`` closing the function at
    ``first``, looked for within :data:`MAX_FUNCTION_LINES`."""
    for n in range(first + 1, min(len(lines), first + MAX_FUNCTION_LINES) + 1):
        if _END.match(lines[n - 1]):
            return n
    return None


def _cut(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[: MAX_LINE_CHARS - 1] + "…"


def source_entry(
    model: dict,
    texts: Mapping[str, SourceText],
    *,
    label: str | None,
    editor_url: str | None,
    root: str | None,
) -> dict[str, object]:
    """The model's ``source`` entry: the hot functions' excerpts from ``texts`` (``pkg:/`` file ->
    what was read), the editor link template, and per file the local path its links use.

    ``files``: ``[file string id, note or None, [[first line, [text, ...]], ...]]`` sorted by
    file; ``fns``: ``[function, file index, first line, last line, note or None]``;
    ``paths``: ``[[file string id, local path], ...]`` for every file of the capture that maps
    under ``root`` (a source directory); ``notes``: what the page says about the whole."""
    strings, fns = model["strings"], model["functions"]
    file_ids = {s: i for i, s in enumerate(strings)}
    figured = figured_lines(model)
    lines_of = {file: t.text.splitlines() for file, t in texts.items() if t.text is not None}
    spans: dict[str, list[tuple[int, int, int]]] = {}  # file -> (first, last, fn)
    fn_notes: dict[int, str] = {}
    for f in hot_functions(model):
        file = strings[fns["file"][f]]
        lines = lines_of.get(file)
        if lines is None:  # not read: the file's note says why
            continue
        start = fns["line"][f] or figured.get(f, (0, 0))[0]
        if start <= 0:
            fn_notes[f] = "its first line is not known"
            continue
        if start > len(lines):
            fn_notes[f] = f"line {start} is past the end of the file ({len(lines)} lines)"
            continue
        end = _end_of_function(lines, start) or min(len(lines), start + NO_END_SPAN)
        end = max(end, figured.get(f, (0, 0))[1])
        end = min(len(lines), end + CONTEXT, start + MAX_FUNCTION_LINES)
        spans.setdefault(file, []).append((max(1, start - CONTEXT), end, f))

    files: list[list[object]] = []
    fn_rows: list[list[object]] = []
    budget = MAX_PAGE_LINES
    for file in sorted(texts):
        got = texts[file]
        chunks: list[list[object]] = []
        merged: list[list[int]] = []
        for first, last, _ in sorted(spans.get(file, ())):
            if merged and first <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], last)
            else:
                merged.append([first, last])
        note = got.note
        lines = lines_of.get(file, [])
        for first, last in merged:
            take = min(last - first + 1, budget)
            if take <= 0:
                note = note or "not shown: the page holds enough source already"
                break
            chunks.append([first, [_cut(x) for x in lines[first - 1 : first - 1 + take]]])
            budget -= take
        index = len(files)
        files.append([file_ids[file], note, chunks])
        shown = {(c[0], c[0] + len(c[1]) - 1) for c in chunks}
        for first, last, f in spans.get(file, ()):
            inside = [(a, b) for a, b in shown if a <= first and last <= b]
            fn_rows.append([f, index, first, last, None if inside else "not shown: page full"])
    index_of = {file: i for i, file in enumerate(sorted(texts))}  # the order of ``files``
    for f, why in sorted(fn_notes.items()):
        fn_rows.append([f, index_of[strings[fns["file"][f]]], 0, 0, why])
    fn_rows.sort(key=lambda r: r[0])
    paths = []
    if root is not None:
        for s in sorted(set(fns["file"])):
            rel = pkg_relative(strings[s])
            if rel is not None:
                paths.append([s, f"{root.rstrip('/')}/{rel}"])
    notes = []
    if texts and not lines_of:
        notes.append("none of the hot functions' files was found in the source")
    return {
        "label": label,
        "editor": editor_url,
        "files": files,
        "fns": fn_rows,
        "paths": paths,
        "notes": notes,
    }


def editor_entry(editor_url: str) -> dict[str, object]:
    """The model's ``source`` entry without source: only the editor links (``{path}``: the
    ``pkg:/`` path)."""
    return {"label": None, "editor": editor_url, "files": [], "fns": [], "paths": [], "notes": []}
