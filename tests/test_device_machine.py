"""The device machine (rokuprof/capture/device_machine.py) fed scripted events with a scripted
clock and scripted jitter: no sockets, no sleeps.

One test per rule: polling, backoff, states, ECP, notes, free space, runs (every sequence of
them: test_device_machine_sequences.py).
"""

from __future__ import annotations

import pytest
from device_script import POLL, Draws, Rules

from rokuprof.capture.device_machine import (
    LOW_SPACE_RECHECK,
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
    Say,
    SetEcpMode,
    SetState,
    Started,
    StopLoop,
    Stopped,
    Tick,
    Unsay,
    Wake,
)
from rokuprof.capture.limits import ArchiveLimits
from rokuprof.capture.status import DeviceState as S
from rokuprof.capture.stop import StopCause


def machine(rand: Draws | None = None, **rules) -> DeviceMachine:
    return DeviceMachine(Rules(**rules), rand or Draws())


def started(m: DeviceMachine, ecp_up: bool | None = True) -> DeviceMachine:
    """Past the start and the first ECP answer (``None``: ECP not answered yet)."""
    m.handle(Started(0.0))
    m.handle(Tick(0.0))
    if ecp_up is not None:
        m.handle(EcpAnswered(0.0, ecp_up, "" if ecp_up else "ECP timed out"))
    return m


def states(actions) -> list[S]:
    return [a.state for a in actions if isinstance(a, SetState)]


def wake(actions) -> float:
    [w] = [a for a in actions if isinstance(a, Wake)]
    return w.at


# -- connecting ------------------------------------------------------------------------------


def test_start_says_where_it_polls_and_connects_at_once_after_asking_ecp() -> None:
    m = machine()
    assert m.handle(Started(7.0)) == [
        SetState(S.STARTING, "polling 192.168.1.20:8090"),
        Wake(7.0),
    ]
    assert m.handle(Tick(7.0)) == [QueryEcp(), Connect()]


def test_a_refusing_port_is_polled_every_poll_interval_without_jitter() -> None:
    rand = Draws()
    m = started(machine(rand))
    t = 1.0
    for _ in range(50):
        assert wake(m.handle(ConnectFailed(t, True, "refused"))) == t + POLL
        t += POLL
    assert rand.drawn == []  # no draw: a waiting app is never kept waiting longer
    assert m.state is S.REFUSED


def test_silence_backs_off_doubling_to_the_cap_with_the_given_jitter_never_under_the_floor() -> (
    None
):
    draws = [1.0, 0.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.25]
    m = started(machine(Draws(*draws)))
    delays = []
    for i in range(len(draws)):
        t = 100.0 * i
        delays.append(wake(m.handle(ConnectFailed(t, False, "timed out"))) - t)
    # ceilings 0.5, 1, 2, 4 ... capped at 30 s; the jitter between the floor and the ceiling
    assert delays == pytest.approx(
        [0.5, POLL, 1.125, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0, 30.0, 30.0, POLL + 0.25 * 29.75]
    )
    assert m.unreachable == len(draws)
    # a refusal (the device is back) resets the count: the next silence starts again
    m.handle(ConnectFailed(2000.0, True, "refused"))
    assert m.unreachable == 0
    assert wake(m.handle(ConnectFailed(3000.0, False, "timed out"))) == 3000.375  # 0.5 of 0.5


def test_a_refusal_before_ecp_says_the_device_is_up_backs_off_and_is_a_probe() -> None:
    m = started(machine(Draws(1.0, 1.0)), ecp_up=None)
    assert m.silent  # nothing has answered: its connects take turns with the fleet's
    assert m.handle(ConnectFailed(1.0, True, "refused")) == [SetState(S.REFUSED), Wake(1.5)]
    assert m.silent and m.unreachable == 1
    assert m.handle(ConnectFailed(2.0, True, "refused")) == [Wake(2.0 + 4 * POLL)]
    m.handle(EcpAnswered(3.0, True))  # up: polled every POLL from now on, no turns taken
    assert not m.silent
    assert m.handle(ConnectFailed(4.0, True, "refused")) == [Wake(4.0 + POLL)]
    assert m.unreachable == 0


def test_unreachable_after_exactly_one_timeout_refused_while_ecp_answers() -> None:
    m = started(machine())
    assert states(m.handle(ConnectFailed(1.0, True, "refused"))) == [S.REFUSED]
    acts = m.handle(ConnectFailed(2.0, False, "no route to host"))
    assert acts[0] == SetState(S.UNREACHABLE, "no route to host")
    assert states(m.handle(ConnectFailed(3.0, True, "refused"))) == [S.REFUSED]


