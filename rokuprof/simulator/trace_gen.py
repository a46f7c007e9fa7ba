"""The Perfetto app trace of one simulated app run (pure): app time and remote keys in, trace
bytes out, in the shapes a Roku OS 15.1+ device writes (/work/shared/reference/roku-perfetto.md).

* **Threads** (one track and one packet sequence each): ``RenderThr:Main`` (SceneGraph's render
  thread: it runs the model's render thread, so its component scripts, key handlers and
  observers), ``AuxRenderThread``, the main BrightScript thread (the model's own name for it,
  ``main``) and ``TN:<name>`` for each of the model's Task threads.
* **Render loop** at 60 Hz: a vsync every :data:`FRAME_NS`; at each one the render thread, if
  free, swaps (``swapBuffers``), serves what is queued (``consumeAllTasks``: rendezvous, keys,
  observers) and draws (``render``). Work that keeps it busy past the next vsync makes it miss
  frames: a remote key's render-thread bursts run there as ``ExecBrightScript`` slices of
  exactly the time the ``.bsprof`` charges them (10 ms per walk, times a slower build's
  factor), and the screen they change draws slowly for two frames. An idle app now and then
  draws nothing for a frame (over budget, not missed).
* **Script**: ``ExecBrightScript`` with ``callstack`` = ``"function pkg:/file.brs:line"`` (the
  function's own name, file and definition line from the model, renamed as the build renames
  them) and ``cpu_us`` (from the function's CPU rate: low for a function that mostly waits).
* **Rendezvous**: a Task thread's ``roSGNode.getField`` / ``setField`` (``component``, ``name``,
  ``callstack``) holds a ``Rendezvous`` holding a ``rendezvous-enqueue`` (``flow_ids``); the
  render thread picks it up at its next ``consumeAllTasks`` (``rendezvous-dequeue``,
  ``terminating_flow_ids``), so the latency grows while it is busy. A write fires nested
  ``observer.callback`` slices (``fieldName``, ``function``, ``depth``) there; a read copies
  (``bscCopyToDomainEx`` on the task thread).
* **Keys**: a ``keyEvent`` instant (``key``) where the render thread takes the key; the key's
  bursts on the main thread and on Task threads run there (a Task then writes its result).
* **Exit**: pending rendezvous are served, then an ``ExecBrightScript`` on the main thread
  begins and never ends.

Time: ``ts = clock.boot_ns + app ns`` on BOOTTIME; a clock snapshot pairs it with REALTIME
``clock.wall_ms`` at app time 0 (the ``.bsprof`` header's ``start_ms``). Everything else comes
from the seed: the same run, keys at the same app times, gives the same events however the
run's time is cut into :meth:`TraceGenerator.advance` calls.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

from rokuprof.simulator.app import TICK
from rokuprof.simulator.app_model import AppModel, Burst, Function, Thread
from rokuprof.simulator.app_scopes import MAIN
from rokuprof.simulator.trace_packets import PacketWriter

US = 1_000
MS = 1_000_000
FRAME_NS = round(1e9 / 60)  # 60 Hz vsync
TICK_NS = round(TICK * 1e9)  # the app's scheduling tick: what one walk costs
SLOT_NS = 50 * MS  # a worker thread decides every this often whether it runs
IDLE_SKIP = 0.02  # chance an idle render thread draws nothing at a vsync
SLOW_FRAMES = 2  # frames drawn slowly after a key changed the screen
MAX_TASK_LANES = 56  # Task threads traced (a sequence and a track each)
MAX_QUEUED = 256  # key work items waiting on one thread, and key jobs on the render thread
MAX_DEPTH = 16
NEVER = 1 << 62

RENDER_THREAD, AUX_THREAD, TASK_PREFIX = "RenderThr:Main", "AuxRenderThread", "TN:"
GET, SET = "roSGNode.getField", "roSGNode.setField"
#: Fields a Task reads and writes on its node, and the one its result's observer writes in
#: turn (a cascade). **Open**: the model has no field names; these are the common ones.
TASK_FIELDS, RESULT_FIELD, CASCADE_FIELD = ("control", "state"), "content", "itemFocused"
EXEC, WRITE = "exec", "write"  # worker items: run a function; write the result (setField)


@dataclass(frozen=True)
class TraceClock:
    """Where the trace's times are: BOOTTIME ``boot_ns`` and wall clock ``wall_ms`` at app
    time 0."""

    boot_ns: int
    wall_ms: int


@dataclass(eq=False)
class _Lane:
    """One thread of the trace: its track, sequence, and the work it does."""

    name: str
    seq: int
    track: int
    tid: int
    thread: Thread | None  # the model's thread it runs (None: none)
    rng: random.Random
    free: int = 0  # app ns it is next free
    slot: int = 0  # app ns of its next decision whether to run
    #: key work: (ready app ns, EXEC or WRITE, function, duration ns)
    queue: deque[tuple[int, str, Function, int]] = field(default_factory=deque)
    waiting: bool = False  # blocked in a rendezvous
    result_at: int = NEVER  # app ns a Task's function returns and writes its result


@dataclass(frozen=True)
class _Job:
    """Work queued for the render thread: a key taken (``key``), or ``fn`` run for ``dur``."""

    ready: int  # app ns
    fn: Function | None = None
    dur: int = 0
    key: str = ""


@dataclass(eq=False)
class _Request:
    """A rendezvous queued for the render thread."""

    flow: int
    lane: _Lane
    op: str
    field: str
    ready: int  # app ns it was enqueued


def _ns(seconds: float) -> int:
    return NEVER if math.isinf(seconds) else round(seconds * 1e9)


def _weighted(choices: Iterable[tuple[str, float]], pick: float) -> str:
    last = ""
    for name, weight in choices:
        if pick < weight:
            return name
        pick -= weight
        last = name
    return last


class TraceGenerator:
    """One run's trace; see the module's notes. Nothing is written until :meth:`restart` (a
    client connected), and nothing after :meth:`pause`: the events go on being made."""

    def __init__(
        self,
        model: AppModel,
        clock: TraceClock,
        *,
        seed: str,
        run_index: int = 0,
        app_name: str = "dev",
        names: Iterable[tuple[str, str]] = (),
        slower: Iterable[tuple[str, float]] = (),
    ) -> None:
        self.model, self.clock, self.app_name = model, clock, app_name
        self.writer = PacketWriter()
        self.writer.enabled = False
        self.keys = 0  # keys taken
        self._names = dict(names)
        shown = model.keys_by_shown()
        self._slower = {k: f for name, f in slower for k in shown.get(name, (name,))}
        self._rng = random.Random(f"{seed}:render")
        base = 64 * (run_index % 256)
        self._process_seq, self._process = base + 1, ((run_index + 1) << 6) + 1
        self._pid = 2000 + run_index % 30000
        threads = {t.name: t for t in model.threads}
        main = threads.get(MAIN)
        render = threads.get(model.render_thread) if model.render_thread else None
        tasks = [t for t in model.threads if t is not main and t is not render]
        names_ = [RENDER_THREAD, AUX_THREAD, main.name if main else MAIN]
        names_ += [TASK_PREFIX + t.name for t in tasks[:MAX_TASK_LANES]]
        bound = [render, None, main, *tasks[:MAX_TASK_LANES]]
        self._lanes = [
            _Lane(name, base + 2 + k, self._process + 1 + k, self._pid + 1 + k, thread, rng)
            for k, (name, thread) in enumerate(zip(names_, bound, strict=True))
            for rng in [random.Random(f"{seed}:{name}")]
        ]
        self._render, self._aux, self._main = self._lanes[:3]
        self._workers = self._lanes[2:]  # main and the Tasks
        self._by_thread = {lane.thread.name: lane for lane in self._workers if lane.thread}
        for lane in self._lanes[3:]:  # a Task that runs from the start writes its result at end
            assert lane.thread is not None
            if lane.thread.starts_at < lane.thread.stops_at < math.inf:
                lane.result_at = _ns(lane.thread.stops_at)
        self._main_root = self._function(main.root) if main else None
        roots = (render.roots or ((render.root, 1.0),)) if render else ()
        self._observers = [self._function(r) for r, _ in roots if r in model.all_functions]
        self._inits = [f for f in self._observers if (f.shown or f.name) == "init"]
        self._observers = [f for f in self._observers if f not in self._inits] or self._observers
        self._jobs: deque[_Job] = deque()
        self._requests: list[_Request] = []
        self._flows = itertools.count(1)
        self._vsync = 0
        self._frames = 0
        self._slow = 0
        self._launched = False

    # -- public ------------------------------------------------------------------------------

    def restart(self, at: float) -> None:
        """A client joins at app time ``at``: from here the trace is written, starting with
        the clock snapshot and the thread tracks, every sequence's names interned again."""
        w = self.writer
        w.enabled = True
        w.restart()
        at_ns = _ns(at)
        seq = self._process_seq
        w.clock_snapshot(seq, self.clock.boot_ns + at_ns, self.clock.wall_ms * MS + at_ns)
        w.process(seq, self._process, self._pid, self.app_name)
        for lane in self._lanes:
            w.thread(lane.seq, lane.track, self._process, self._pid, lane.tid, lane.name)

    def pause(self) -> None:
        """No client: what the run traces from here is lost."""
        self.writer.enabled = False

    def key(self, at: float, key: str, bursts: Iterable[Burst]) -> None:
        """The app took remote ``key`` at app time ``at`` (no earlier than the last
        :meth:`advance`) and ran ``bursts`` for it."""
        self.keys += 1
        ready = _ns(at)
        render = self.model.render_thread
        if len(self._jobs) < MAX_QUEUED:
            self._jobs.append(_Job(ready, key=key))
        tasks: dict[str, Function] = {}  # the Tasks the key runs, and their last function
        for burst in bursts:
            fn = self._function(burst.path[-1])
            dur = round(burst.walks * TICK_NS * self._slower.get(fn.name, 1.0))
            if burst.thread == render and len(self._jobs) < MAX_QUEUED:
                self._jobs.append(_Job(ready, fn, dur))
            lane = self._by_thread.get(burst.thread)
            if lane is not None and len(lane.queue) < MAX_QUEUED:
                lane.queue.append((ready, EXEC, fn, dur))
                if lane is not self._main:
                    tasks[burst.thread] = fn
        for name, fn in tasks.items():  # each Task then writes its result
            self._by_thread[name].queue.append((ready, WRITE, fn, 0))

    def advance(self, until: float) -> bytes:
        """The trace up to app time ``until``: the bytes written (none while paused)."""
        self._run(_ns(until))
        return self.writer.take()

    def finish(self, at: float) -> bytes:
        """The app exits at app time ``at``: the rest of the trace, ending with a slice that
        never ends."""
        end = _ns(at)
        self._run(end)
        if self._requests:  # the render thread serves what is queued before the app goes
            r = self._render
            t = max(r.free, *(q.ready for q in self._requests))
            t = self._consume(t, self._take_requests(NEVER), ())
            r.free = t
        m = self._main
        root = self._main_root or self._function(self.model.threads[0].root)
        args = {"callstack": self._stack(root)}
        self.writer.begin(m.seq, self._ts(max(m.free, end)), m.track, "ExecBrightScript", args)
        return self.writer.take()

    # -- the render thread -------------------------------------------------------------------

    def _run(self, end: int) -> None:
        if not self._launched:
            self._launched = True
            rng = self._render.rng
            self._jobs.extend(_Job(0, f, rng.randint(500 * US, 2 * MS)) for f in self._inits[:8])
        while self._vsync <= end:
            v = self._vsync
            for lane in self._workers:
                self._run_lane(lane, v)
            self._frame(v)
            after = max(v + FRAME_NS, self._render.free)
            self._vsync = -(-after // FRAME_NS) * FRAME_NS
        for lane in self._workers:
            self._run_lane(lane, end)

    def _frame(self, v: int) -> None:
        r, aux, rng, w = self._render, self._aux, self._rng, self.writer
        swap_end = v + rng.randint(800 * US, 2500 * US)
        requests = self._take_requests(swap_end)
        jobs = []
        while self._jobs and self._jobs[0].ready <= swap_end:
            jobs.append(self._jobs.popleft())
        if r.thread is not None and rng.random() < r.thread.busy * 0.5:  # its own script
            jobs.append(_Job(v, self._leaf(r.thread, rng, v), rng.randint(1, 5) * MS))
        if not requests and not jobs and not self._slow and rng.random() < IDLE_SKIP:
            r.free = v  # nothing to draw
            return
        self._frames += 1
        w.slice(r.seq, self._ts(v), self._ts(swap_end), r.track, "swapBuffers")
        if self._frames % 2:  # the aux thread takes every other frame's submission
            a = v + 50 * US
            w.slice(
                aux.seq, self._ts(a), self._ts(a + rng.randint(200, 600) * US), aux.track, "render"
            )
        t = self._consume(swap_end, requests, jobs) if requests or jobs else swap_end
        draw = rng.randint(1500 * US, 4000 * US)
        if self._slow:
            self._slow -= 1
            draw += rng.randint(4 * MS, 14 * MS)
        w.slice(r.seq, self._ts(t), self._ts(t + draw), r.track, "render")
        r.free = t + draw

    def _consume(self, t: int, requests: list[_Request], jobs: Iterable[_Job]) -> int:
        """``consumeAllTasks`` from ``t``: rendezvous served, then keys and script; its end."""
        r, w = self._render, self.writer
        w.begin(r.seq, self._ts(t), r.track, "consumeAllTasks")
        t += 20 * US
        for request in requests:
            t = self._serve(request, t)
        for job in jobs:
            if job.fn is not None:
                t = self._exec(r, t, job.fn, job.dur) + 10 * US
            else:
                w.instant(r.seq, self._ts(t), r.track, "keyEvent", {"key": job.key})
                self._slow = SLOW_FRAMES
        t += 20 * US
        w.end(r.seq, self._ts(t), r.track)
        return t

    def _take_requests(self, by: int) -> list[_Request]:
        due = sorted((q for q in self._requests if q.ready <= by), key=lambda q: q.ready)
        self._requests = [q for q in self._requests if q.ready > by]
        return due

    def _serve(self, request: _Request, t: int) -> int:
        """The render thread picks up ``request`` at ``t`` and runs it; the caller goes on."""
        r, w, rng = self._render, self.writer, self._rng
        flows = (request.flow,)
        w.slice(
            r.seq,
            self._ts(t),
            self._ts(t + 30 * US),
            r.track,
            "rendezvous-dequeue",
            None,
            (),
            flows,
        )
        t += 30 * US
        if request.op == SET and self._observers:
            t = self._observer(t, request.field, 1)
        else:
            t += rng.randint(100 * US, 600 * US)
        lane = request.lane
        w.end(lane.seq, self._ts(t), lane.track)  # the Rendezvous
        done = t + 5 * US
        if request.op == GET:
            copy = done + lane.rng.randint(50 * US, 400 * US)
            w.slice(lane.seq, self._ts(done), self._ts(copy), lane.track, "bscCopyToDomainEx")
            done = copy + 5 * US
        w.end(lane.seq, self._ts(done), lane.track)  # the field operation
        lane.free, lane.waiting = done, False
        return t

    def _observer(self, t: int, field_name: str, depth: int) -> int:
        """An ``observer.callback`` at ``t`` (and, sometimes, the one its write fires)."""
        r, w, rng = self._render, self.writer, self._rng
        fn = self._observers[rng.randrange(len(self._observers))]
        args = {"fieldName": field_name, "function": self._shown(fn), "depth": depth}
        w.begin(r.seq, self._ts(t), r.track, "observer.callback", args)
        t = self._exec(r, t + 10 * US, fn, rng.randint(300 * US, 3 * MS))
        if depth < 3 and rng.random() < 0.6:
            t = self._observer(t + 10 * US, CASCADE_FIELD, depth + 1)
        t += 10 * US
        w.end(r.seq, self._ts(t), r.track)
        return t

    # -- the main thread and the Tasks -------------------------------------------------------

    def _run_lane(self, lane: _Lane, until: int) -> None:
        """``lane``'s work that starts before ``until``: key work first when due, else its own
        (in slots), until it blocks in a rendezvous."""
        while not lane.waiting:
            item = lane.queue[0] if lane.queue else None
            at_item = max(lane.free, item[0]) if item else NEVER
            at_own = self._own_start(lane)
            at_result = max(lane.free, lane.result_at) if lane.result_at < NEVER else NEVER
            start = min(at_item, at_own, at_result)
            if start >= until:
                return
            if at_result == start < min(at_item, at_own):
                lane.result_at = NEVER
                assert lane.thread is not None
                root = self._function(lane.thread.root)
                self._rendezvous(lane, start, SET, RESULT_FIELD, root)
                continue
            if item is not None and at_item <= at_own:
                lane.queue.popleft()
                _, kind, fn, dur = item
                if kind == EXEC:
                    lane.free = self._exec(lane, start, fn, dur)
                else:
                    self._rendezvous(lane, start, SET, RESULT_FIELD, fn)
                continue
            lane.slot = start + SLOT_NS
            thread = lane.thread
            assert thread is not None
            if lane.rng.random() >= thread.busy:
                continue
            fn = self._leaf(thread, lane.rng, start)
            if lane is not self._main and lane.rng.random() < 0.25:
                if lane.rng.random() < 0.7:
                    name = TASK_FIELDS[lane.rng.randrange(len(TASK_FIELDS))]
                    self._rendezvous(lane, start, GET, name, fn)
                else:
                    self._rendezvous(lane, start, SET, RESULT_FIELD, fn)
                continue
            dur = round(lane.rng.randint(2, 12) * MS * self._slower.get(fn.name, 1.0))
            lane.free = self._exec(lane, start, fn, dur)

    def _own_start(self, lane: _Lane) -> int:
        """When ``lane`` next decides to run its own work (:data:`NEVER`: it does not)."""
        thread = lane.thread
        if thread is None or thread.busy <= 0:
            return NEVER
        start, stop = _ns(thread.starts_at), _ns(thread.stops_at)
        at = max(lane.slot, lane.free, start)
        return at if at < stop else NEVER

    def _rendezvous(self, lane: _Lane, t: int, op: str, field_name: str, fn: Function) -> None:
        """``lane`` reads or writes a field of its node at ``t`` and blocks until served."""
        w, flow = self.writer, next(self._flows)
        component = lane.thread.name if lane.thread else lane.name
        args = {"component": component, "name": field_name, "callstack": self._stack(fn)}
        w.begin(lane.seq, self._ts(t), lane.track, op, args)
        w.begin(lane.seq, self._ts(t + 10 * US), lane.track, "Rendezvous")
        enq, ready = self._ts(t + 20 * US), t + 40 * US
        w.slice(lane.seq, enq, self._ts(ready), lane.track, "rendezvous-enqueue", None, (flow,))
        lane.free, lane.waiting = ready, True
        self._requests.append(_Request(flow, lane, op, field_name, ready))

    # -- script --------------------------------------------------------------------------------

    def _exec(self, lane: _Lane, t: int, fn: Function, dur: int) -> int:
        """An ``ExecBrightScript`` of ``fn`` from ``t`` for ``dur`` ns; its end."""
        share = min(0.98, 0.35 + 0.3 * fn.ops_per_us) * lane.rng.uniform(0.9, 1.0)
        args = {"callstack": self._stack(fn), "cpu_us": int(dur * share / US)}
        self.writer.slice(
            lane.seq, self._ts(t), self._ts(t + dur), lane.track, "ExecBrightScript", args
        )
        return t + dur

    def _leaf(self, thread: Thread, rng: random.Random, at: int) -> Function:
        """Where a walk of ``thread``'s call graph from one of its roots stops."""
        roots = thread.roots or ((thread.root, 1.0),)
        fn = self._function(_weighted(roots, rng.random() * sum(w for _, w in roots)))
        functions = self.model.all_functions
        for _ in range(MAX_DEPTH):
            callees = [
                (n, w)
                for n, w in fn.callees
                if n in functions and _ns(functions[n].appears_after) <= at
            ]
            pick = rng.random() * (fn.stay + sum(w for _, w in callees))
            if not callees or pick < fn.stay:
                break
            fn = functions[_weighted(callees, pick - fn.stay)]
        return fn

    def _function(self, key: str) -> Function:
        fn = self.model.all_functions.get(key)
        return fn if fn is not None else Function(key, "pkg:/source/main.brs", 1)

    def _shown(self, fn: Function) -> str:
        name = fn.shown or fn.name
        return self._names.get(name, name)

    def _stack(self, fn: Function) -> str:
        return f"{self._shown(fn)} {self._names.get(fn.file, fn.file)}:{fn.line}"

    def _ts(self, app_ns: int) -> int:
        return self.clock.boot_ns + app_ns
