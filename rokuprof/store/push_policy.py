"""When a session's profile goes to Pyroscope again: the push policy as a pure machine, like
Sentry's (:mod:`rokuprof.store.delivery`): no clock, no I/O, no global random; every answer
carries its times (``at`` monotonic, ``wall`` Unix seconds) and the jitter comes from ``rng``.
:class:`~rokuprof.store.pyroscope.PyroscopePusher` feeds it each push's outcome and waits as it
says.

Where Pyroscope and Sentry agree the rules are Sentry's, from the same place
(:mod:`rokuprof.store.retrying`: how an answer is read, the backoff state; the outcomes are
:mod:`rokuprof.store.delivery`'s where they mean the same):

* 2xx: done.
* 429: wait as told (``Retry-After``, seconds or an HTTP date; 60 s without one:
  :class:`~rokuprof.store.ratelimit.RateLimits`), then send the same profile again.
* 401/403 (:data:`~rokuprof.store.retrying.KEY_REFUSED`): the credentials are refused, not the
  profile: it is sent again as a probe after a capped backoff from ``probe_base``, said once.
* 5xx, other answers and failures: capped exponential backoff with full jitter
  (:func:`~rokuprof.store.ratelimit.retry_delay`, at most 60 s).

Where they differ: Pyroscope refuses a profile for good with :data:`PROFILE_REFUSED` (400, 413,
and 415 and 422, which its ingest answers for a body it cannot read; Sentry's chunk refusals are
400 and 413). A refused profile is marked and not sent again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Unpack

from rokuprof.store.delivery import Deliver, Retry
from rokuprof.store.retrying import Answer, Cause, Retrying, RetryOptions, answer_kind

PROFILE_REFUSED = frozenset({400, 413, 415, 422})


Pushed = Deliver  # 2xx, with its status: the same fact as a delivered chunk


@dataclass(frozen=True)
class Refused:
    status: int
    reason: str


@dataclass(frozen=True)
class Again(Retry):
    """Send the same profile again, not before ``at`` (monotonic seconds) because of ``cause``
    (a :class:`~rokuprof.store.delivery.Retry`); ``say`` for the log unless it was said
    already (``logged``)."""

    say: str
    logged: bool = True


Outcome = Pushed | Refused | Again


class PushPolicy(Retrying):
    """See the module docstring."""

    def __init__(self, **rules: Unpack[RetryOptions]) -> None:
        super().__init__(**rules)
        self.refusals = 0  # refused credentials in a row
        self._last_said = ""

    def answered(
        self, status: int, headers: Mapping[str, str], text: str, at: float, wall: float
    ) -> Outcome:
        """What Pyroscope's answer (``status``, ``headers`` in lower case, the start of its
        ``text``) calls for."""
        kind = answer_kind(status, PROFILE_REFUSED)
        if kind is Answer.DONE:
            self.failures = self.refusals = 0
            return Pushed(status)
        if kind is Answer.REFUSED:
            self.failures = self.refusals = 0
            return Refused(status, text)
        if kind is Answer.RATE_LIMITED:
            blocked = self.limits.update(status, headers, at, wall)
            return self._again(
                at, blocked, Cause.RATE_LIMITED, f"HTTP 429: waiting {blocked:.0f} s"
            )
        if kind is Answer.KEY_REFUSED:
            self.failures = 0
            self.refusals += 1
            delay = self.delays.after_refusals(self.refusals)
            why = f"Pyroscope refused the credentials (HTTP {status}): {text or '-'}"
            return self._again(at, delay, Cause.KEY_REFUSED, f"{why}; check the URL's user")
        return self.failed(f"HTTP {status}: {text}", at)

    def failed(self, problem: str, at: float) -> Again:
        """No answer (a network error, a timeout): back off."""
        self.refusals = 0
        self.failures += 1
        delay = self.delays.after_failures(self.failures)
        return self._again(at, delay, Cause.FAILED, problem)

    def _again(self, now: float, delay: float, cause: Cause, say: str) -> Again:
        """Again after ``delay`` (or while a 429 still blocks), its words logged only when
        they changed (a push that keeps failing the same way is said once)."""
        logged = say != self._last_said
        self._last_said = say
        return Again(now + max(delay, self.limits.blocked_for(now)), cause, say, logged)
