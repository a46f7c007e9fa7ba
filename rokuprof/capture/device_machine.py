"""One device's wait-connect-capture policy as a pure state machine: events in, actions out.

No asyncio, no sockets, no clock, no global random: every event carries its time (the shell's
monotonic clock) and the jitter comes from the random source the machine is given, so the same
events and draws always give the same actions. The shell (:mod:`rokuprof.capture.loop`) awaits
and carries out the actions; this module owns the rules:

* **When to connect.** A profiler port that refuses while ECP says the device is up (no profiled
  app runs) is tried again every ``poll_interval`` seconds: a profiled app waits for its client,
  so this bounds the delay the capture adds to its start. A timeout, no route, or a refusal
  before ECP says the device is up (off, away, nothing there: *silent*) backs off, doubling up to
  :data:`UNREACHABLE_BACKOFF` with jitter, never under ``poll_interval``, and ECP is then asked
  at most that often: such a device costs a timer and a probe or two per period. An answer that
  is not a run (503, an error page, no data) backs off up to ``max_backoff``; after runs an
  archive limit cut, the next connect waits (no jitter). Below the free-space floor nothing
  connects: the floor is read again every ``space_recheck`` seconds.
* **The device's state** (:class:`~rokuprof.capture.status.DeviceState`): ``unreachable`` from
  the first connect that times out, or while the profiler port refuses and ECP did not answer;
  ``refused``; ``waiting`` once connected (``busy`` stays until the device says otherwise);
  ``busy`` on a 503; ``streaming`` from the run's first byte, ``paused`` while the console says so;
  ``finished``; ``stopped``.
* **ECP**: asked before the first connect, again every ``ecp_recheck`` seconds, and at a run's
  connect while the device is unidentified; one query at a time.
* **Notes** (said once while their cause lasts): free space, ECP limited mode, an answer that
  was not a run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from rokuprof.backoff import backoff_delay
from rokuprof.capture.limits import ArchiveLimits, floor_message
from rokuprof.capture.status import DeviceState, control_command, idle_state
from rokuprof.capture.stop import StopCause
from rokuprof.device.errors import ECP_SETTING_PATH
from rokuprof.device.hosts import url_host

UNREACHABLE_BACKOFF = 30.0  # seconds: the longest wait between connects to an unreachable device
LOW_SPACE_RECHECK = 5.0  # seconds between free-space checks while below the floor
MAX_CUTS = 20  # runs in a row cut by an archive limit that still lengthen the wait


class DeviceRules(Protocol):
    """What the machine reads of :class:`~rokuprof.capture.config.CaptureConfig`."""

    host: str
    out: Path
    profiler_port: int
    console_port: int
    poll_interval: float
    max_backoff: float
    ecp_recheck: float
    use_ecp: bool
    runs: int | None
    archive_limits: ArchiveLimits


# -- events --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Started:
    at: float


@dataclass(frozen=True)
class Tick:
    """A :class:`Wake` came due."""

    at: float
    free: int | None = None  # the output file system's free bytes (None: not read, unreadable)


@dataclass(frozen=True)
class ConnectFailed:
    at: float
    refused: bool  # the port refused (else: timed out, no route)
    error: str


@dataclass(frozen=True)
class Connected:
    at: float


@dataclass(frozen=True)
class RunStarted:
    at: float  # when the run's first body byte arrived


@dataclass(frozen=True)
class ConsoleSaid:
    state: str  # the debug console's word on the app's profiler: "running" or "paused"


@dataclass(frozen=True)
class RunEnded:
    at: float
    cut: bool = False  # an archive limit ended the session


@dataclass(frozen=True)
class NotARun:
    """The connect did not become a run: ``busy`` (503), or ``text`` to say (unless ``quiet``)."""

    at: float
    text: str = ""
    busy: bool = False
    quiet: bool = False


@dataclass(frozen=True)
class EcpAnswered:
    """How a device-info query ended: ``up`` (``None``: no word), the error if any, the ECP mode
    it reported (``limited`` for a 403), ``identified`` when it said who the device is."""

    at: float
    up: bool | None
    error: str = ""
    mode: str | None = None
    identified: bool = False


@dataclass(frozen=True)
class Stopped:
    reason: str


Event = (
    Started
    | Tick
    | ConnectFailed
    | Connected
    | RunStarted
    | ConsoleSaid
    | RunEnded
    | NotARun
    | EcpAnswered
    | Stopped
)

# -- actions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetState:
    state: DeviceState
    detail: str = ""
    announce: bool = True  # tell the observers (a finished run is told by its session's end)


@dataclass(frozen=True)
class Say:
    cause: str
    text: str
    problem: bool = False  # also one of the capture's problems, for its summary


@dataclass(frozen=True)
class Unsay:
    cause: str


@dataclass(frozen=True)
class SetEcpMode:
    mode: str


@dataclass(frozen=True)
class QueryEcp:
    """Ask ECP for the device's identity in the background; answer with :class:`EcpAnswered`."""


