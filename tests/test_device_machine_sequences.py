"""The device machine (rokuprof/capture/device_machine.py) over every sequence: random device
behaviours (refusals, timeouts, busy answers, other answers, runs cut or whole, paused or not,
ECP answers of every kind at any point) played through the machine as the loop's shell would,
with a scripted clock and scripted jitter. Every sequence must keep the rules: legal state
changes, ``streaming``/``paused`` only inside a run, ``unreachable`` after every timeout, the
exact backoff from the draws within its bounds and never under the floor (a refusal is polled
every ``poll_interval`` only once ECP has said the device is up), jitter drawn only
where the rules say, one ECP query at a time, the runs limit stopping the loop once.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
from device_script import POLL, Draws, Rules
from hypothesis import given
from hypothesis import strategies as st

from rokuprof.backoff import backoff_delay
from rokuprof.capture.device_machine import (
    UNREACHABLE_BACKOFF,
    Connect,
    Connected,
    ConnectFailed,
    ConsoleSaid,
    DeviceMachine,
    EcpAnswered,
    NotARun,
    QueryEcp,
    RunEnded,
    RunStarted,
    SetState,
    Started,
    StopLoop,
    Stopped,
    Tick,
    Wake,
)
from rokuprof.capture.status import DeviceState as S
from rokuprof.capture.stop import StopCause

# -- every sequence --------------------------------------------------------------------------

IDLE = {S.UNREACHABLE, S.REFUSED, S.WAITING, S.STOPPED}
LEGAL = {
    S.STARTING: IDLE,
    S.UNREACHABLE: IDLE,
    S.REFUSED: IDLE,
    S.WAITING: IDLE | {S.BUSY, S.STREAMING, S.PAUSED},
    S.BUSY: IDLE | {S.STREAMING, S.PAUSED},
    S.STREAMING: {S.PAUSED, S.FINISHED, S.STOPPED},
    S.PAUSED: {S.STREAMING, S.FINISHED, S.STOPPED},
    S.FINISHED: IDLE,
    S.STOPPED: set(),
}
OUTCOMES = ["refused", "timeout", "busy", "answer", "run", "cut", "paused-run"]
ECP = ["down", "up", "limited", "error", "none"]


@dataclass
class Player:
    """Plays a device's behaviour through the machine as the loop's shell would."""

    m: DeviceMachine
    rand: Draws
    ecp_answers: list[str]
    now: float = 0.0
    log: list = field(default_factory=list)  # (event, actions)
    ecp_pending: int = 0

    def feed(self, event):
        actions = self.m.handle(event)
        self.log.append((event, actions))
        queries = sum(isinstance(a, QueryEcp) for a in actions)
        assert queries <= 1 and not (queries and self.ecp_pending), "two ECP queries at once"
        self.ecp_pending += queries
        return actions

    def answer_ecp(self) -> None:
        if self.ecp_pending and self.ecp_answers:
            self.ecp_pending = 0
            kind, t = self.ecp_answers.pop(0), self.now
            self.feed(
                {
                    "down": EcpAnswered(t, False, "ECP timed out"),
                    "up": EcpAnswered(t, True, mode="default", identified=True),
                    "limited": EcpAnswered(t, True, "403", mode="limited"),
                    "error": EcpAnswered(t, True, "ECP answered 500"),
                    "none": EcpAnswered(t, None),
                }[kind]
            )

    def connect(self, outcome: str) -> list:
        if outcome in ("refused", "timeout"):
            self.now += 0.001 if outcome == "refused" else 2.0
            return self.feed(ConnectFailed(self.now, outcome == "refused", outcome))
        self.feed(Connected(self.now))
        self.answer_ecp()
        if outcome in ("busy", "answer"):
            self.now += 0.01
            return self.feed(NotARun(self.now, "404", busy=outcome == "busy"))
        if outcome == "paused-run":
            self.feed(ConsoleSaid("paused"))
        self.feed(RunStarted(self.now))
        for word in ("paused", "running", "running"):
            self.now += 3.0
            self.feed(ConsoleSaid(word))
        return self.feed(RunEnded(self.now, cut=outcome == "cut"))

    def play(self, outcomes: list[str]) -> None:
        actions = self.feed(Started(self.now))
        outcomes = list(outcomes)
        while True:
            [step] = [a for a in actions if isinstance(a, Wake | Connect | StopLoop)]
            if isinstance(step, StopLoop) or not outcomes:
                break
            if isinstance(step, Wake):
                assert step.at >= self.now
                self.now = step.at
                self.answer_ecp()
                actions = self.feed(Tick(self.now))
            else:
                actions = self.connect(outcomes.pop(0))
        self.feed(Stopped("stopped"))


@given(
    outcomes=st.lists(st.sampled_from(OUTCOMES), max_size=40),
    ecp=st.lists(st.sampled_from(ECP), max_size=20),
    draws=st.lists(st.floats(0.0, 1.0), max_size=40),
    use_ecp=st.booleans(),
    runs=st.none() | st.integers(1, 4),
)
def test_every_behaviour_keeps_the_rules(outcomes, ecp, draws, use_ecp, runs) -> None:
    rand = Draws(*draws)
    player = Player(DeviceMachine(Rules(use_ecp=use_ecp, runs=runs), rand), rand, list(ecp))
    player.play(outcomes)
    state, in_run, failures, draws_used, ecp_up = S.STARTING, False, 0, 0, None
    for event, actions in player.log:
        if isinstance(event, EcpAnswered) and event.up is not None:
            ecp_up = event.up
        inside = isinstance(event, RunStarted) or (in_run and not isinstance(event, RunEnded))
        for action in actions:
            if isinstance(action, SetState):
                assert action.state in LEGAL[state] or action.state == state, (state, action)
                assert inside or not action.state.in_run, (event, action)  # never before data
                state = action.state
        in_run = inside
        delays = [a.at - event.at for a in actions if isinstance(a, Wake)]
        if isinstance(event, Connected):
            failures = 0  # the device answered: silence starts again from the floor
        elif isinstance(event, ConnectFailed):
            [delay] = delays
            if event.refused and (not use_ecp or ecp_up is True):  # ECP says it is up
                failures = 0
                assert delay == pytest.approx(POLL)
                continue
            failures += 1  # a timeout, or refused before ECP said the device is up
            assert state is S.UNREACHABLE or event.refused  # after every timeout, the first too
            draw = rand.drawn[draws_used]
            draws_used += 1
            want = backoff_delay(failures + 1, POLL, UNREACHABLE_BACKOFF, draw, floor=POLL)
            assert delay == pytest.approx(want)
            ceiling = min(UNREACHABLE_BACKOFF, POLL * 2**failures)
            assert POLL - 1e-9 <= delay <= ceiling + 1e-9
        elif isinstance(event, NotARun):
            draws_used += 1
            assert POLL - 1e-9 <= delays[0] <= 2.0 + 1e-9
    assert draws_used == len(rand.drawn)  # jitter only where the rules say
    assert state is S.STOPPED
    ended = sum(isinstance(e, RunEnded) for e, _ in player.log)
    stops = [a for _, acts in player.log for a in acts if isinstance(a, StopLoop)]
    assert stops == ([StopLoop(StopCause.RUNS)] if runs is not None and ended == runs else [])
    assert runs is None or ended <= runs
