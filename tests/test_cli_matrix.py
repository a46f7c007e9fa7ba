"""Every command, run as a real process, with good and bad inputs and its output in a pipe.

Each case asserts the exit status of the one table (rokuprof/exit_status.py), that no traceback
appears, that a usage error is one line on stderr, that ``--json`` output parses, and that
nothing written to a pipe carries terminal escapes. A case may write into a pipe whose reader
has already gone (``| head`` that stopped reading): it must say nothing and exit with the status
its work gave, never 1 (``diff --fail-over``'s regression). The cases run concurrently (each is a
separate ``python -m rokuprof``), against one simulated Roku on 127.0.0.1.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "cafe-tv-full.bsprof"
CUT = ROOT / "samples" / "cafe-tv-cut-short.bsprof"
TIMEOUT = 60.0
ANSI = re.compile(r"\x1b\[")


@dataclass
class Case:
    """One command line and what it must do."""

    name: str
    args: list[str]  # after `python -m rokuprof`; "{tmp}", "{sim.*}" are filled in
    status: int
    json: bool = False  # stdout is one JSON document
    json_lines: bool = False  # stdout is one JSON document per line
    one_line: bool = False  # stderr is exactly one line ("error: ..." for status 2)
    stdin: Path | None = None
    unwritable: bool = False  # run where a read-only directory really is read-only (root too)
    stop_when: str | None = None  # send SIGTERM once stderr has a line with this text
    closed_stdout: bool = False  # stdout is a pipe whose reader has gone (writes fail: EPIPE)
    check: Callable[[Result], None] | None = None
    result: Result | None = field(default=None, repr=False)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def _drop_root_file_powers() -> None:
    """In the child (root): lose CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH for good, so a 0555
    directory is read-only to it as to everyone else."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # PR_CAPBSET_DROP = 24
        if libc.prctl(24, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run(case: Case, fill: Callable[[str], str]) -> Result:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="80")
    env.pop("FORCE_COLOR", None)
    preexec = _drop_root_file_powers if case.unwritable and os.geteuid() == 0 else None
    args = [sys.executable, "-m", "rokuprof", *map(fill, case.args)]
    stdin = case.stdin.open("rb") if case.stdin else subprocess.DEVNULL
    stdout: int = subprocess.PIPE
    if case.closed_stdout:  # a pipe with no reader: every write gets EPIPE
        reader, stdout = os.pipe()
        os.close(reader)
    try:
        proc = subprocess.Popen(
            args,
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=env,
            cwd=fill("{tmp}"),
            preexec_fn=preexec,
        )
        if case.closed_stdout:
            os.close(stdout)
        try:
            head = b""
            if case.stop_when is not None:  # a service: stop it once it says it is ready
                while line := proc.stderr.readline():
                    head += line
                    if case.stop_when.encode() in line:  # its signal handlers are in place
                        proc.send_signal(signal.SIGTERM)
                        break
            out, err = proc.communicate(timeout=TIMEOUT)
            err = head + err
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            return Result(-9, (out or b"").decode(errors="replace"), err.decode(errors="replace"))
    finally:
        if case.stdin:
            stdin.close()
    out = out or b""
    return Result(proc.returncode, out.decode(errors="replace"), err.decode(errors="replace"))


