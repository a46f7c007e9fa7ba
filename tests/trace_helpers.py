"""Perfetto app traces for the tests, written with Google's compiled protos (not rokuprof's
reader): the shapes Roku's own synthetic traces take. A :class:`TraceWriter` writes thread
tracks and slices with plain names, or with interned names (as the Perfetto SDK does); an
older build is the same events without the later arguments (``cpu_us``, ``depth``, ``id``).

Times are given in milliseconds from the trace's start and written as nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

MS = 1_000_000
BEGIN, END, INSTANT = pb.TrackEvent.TYPE_SLICE_BEGIN, pb.TrackEvent.TYPE_SLICE_END, 3
SEQ = 7


@dataclass
class TraceWriter:
    """Packets written in order; :meth:`data` is the trace file's bytes."""

    interned: bool = False
    base_ns: int = 5_000_000_000
    packets: list[bytes] = field(default_factory=list)
    _names: dict[str, int] = field(default_factory=dict)
    _arg_names: dict[str, int] = field(default_factory=dict)
    _first: bool = True

    def _packet(self, p: pb.TracePacket) -> None:
        p.trusted_packet_sequence_id = SEQ
        if self.interned:
            if self._first:
                p.sequence_flags = 1 | 2  # cleared, and needs it
                self._first = False
            else:
                p.sequence_flags = 2
        trace = pb.Trace()
        trace.packet.append(p)
        self.packets.append(trace.SerializeToString())

    def thread(self, uuid: int, tid: int, name: str) -> None:
        p = pb.TracePacket()
        p.track_descriptor.uuid = uuid
        p.track_descriptor.thread.pid = 1
        p.track_descriptor.thread.tid = tid
        p.track_descriptor.thread.thread_name = name
        self._packet(p)

    def clock(self, boottime_ms: float, realtime_ms: float) -> None:
        p = pb.TracePacket()
        for clock_id, ms in ((6, boottime_ms), (1, realtime_ms)):
            c = p.clock_snapshot.clocks.add()
            c.clock_id, c.timestamp = clock_id, int(ms * MS)
        self._packet(p)

    def event(
        self,
        kind: int,
        at_ms: float,
        track: int,
        name: str | None = None,
        args: dict[str, object] | None = None,
        flows: tuple[int, ...] = (),
        ends_flows: tuple[int, ...] = (),
    ) -> None:
        p = pb.TracePacket()
        p.timestamp = self.base_ns + round(at_ms * MS)
        ev = p.track_event
        ev.type = kind
        ev.track_uuid = track
        if name is not None:
            if self.interned:
                ev.name_iid = self._iid(p, self._names, name, "event_names")
            else:
                ev.name = name
        for key, value in (args or {}).items():
            a = ev.debug_annotations.add()
            if self.interned:
                a.name_iid = self._iid(p, self._arg_names, key, "debug_annotation_names")
            else:
                a.name = key
            if isinstance(value, bool):
                a.bool_value = value
            elif isinstance(value, int):
                a.int_value = value
            elif isinstance(value, float):
                a.double_value = value
            else:
                a.string_value = str(value)
        ev.flow_ids.extend(flows)
        ev.terminating_flow_ids.extend(ends_flows)
        self._packet(p)

    def _iid(self, p: pb.TracePacket, table: dict[str, int], name: str, kind: str) -> int:
        iid = table.get(name)
        if iid is None:
            iid = table[name] = len(table) + 1
            entry = getattr(p.interned_data, kind).add()
            entry.iid, entry.name = iid, name
        return iid

    def begin(self, at_ms: float, track: int, name: str, **kw) -> None:
        self.event(BEGIN, at_ms, track, name, **kw)

    def end(self, at_ms: float, track: int, **kw) -> None:
        self.event(END, at_ms, track, **kw)

    def slice(self, start_ms: float, end_ms: float, track: int, name: str, **kw) -> None:
        """A slice with nothing inside it written between its begin and end."""
        self.begin(start_ms, track, name, **kw)
        self.end(end_ms, track)

    def data(self) -> bytes:
        return b"".join(self.packets)


