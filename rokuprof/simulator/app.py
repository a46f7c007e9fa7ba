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
config gives the same entries for the same sequence of ``advance`` calls. Wall figures may carry
clock noise (``AppConfig.clock_noise``) from a random source of their own (``clock_seed``): it
changes no walk, no CPU operation count, no call count and no memory operation.
"""

from __future__ import annotations

import heapq
import itertools
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
    Entry,
    Header,
)
from rokuprof.simulator.app_config import AppConfig
from rokuprof.simulator.app_model import AppModel, Burst, Function, Thread
from rokuprof.simulator.cafe_tv import CAFE_TV
from rokuprof.simulator.chanperf import AppVitals

MAX_DEPTH = 16
TICK = 0.01  # seconds of app time per scheduling step
HEAP_BASE = 0x1000_0000
MAX_PENDING_KEYS = 256  # remote keys waiting for the app (more are dropped, as a busy app would)
MAX_KEY_LOG = 1024  # keys noted for an app trace and not yet taken


def _weighted(choices: list[tuple[str, float]], pick: float) -> str:
    """The choice that ``pick`` (in ``[0, total weight)``) falls on."""
    for name, weight in choices:
        if pick < weight:
            return name
        pick -= weight
    return choices[-1][0]


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
    model: AppModel = CAFE_TV  # the app's functions, threads and keys

    def __post_init__(self) -> None:
        self.rng = random.Random(self.config.seed)
        model = self.model
        self._functions = model.functions
        self._all_functions = model.all_functions
        self._threads = model.threads
        self._thread_by_name = {thread.name: thread for thread in model.threads}
        #: thread -> (its entry points and weights, their total), for threads with several
        self._roots = {
            t.name: (list(t.roots), sum(w for _, w in t.roots)) for t in model.threads if t.roots
        }
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
        # A build's differences name functions as the device reports them, or by model key.
        keys = model.keys_by_shown()
        self._slower = {k: f for name, f in self.config.slower for k in keys.get(name, (name,))}
        self._absent = frozenset(k for n in self.config.absent for k in keys.get(n, (n,)))
        self._leaking = frozenset(k for n in self.config.leaking for k in keys.get(n, (n,)))
        self._heavier = {k: f for name, f in self.config.heavier for k in keys.get(name, (name,))}
        # The clock: its own random source, so noise never changes what the app does.
        noise = self.config.clock_noise
        self._clock_rng: random.Random | None = None
        self._launch_clock = 1.0
        self._walk_noise = noise / 4
        if noise > 0:
            clock_seed = self.config.clock_seed
            rng = random.Random(f"{self.config.seed}:clock" if clock_seed is None else clock_seed)
            self._clock_rng = rng
            self._launch_clock = 1.0 + rng.uniform(-0.75 * noise, 0.75 * noise)
        # Remote keys: their own random source, so a run without keys draws as it always did.
        self._keys: list[tuple[float, int, str]] = []  # heap of (app time, seq, key)
        self._key_rng = random.Random(f"{self.config.seed}:keys")
        self._key_order = itertools.count()
        self.screen = model.home_screen
        self.vitals = AppVitals()  # what chanperf shows: live heap, busy share
        #: when a list (an app trace is kept): (app time, key, its bursts) of each key taken,
        #: for the trace to take (at most MAX_KEY_LOG waiting; more are not noted)
        self.key_log: list[tuple[float, str, tuple[Burst, ...]]] | None = None

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

    def press(self, key: str, at: float) -> bool:
        """A remote key reaches the app at app time ``at``: its work (see
        :mod:`~rokuprof.simulator.app_keys`) runs on the first tick at or after ``at``. False
        when too many keys are waiting (the key is dropped)."""
        if len(self._keys) >= MAX_PENDING_KEYS:
            return False
        heapq.heappush(self._keys, (max(at, 0.0), next(self._key_order), key))
        return True

    def finish(self) -> list[Entry]:
        """App exit: the keys still queued are handled, then the CPU and call counts still
        pending are flushed."""
        while self._keys:
            self._on_key(heapq.heappop(self._keys)[2])
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
            shown = fn.shown or fn.name
            function_id = self._string(names.get(shown, shown))
            pid = self._paths[key] = len(self._paths) + 1
            line_offset = caller_line if (caller and self.config.line_data) else 0
            self._out.append(
                (PATH, pid, caller, module, line_offset, file_id, fn.line, function_id)
            )
        return pid

    def _line_offset(self, fn: Function, rng: random.Random) -> int:
        if not self.config.line_data:
            return 0
        return rng.choice(fn.hot) if fn.hot else rng.randint(1, fn.lines)

    def _tick(self) -> None:
        self._release_due()
        while self._keys and self._keys[0][0] <= self.clock + 1e-9:
            self._on_key(heapq.heappop(self._keys)[2])
        walks = max(1, round(self.config.rate))
        wall_us = int(TICK * 1_000_000 / walks)
        possible = 0
        for thread in self._threads:
            if not thread.starts_at <= self.clock < thread.stops_at:
                continue
            possible += walks
            for _ in range(walks):
                if self.rng.random() < thread.busy:
                    self._walk(thread, wall_us)
        self.vitals.tick(possible)

    def _walk(self, thread: Thread, wall_us: int) -> None:
        rng = self.rng
        self.vitals.walked()
        record = self._record()
        absent = False  # a function this build lacks: draw as if recording, record nothing
        functions = self._functions
        roots = self._roots.get(thread.name)
        if roots is not None:
            choices, total = roots
            fn = functions[_weighted(choices, rng.random() * total)]
        else:
            fn = functions[thread.root]
        caller = 0
        caller_line = 0
        depth = 0
        while True:
            line_offset = self._line_offset(fn, rng)
            if record and fn.name in self._absent:
                absent, record = True, False
            pid = self._path(thread, caller, caller_line, fn) if record else 0
            if record and fn.calls:
                self._pending_calls[pid] = self._pending_calls.get(pid, 0) + fn.calls
            if fn.allocs:
                self._allocate(pid, fn, line_offset, record)
            callees = [
                (name, w) for name, w in fn.callees if functions[name].appears_after <= self.clock
            ]
            total = fn.stay + sum(w for _, w in callees)
            pick = rng.random() * total
            if depth >= MAX_DEPTH or not callees or pick < fn.stay:
                break
            callee = _weighted(callees, pick - fn.stay)
            caller, caller_line = pid, fn.call_line(callee, line_offset or 1)
            fn = functions[callee]
            depth += 1
        clock = self._clock()  # drawn for every walk, so no build shifts another walk's clock
        if absent:
            rng.random()  # the jitter below
        elif record:
            jitter = rng.uniform(0.8, 1.2)
            key = (pid, line_offset)
            pending = self._pending_cpu.get(key)
            wall_us = int(wall_us * self._slower.get(fn.name, 1.0))
            cpu = int(wall_us * fn.ops_per_us * jitter * self._heavier.get(fn.name, 1.0))
            if clock is not None:
                wall_us = round(wall_us * clock)
            if pending is None:
                self._pending_cpu[key] = [cpu, wall_us]
            else:
                pending[0] += cpu
                pending[1] += wall_us

    def _on_key(self, key: str) -> None:
        bursts, self.screen = self.model.key_work(key, self.screen)
        if self.key_log is not None and len(self.key_log) < MAX_KEY_LOG:
            self.key_log.append((self.clock, key, bursts))
        for burst in bursts:
            thread = self._thread_by_name[burst.thread]
            for _ in range(burst.walks):
                self._forced_walk(thread, burst.path)

    def _forced_walk(self, thread: Thread, path: tuple[str, ...]) -> None:
        """A key's tick spent at the end of ``path``, drawn from the keys' random source."""
        rng = self._key_rng
        self.vitals.walked()  # chanperf's CPU share sees the key's work
        record = self._record()
        caller = caller_line = pid = line_offset = 0
        previous = None
        for name in path:
            fn = self._all_functions[name]
            if previous is not None:
                caller_line = previous.call_line(name, caller_line)
            previous = fn
            line_offset = self._line_offset(fn, rng)
            record = record and name not in self._absent
            pid = self._path(thread, caller, caller_line, fn) if record else 0
            if record and fn.calls:
                self._pending_calls[pid] = self._pending_calls.get(pid, 0) + fn.calls
            if fn.allocs:
                self._allocate(pid, fn, line_offset, record, rng)
            caller, caller_line = pid, line_offset or 1
        clock = self._clock()
        if record:
            name = path[-1]
            wall_us = int(TICK * 1_000_000 * self._slower.get(name, 1.0))
            jitter = rng.uniform(0.8, 1.2)
            cpu = int(
                wall_us
                * self._all_functions[name].ops_per_us
                * jitter
                * self._heavier.get(name, 1.0)
            )
            if clock is not None:
                wall_us = round(wall_us * clock)
            pending = self._pending_cpu.setdefault((pid, line_offset), [0, 0])
            pending[0] += cpu
            pending[1] += wall_us

    def _clock(self) -> float | None:
        """This walk's wall clock factor (the launch's plus the walk's own noise), or None
        without clock noise (nothing is drawn)."""
        rng = self._clock_rng
        if rng is None:
            return None
        return self._launch_clock + rng.uniform(-self._walk_noise, self._walk_noise)

    def _allocate(
        self,
        pid: int,
        fn: Function,
        line_offset: int,
        record: bool,
        rng: random.Random | None = None,
    ) -> None:
        rng = rng or self.rng
        count = int(fn.allocs) + (rng.random() < fn.allocs - int(fn.allocs))
        record = record and self.config.memory_ops
        for _ in range(count):
            size = rng.randint(*fn.size)
            if fn.reallocs and pid in self._buffers:
                old_addr, old_size = self._buffers.pop(pid)
                size = min(old_size * 2, 1 << 20)
                self.vitals.freed(size=old_size)
                if record:
                    self._out.append((MEMORY, pid, FREE_REALLOC, line_offset, old_addr, 0))
            addr = self._alloc_address(size)
            self.vitals.allocated(size)
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
            self.vitals.will_free(self._seq, size)
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
            _, seq, addr, pid = heapq.heappop(frees)
            self.vitals.freed(seq)
            if record and pid > 0:
                line_offset = 1 if self.config.line_data else 0
                self._out.append((MEMORY, pid, FREE, line_offset, addr, 0))

    def _preexisting_frees(self) -> None:
        """Objects allocated before the profiler started get freed early in the run."""
        if not self.config.memory_ops:
            return
        thread = self._threads[0]
        pid = self._path(thread, 0, 0, self._functions[thread.root])
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


__all__ = ["AppConfig", "SyntheticApp"]