# -- the simulated Roku and the files every case uses ----------------------------------------


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    """``rokuprof simulate`` on 127.0.0.1: short runs, one after another, its ports."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rokuprof", "simulate", "-j", "--run-seconds", "1",
         "--speed", "4", "--run-gap", "0.2", "--duration", "900"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    try:
        ports = json.loads(proc.stdout.readline())
        yield ports
    finally:
        proc.terminate()
        proc.communicate(timeout=30)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("matrix")
    (d / "empty.bsprof").write_bytes(b"")
    (d / "random.bsprof").write_bytes(b"\x00" + os.urandom(4095))  # \x00: never "b" of bsprof
    (d / "text.txt").write_text("hello, this is not a profile\n")
    data = SAMPLE.read_bytes()
    (d / "truncated.bsprof").write_bytes(data[: len(data) // 2])
    (d / "adir").mkdir()
    session = d / "session"
    session.mkdir()
    (session / "capture.bsprof").write_bytes(data)
    (d / "afile").write_text("not a directory\n")
    readonly = d / "readonly"
    readonly.mkdir()
    readonly.chmod(0o555)
    (d / "work").mkdir()
    (d / "bad.toml").write_text("[capture\nout = \n")
    (d / "empty.toml").write_text("")
    (d / "random.toml").write_bytes(os.urandom(512))
    return d


def capture_cases() -> list[Case]:
    """inspect, convert, export, report, diff: the same inputs."""
    cases: list[Case] = []
    inputs = {
        "good": ("{sample}", 0),
        "session-dir": ("{tmp}/session", 0),
        "missing": ("{tmp}/missing.bsprof", 2),
        "directory": ("{tmp}/adir", 2),
        "empty": ("{tmp}/empty.bsprof", 2),
        "random": ("{tmp}/random.bsprof", 2),
        "truncated": ("{tmp}/truncated.bsprof", 3),
    }
    for kind, (path, status) in inputs.items():
        bad = status == 2
        cases += [
            Case(f"inspect-{kind}", ["inspect", path, "--json"], status, json=not bad,
                 one_line=bad),
            Case(f"convert-{kind}", ["convert", path, "-o", f"{{tmp}}/work/conv-{kind}", "-j"],
                 status, json=not bad, one_line=bad,
                 check=_nothing_created(f"work/conv-{kind}") if bad else None),
            Case(f"export-{kind}",
                 ["export", path, "-f", "folded", "-o", f"{{tmp}}/work/exp-{kind}/"],
                 status, one_line=bad or status == 3,
                 check=_nothing_created(f"work/exp-{kind}") if bad else None),
            Case(f"report-{kind}", ["report", path, "-o", f"{{tmp}}/work/rep-{kind}.html"],
                 status, one_line=bad),
            Case(f"diff-{kind}", ["diff", "{sample}", path, "--json"], status, json=not bad,
                 one_line=bad),
        ]  # fmt: skip
    cases += [
        Case("inspect-stdin", ["inspect", "-", "-j"], 0, json=True, stdin=SAMPLE),
        Case("inspect-stdin-empty", ["inspect", "-"], 2, one_line=True, stdin=Path(os.devnull)),
        Case("inspect-pipe-text", ["inspect", "{sample}"], 0, check=_every_column),
        Case("convert-stdin", ["convert", "-", "-o", "{tmp}/work/conv-stdin"], 0, stdin=SAMPLE),
        # read as ns, the sample's 75 s of wall time is 75 ms: still 8 samples, since busy time is
        # conserved per thread (no chunk at all, exit 3: test_convert_cli)
        Case("convert-wall-unit-ns", ["convert", "{sample}", "-o", "{tmp}/work/conv-ns",
             "--wall-unit", "ns"], 0),
        Case("convert-out-is-file", ["convert", "{sample}", "-o", "{tmp}/afile"], 2,
             one_line=True),
        Case("convert-out-readonly", ["convert", "{sample}", "-o", "{tmp}/readonly/x"], 2,
             one_line=True, unwritable=True),
        Case("export-out-readonly", ["export", "{sample}", "-f", "folded", "-o",
             "{tmp}/readonly/x.folded"], 2, one_line=True, unwritable=True),
        Case("export-stdout", ["export", "-", "-f", "folded", "-o", "-"], 0, stdin=SAMPLE),
        Case("report-stdout", ["report", "{sample}", "-o", "-"], 0, check=_page_on_stdout),
        Case("report-stdout-open", ["report", "{sample}", "-o", "-", "--open"], 2,
             one_line=True),
        Case("report-out-readonly", ["report", "{sample}", "-o", "{tmp}/readonly/r.html"], 2,
             one_line=True, unwritable=True),
        *closed_stdout_cases(),
        Case("inspect-bad-option", ["inspect", "{sample}", "--top", "zero"], 2, one_line=True),
        Case("inspect-no-file", ["inspect"], 2, one_line=True),
        Case("unknown-command", ["frobnicate"], 2, one_line=True),
        Case("bare", [], 2, check=_help_on_stderr("rokuprof [OPTIONS] COMMAND", "inspect")),
        Case("bare-config", ["config"], 2, check=_help_on_stderr("rokuprof config", "check")),
    ]  # fmt: skip
    return cases


def closed_stdout_cases() -> list[Case]:
    """Output into a pipe whose reader has gone: quiet, and the status the work gave."""
    long = str(ROOT / "samples" / "cafe-tv-long.bsprof")
    cases = [
        ("inspect", ["inspect", "{sample}"], 0),
        ("inspect-json", ["inspect", "{sample}", "-j"], 0),
        ("inspect-truncated", ["inspect", "{tmp}/truncated.bsprof"], 3),
        ("diff", ["diff", "{sample}", long], 0),
        ("diff-json", ["diff", "{sample}", long, "-j"], 0),
        ("diff-fail-over-passes", ["diff", "{sample}", "{sample}", "--fail-over", "5"], 0),
        ("diff-fail-over-fails", ["diff", "{sample}", long, "--fail-over", "5"], 1),
        ("export-stdout", ["export", "{sample}", "-f", "speedscope", "-o", "-"], 0),
        ("export-file", ["export", "{sample}", "-f", "folded", "-o", "{tmp}/work/closed/"], 0),
        ("report-stdout", ["report", "{sample}", "-o", "-"], 0),
        ("convert", ["convert", "{sample}", "-o", "{tmp}/work/conv-closed"], 0),
        ("convert-json", ["convert", "{sample}", "-o", "{tmp}/work/conv-closed-j", "-j"], 0),
        ("version", ["--version"], 0),
    ]
    return [
        Case(f"closed-{name}", args, status, closed_stdout=True, check=_said_nothing)
        for name, args, status in cases
    ]


def device_cases() -> list[Case]:
    """watch, demo, simulate, discover, control, daemon, config check."""
    watch = ["watch", "127.0.0.1", "--profiler-port", "{sim.profiler}", "--ecp-port",
             "{sim.ecp}", "--console-port", "{sim.console}"]  # fmt: skip
    good_toml = (
        '[capture]\nout = "{tmp}/work/daemon"\n[[devices]]\nhost = "127.0.0.1"\n'
        "profiler_port = {sim.profiler}\necp_port = {sim.ecp}\nconsole_port = {sim.console}\n"
    )
    return [
        Case("watch-good", [*watch, "-o", "{tmp}/work/watch", "--runs", "1", "-j"], 0,
             json=True, check=_watch_session),
        Case("watch-good-pipe", [*watch, "-o", "{tmp}/work/watch2", "--runs", "1"], 0,
             check=_plain_log),
        Case("watch-good-closed", [*watch, "-o", "{tmp}/work/watch3", "--view", "plain",
             "--duration", "30"], 0, closed_stdout=True, check=_said_nothing),
        Case("watch-host-with-port", ["watch", "127.0.0.1:42411", "--duration", "5"], 2,
             one_line=True),
        Case("watch-empty-host", ["watch", "", "--duration", "5"], 2, one_line=True),
        Case("watch-bad-name", ["watch", "-bad-.example", "--duration", "5"], 2, one_line=True),
        Case("watch-out-is-file", [*watch, "-o", "{tmp}/afile", "--duration", "5"], 2,
             one_line=True),
        Case("watch-out-readonly", [*watch, "-o", "{tmp}/readonly/x", "--duration", "5"], 2,
             one_line=True, unwritable=True),
        Case("watch-port-out-of-range", [*watch, "--ecp-port", "70000"], 2, one_line=True),
        Case("demo-good", ["demo", "-o", "{tmp}/work/demo", "--seconds", "0.6",
             "--chunk-seconds", "0.2", "-j"], 0, json=True),
        Case("demo-out-is-file", ["demo", "-o", "{tmp}/afile"], 2, one_line=True),
        Case("demo-out-readonly", ["demo", "-o", "{tmp}/readonly/x"], 2, one_line=True,
             unwritable=True),
        Case("simulate-good", ["simulate", "--duration", "0.3", "-j"], 0, json_lines=True),
        Case("simulate-ports-out-of-range", ["simulate", "--devices", "3", "--base-port",
             "65530"], 2, one_line=True),
        Case("discover-good", ["discover", "--target", "127.0.0.1:{sim.ssdp}", "--bind",
             "127.0.0.1:0", "--timeout", "1", "-j"], 0, json=True, check=_found_one),
        Case("closed-discover", ["discover", "--target", "127.0.0.1:{sim.ssdp}", "--bind",
             "127.0.0.1:0", "--timeout", "1", "-j"], 0, closed_stdout=True,
             check=_said_nothing),
        Case("closed-config-check", ["config", "check", "{tmp}/good.toml"], 0,
             closed_stdout=True, check=_said_nothing),
        Case("discover-bad-target", ["discover", "--target", "127.0.0.1:99999"], 2,
             one_line=True),
        Case("control-good", ["control", "127.0.0.1", "status", "--console-port",
             "{sim.console}", "-j"], 0, json=True),
        Case("control-bad-host", ["control", "127.0.0.1:8080", "status"], 2, one_line=True),
        Case("control-bad-action", ["control", "127.0.0.1", "reboot"], 2, one_line=True),
        Case("control-unreachable", ["control", "127.0.0.1", "status", "--console-port",
             "{free_port}", "--timeout", "2"], 1, one_line=True),
        Case("config-good", ["config", "check", "{tmp}/good.toml", "-j"], 0, json=True,
             check=_write(good_toml, "good.toml")),
        Case("config-missing", ["config", "check", "{tmp}/missing.toml"], 2),
        Case("config-directory", ["config", "check", "{tmp}/adir"], 2),
        Case("config-empty", ["config", "check", "{tmp}/empty.toml", "--json"], 2, json=True),
        Case("config-random", ["config", "check", "{tmp}/random.toml"], 2),
        Case("config-truncated", ["config", "check", "{tmp}/bad.toml", "-j"], 2, json=True),
        Case("daemon-good", ["daemon", "-c", "{tmp}/good.toml"], 0, stop_when="daemon ready"),
        Case("daemon-missing", ["daemon", "-c", "{tmp}/missing.toml"], 2),
        Case("daemon-empty", ["daemon", "-c", "{tmp}/empty.toml"], 2),
        Case("daemon-random", ["daemon", "-c", "{tmp}/random.toml"], 2),
        Case("daemon-bad-level", ["daemon", "-c", "{tmp}/good.toml", "--log-level", "loud"], 2,
             one_line=True),
        Case("help-short", ["inspect", "-h"], 0, check=_help_looks_right),
    ]  # fmt: skip


# -- checks beyond status, traceback, lines and JSON -----------------------------------------


def _nothing_created(relative: str) -> Callable[[Result], None]:
    def check(result: Result) -> None:
        assert not (FILES / relative).exists(), f"{relative} was created"

    return check


def _said_nothing(result: Result) -> None:
    assert result.stderr == "", result.stderr  # no "Broken pipe", no "Exception ignored"


def _help_on_stderr(usage: str, command: str) -> Callable[[Result], None]:
    """A bare command or group: its help on stderr (nothing on stdout), as a usage error."""

    def check(result: Result) -> None:
        assert result.stdout == ""
        assert f"Usage: {usage}" in result.stderr and f"  {command} " in result.stderr

    return check


def _page_on_stdout(result: Result) -> None:
    """``report -o -``: the page on standard output, no file named ``-``, no summary line."""
    assert result.stdout.startswith("<!doctype html>") and result.stdout.endswith("</html>\n")
    assert not (FILES / "-").exists()


def _every_column(result: Result) -> None:
    lines = result.stdout.splitlines()
    header = next(line for line in lines if "function" in line and "module" in line)
    assert "self %" in header and "self CPU" in header and "file" in header


def _watch_session(result: Result) -> None:
    (session,) = json.loads(result.stdout)["sessions"]
    assert session["status"] == "complete" and session["release"] == "Café TV@2.4.1"
    assert session["environment"] == "production"


def _plain_log(result: Result) -> None:
    assert "waiting for an app run" in result.stdout and "1 run(s) captured" in result.stdout


def _found_one(result: Result) -> None:
    assert len(json.loads(result.stdout)) == 1


def _write(text: str, name: str) -> Callable[[Result], None]:
    def check(result: Result) -> None:
        pass

    check.prepare = (name, text)  # type: ignore[attr-defined]
    return check


def _help_looks_right(result: Result) -> None:
    assert "Usage: rokuprof inspect [OPTIONS] FILE" in result.stdout
    assert "-j, --json" in result.stdout and "<bool>" not in result.stdout
    assert "-h, --help" in result.stdout


CASES = capture_cases() + device_cases()
FILES = Path()  # set by the fixture below


@pytest.fixture(scope="module")
def results(sim, files) -> dict[str, Case]:
    """Every case, run concurrently (the command lines are independent)."""
    global FILES
    FILES = files
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        free_port = s.getsockname()[1]
    values = {"tmp": str(files), "sample": str(SAMPLE), "free_port": str(free_port)}
    values.update({f"sim.{k}": str(v) for k, v in sim.items()})

    def fill(text: str) -> str:
        for key, value in values.items():
            text = text.replace("{" + key + "}", value)
        return text

    for case in CASES:
        prepare = getattr(case.check, "prepare", None)
        if prepare:
            (files / prepare[0]).write_text(fill(prepare[1]))
    # watch cases first: the simulator serves one profiler client at a time, so they take turns
    watches = [c for c in CASES if c.name.startswith("watch-good")]
    daemon = next(c for c in CASES if c.name == "daemon-good")
    others = [c for c in CASES if c not in watches and c is not daemon]
    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=6) as pool:
        futures = {c.name: pool.submit(run, c, fill) for c in others}
        for case in [*watches, daemon]:  # one profiler client at a time
            case.result = run(case, fill)
        for case in others:
            case.result = futures[case.name].result()
    print(f"{len(CASES)} command lines in {time.monotonic() - start:.1f} s")
    return {c.name: c for c in CASES}


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_command(results: dict[str, Case], name: str) -> None:
    case = results[name]
    result = case.result
    assert result is not None
    where = f"{name}: exit {result.code}\nstdout: {result.stdout[-2000:]}\nstderr: {result.stderr}"
    assert result.code == case.status, where
    assert "Traceback" not in result.stdout + result.stderr, where
    assert not ANSI.search(result.stdout + result.stderr), where  # a pipe gets no escapes
    if case.one_line:
        lines = result.stderr.splitlines()
        assert len(lines) == 1, where
        if case.status == 2:
            assert lines[0].startswith("error: "), where
    if case.json:
        json.loads(result.stdout)
    if case.json_lines:
        assert result.stdout.strip(), where
        for line in result.stdout.splitlines():
            json.loads(line)
    if case.check is not None:
        case.check(result)


def test_head_closing_the_pipe_keeps_the_status() -> None:
    """``set -o pipefail; rokuprof inspect FILE | head -1`` (the issue's own line): the reader
    stops after one line while inspect still prints; the pipeline's status is inspect's own
    (0), whether or not a write found the pipe closed, and nothing is said."""
    script = f"set -o pipefail; {sys.executable} -m rokuprof inspect {SAMPLE} | head -1 >/dev/null"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for _ in range(3):  # the race is the reader's: each run must give the same answer
        proc = subprocess.run(["bash", "-c", script], capture_output=True, env=env, timeout=60)
        assert (proc.returncode, proc.stderr) == (0, b"")


@pytest.mark.parametrize(
    ("umask", "file_mode", "dir_mode"), [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)]
)
def test_offline_outputs_follow_the_umask(
    tmp_path: Path, umask: int, file_mode: int, dir_mode: int
) -> None:
    """export, report, convert, diff --html write as any command-line tool: 0666 and 0777 less
    the umask (the daemon's and watch's sessions stay owner-only, test_store_files)."""
    lines = [
        ["export", SAMPLE, "-f", "folded,sentry-v1", "-o", tmp_path / "exp" / "new"],
        ["report", SAMPLE, "-o", tmp_path / "r.html"],
        ["convert", SAMPLE, "-o", tmp_path / "conv"],
        ["diff", SAMPLE, SAMPLE, "--html", tmp_path / "d.html"],
    ]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args in lines:
        proc = subprocess.run(
            [sys.executable, "-m", "rokuprof", *map(str, args)],
            capture_output=True, env=env, timeout=TIMEOUT, preexec_fn=lambda: os.umask(umask),
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    made = [p for p in tmp_path.rglob("*")]
    assert len(made) > 8
    for path in made:
        want = dir_mode if path.is_dir() else file_mode
        assert path.stat().st_mode & 0o777 == want, f"{path}: {path.stat().st_mode & 0o777:o}"