def test_a_refusing_port_whose_ecp_is_down_is_unreachable_with_ecps_reason() -> None:
    m = started(machine(Draws(1.0, 1.0, 0.5)), ecp_up=False)
    acts = m.handle(ConnectFailed(1.0, True, "refused"))
    assert acts == [SetState(S.UNREACHABLE, "ECP timed out"), Wake(1.0 + 2 * POLL)]
    # nothing answers there: it backs off as a timeout does (said once), not polled every POLL
    assert m.handle(ConnectFailed(2.0, True, "refused")) == [Wake(2.0 + 4 * POLL)]
    assert m.handle(ConnectFailed(3.0, True, "refused")) == [Wake(3.0 + POLL + 0.5 * 7 * POLL)]
    assert m.unreachable == 3
    # ECP answers again: the device is up, a refusal is polled every POLL (an app waits for us)
    m.handle(EcpAnswered(4.0, True))
    assert m.handle(ConnectFailed(5.0, True, "refused")) == [SetState(S.REFUSED), Wake(5.0 + POLL)]
    assert m.unreachable == 0
    # without ECP, a refusal always means the device is up
    m = started(machine(use_ecp=False), ecp_up=None)
    assert states(m.handle(ConnectFailed(1.0, True, "refused"))) == [S.REFUSED]


# -- runs and answers that are not runs ------------------------------------------------------


def test_busy_is_said_once_however_often_retried_and_streaming_waits_for_the_first_byte() -> None:
    m = started(machine(Draws(*[1.0] * 10)))
    said = []
    for i in range(10):
        said += m.handle(Connected(float(i)))
        acts = m.handle(NotARun(float(i), "the profiler port answered 503", busy=True))
        said += acts
        assert wake(acts) - i == pytest.approx(min(2.0, POLL * 2 ** (i + 1)))  # up to max_backoff
    assert states(said) == [S.WAITING, S.BUSY]  # not waiting again while busy; never streaming
    assert not any(isinstance(a, Say) for a in said)  # the 503 is the state, not a note
    assert m.handle(Connected(20.0)) == []
    assert states(m.handle(RunStarted(20.1))) == [S.STREAMING]
    assert m.not_runs == 10
    m.handle(RunEnded(30.0))
    assert m.not_runs == 0


def test_an_answer_that_is_not_a_run_is_said_once_and_cleared_by_the_next_run() -> None:
    m = started(machine())
    text = "the profiler port answered 404 Not Found"
    notes = []
    for i in range(3):
        m.handle(Connected(float(i)))
        notes += [a for a in m.handle(NotARun(float(i), text)) if isinstance(a, Say)]
    assert notes == [Say("answer", text)]
    m.handle(Connected(5.0))
    assert m.handle(RunStarted(5.0))[0] == Unsay("answer")
    m.handle(Connected(6.0))
    assert m.handle(NotARun(6.0, "the stream ended before any data", quiet=True)) == [
        Wake(6.0 + POLL + 0.5 * (2.0 - POLL))  # quiet (a stop came first): nothing said
    ]


def test_a_finished_run_reconnects_at_once_and_the_runs_limit_stops_the_loop() -> None:
    m = started(machine(runs=2))
    m.handle(Connected(1.0))
    m.handle(RunStarted(1.0))
    assert m.handle(RunEnded(9.0)) == [SetState(S.FINISHED, "", announce=False), Wake(9.0)]
    m.handle(Connected(9.0))
    m.handle(RunStarted(9.1))
    assert m.handle(RunEnded(12.0))[-1] == StopLoop(StopCause.RUNS)
    assert m.handle(Stopped("--runs 2 reached")) == [SetState(S.STOPPED, "--runs 2 reached")]


def test_runs_cut_by_an_archive_limit_slow_the_next_connect_without_jitter() -> None:
    rand = Draws()
    m = started(machine(rand))
    waits = []
    for i in range(25):
        m.handle(Connected(100.0 * i))
        m.handle(RunStarted(100.0 * i))
        waits.append(wake(m.handle(RunEnded(100.0 * i + 1, cut=True))) - (100.0 * i + 1))
    assert waits[:5] == pytest.approx([0.5, 1.0, 2.0, 4.0, 8.0])
    assert waits[-1] == UNREACHABLE_BACKOFF and m.cuts == 20
    assert rand.drawn == []
    m.handle(Connected(9000.0))
    assert wake(m.handle(RunEnded(9001.0))) == 9001.0  # a whole run: no more waiting