RENDER, AUX, MAIN, TASK = 10, 11, 12, 13
STACK_A = "onKeyEvent pkg:/components/Main.brs:42"
STACK_B = "loadContent pkg:/source/content.brs:7"


def roku_app_trace(*, interned: bool, later_args: bool = True) -> TraceWriter:
    """A Roku app's trace in the shapes Roku's synthetic traces take: the render loop for ten
    frames, three of them missed for each of the three reasons; a task thread's rendezvous with
    the render thread (joined by a flow); nested observers; script slices with and without CPU;
    repeated reads; a key event, a request, and a slice still open at the end. The figures it
    holds are worked out by hand in ``tests/test_trace_analysis.py``."""
    w = TraceWriter(interned=interned)
    w.clock(0, 1_760_000_000_000)
    w.thread(RENDER, 100, "RenderThr:Main")
    w.thread(AUX, 101, "AuxRenderThread")
    w.thread(MAIN, 102, "BrightScript")
    w.thread(TASK, 103, "TN:ContentTask")
    # The render thread, in time order: swaps (2 ms each, the one at 170 takes 18 ms), and
    # between some of them the work of the next frame.
    work = {
        16: [(24, 25, "rendezvous-dequeue", {"ends_flows": (77,)})],
        48: [(54, 74, "render", {})],
        80: [(100, 104, "render", {})],
        130: [(134, 160, "consumeAllTasks", {}), (160, 164, "render", {})],
    }
    for at in (0, 16, 32, 48, 80, 130, 170, 196, 212, 228):
        w.slice(at, at + (18 if at == 170 else 2), RENDER, "swapBuffers")
        for a, b, name, kw in work.get(at, []):
            w.slice(a, b, RENDER, name, **kw)
    # The task thread: getField(Video.content) 20 -> 26.5, blocked in a Rendezvous 20.2 -> 26,
    # its request enqueued at 20.5 and dequeued on the render thread at 24 (the flow), then a
    # copy of 0.3 ms; a second getField of the same field 30 -> 31.2, blocked 30 -> 31 (no flow).
    args: dict[str, object] = {"component": "Video", "name": "content"}
    if later_args:
        args["id"] = "player"
    w.begin(20, TASK, "roSGNode.getField", args=args)
    w.begin(20.2, TASK, "Rendezvous")
    w.slice(20.5, 20.6, TASK, "rendezvous-enqueue", flows=(77,))
    w.end(26, TASK)
    w.slice(26.1, 26.4, TASK, "bscCopyToDomainEx")
    w.end(26.5, TASK)
    w.begin(30, TASK, "roSGNode.getField", args=args)
    w.slice(30, 31, TASK, "Rendezvous")
    w.end(31.2, TASK)
    # The main thread. Observers: 300 -> 310 holding 302 -> 306 holding 303 -> 304.
    for depth, a in enumerate((300, 302, 303), 1):
        obs: dict[str, object] = {"fieldName": "focused", "function": f"onFocus{depth}"}
        if later_args:
            obs["depth"] = depth
        w.begin(a, MAIN, "observer.callback", args=obs)
    for b in (304, 306, 310):
        w.end(b, MAIN)
    # Script, 10 ms each: STACK_A with 9 ms of CPU; STACK_B twice with 1 and 0.5 ms.
    for at, stack, cpu_us in ((320, STACK_A, 9000), (340, STACK_B, 1000), (360, STACK_B, 500)):
        sargs: dict[str, object] = {"callstack": stack}
        if later_args:
            sargs["cpu_us"] = cpu_us
        w.slice(at, at + 10, MAIN, "ExecBrightScript", args=sargs)
    # Reads in a row: Video.state four times, Video.content once, Video.state twice.
    at = 400.0
    for name in ("state",) * 4 + ("content",) + ("state",) * 2:
        w.slice(at, at + 0.5, MAIN, "roSGNode.getField", args={"component": "Video", "name": name})
        at += 1
    w.event(INSTANT, 420, MAIN, "keyEvent", args={"key": "OK"})
    w.event(INSTANT, 421, MAIN, "AsyncGetToString")
    w.begin(430, MAIN, "ExecBrightScript", args={"callstack": STACK_A})  # never ends
    return w


