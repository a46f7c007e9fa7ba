"""A deterministic synthetic BrightScript app: the profiler entries a real app run would stream.

The model is a small streaming app: a main thread running the event loop, a render thread
(SceneGraph render callbacks), and component task threads (content loader, video player). Each
scheduling tick (10 ms of app time) every busy thread walks its call graph from the root to some
function and is charged the tick there. Along the way functions allocate memory; most allocations
are freed after a while, buffers grow by realloc (a ``free_realloc`` then an ``alloc``), a thumbnail
cache leaks, and objects allocated before the profiler started are freed (frees of unknown
addresses). Some functions only appear mid-run (playback starts after a few seconds).

Like a real device, memory operations stream continuously while CPU and call counts are flushed
periodically. Everything is driven by ``random.Random(seed)`` and app time only, so the same
config gives the same entries for the same sequence of ``advance`` calls.
"""

from __future__ import annotations

import heapq
import random
from dataclasses import dataclass, field

from rokuprof.bsprof.model import (
    ALLOC,
    CALLS,
    CPU,
    FREE,
    FREE_REALLOC,
    MEMORY,
    MODULE,
    PATH,
    STRING,
    SUPPORTED_MAJOR,
    Entry,
    Header,
)


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


THREADS = (
    Thread("main", "Main", 0.35),
    Thread("HomeScene", "HomeScene_onRender", 0.6),
    Thread("ContentLoaderTask", "ContentLoader_run", 0.45),
    Thread("VideoPlayerTask", "VideoPlayer_run", 0.3, starts_at=4.0),
)

MAX_DEPTH = 16
TICK = 0.01  # seconds of app time per scheduling step
HEAP_BASE = 0x1000_0000


def _weighted(choices: list[tuple[str, float]], pick: float) -> str:
    """The choice that ``pick`` (in ``[0, total weight)``) falls on."""
    for name, weight in choices:
        if pick < weight:
            return name
        pick -= weight
    return choices[-1][0]


@dataclass(frozen=True)
class AppConfig:
    """What the synthetic app looks like and how much it records."""

    seed: int = 1
    name: str = "Café TV"
    version: str = "2.4.1"
    line_data: bool = True
    memory_ops: bool = True
    rate: float = 1.0  # activity multiplier: walks (and so entries) per tick
    cpu_flush_seconds: float = 1.0  # how often CPU and call counts are flushed
    sample_ratio: float = 1.0
    vendor: str = "Roku"
    model: str = "4800X"
    firmware: str = "14.1.4 build 4123"
    supplemental: str = "rokuprof simulator"
    format_version: tuple[int, int, int] = (SUPPORTED_MAJOR, 0, 0)
    header_padding: int = 8  # zero bytes after the header fields, as a device may write
    #: (name in the model, name the device reports) for functions, files and thread modules:
    #: e.g. hostile names, to test what the views make of them
    names: tuple[tuple[str, str], ...] = ()
    # Another build of the same app, for comparing runs (``rokuprof diff``). These change what
    # is recorded, never the random draws, so everything else in the run stays identical.
    #: (function, factor): a tick spent in the function costs ``factor`` times the wall and CPU
    slower: tuple[tuple[str, float], ...] = ()
    #: functions this build does not have: their visits, and whatever they call, record nothing
    absent: tuple[str, ...] = ()
    #: functions whose allocations are never freed in this build
    leaking: tuple[str, ...] = ()


@dataclass
class _Walk:
    path: int
    function: Function
    line_offset: int


