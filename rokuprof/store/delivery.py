"""When and whether a chunk goes to Sentry: the delivery policy as a pure machine.

No asyncio, no sockets, no files, no clock: every event carries its times (``at`` on the
uploader's monotonic clock, ``wall`` in Unix seconds) and the jitter comes from the ``rng``
the policy was given. The uploader (:mod:`rokuprof.store.uploader`) feeds it what became of
each send, carries out the actions, and asks :meth:`DeliveryPolicy.wait` how long new sends
must wait and :meth:`DeliveryPolicy.send_limit` how many may be in flight.

Events: :class:`Answered` (Sentry's status, headers and the start of its answer),
:class:`Failed` (no answer: network error, timeout, or a local problem) and
:class:`Unsendable` (the chunk is not valid: never sent).

Actions: :class:`Deliver` (mark the chunk delivered), :class:`Reject` (move it to
``rejected/``), :class:`Retry` (it stays pending; sends wait until ``at``), :class:`PauseUntil`
(Sentry limited a category) and :class:`Say` (a message for the log and the figures).

How an answer is read and the backoff state are shared with Pyroscope's push policy
(:mod:`rokuprof.store.retrying`); what Sentry's answers call for:

* 2xx: delivered. ``X-Sentry-Rate-Limits`` is honoured on every answer, per category.
* 429: wait as told (``Retry-After`` / ``X-Sentry-Rate-Limits``; 60 s with neither), then
  send the same chunk again.
* 401/403: Sentry refused the key, not the chunk. Uploads pause (said once, see
  :attr:`DeliveryPolicy.pause`); the oldest chunk is sent again as a probe after a capped
  backoff, and any other answer ends the pause. Nothing is rejected.
* 400/413: this chunk is refused for good, with the reason. So is a chunk that is not valid.
* 5xx, other answers and failures: retry with capped exponential backoff and full jitter
  (:func:`~rokuprof.store.ratelimit.retry_delay`, at most 60 s).

After a failure or a refused key only one send goes out (the probe) until Sentry answers
again. Each send carries the :meth:`~DeliveryPolicy.ticket` it started with: a failure of a
send that started before the latest failure or refusal counts, but while that backoff runs it
does not lengthen it, so the policy is the same whatever ``max_in_flight`` is.

The spool limit is a rule here too (:func:`spool_cut`): the oldest pending chunks not in flight
go until the rest fill at most :data:`LOW_WATER` of the limit.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar, Unpack

from rokuprof.store.retrying import Answer, Cause, Retrying, RetryOptions, answer_kind

CHUNK_REFUSED = frozenset({400, 413})
LOW_WATER = 0.9  # a full spool is cut down to this fraction of its limit


# -- events --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Answered:
    """Sentry answered a send."""

    status: int
    headers: Mapping[str, str]  # looked up in lower case (httpx.Headers ignores case)
    text: str  # the start of the answer, for messages (the key already scrubbed)
    at: float  # monotonic seconds
    wall: float  # Unix seconds
    ticket: int  # the send's :meth:`DeliveryPolicy.ticket`
    pending: int = 0  # chunks waiting, for messages


@dataclass(frozen=True)
class Failed:
    """A send got no answer (network error, timeout) or could not be made (a local problem)."""

    problem: str
    at: float
    ticket: int


@dataclass(frozen=True)
class Unsendable:
    """The chunk is not valid (Sentry would drop it after a 200): refuse it without sending."""

    reason: str


Event = Answered | Failed | Unsendable


# -- actions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Deliver:
    status: int


@dataclass(frozen=True)
class Reject:
    reason: str
    status: int | None  # None: refused here, never sent


@dataclass(frozen=True)
class Retry:
    """The chunk stays pending; no send goes out before ``at`` (monotonic seconds)."""

    at: float
    cause: Cause


@dataclass(frozen=True)
class PauseUntil:
    """Sentry limited ``category`` (``""``: every one) until ``until`` (monotonic seconds)."""

    category: str
    until: float


@dataclass(frozen=True)
class Say:
    """``text`` for the log at ``level`` (``debug``, ``warning``, ``error``) unless not
    ``logged``; ``record``: it is also the latest error of the figures."""

    text: str
    level: str = "warning"
    logged: bool = True
    record: bool = True


Action = Deliver | Reject | Retry | PauseUntil | Say


@dataclass
class UploadPause:
    """Uploads are paused because Sentry refused the DSN's key."""

    status: int  # the latest refusal: 401 or 403
    since: float  # Unix seconds
    refusals: int = 1

    @property
    def reason(self) -> str:
        return f"Sentry refused the key (HTTP {self.status})"