ENABLED_XML = (
    b'<?xml version="1.0" encoding="UTF-8" ?>\n<perfetto-enable>\n<enabled-channels>\n'
    b"<channel>dev</channel>\n</enabled-channels>\n<timestamp>1762473265350</timestamp>\n"
    b"<timestamp-end>1762473265350</timestamp-end>\n<status>OK</status>\n</perfetto-enable>\n"
)


class FakeTraceDevice:
    """A loopback stand-in for a Roku's ECP port as app tracing uses it: ``POST
    /perfetto/enable/<app>`` (200, or ``enable_status``) and the WebSocket
    ``/perfetto-session`` (its handshake and frames by the ``websockets`` library's sans-IO
    server). What a connected socket gets is ``behaviour``:

    * ``split``: ``data`` in binary messages of ``message_bytes`` (cut across packets), then
      silence (the socket stays open);
    * ``garbage``: bytes that are not WebSocket frames;
    * ``huge``: a frame header announcing a 1 GiB message, then a little of it;
    * ``flood``: small binary messages without end.
    """

    def __init__(
        self,
        behaviour: str = "split",
        data: bytes = b"",
        *,
        message_bytes: int = 1000,
        enable_status: int = 200,
    ) -> None:
        self.behaviour, self.data, self.message_bytes = behaviour, data, message_bytes
        self.enable_status = enable_status
        self.enables = 0
        self.sockets = 0  # WebSocket sessions opened
        self.sent = 0  # payload bytes sent in binary messages
        self._server = None
        self._writers: set = set()
        self.port = 0

    async def __aenter__(self) -> FakeTraceDevice:
        import asyncio

        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()
        for writer in list(self._writers):
            writer.close()
        await self._server.wait_closed()

    async def _serve(self, reader, writer) -> None:
        import asyncio

        self._writers.add(writer)
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
            if head.startswith(b"POST /perfetto/enable/"):
                self.enables += 1
                body = ENABLED_XML if self.enable_status == 200 else b""
                writer.write(
                    b"HTTP/1.1 %d X\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s"
                    % (self.enable_status, len(body), body)
                )
                await writer.drain()
            elif head.startswith(b"GET /perfetto-session"):
                await self._socket(head, reader, writer)
        except (OSError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()

    async def _socket(self, head: bytes, reader, writer) -> None:
        import asyncio

        from websockets.server import ServerProtocol

        ws = ServerProtocol(max_size=1024)
        ws.receive_data(head)
        [request] = ws.events_received()
        ws.send_response(ws.accept(request))
        writer.write(b"".join(ws.data_to_send()))
        self.sockets += 1
        if self.behaviour == "split":
            for at in range(0, len(self.data), self.message_bytes):
                piece = self.data[at : at + self.message_bytes]
                ws.send_binary(piece)
                self.sent += len(piece)
                writer.write(b"".join(ws.data_to_send()))
                await writer.drain()
                await asyncio.sleep(0.001)
        elif self.behaviour == "garbage":
            writer.write(b"\xff\x00this is not a websocket frame" * 10)
        elif self.behaviour == "huge":
            writer.write(b"\x82\x7f" + (1 << 30).to_bytes(8, "big") + b"\x00" * 4096)
        elif self.behaviour == "flood":
            while True:
                ws.send_binary(b"\x0a\x00" * 32)
                self.sent += 64
                writer.write(b"".join(ws.data_to_send()))
                await writer.drain()
        await writer.drain()
        while data := await reader.read(4096):  # until the client goes (close frames answered)
            ws.receive_data(data)
            writer.write(b"".join(ws.data_to_send()))
