"""What the device remembers about each app run (for tests and the ``simulate`` command)."""

from __future__ import annotations

from dataclasses import dataclass, field

from rokuprof.simulator.tracing import TraceRecord

# Run states: what happened to the run's stream. A run is active until ``ended_at`` is set
# (a cut or client-gone stream does not end the run: the app runs on without its client).
WAITING = "waiting"  # launched, the app waits for its profiler client
STREAMING = "streaming"  # a client is connected and the app runs
COMPLETE = "complete"  # the whole stream (end marker, footer) was sent and the connection closed
EXITED = "exited"  # the app exited before any client connected: nothing was streamed
CUT = "cut"  # a fault (or SimulatedDevice.cut) dropped the connection during the run
STALLED = "stalled"  # the stream stalled and never resumed before the app exited
CLIENT_GONE = "client-gone"  # the client went away during the run
ABORTED = "aborted"  # the device was stopped during the run, or the run failed


@dataclass
class RunRecord:
    """One app run. Times are the device config's ``monotonic`` seconds; ``*_wall`` are its
    wall-clock ``clock`` seconds."""

    index: int
    launched_at: float
    launched_wall: float
    status: str = WAITING
    connected_at: float | None = None
    connected_wall: float | None = None
    ended_at: float | None = None
    exit_reason: str | None = None  # run-length | home | stop
    client: tuple[str, int] | None = None  # address of the client that got the stream
    start_ms: int | None = None  # header start timestamp
    end_ms: int | None = None  # footer end timestamp (when a footer was written)
    bytes_sent: int = 0  # stream bytes written to the connection (HTTP head not counted)
    entries: int = 0  # entries the app recorded (sent or not)
    app_seconds: float = 0.0  # app time the run lasted
    refused: int = 0  # extra clients refused during the run
    faults_fired: list[str] = field(default_factory=list)
    data: bytearray = field(default_factory=bytearray, repr=False)
    # replay runs (rokuprof.simulator.replay): the schedule the body follows; None for app runs
    schedule_start: float | None = None  # monotonic time the body started
    schedule_rate: float = 0.0  # body bytes per second
    schedule_body: int = 0  # body bytes in all
    schedule_base: int = 0  # stream bytes sent before the body (the header)
    body_sent: int = 0  # body bytes handed to the connection so far
    max_behind: int = 0  # the most body bytes the stream was behind its schedule
    #: app tracing (Roku OS 15.1+): what the run's Perfetto trace streamed (None: not traced)
    trace: TraceRecord | None = None

    @property
    def active(self) -> bool:
        return self.ended_at is None

    @property
    def connect_delay(self) -> float | None:
        """Seconds the app waited for its profiler client (None if none connected)."""
        if self.connected_at is None:
            return None
        return self.connected_at - self.launched_at

    def due(self, now: float) -> int:
        """Replay runs: body bytes the schedule asked for by ``now`` (monotonic); 0 otherwise."""
        if self.schedule_start is None:
            return 0
        end = now if self.ended_at is None else min(now, self.ended_at)
        elapsed = max(0.0, end - self.schedule_start)
        return min(self.schedule_body, int(elapsed * self.schedule_rate))

    def behind(self, now: float) -> int:
        """Replay runs: body bytes due by ``now`` but not yet handed to the connection (a client
        that reads too slowly makes this grow); 0 for app runs."""
        return max(0, self.due(now) - self.body_sent)

    def offered(self, now: float) -> int:
        """Stream bytes the device has sent or owes its schedule by ``now``."""
        return self.bytes_sent + self.behind(now)