# -- the policy ----------------------------------------------------------------------------


class DeliveryPolicy(Retrying):
    """See the module docstring."""

    def __init__(self, *, max_in_flight: int = 1, **rules: Unpack[RetryOptions]) -> None:
        super().__init__(**rules)
        self.max_in_flight = max(1, max_in_flight)
        self.pause: UploadPause | None = None
        self.retry_at = 0.0  # monotonic seconds: no send before (failures, a refused key)
        self.epoch = 0  # counts failures and refusals

    # -- what the shell asks -------------------------------------------------------------

    def ticket(self) -> int:
        """What a send starting now carries back in its event."""
        return self.epoch

    def send_limit(self) -> int:
        """How many sends may be in flight: one (the probe) after a failure or a refused key."""
        return 1 if self.pause is not None or self.failures else self.max_in_flight

    def wait(self, now: float) -> float:
        """Seconds until a profile chunk may be sent (0: now)."""
        return max(0.0, self.limits.blocked_for(now), self.retry_at - now)

    # -- events --------------------------------------------------------------------------

    def handle(self, event: Event) -> list[Action]:
        """The actions ``event`` calls for, in order."""
        match event:
            case Answered():
                return self._answered(event)
            case Failed(problem, at, ticket):
                return self._failed(problem, at, ticket)
            case Unsendable(reason):
                return [Reject(reason, None)]
        raise TypeError(f"not a delivery event: {event!r}")

    def _answered(self, event: Answered) -> list[Action]:
        status, at = event.status, event.at
        before = dict(self.limits.until)
        self.limits.update(status, event.headers, at, event.wall)
        actions: list[Action] = [
            PauseUntil(category, until)
            for category, until in self.limits.until.items()
            if until > before.get(category, float("-inf"))
        ]
        kind = answer_kind(status, CHUNK_REFUSED)
        if kind is Answer.KEY_REFUSED:
            return actions + self._key_refused(event)
        actions += self._resume(event.wall)
        if kind is Answer.DONE:
            self.failures = 0
            self.retry_at = 0.0
            actions.append(Deliver(status))
        elif kind is Answer.RATE_LIMITED:
            blocked = self.limits.blocked_for(at)
            actions.append(Retry(at + self.wait(at), Cause.RATE_LIMITED))
            actions.append(Say(f"rate limited by Sentry (HTTP 429): waiting {blocked:.0f} s"))
        elif kind is Answer.REFUSED:
            actions.append(Reject(f"Sentry refused the chunk: HTTP {status} {event.text}", status))
        else:
            text = f"Sentry answered HTTP {status} {event.text} (will retry)"
            actions += self._failed(text, at, event.ticket)
        return actions

    def _failed(self, problem: str, at: float, ticket: int) -> list[Action]:
        if ticket != self.epoch and self.retry_at > at:
            # in flight when an earlier failure set the backoff: the same outage
            return [Retry(at + self.wait(at), Cause.FAILED), Say(problem, logged=False)]
        self.epoch += 1
        self.failures += 1
        delay = self.delays.after_failures(self.failures)
        self.retry_at = at + delay
        retry = Retry(at + self.wait(at), Cause.FAILED)
        return [retry, Say(f"{problem}; next try in {delay:.1f} s")]

    def _key_refused(self, event: Answered) -> list[Action]:
        """401/403: pause every upload for this DSN; probe again after a capped backoff."""
        at = event.at
        if event.ticket != self.epoch and self.pause is not None:
            # in flight when the pause began: already said, already scheduled
            return [Retry(at + self.wait(at), Cause.KEY_REFUSED)]
        self.epoch += 1
        self.failures = 0
        pause = self.pause
        if pause is None:
            pause = self.pause = UploadPause(event.status, event.wall)
        else:
            pause.status = event.status
            pause.refusals += 1
        delay = self.delays.after_refusals(pause.refusals)
        self.retry_at = at + delay
        actions: list[Action] = [Retry(at + self.wait(at), Cause.KEY_REFUSED)]
        message = (
            f"uploads paused: {pause.reason}: {event.text or '-'}; {event.pending} chunk(s) wait"
            f" on disk, nothing is rejected; probing again at most {self.delays.cap:g} s apart"
            " (check the DSN)"
        )
        if pause.refusals == 1:
            actions.append(Say(message, "error"))
        else:  # said once already: keep the figures, not the log
            actions.append(Say(message, logged=False))
            detail = f"{pause.reason} still refused ({pause.refusals} times)"
            actions.append(Say(f"{detail}; next try in {delay:.1f} s", "debug", record=False))
        return actions

    def _resume(self, wall: float) -> list[Action]:
        pause = self.pause
        if pause is None:
            return []
        self.pause = None
        self.retry_at = 0.0
        text = (
            f"uploads resumed: Sentry accepted the key again after {wall - pause.since:.0f} s"
            f" paused ({pause.refusals} refusal(s))"
        )
        return [Say(text, record=False)]