def test_the_console_pauses_and_resumes_a_streaming_run_and_is_remembered_before_it() -> None:
    m = started(machine(console_port=8081))
    m.handle(Connected(1.0))
    assert m.handle(ConsoleSaid("paused")) == []  # no run yet: remembered
    [paused] = m.handle(RunStarted(1.1))[-1:]
    assert paused.state is S.PAUSED
    assert paused.detail == (
        "resume with `rokuprof control 192.168.1.20 resume --console-port 8081`"
    )
    assert m.handle(ConsoleSaid("paused")) == []
    assert states(m.handle(ConsoleSaid("running"))) == [S.STREAMING]
    assert m.handle(ConsoleSaid("running")) == []
    m.handle(RunEnded(5.0))
    assert m.handle(ConsoleSaid("paused")) == []  # after the run: nothing to show
    m.handle(Connected(6.0))
    assert states(m.handle(RunStarted(6.1))) == [S.STREAMING]  # a new run forgets the old word


# -- ECP -------------------------------------------------------------------------------------


def test_ecp_is_asked_once_at_a_time_and_again_every_recheck_interval() -> None:
    m = machine()
    m.handle(Started(0.0))
    assert QueryEcp() in m.handle(Tick(0.0))
    m.handle(ConnectFailed(0.1, True, "refused"))
    assert m.handle(Tick(0.35)) == [Connect()]  # the first query is still out
    m.handle(EcpAnswered(0.4, True))
    assert m.handle(Tick(9.9)) == [Connect()]  # asked 9.9 s ago: not due
    assert m.handle(Tick(10.0)) == [QueryEcp(), Connect()]
    m.handle(EcpAnswered(10.1, True, identified=True))
    assert m.handle(Connected(10.2)) == [SetState(S.WAITING)]  # identified: not asked again


def test_a_run_of_an_unidentified_device_asks_ecp_at_its_connect() -> None:
    m = machine()
    m.handle(Started(0.0))
    m.handle(Tick(0.0))
    m.handle(EcpAnswered(0.5, False, "ECP timed out"))
    assert m.handle(Connected(1.0)) == [SetState(S.WAITING), QueryEcp()]
    acts = m.handle(EcpAnswered(1.2, True, mode="default", identified=True))
    assert acts == [SetEcpMode("default"), Unsay("ecp")]
    assert (m.ecp_up, m.ecp_error) == (True, "")


def test_limited_mode_is_said_once_with_the_setting_and_cleared_when_lifted() -> None:
    m = machine()
    m.handle(Started(0.0))
    m.handle(Tick(0.0))
    acts = m.handle(EcpAnswered(0.1, True, mode="limited", identified=True))
    [said] = [a for a in acts if isinstance(a, Say)]
    assert said.cause == "limited" and said.problem
    assert "Control by mobile apps > Network access" in said.text and "192.168.1.20" in said.text
    m.handle(Tick(20.0))
    again = m.handle(EcpAnswered(20.1, True, mode="limited", identified=True))
    assert again == [SetEcpMode("limited")]
    m.handle(Tick(40.0))
    assert m.handle(EcpAnswered(40.1, True, mode="default")) == [
        SetEcpMode("default"),
        Unsay("limited"),
    ]


def test_a_query_that_failed_without_a_word_is_asked_again_at_once() -> None:
    m = machine()
    m.handle(Started(0.0))
    m.handle(Tick(0.0))
    assert m.handle(EcpAnswered(0.1, None)) == []
    assert m.handle(Tick(0.2)) == [QueryEcp(), Connect()]  # ECP never answered: ask again


# -- free space ------------------------------------------------------------------------------


def test_below_the_floor_nothing_connects_said_once_per_episode() -> None:
    m = machine(archive_limits=ArchiveLimits(min_free_bytes=1 << 30))
    assert m.wants_free_space
    m.handle(Started(0.0))
    [say, wait] = m.handle(Tick(0.0, free=1 << 20))
    assert say.cause == "space" and say.text.endswith(": waiting for space")
    assert "only 1 MiB free on the file system of /data" in say.text
    assert wait == Wake(LOW_SPACE_RECHECK)
    assert m.handle(Tick(5.0, free=2 << 20)) == [Wake(10.0)]  # a new reading: not said again
    assert m.handle(Tick(10.0, free=None)) == [QueryEcp(), Connect()]  # cannot tell: go on
    assert m.handle(Tick(11.0, free=2 << 30))[0] == Unsay("space")
    assert not machine().wants_free_space