@dataclass
class SyntheticApp:
    """Generates the entries of one profiled app run as app time advances."""

    config: AppConfig = field(default_factory=AppConfig)
    paused: bool = False

    def __post_init__(self) -> None:
        self.rng = random.Random(self.config.seed)
        self.clock = 0.0
        self._strings: dict[str, int] = {}
        self._modules: dict[str, int] = {}
        self._paths: dict[tuple[int, str], int] = {}  # (caller path, function) -> path ID
        self._pending_cpu: dict[tuple[int, int], list[int]] = {}  # (path, line) -> [cpu, wall]
        self._pending_calls: dict[int, int] = {}
        self._frees: list[tuple[float, int, int, int]] = []  # heap of (time, seq, addr, path)
        self._buffers: dict[int, tuple[int, int]] = {}  # realloc buffers: path -> (addr, size)
        self._next_addr = HEAP_BASE
        self._seq = 0
        self._last_flush = 0.0
        self._out: list[Entry] = []
        self._started = False
        self._names = dict(self.config.names)
        self._slower = dict(self.config.slower)
        self._absent = frozenset(self.config.absent)
        self._leaking = frozenset(self.config.leaking)

    # -- public ------------------------------------------------------------------------------

    def header(self, start_ms: int) -> Header:
        c = self.config
        major, minor, patch = c.format_version
        return Header(
            major=major,
            minor=minor,
            patch=patch,
            header_size=0,
            requested_sample_ratio=c.sample_ratio,
            actual_sample_ratio=1.0 if c.memory_ops else c.sample_ratio,
            line_data=c.line_data,
            memory_ops=c.memory_ops,
            start_ms=start_ms,
            target_name=c.name,
            supplemental=c.supplemental,
            target_version=c.version,
            vendor=c.vendor,
            model=c.model,
            firmware=c.firmware,
        )

    def advance(self, seconds: float) -> list[Entry]:
        """Run the app for ``seconds`` of app time; return the entries it recorded."""
        if not self._started:
            self._started = True
            self._preexisting_frees()
        end = self.clock + seconds
        while self.clock + TICK <= end + 1e-9:
            self.clock += TICK
            self._tick()
            if self.clock - self._last_flush >= self.config.cpu_flush_seconds - 1e-9:
                self._flush_cpu()
        return self._take()

    def finish(self) -> list[Entry]:
        """App exit: flush the CPU and call counts still pending."""
        self._flush_cpu()
        return self._take()

    # -- internals ---------------------------------------------------------------------------

    def _take(self) -> list[Entry]:
        out, self._out = self._out, []
        return out

    def _record(self) -> bool:
        return not self.paused

    def _string(self, text: str) -> int:
        sid = self._strings.get(text)
        if sid is None:
            sid = self._strings[text] = len(self._strings) + 1
            self._out.append((STRING, sid, text))
        return sid

    def _module(self, name: str) -> int:
        mid = self._modules.get(name)
        if mid is None:
            name_id = self._string(name)
            mid = self._modules[name] = len(self._modules) + 1
            self._out.append((MODULE, mid, name_id))
        return mid

    def _path(self, thread: Thread, caller: int, caller_line: int, fn: Function) -> int:
        key = (caller, fn.name)
        pid = self._paths.get(key)
        if pid is None:
            names = self._names
            module = self._module(names.get(thread.name, thread.name)) if caller == 0 else 0
            file_id = self._string(names.get(fn.file, fn.file))
            function_id = self._string(names.get(fn.name, fn.name))
            pid = self._paths[key] = len(self._paths) + 1
            line_offset = caller_line if (caller and self.config.line_data) else 0
            self._out.append(
                (PATH, pid, caller, module, line_offset, file_id, fn.line, function_id)
            )
        return pid

    def _tick(self) -> None:
        self._release_due()
        walks = max(1, round(self.config.rate))
        wall_us = int(TICK * 1_000_000 / walks)
        for thread in THREADS:
            if self.clock < thread.starts_at:
                continue
            for _ in range(walks):
                if self.rng.random() < thread.busy:
                    self._walk(thread, wall_us)

    def _walk(self, thread: Thread, wall_us: int) -> None:
        rng = self.rng
        record = self._record()
        absent = False  # a function this build lacks: draw as if recording, record nothing
        fn = FUNCTIONS[thread.root]
        caller = 0
        caller_line = 0
        depth = 0
        while True:
            line_offset = rng.randint(1, fn.lines) if self.config.line_data else 0
            if record and fn.name in self._absent:
                absent, record = True, False
            pid = self._path(thread, caller, caller_line, fn) if record else 0
            if record and fn.calls:
                self._pending_calls[pid] = self._pending_calls.get(pid, 0) + fn.calls
            if fn.allocs:
                self._allocate(pid, fn, line_offset, record)
            callees = [
                (name, w) for name, w in fn.callees if FUNCTIONS[name].appears_after <= self.clock
            ]
            total = fn.stay + sum(w for _, w in callees)
            pick = rng.random() * total
            if depth >= MAX_DEPTH or not callees or pick < fn.stay:
                break
            caller, caller_line = pid, line_offset or 1
            fn = FUNCTIONS[_weighted(callees, pick - fn.stay)]
            depth += 1
        if absent:
            rng.random()  # the jitter below
        elif record:
            jitter = rng.uniform(0.8, 1.2)
            key = (pid, line_offset)
            pending = self._pending_cpu.get(key)
            wall_us = int(wall_us * self._slower.get(fn.name, 1.0))
            cpu = int(wall_us * fn.ops_per_us * jitter)
            if pending is None:
                self._pending_cpu[key] = [cpu, wall_us]
            else:
                pending[0] += cpu
                pending[1] += wall_us

    def _allocate(self, pid: int, fn: Function, line_offset: int, record: bool) -> None:
        rng = self.rng
        count = int(fn.allocs) + (rng.random() < fn.allocs - int(fn.allocs))
        record = record and self.config.memory_ops
        for _ in range(count):
            size = rng.randint(*fn.size)
            if fn.reallocs and pid in self._buffers:
                old_addr, old_size = self._buffers.pop(pid)
                size = min(old_size * 2, 1 << 20)
                if record:
                    self._out.append((MEMORY, pid, FREE_REALLOC, line_offset, old_addr, 0))
            addr = self._alloc_address(size)
            if record:
                self._out.append((MEMORY, pid, ALLOC, line_offset, addr, size))
            if fn.reallocs and len(self._buffers) < 64:
                self._buffers[pid] = (addr, size)
                continue
            if fn.leaks:
                continue
            due = self.clock + rng.uniform(*fn.lifetime)
            if fn.name in self._leaking:
                continue
            self._seq += 1
            # A free is only recorded if the allocation was (else it happened while paused).
            heapq.heappush(self._frees, (due, self._seq, addr, pid if record else -1))

    def _alloc_address(self, size: int) -> int:
        addr = self._next_addr
        self._next_addr += (size + 15) & ~15
        if self._next_addr > 0xFFFF_0000:
            self._next_addr = HEAP_BASE
        return addr

    def _release_due(self) -> None:
        frees = self._frees
        record = self._record() and self.config.memory_ops
        while frees and frees[0][0] <= self.clock:
            _, _, addr, pid = heapq.heappop(frees)
            if record and pid > 0:
                line_offset = 1 if self.config.line_data else 0
                self._out.append((MEMORY, pid, FREE, line_offset, addr, 0))

    def _preexisting_frees(self) -> None:
        """Objects allocated before the profiler started get freed early in the run."""
        if not self.config.memory_ops:
            return
        thread = THREADS[0]
        pid = self._path(thread, 0, 0, FUNCTIONS[thread.root])
        line_offset = 1 if self.config.line_data else 0
        for i in range(3):
            self._out.append((MEMORY, pid, FREE, line_offset, 0x0800_0000 + 64 * i, 0))

    def _flush_cpu(self) -> None:
        self._last_flush = self.clock
        for (pid, line_offset), (cpu, wall) in self._pending_cpu.items():
            self._out.append((CPU, pid, line_offset, cpu, wall))
        for pid, count in self._pending_calls.items():
            self._out.append((CALLS, pid, count))
        self._pending_cpu.clear()
        self._pending_calls.clear()


__all__ = ["FUNCTIONS", "THREADS", "AppConfig", "SyntheticApp"]