# -- which chunks: the next sends and the spool limit ----------------------------------------


class Pending(Protocol):
    """A pending chunk as the rules see it (a :class:`~rokuprof.store.spool.SpoolItem`)."""

    @property
    def key(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def session_dir(self) -> Path: ...


P = TypeVar("P", bound=Pending)


def next_sends(
    oldest_first: Iterable[P], in_flight: Collection[str], busy: Collection[Path], room: int
) -> list[P]:
    """Up to ``room`` chunks to send now: the oldest ones not in flight whose session has none
    in flight (a session's chunks reach Sentry in order; sessions go side by side)."""
    chosen: list[P] = []
    sessions = set(busy)
    for item in oldest_first:
        if len(chosen) >= room:
            break
        if item.key in in_flight or item.session_dir in sessions:
            continue
        sessions.add(item.session_dir)
        chosen.append(item)
    return chosen


def over_limit(pending_bytes: int, limit: int | None) -> bool:
    return limit is not None and pending_bytes > limit


def spool_cut(
    oldest_first: Iterable[P], pending_bytes: int, limit: int, in_flight: Collection[str]
) -> list[P]:
    """The oldest chunks to drop so that the pending ones fill at most :data:`LOW_WATER` of
    ``limit``; a chunk in flight is never dropped (it is delivered or kept)."""
    excess = pending_bytes - int(limit * LOW_WATER)
    batch: list[P] = []
    for item in oldest_first:
        if excess <= 0:
            break
        if item.key not in in_flight:
            batch.append(item)
            excess -= item.size
    return batch


def spool_full_message(before: int, limit: int, dropped: list[P]) -> str:
    """What is said when the spool limit dropped chunks (``before``: pending bytes then)."""
    freed = sum(item.size for item in dropped)
    sessions = sorted({"/".join(item.session_dir.parts[-2:]) for item in dropped})
    shown = ", ".join(sessions[:5]) + (
        f" and {len(sessions) - 5} more" if len(sessions) > 5 else ""
    )
    return (
        f"spool full ({mib(before)} of chunks waiting, limit {mib(limit)}):"
        f" dropped the {len(dropped)} oldest undelivered chunk(s) ({mib(freed)}) of {shown};"
        " their archives are kept (rokuprof convert rebuilds them)"
    )


def mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"
