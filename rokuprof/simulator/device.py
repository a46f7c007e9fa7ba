"""The simulated Roku: SSDP, ECP, debug console and the profiler stream of each app run."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from rokuprof.bsprof.encoder import encode_entries
from rokuprof.bsprof.grammar import END_MARKER, build_footer, build_header
from rokuprof.bsprof.model import Footer
from rokuprof.device.constants import PROFILER_PATH
from rokuprof.simulator import console, ecp, ssdp
from rokuprof.simulator.app import TICK, SyntheticApp
from rokuprof.simulator.app_tracing import AppTracing
from rokuprof.simulator.cafe_tv import CAFE_TV
from rokuprof.simulator.chanperf import AppVitals
from rokuprof.simulator.config import DeviceConfig, Fault
from rokuprof.simulator.http import BadRequest, read_request, response, response_head
from rokuprof.simulator.installer import Installer
from rokuprof.simulator.replay import SEND_BUFFER, replay_stream
from rokuprof.simulator.runs import (
    ABORTED,
    COMPLETE,
    EXITED,
    STREAMING,
    WAITING,
    RunRecord,
)
from rokuprof.simulator.stream import StreamOutput
from rokuprof.simulator.tcp import PEER_ERRORS, TcpService, close_writer

log = logging.getLogger(__name__)


PROFILER_HEAD = {"Content-Type": "application/octet-stream", "Connection": "close"}


async def refuse_second_client(writer: asyncio.StreamWriter) -> None:
    """The one place that decides how a second profiler client is refused while a run's stream
    is taken (the reference leaves it open): ``503 Service Unavailable``, then close."""
    body = b"profiler client already connected\n"
    headers = {"Content-Type": "text/plain", "Retry-After": "1"}
    writer.write(response(503, body, headers, keep_alive=False))
    with contextlib.suppress(*PEER_ERRORS):
        await writer.drain()


def _wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::")


@dataclass
class _Run:
    """A run in progress: its record, its app and the events that steer it."""

    record: RunRecord
    app: SyntheticApp
    rng: random.Random
    claimed: asyncio.Future = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    exit_reason: str | None = None
    cut_request: bool | None = None  # reset? when a cut was asked for
    cut_done: asyncio.Event = field(default_factory=asyncio.Event)
    output: StreamOutput | None = None
    task: asyncio.Task | None = None
    t0: float | None = None  # monotonic time at app time 0 (once the app runs)


class SimulatedDevice:
    """A fake Roku on any address and ports. Use as ``async with SimulatedDevice(cfg) as dev``.

    Bound ports: ``ssdp_port``, ``ecp_port``, ``profiler_port``, ``console_port``. Runs are in
    ``runs`` (a list of :class:`~rokuprof.simulator.runs.RunRecord`).
    """

    def __init__(self, config: DeviceConfig | None = None, **overrides) -> None:
        self.config = replace(config or DeviceConfig(), **overrides)
        self.runs: list[RunRecord] = []
        self.console_log: list[str] = []  # the [scrpt.prof.*] lines a port-8085 console shows
        #: "METHOD /path" of the last ECP requests answered (bounded: a simulator may run for weeks)
        self.ecp_requests: deque[str] = deque(maxlen=1024)
        #: (monotonic, kind, value) of the remote requests that took effect (simulator/remote.py)
        self.remote_log: deque[tuple[float, str, str]] = deque(maxlen=1024)
        self.ecp_mode = self.config.ecp_mode
        self.ssdp_port = self.ecp_port = self.profiler_port = self.console_port = 0
        self.installer_port = 0
        self.installed: dict[str, str] | None = None  # the sideloaded app's manifest, if any
        self._installer = Installer(self)  # sideloading, the installed manifest, local mode
        self.password = self._installer.password  # the developer password (a test fixture)
        self.started_at = self.config.monotonic()
        self.tracing = AppTracing(self.config, self.started_at, self._notify)  # Roku OS 15.1+
        self._faults: list[Fault] = list(self.config.faults)
        self._current: _Run | None = None
        self._tasks: set[asyncio.Task] = set()
        self._changed = asyncio.Event()
        self._ecp = TcpService("ecp", lambda r, w: ecp.serve(self, r, w))
        self._console = TcpService("console", lambda r, w: console.serve(self, r, w))
        self._ssdp: asyncio.DatagramTransport | None = None
        self._profiler_sock: socket.socket | None = None  # bound; listening only during a run
        self._raw_conns: set[socket.socket] = set()  # accepted, not yet owned by a transport
        self._listening = False
        self._auto_task: asyncio.Task | None = None
        self._running = False

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> SimulatedDevice:
        await self.start()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.stop()

    async def start(self) -> None:
        cfg = self.config
        try:
            self._profiler_sock = self._bind_profiler(cfg.profiler_port)
            self.profiler_port = self._profiler_sock.getsockname()[1]
            self.ecp_port = await self._ecp.start(cfg.host, cfg.ecp_port)
            self.console_port = await self._console.start(cfg.host, cfg.console_port)
            self.installer_port = await self._installer.start(cfg.host, cfg.installer_port)
            self._ssdp, self.ssdp_port = await ssdp.start(self)
        except BaseException:
            await self.stop()
            raise
        self._running = True
        if cfg.auto_launch and (cfg.runs is None or cfg.runs > 0):
            await self.launch()  # listening by the time start() returns
            self._auto_task = self._spawn(self._auto_loop())

    async def stop(self) -> None:
        """Exit a running app (its stream ends normally), then close every socket."""
        self._running = False
        if self._auto_task is not None:
            self._auto_task.cancel()
        run = self._current
        if run is not None:
            self.exit_run(run, "stop")
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(asyncio.shield(run.task), 2.0)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for conn in self._raw_conns:  # accepted, but their tasks were cancelled before starting
            conn.close()
        self._raw_conns.clear()
        self._unlisten()
        self._close_profiler_sock()
        await self.tracing.stop()
        if self._ssdp is not None:
            self._ssdp.close()
            self._ssdp = None
        await self._ecp.stop()
        await self._console.stop()
        await self._installer.stop()
        self._notify()

    # -- public controls ---------------------------------------------------------------------

    @property
    def current(self) -> RunRecord | None:
        """The active run (waiting for its client or streaming), if any."""
        return self._current.record if self._current else None

    @property
    def advertise_host(self) -> str:
        cfg = self.config
        if cfg.advertise_host:
            return cfg.advertise_host
        return "127.0.0.1" if _wildcard(cfg.host) else cfg.host

    @property
    def limited(self) -> bool:
        return self.ecp_mode == "limited"

    def set_limited(self, limited: bool = True) -> None:
        """Switch ECP into (or out of) limited mode ("Control by mobile apps")."""
        self.ecp_mode = "limited" if limited else "enabled"

    def add_fault(self, fault: Fault) -> None:
        """Add a fault for later streams (or the current one, if it applies to its run)."""
        self._faults.append(fault)
        run = self._current
        if run is not None and run.output is not None and fault.run in (None, run.record.index):
            run.output.faults = sorted([*run.output.faults, fault], key=lambda f: f.after_bytes)

    def clear_faults(self) -> None:
        self._faults.clear()

    async def launch(self) -> RunRecord:
        """Launch the dev app (like ``POST /launch/dev``); no-op if one is running."""
        if self._current is not None:
            return self._current.record
        index = len(self.runs)
        cfg = self.config
        app = SyntheticApp(cfg.app_config(index), model=self._installer.model or CAFE_TV)
        app.paused = cfg.pause_on_start
        record = RunRecord(index, cfg.monotonic(), cfg.clock())
        run = _Run(record, app, cfg.stream_rng(index))
        self.runs.append(record)
        self._current = run
        if not self._installer.start_run(run):  # True: the installed app streams nothing here
            self._listen()
            self._say(
                "[scrpt.prof.connect.wait] Waiting for connection to "
                f"http://{self.advertise_host}:{self.profiler_port}{PROFILER_PATH}"
            )
        run.task = self._spawn(self._execute(run))
        self._notify()
        return record

    async def home(self, reason: str = "home") -> bool:
        """Press Home: the running app exits (its stream ends normally). False if none ran."""
        run = self._current
        if run is None:
            return False
        self.exit_run(run, reason)
        # Wait for the stream to end (bounded: a client that does not read must not hang us).
        with contextlib.suppress(asyncio.CancelledError, TimeoutError):
            await asyncio.wait_for(asyncio.shield(run.task), 2.0)
        return True

    def press(self, key: str) -> None:
        """Hand ``key`` to the running app at its app time now (before it streams: time 0)."""
        run = self._current
        if run is not None:
            now = 0.0 if run.t0 is None else (self.config.monotonic() - run.t0) * self.config.speed
            run.app.press(key, now)

    async def cut(self, reset: bool = False) -> bool:
        """Drop the current profiler connection now (RST if ``reset``, else FIN); the app keeps
        running. False when no stream is connected."""
        run = self._current
        if run is None or run.output is None or not run.output.alive:
            return False
        run.cut_request = reset
        run.cut_done.clear()
        run.wake.set()
        await run.cut_done.wait()
        return True

    def pause(self) -> bool:
        """``bsprof-pause``; False when no profiling session runs."""
        if self._current is None:
            return False
        self._current.app.paused = True
        return True

    def resume(self) -> bool:
        if self._current is None:
            return False
        self._current.app.paused = False
        return True

    def profiling_status(self) -> str | None:
        """The ``bsprof-status`` reply, or None when no profiled app runs."""
        run = self._current
        if run is None or self._installer.dest == "off":
            return None
        cfg = self.config
        metrics = (
            ["cpu"] + (["mem"] if cfg.memory_ops else []) + (["lines"] if cfg.line_data else [])
        )
        state = "paused" if run.app.paused else "running"
        return f"status: {state},{','.join(metrics)},data_dest={self._installer.dest}"

    def app_clock(self) -> float | None:
        """App seconds of the current run (None when no app runs)."""
        return self._current.app.clock if self._current else None

    def app_vitals(self) -> AppVitals | None:
        """What ``chanperf`` reports (None when no synthetic app runs)."""
        return getattr(self._current.app, "vitals", None) if self._current else None

    def sent_bytes(self, run_index: int) -> bytes:
        """Exactly the stream bytes sent on run ``run_index``'s connection (no HTTP head)."""
        return bytes(self.runs[run_index].data)

    async def wait_until(self, predicate: Callable[[], bool], timeout: float | None) -> None:
        """Wait (at most ``timeout`` seconds) until ``predicate()`` holds; re-checked on every
        state change of the device."""
        async with asyncio.timeout(timeout):
            while not predicate():
                event = self._changed
                await event.wait()

    async def wait_idle(self, timeout: float) -> None:
        """Wait until no app runs and the device will not launch one by itself."""
        await self.wait_until(self.idle, timeout)

    def idle(self) -> bool:
        auto_done = self._auto_task is None or self._auto_task.done()
        return self._current is None and auto_done

    async def wait_listening(self, timeout: float) -> RunRecord:
        """Wait until a launched app waits for its profiler client; return its run."""
        await self.wait_until(
            lambda: self.current is not None and self.current.status == WAITING, timeout
        )
        assert self.current is not None
        return self.current

    async def wait_run_end(self, index: int, timeout: float) -> RunRecord:
        """Wait until run ``index`` exists and has ended."""
        await self.wait_until(
            lambda: len(self.runs) > index and not self.runs[index].active, timeout
        )
        return self.runs[index]

    # -- internals: runs ---------------------------------------------------------------------

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _notify(self) -> None:
        event, self._changed = self._changed, asyncio.Event()
        event.set()

    def _say(self, line: str) -> None:
        self.console_log.append(line)
        log.debug("%s: %s", self.config.serial, line)

    def exit_run(self, run: _Run, reason: str) -> None:
        """``run`` exits for ``reason`` (its stream ends with the end marker and footer)."""
        if run.exit_reason is None:
            run.exit_reason = reason
        run.wake.set()

    async def _auto_loop(self) -> None:
        cfg = self.config
        while cfg.runs is None or len(self.runs) < cfg.runs:
            run = self._current
            if run is None:
                await self.launch()
                run = self._current
            if run is not None and run.task is not None:
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(run.task)
            if cfg.runs is not None and len(self.runs) >= cfg.runs:
                break
            await asyncio.sleep(cfg.run_gap)
        self._notify()

    async def _execute(self, run: _Run) -> None:
        record = run.record
        try:
            while not run.claimed.done() and run.exit_reason is None:
                run.wake.clear()
                waiter = asyncio.ensure_future(run.wake.wait())
                try:
                    await asyncio.wait([run.claimed, waiter], return_when=asyncio.FIRST_COMPLETED)
                finally:
                    waiter.cancel()
            if run.claimed.done():
                reader, writer = run.claimed.result()
                await self._stream(run, reader, writer)
            else:
                record.status = EXITED
        except asyncio.CancelledError:
            record.status = ABORTED
            if run.output is not None:
                await run.output.abort()
            raise
        except Exception:
            log.exception("%s: run %d failed", self.config.serial, record.index)
            record.status = ABORTED
            if run.output is not None:
                await run.output.abort()
        finally:
            record.exit_reason = record.exit_reason or run.exit_reason
            record.ended_at = self.config.monotonic()
            record.app_seconds = run.app.clock
            if not run.claimed.done():
                run.claimed.cancel()
            self._unlisten()
            if self._current is run:
                self._current = None
            run.cut_done.set()
            self._notify()

    async def _stream(self, run: _Run, reader, writer: asyncio.StreamWriter) -> None:
        cfg = self.config
        record, app = run.record, run.app
        line_data = app.config.line_data
        record.connected_at = cfg.monotonic()
        record.connected_wall = cfg.clock()
        record.client = writer.get_extra_info("peername")[:2]
        record.status = STREAMING
        self._say("[scrpt.prof.connect.ok] profiler connected")
        self._notify()
        writer.write(response_head(200, PROFILER_HEAD))
        faults = [f for f in self._faults if f.run in (None, record.index)]
        out = run.output = StreamOutput(
            writer,
            record,
            faults,
            run.rng,
            clock=cfg.monotonic,
            max_pieces=cfg.max_pieces,
            keep_bytes=cfg.keep_bytes,
        )
        record.start_ms = int(cfg.clock() * 1000)
        if cfg.replay is not None:
            await self._replay(run, out)
            return
        header = app.header(record.start_ms)
        size = len(build_header(header))
        await out.send(build_header(header, size + app.config.header_padding), split=False)
        t0 = run.t0 = cfg.monotonic()
        trace = self.tracing.run_started(record, app, t0)  # does nothing when not traced
        low, high = cfg.burst_ticks
        crash = cfg.crash_after is not None and cfg.crash_after <= cfg.run_seconds
        length = cfg.crash_after if crash else cfg.run_seconds
        while run.exit_reason is None:
            remaining = length - app.clock
            if remaining < TICK - 1e-9:
                run.exit_reason = "crash" if crash else "run-length"
                break
            step = min(run.rng.randint(low, high) * TICK, remaining)
            await self._wait(run, t0 + (app.clock + step) / cfg.speed)
            if run.exit_reason is not None:
                break
            entries = app.advance(step)
            trace.step(app.clock)
            record.entries += len(entries)
            await out.send(encode_entries(entries, line_data))
        # A crashed app never flushes its pending CPU and call counts.
        entries = [] if run.exit_reason == "crash" else app.finish()
        trace.finish(app.clock)
        record.entries += len(entries)
        await out.send(encode_entries(entries, line_data))
        await self._end_stream(run, out)

    async def _end_stream(self, run: _Run, out: StreamOutput) -> None:
        """The app exited: stop listening, then end marker and footer, and close."""
        record = run.record
        self._unlisten()  # nothing listens once the app is gone
        self._say("[scrpt.prof.save.ok] Profiling data complete, sent via network")
        await out.hold_until_resumed()
        if run.cut_request is not None:  # asked for while the app was exiting
            await out.cut(run.cut_request)
        record.end_ms = record.start_ms + round(run.app.clock * 1000)
        if out.state == "open":
            await out.send(END_MARKER + build_footer(Footer(record.end_ms)))
            if out.state == "open":
                record.status = COMPLETE
        await out.close()

    async def _replay(self, run: _Run, out: StreamOutput) -> None:
        """A replay run: header, the shared body on schedule, end marker and footer."""
        cfg, record = self.config, run.record
        assert cfg.replay is not None
        sock = out.writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER)
        await out.send(cfg.replay.stream_header(record.start_ms), split=False)
        t0 = cfg.monotonic()

        async def wait_until(deadline: float) -> bool:
            await self._wait(run, deadline)
            run.app.clock = cfg.monotonic() - t0  # a replayed app runs in real time
            return run.exit_reason is None

        await replay_stream(
            record,
            cfg.replay,
            lambda piece: out.send(piece, split=False),
            wait_until,
            rate=cfg.replay_rate,
            tick=cfg.replay_tick,
            clock=cfg.monotonic,
        )
        run.app.clock = cfg.monotonic() - t0
        run.exit_reason = run.exit_reason or "run-length"
        await self._end_stream(run, out)

    async def _wait(self, run: _Run, deadline: float) -> None:
        """Sleep until ``deadline`` (the config's monotonic clock), serving cut requests; return
        early on exit."""
        while run.exit_reason is None:
            if run.cut_request is not None and run.output is not None:
                await run.output.cut(run.cut_request)
                run.cut_request = None
                run.cut_done.set()
            delay = deadline - self.config.monotonic()
            if delay <= 0:
                return
            run.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(run.wake.wait(), delay)

    # -- internals: the profiler listener ----------------------------------------------------

    def _bind_profiler(self, port: int) -> socket.socket:
        """A bound, not listening socket: it holds the port while connects are refused."""
        host = self.config.host
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        return sock

    def _listen(self) -> None:
        if self._listening:
            return
        if self._profiler_sock is None:
            self._profiler_sock = self._bind_profiler(self.profiler_port)
        sock = self._profiler_sock
        sock.listen(8)
        self._listening = True
        asyncio.get_running_loop().add_reader(sock.fileno(), self._accept, sock)

    def _unlisten(self) -> None:
        """Close the listening socket (connects are refused again) and bind a fresh, not
        listening one on the same port while the device runs."""
        if not self._listening:
            return
        self._listening = False
        self._close_profiler_sock()
        if self._running:
            self._profiler_sock = self._bind_profiler(self.profiler_port)

    def _close_profiler_sock(self) -> None:
        sock, self._profiler_sock = self._profiler_sock, None
        if sock is None:
            return
        with contextlib.suppress(Exception):
            asyncio.get_running_loop().remove_reader(sock.fileno())
        sock.close()

    def _accept(self, sock: socket.socket) -> None:
        """Reader callback of the listening socket: take every pending connection. (A plain
        callback, not a task awaiting ``sock_accept``: a cancelled task could lose a socket
        it had just accepted.)"""
        for _ in range(16):
            try:
                conn, _ = sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                log.warning("%s: profiler accept failed", self.config.serial, exc_info=True)
                return
            conn.setblocking(False)
            self._raw_conns.add(conn)
            self._spawn(self._profiler_client(conn))

    async def _profiler_client(self, conn: socket.socket) -> None:
        try:
            reader, writer = await asyncio.open_connection(sock=conn)
        except BaseException:
            conn.close()
            raise
        finally:
            self._raw_conns.discard(conn)
        handed_over = False
        try:
            request = await read_request(reader, self.config.request_timeout)
            if request is None:
                return
            if request.path != PROFILER_PATH:
                writer.write(response(404, b"not found\n", {}, keep_alive=False))
                return
            if request.method != "GET":
                writer.write(response(405, b"method not allowed\n", {"Allow": "GET"}, False))
                return
            run = self._current
            if run is None or run.claimed.done():
                if run is not None:
                    run.record.refused += 1
                await refuse_second_client(writer)
                return
            run.claimed.set_result((reader, writer))
            handed_over = True
        except (BadRequest, *PEER_ERRORS):
            return
        finally:
            if not handed_over:
                with contextlib.suppress(*PEER_ERRORS):
                    await writer.drain()
                await close_writer(writer)
