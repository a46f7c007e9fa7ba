"""What Sentry's delivery policy and Pyroscope's push policy share: how an HTTP answer to a send
is read, and the state their retries keep (pure, no I/O).

* :func:`answer_kind`: 2xx is done; 429 is rate limited; 401/403 (:data:`KEY_REFUSED`) refuse
  the credentials, not the payload; each service's own statuses (``refused``) refuse the payload
  for good; anything else (5xx, other answers) is a failure to retry.
* :class:`Retrying`: the backoff rules (:class:`~rokuprof.store.ratelimit.RetryDelays`), the
  rate limits the answers set (:class:`~rokuprof.store.ratelimit.RateLimits`) and the failures
  in a row, built from the same options for both policies.

:class:`~rokuprof.store.delivery.DeliveryPolicy` and
:class:`~rokuprof.store.push_policy.PushPolicy` build on these; they differ only where Sentry and
Pyroscope do (which statuses refuse a payload, pausing every upload on a refused key).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Collection
from enum import StrEnum
from typing import TypedDict

from rokuprof.store.ratelimit import MAX_RETRY_SECONDS, RateLimits, RetryDelays

KEY_REFUSED = frozenset({401, 403})


class Cause(StrEnum):
    """Why a send waits (each is a figure of its own)."""

    FAILED = "failed"  # 5xx, other answers, no answer, a local problem
    RATE_LIMITED = "rate_limited"  # 429
    KEY_REFUSED = "key_refused"  # 401/403


class Answer(StrEnum):
    """What an HTTP answer to a send means (:func:`answer_kind`)."""

    DONE = "done"  # 2xx
    REFUSED = "refused"  # this payload, for good
    RATE_LIMITED = "rate_limited"  # 429
    KEY_REFUSED = "key_refused"  # the credentials
    FAILED = "failed"  # anything else: retried


def answer_kind(status: int, refused: Collection[int]) -> Answer:
    """How ``status`` is read by a sender whose payload ``refused`` statuses refuse for good."""
    if 200 <= status < 300:
        return Answer.DONE
    if status == 429:
        return Answer.RATE_LIMITED
    if status in KEY_REFUSED:
        return Answer.KEY_REFUSED
    if status in refused:
        return Answer.REFUSED
    return Answer.FAILED


class RetryOptions(TypedDict, total=False):
    """:class:`Retrying`'s options, as the policies built on it take them."""

    backoff_base: float
    backoff_cap: float
    probe_base: float
    rng: Callable[[], float]


class Retrying:
    """The retry state of a send policy: ``delays`` (failures back off from ``backoff_base``,
    probes of refused credentials from ``probe_base``, never more than ``backoff_cap``, the
    jitter from ``rng``), the ``limits`` the answers set, and ``failures`` in a row."""

    def __init__(
        self,
        *,
        backoff_base: float = 1.0,
        backoff_cap: float = MAX_RETRY_SECONDS,
        probe_base: float = 5.0,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self.delays = RetryDelays(backoff_base, backoff_cap, probe_base, rng)
        self.limits = RateLimits()
        self.failures = 0  # failures in a row
