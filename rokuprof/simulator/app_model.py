"""What the simulator's app is made of (pure data: :mod:`rokuprof.simulator.app` runs it): its
functions (where they live, what they call, how they spend time and memory), its threads, and
what remote keys make it do (:class:`AppModel`). Two kinds of model exist: the synthetic Café TV
model below (with :mod:`.app_keys`; :data:`rokuprof.simulator.cafe_tv.CAFE_TV`), the built-in app
of a simulator with nothing sideloaded and of the benchmarks, and a model read from a sideloaded
app's own source (:mod:`.app_from_source`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    file: str
    line: int
    callees: tuple[tuple[str, float], ...] = ()  # (callee, weight)
    stay: float = 1.0  # weight of spending the tick in this function itself
    ops_per_us: float = 1.0  # CPU "operations" per microsecond of wall time
    calls: int = 1  # calls into this path per visit
    allocs: float = 0.0  # mean allocations per visit
    size: tuple[int, int] = (16, 256)  # allocation size range, bytes
    lifetime: tuple[float, float] = (0.05, 2.0)  # seconds before an allocation is freed
    leaks: bool = False  # allocations are never freed
    reallocs: bool = False  # grows a buffer: free_realloc + alloc
    appears_after: float = 0.0  # app seconds before the function is ever called
    lines: int = 20  # body length, for line offsets
    #: the name the device reports when it differs from the model's key (``name``): a
    #: component's ``init`` is keyed ``HomeScene:init`` in a model read from source
    shown: str = ""
    #: line offsets a tick may land on, repeated by weight (empty: any of ``1..lines``)
    hot: tuple[int, ...] = ()
    #: (callee, line offset of the call): where the call path enters each callee
    call_lines: tuple[tuple[str, int], ...] = ()

    def call_line(self, callee: str, default: int) -> int:
        """The line offset where a path enters ``callee``: the call's own line in a model
        read from source, else ``default`` (the line the walk drew)."""
        for name, line in self.call_lines:
            if name == callee:
                return line
        return default


def _f(name: str, file: str, line: int, **kw) -> Function:
    return Function(name, file, line, **kw)


MAIN = "pkg:/source/main.brs"
UTIL = "pkg:/source/utils/json.brs"
HOME = "pkg:/components/HomeScene.brs"
ROW = "pkg:/components/rows/PosterRowList.brs"
LOADER = "pkg:/components/tasks/ContentLoaderTask.brs"
VIDEO = "pkg:/components/tasks/VideoPlayerTask.brs"
DETAILS = "pkg:/components/DétailsÉcran.brs"

FUNCTIONS: dict[str, Function] = {
    f.name: f
    for f in (
        # main thread: the event loop
        _f("Main", MAIN, 1, callees=(("eventLoop", 1),), stay=0.01, calls=0),
        _f("eventLoop", MAIN, 30, callees=(("handleMessage", 3), ("waitPort", 6)), stay=0.2),
        _f("waitPort", MAIN, 80, stay=1, ops_per_us=0.05),
        _f("handleMessage", MAIN, 95, callees=(("onKeyEvent", 2), ("registryWrite", 1)), stay=0.5),
        _f("onKeyEvent", MAIN, 140, callees=(("navigate", 2),), stay=0.5, allocs=1),
        _f("navigate", MAIN, 180, callees=(("DétailsÉcran_show", 1), ("showHome", 1)), stay=0.3),
        _f("showHome", MAIN, 230, stay=1, allocs=2, size=(64, 512)),
        _f("registryWrite", "pkg:/source/utils/registry.brs", 12, stay=1, ops_per_us=0.3),
        _f(
            "DétailsÉcran_show",
            DETAILS,
            5,
            callees=(("formatDurée", 2),),
            stay=1,
            allocs=3,
            size=(128, 4096),
        ),
        _f("formatDurée", DETAILS, 61, stay=1, calls=4, allocs=1, size=(16, 64)),
        # render thread: SceneGraph render callbacks
        _f("HomeScene_onRender", HOME, 10, callees=(("RowList_update", 1),), stay=0.1),
        _f(
            "RowList_update",
            ROW,
            22,
            callees=(("renderRow", 4), ("cacheThumbnail", 0.3)),
            stay=0.3,
            allocs=0.5,
        ),
        _f(
            "renderRow",
            ROW,
            70,
            callees=(("renderTile", 6), ("measureText", 1)),
            stay=0.5,
            calls=6,
            allocs=1,
        ),
        _f(
            "renderTile",
            ROW,
            120,
            callees=(("drawPoster", 3), ("measureText", 2)),
            stay=1.5,
            calls=12,
            allocs=2,
            size=(32, 256),
            lifetime=(0.02, 0.5),
        ),
        _f(
            "drawPoster",
            ROW,
            175,
            callees=(("decodeImage", 1),),
            stay=2,
            calls=12,
            ops_per_us=2.5,
            allocs=1,
            size=(1024, 16384),
            lifetime=(0.1, 1.0),
        ),
        _f(
            "decodeImage",
            "pkg:/components/rows/imaging.brs",
            8,
            stay=1,
            calls=3,
            ops_per_us=3.0,
            allocs=2,
            size=(4096, 65536),
            lifetime=(0.05, 0.4),
        ),
        _f("measureText", ROW, 240, callees=(("layoutText", 1),), stay=1, calls=20),
        _f("layoutText", ROW, 270, stay=1, calls=20, ops_per_us=1.8, allocs=0.5),
        _f(
            "cacheThumbnail",
            ROW,
            300,
            stay=1,
            allocs=1,
            size=(2048, 8192),
            leaks=True,
        ),
        # content loader task: fetch and parse a feed (recursive JSON parser: a deep tree)
        _f("ContentLoader_run", LOADER, 4, callees=(("fetchFeed", 1),), stay=0.05, calls=0),
        _f("fetchFeed", LOADER, 20, callees=(("parseJSON", 3), ("appendChunk", 2)), stay=1),
        _f(
            "appendChunk",
            LOADER,
            60,
            stay=1,
            calls=8,
            allocs=1,
            size=(512, 4096),
            reallocs=True,
        ),
        _f("parseJSON", UTIL, 3, callees=(("parseValue", 1),), stay=0.2),
        _f(
            "parseValue",
            UTIL,
            15,
            callees=(("parseObject", 2), ("parseArray", 1), ("parseString", 2)),
            stay=0.5,
            calls=30,
        ),
        _f(
            "parseObject",
            UTIL,
            48,
            callees=(("parseValue", 3), ("parseString", 1)),
            stay=0.6,
            calls=10,
            allocs=1,
            size=(64, 512),
        ),
        _f("parseArray", UTIL, 90, callees=(("parseValue", 2),), stay=0.4, calls=5, allocs=1),
        _f(
            "parseString",
            UTIL,
            120,
            stay=1.5,
            calls=40,
            ops_per_us=2.0,
            allocs=1,
            size=(16, 128),
        ),
        # video player task: appears once playback starts
        _f(
            "VideoPlayer_run",
            VIDEO,
            3,
            callees=(("onPlaybackStarted", 1), ("updateProgress", 4)),
            stay=0.05,
            calls=0,
            appears_after=4.0,
        ),
        _f(
            "onPlaybackStarted",
            VIDEO,
            40,
            callees=(("loadSubtitles", 1),),
            stay=1,
            appears_after=4.0,
            allocs=1,
        ),
        _f(
            "loadSubtitles",
            VIDEO,
            88,
            stay=1,
            ops_per_us=1.5,
            allocs=3,
            size=(256, 2048),
            appears_after=6.0,
        ),
        _f("updateProgress", VIDEO, 130, stay=1, calls=2, allocs=0.3, appears_after=4.0),
    )
}


@dataclass(frozen=True, slots=True)
class Thread:
    name: str  # executable module name
    root: str  # root function
    busy: float  # probability of being busy in a tick
    starts_at: float = 0.0  # app seconds
    stops_at: float = float("inf")  # app seconds: a Task whose function has returned
    #: (root, weight) when the thread has several entry points (``root`` is the first)
    roots: tuple[tuple[str, float], ...] = ()


THREADS = (
    Thread("main", "Main", 0.35),
    Thread("HomeScene", "HomeScene_onRender", 0.6),
    Thread("ContentLoaderTask", "ContentLoader_run", 0.45),
    Thread("VideoPlayerTask", "VideoPlayer_run", 0.3, starts_at=4.0),
)


@dataclass(frozen=True, slots=True)
class Burst:
    """``walks`` ticks spent at the end of ``path`` (from the thread's root) on ``thread``."""

    thread: str
    path: tuple[str, ...]
    walks: int


#: What a remote key does: ``(key, screen) -> (bursts, the screen after it)``.
KeyWork = Callable[[str, str], tuple[tuple[Burst, ...], str]]


@dataclass(frozen=True)
class AppModel:
    """One app the simulator can run: what it is called, its functions and threads, and what
    remote keys make it do."""

    name: str  # what the model is, for logs ("synthetic Café TV model", "app source: ...")
    functions: Mapping[str, Function]  # reached by the app's own walks, by key
    threads: tuple[Thread, ...]
    key_work: KeyWork
    #: every function a walk may name (``functions`` and those only keys reach)
    all_functions: Mapping[str, Function]
    home_screen: str = "home"
    #: what the simulator noticed building the model (logged), e.g. no entry point
    notes: tuple[str, ...] = ()
    #: the thread SceneGraph's render thread runs (the scene's component scripts, key
    #: handlers, observers): what an app trace draws as ``RenderThr:Main`` ("" = none)
    render_thread: str = ""

    def keys_by_shown(self) -> dict[str, tuple[str, ...]]:
        """A reported name -> the keys of the functions reported under it, for the names
        that differ from a key (a component's ``init`` is ``HomeScene:init`` in a model read
        from source), so a build's differences (:class:`~.app_config.AppConfig`) can name
        functions as the device reports them."""
        keys: dict[str, tuple[str, ...]] = {}
        for key, fn in self.all_functions.items():
            if fn.shown:
                keys[fn.shown] = (*keys.get(fn.shown, ()), key)
        for name in keys:
            if name in self.all_functions:  # also a function keyed by its own name (source/)
                keys[name] = (*keys[name], name)
        return keys
