"""Sentry frames and stacks from ``.bsprof`` call paths, and the release name.

A call path (a node of the call tree) becomes a stack of frames, leaf first. A frame is one
function: ``function``, ``abs_path`` (the file as the device names it, e.g.
``pkg:/source/main.brs``), ``filename`` (the same without the ``pkg:/`` style prefix),
``lineno`` (where the function is defined), ``module`` (the file as a dotted name, so that Sentry
groups functions of the same name in different files apart) and ``in_app``.

``in_app`` is true for the app's own code: files under ``pkg:/`` and, because a component library
is the app's own code downloaded at run time, ``libpkg:/``. Everything else (``common:/``,
firmware libraries) is system code. Sentry counts frames of a platform it does not know as system
code unless ``in_app`` is set, and only in-app frames feed its function metrics.
"""

from __future__ import annotations

from functools import lru_cache

from rokuprof.bsprof.model import Header
from rokuprof.path_model import PathNode
from rokuprof.profile.tables import ProfileTables

IN_APP_SCHEMES = ("pkg", "libpkg")

_RELEASE_FORBIDDEN = str.maketrans({"/": "-", "\\": "-", "\n": " ", "\r": " ", "\t": " "})
MAX_RELEASE_LENGTH = 200
#: The most characters of a frame's text field (a function, a file); the same limit as the
#: exports' :data:`rokuprof.export.names.NAME_LIMIT` (the package cannot import it: the exports
#: build on this one).
FRAME_TEXT_LIMIT = 256
ELLIPSIS = "\u2026"