@dataclass(frozen=True)
class Wake:
    at: float  # send a Tick then (or sooner: a stop)


@dataclass(frozen=True)
class Connect:
    """Connect to the profiler port now; answer :class:`ConnectFailed` or :class:`Connected`."""


@dataclass(frozen=True)
class StopLoop:
    cause: StopCause


Action = SetState | Say | Unsay | SetEcpMode | QueryEcp | Wake | Connect | StopLoop


# -- the machine ---------------------------------------------------------------------------


class DeviceMachine:
    """The policy of one device's capture loop (see the module docstring)."""

    def __init__(
        self,
        rules: DeviceRules,
        rand: Callable[[], float],
        *,
        space_recheck: float = LOW_SPACE_RECHECK,
    ) -> None:
        self.rules = rules
        self.rand = rand  # uniform in [0, 1): the jitter
        self.space_recheck = space_recheck
        self.state = DeviceState.STARTING
        self.detail = ""
        self.notes: dict[str, str] = {}  # this machine's notes in force: cause -> text
        self.ecp_up: bool | None = None  # whether ECP answered when last asked
        self.ecp_error = ""  # why it did not
        self.identified = False  # ECP said who the device is
        self.unreachable = 0  # connects in a row that found nothing there (see _failed)
        self.not_runs = 0  # connects in a row that were not a run
        self.cuts = 0  # runs in a row that an archive limit ended (at most MAX_CUTS)
        self.runs = 0
        self._ecp_asked: float | None = None  # when ECP was last asked
        self._ecp_pending = False
        self._profiler = ""  # the console's last word in this run

    def handle(self, event: Event) -> list[Action]:
        """The actions ``event`` calls for, in the order they must be carried out."""
        match event:
            case Started(at):
                where = f"{url_host(self.rules.host)}:{self.rules.profiler_port}"
                return [*self._set_state(DeviceState.STARTING, f"polling {where}"), Wake(at)]
            case Tick(at, free):
                return self._tick(at, free)
            case ConnectFailed(at, refused, error):
                return self._failed(at, refused, error)
            case Connected(at):
                self.unreachable, self._profiler = 0, ""
                busy = self.state is DeviceState.BUSY  # busy until the device says otherwise
                acts = [] if busy else self._set_state(DeviceState.WAITING)
                return acts + self._ask_ecp(at, now=not self.identified)
            case RunStarted():
                acts = self._unsay("answer")
                if self._profiler == "paused":
                    return acts + self._set_state(DeviceState.PAUSED, self._paused_detail())
                return acts + self._set_state(DeviceState.STREAMING)
            case ConsoleSaid(state):
                return self._console(state)
            case RunEnded(at, cut):
                return self._run_ended(at, cut)
            case NotARun(at, text, busy, quiet):
                self.not_runs += 1
                if busy:
                    acts = self._set_state(DeviceState.BUSY)
                else:
                    acts = [] if quiet else self._say("answer", text)
                poll = self.rules.poll_interval
                ceiling = self.rules.max_backoff
                delay = backoff_delay(self.not_runs + 1, poll, ceiling, self.rand(), floor=poll)
                return [*acts, Wake(at + delay)]
            case EcpAnswered():
                return self._ecp_answered(event)
            case Stopped(reason):
                return self._set_state(DeviceState.STOPPED, reason)
        raise TypeError(f"not a device event: {event!r}")

    @property
    def silent(self) -> bool:
        """Not known to answer: not yet, ``unreachable``, or refused while ECP has not said the
        device is up. Its connects and ECP queries are probes, which a fleet takes turns at."""
        if self.state is DeviceState.REFUSED:
            return self.rules.use_ecp and self.ecp_up is not True
        return self.state in (DeviceState.STARTING, DeviceState.UNREACHABLE)

    @property
    def wants_free_space(self) -> bool:
        """Whether a :class:`Tick` should carry a free-space reading."""
        return bool(self.rules.archive_limits.min_free_bytes)

    # -- the rules -------------------------------------------------------------------------

    def _tick(self, at: float, free: int | None) -> list[Action]:
        limits = self.rules.archive_limits
        floor = limits.min_free_bytes
        acts: list[Action] = []
        if floor and free is not None:
            if free < floor:
                if "space" not in self.notes:  # said once per episode
                    text = floor_message(free, limits, Path(self.rules.out))
                    acts += self._say("space", text + ": waiting for space")
                return [*acts, Wake(at + self.space_recheck)]
            acts += self._unsay("space")
        return [*acts, *self._ask_ecp(at, now=False), Connect()]

    def _failed(self, at: float, refused: bool, error: str) -> list[Action]:
        """Refused while ECP says the device is up: poll (an app waits for us); else back off."""
        rules = self.rules
        state = idle_state(refused, self.ecp_up if rules.use_ecp else None)
        if state is DeviceState.UNREACHABLE:
            acts = self._set_state(state, self.ecp_error if refused else error)
        else:
            acts = self._set_state(state)
        self.unreachable = self.unreachable + 1 if self.silent else 0
        delay = rules.poll_interval
        if self.silent:
            delay = backoff_delay(
                self.unreachable + 1,
                rules.poll_interval,
                UNREACHABLE_BACKOFF,
                self.rand(),
                floor=rules.poll_interval,
            )
        return [*acts, Wake(at + delay)]

    def _run_ended(self, at: float, cut: bool) -> list[Action]:
        self.not_runs = 0
        self.runs += 1
        self.cuts = min(self.cuts + 1, MAX_CUTS) if cut else 0
        acts = self._set_state(DeviceState.FINISHED, "", announce=False)
        rules = self.rules
        if rules.runs is not None and self.runs >= rules.runs:
            return [*acts, StopLoop(StopCause.RUNS)]
        delay = 0.0
        if self.cuts:  # a device that runs into a limit again and again: slow down
            delay = backoff_delay(self.cuts + 1, rules.poll_interval, UNREACHABLE_BACKOFF)
        return [*acts, Wake(at + delay)]

    def _console(self, state: str) -> list[Action]:
        self._profiler = state
        if not self.state.in_run:
            return []  # remembered for the run's first byte
        if state == "paused":
            return self._set_state(DeviceState.PAUSED, self._paused_detail())
        if self.state is DeviceState.PAUSED:
            return self._set_state(DeviceState.STREAMING)
        return []

    def _paused_detail(self) -> str:
        command = control_command(self.rules.host, self.rules.console_port, "resume")
        return f"resume with `{command}`"  # the live view adds its key (views/live_screen.py)

    def _ask_ecp(self, at: float, *, now: bool) -> list[Action]:
        if not self.rules.use_ecp or self._ecp_pending:
            return []
        asked = self._ecp_asked
        recheck = self.rules.ecp_recheck
        if self.silent and self.ecp_up is False:  # said down: no more often than connects
            recheck = max(recheck, UNREACHABLE_BACKOFF)
        due = asked is None or at - asked >= recheck
        if not (now or due or self.ecp_up is None):
            return []
        self._ecp_asked, self._ecp_pending = at, True
        return [QueryEcp()]

    def _ecp_answered(self, answer: EcpAnswered) -> list[Action]:
        self._ecp_pending = False
        if answer.up is not None:
            self.ecp_up = answer.up
        self.ecp_error = answer.error
        acts: list[Action] = []
        if answer.mode is not None:
            acts.append(SetEcpMode(answer.mode))
            if answer.mode == "limited":
                acts += self._say("limited", answer.error or self._limited_text(), problem=True)
            else:
                acts += self._unsay("limited")
        if answer.identified and not self.identified:
            self.identified = True
            acts.append(Unsay("ecp"))  # the shell's note: no identity at a run's start
        return acts

    def _limited_text(self) -> str:
        return (
            f"ECP on {self.rules.host} is in limited mode: some device queries are refused. "
            f"To allow them, set {ECP_SETTING_PATH} to 'Permissive' on the device."
        )

    # -- state and notes -------------------------------------------------------------------

    def _set_state(
        self, state: DeviceState, detail: str = "", announce: bool = True
    ) -> list[Action]:
        if self.state == state and self.detail == detail:
            return []
        self.state, self.detail = state, detail
        return [SetState(state, detail, announce)]

    def _say(self, cause: str, text: str, *, problem: bool = False) -> list[Action]:
        """A note that lasts while its cause does: said once, and again if it changes."""
        if self.notes.get(cause) == text:
            return []
        self.notes[cause] = text
        return [Say(cause, text, problem)]

    def _unsay(self, cause: str) -> list[Action]:
        return [Unsay(cause)] if self.notes.pop(cause, None) is not None else []