def cut(text: str, limit: int = FRAME_TEXT_LIMIT) -> str:
    """``text`` whole if it has at most ``limit`` characters, else its first ``limit - 1`` and
    an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def split_scheme(path: str) -> tuple[str, str]:
    """``"pkg:/source/main.brs"`` -> ``("pkg", "source/main.brs")``; no scheme -> ``("", path)``."""
    scheme, sep, rest = path.partition(":/")
    if sep and scheme and "/" not in scheme:
        return scheme.lower(), rest.lstrip("/")
    return "", path


def is_in_app(path: str) -> bool:
    return split_scheme(path)[0] in IN_APP_SCHEMES


def module_name(path: str) -> str:
    """The file as a dotted module name: ``pkg:/source/utils/json.brs`` -> ``source.utils.json``;
    other schemes keep their name in front (``common:/lib/x.brs`` -> ``common.lib.x``)."""
    scheme, rest = split_scheme(path)
    stem = rest.rsplit(".", 1)[0] if "." in rest.rsplit("/", 1)[-1] else rest
    parts = [p for p in stem.split("/") if p]
    if scheme and scheme != "pkg":
        parts.insert(0, scheme)
    return ".".join(parts) or path


def release_name(header: Header | None) -> str | None:
    """``<target name>@<target version>``, made acceptable to Sentry (no slashes, tabs or
    newlines, at most 200 characters); ``None`` without a header or a name."""
    if header is None:
        return None
    name = header.target_name.translate(_RELEASE_FORBIDDEN).strip()
    version = header.target_version.translate(_RELEASE_FORBIDDEN).strip()
    if not name:
        return None
    release = f"{name}@{version}" if version else name
    if release in (".", ".."):
        return None
    return release[:MAX_RELEASE_LENGTH]


def _file_fields(path: str) -> tuple[str, str, bool]:
    """``filename``, ``module`` and ``in_app`` of a file (every chunk names the same files, so
    those of a path of at most :data:`FRAME_TEXT_LIMIT` characters are remembered; a longer one
    is not kept alive by the cache once its run is over)."""
    if len(path) <= FRAME_TEXT_LIMIT:
        return _short_file_fields(path)
    return cut(split_scheme(path)[1] or path), cut(module_name(path)), is_in_app(path)


@lru_cache(maxsize=4096)
def _short_file_fields(path: str) -> tuple[str, str, bool]:
    return split_scheme(path)[1] or path, module_name(path), is_in_app(path)


def frame_for(tables: ProfileTables, node: PathNode) -> dict[str, object]:
    """The Sentry frame of one path element."""
    path = tables.string(node.file_id)
    filename, module, in_app = _file_fields(path)
    frame: dict[str, object] = {
        "function": cut(tables.string(node.function_id)),
        "filename": filename,
        "abs_path": cut(path),
        "module": module,
        "in_app": in_app,
    }
    if node.line:
        frame["lineno"] = node.line
    return frame


#: A frame's identity: (function, file as the device names it, definition line).
FrameName = tuple[str, str, int]


#: Call paths whose stacks a run's :class:`RunFrames` remembers before it starts over (a cache:
#: the stacks come out the same either way; this bounds its memory on a run of many paths).
MAX_REMEMBERED_STACKS = 200_000


class RunFrames:
    """A run's frames, each made once, and each call path's stack as run-wide frame numbers
    (leaf first), each walked once: what every chunk of the run shares. Frames are numbered by
    :data:`FrameName` (the same names through other string IDs are the same frame)."""

    __slots__ = ("_by_ids", "_by_name", "_stacks", "frames", "tables")

    def __init__(self, tables: ProfileTables) -> None:
        self.tables = tables
        self.frames: list[dict[str, object]] = []  # by run-wide number
        self._by_name: dict[FrameName, int] = {}
        self._by_ids: dict[tuple[int, int, int], int] = {}  # (function, file, line) IDs
        self._stacks: dict[int, tuple[int, ...]] = {}

    def stack(self, path: int) -> tuple[int, ...]:
        """The run-wide frame numbers of ``path``'s stack, leaf first."""
        made = self._stacks.get(path)
        if made is None:
            if len(self._stacks) >= MAX_REMEMBERED_STACKS:
                self._stacks.clear()
            made = self._stacks[path] = tuple(map(self._frame, self.tables.stack(path)))
        return made

    def _frame(self, node: PathNode) -> int:
        ids = (node.function_id, node.file_id, node.line)
        number = self._by_ids.get(ids)  # names looked up once per (function, file, line)
        if number is None:
            tables = self.tables
            name = (tables.string(node.function_id), tables.string(node.file_id), node.line)
            number = self._by_name.get(name)
            if number is None:
                number = self._by_name[name] = len(self.frames)
                self.frames.append(frame_for(tables, node))
            self._by_ids[ids] = number
        return number


class FrameTable:
    """Frames and stacks of one chunk, deduplicated, indexed in order of first use; the frames
    themselves and the stacks' walks come from the run's :class:`RunFrames`."""

    __slots__ = ("_local", "_path_stacks", "_stack_ids", "frames", "run", "stacks")

    def __init__(self, run: RunFrames) -> None:
        self.run = run
        self.frames: list[dict[str, object]] = []
        self.stacks: list[list[int]] = []
        self._local: dict[int, int] = {}  # run-wide frame number -> index in this chunk
        self._stack_ids: dict[tuple[int, ...], int] = {}  # by run-wide numbers
        self._path_stacks: dict[int, int] = {}

    def stack_id(self, path: int) -> int:
        """Stack index of a call path (``0`` = :data:`~rokuprof.timeline.lane.IDLE` gives the
        idle stack ``[]``)."""
        sid = self._path_stacks.get(path)
        if sid is not None:
            return sid
        numbers = self.run.stack(path) if path else ()
        sid = self._stack_ids.get(numbers)
        if sid is None:
            local = self._local
            for number in numbers:
                if number not in local:
                    local[number] = len(self.frames)
                    self.frames.append(self.run.frames[number])
            sid = self._stack_ids[numbers] = len(self.stacks)
            self.stacks.append(list(map(local.__getitem__, numbers)))
        self._path_stacks[path] = sid
        return sid
