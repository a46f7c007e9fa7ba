"""The Pyroscope pusher against a fake Pyroscope on 127.0.0.1: each finished session's pprof
goes to ``/ingest`` once, retried after errors and hangs, never again once refused; and the
daemon with ``[pyroscope] url`` exports pprof and pushes it."""

from __future__ import annotations

import asyncio
import contextlib
import email.parser
import email.policy
import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from daemon_helpers import Running, daemon_config, record, sessions, sim
from hostile_servers import FloodingAnswer
from waiting import until

from rokuprof.daemon.config import ConfigError, build_config
from rokuprof.simulator import SimulatedDevice
from rokuprof.store.pyroscope import MARKER, PyroscopePusher, check_url, ingest_params

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
FAST = {"rescan_seconds": 0.05, "backoff_base": 0.01, "backoff_cap": 0.05, "timeout": 1.0}


@dataclass
class Push:
    query: dict[str, str]
    parts: dict[str, bytes]


@dataclass
class FakePyroscope:
    """Answers ``POST /ingest`` with scripted statuses (then 200); ``None`` = never answer."""

    script: list[int | None] = field(default_factory=list)
    pushes: list[Push] = field(default_factory=list)
    requests: int = 0

    async def __aenter__(self) -> FakePyroscope:
        self.closing = asyncio.Event()
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}/"
        return self

    async def __aexit__(self, *exc) -> None:
        self.closing.set()
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            lines = head.split("\r\n")
            method, target, _ = lines[0].split(" ")
            headers = {k.lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:] if x)}
            body = await reader.readexactly(int(headers.get("content-length", 0)))
            self.requests += 1
            status = self.script.pop(0) if self.script else 200
            if status is None:
                await self.closing.wait()  # never answer: the client must time out
                writer.close()
                return
            url = urlsplit(target)
            if method == "POST" and url.path == "/ingest" and 200 <= status < 300:
                message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
                    f"Content-Type: {headers['content-type']}\r\n\r\n".encode() + body
                )
                parts = {
                    p.get_param("name", header="content-disposition"): p.get_payload(decode=True)
                    for p in message.iter_parts()
                }
                query = {k: v[0] for k, v in parse_qs(url.query).items()}
                self.pushes.append(Push(query, parts))
            answer = b"ok" if status < 400 else b'{"message":"bad profile"}'
            wait = "Retry-After: 0\r\n" if status == 429 else ""  # as told: at once
            writer.write(
                f"HTTP/1.1 {status} X\r\nContent-Length: {len(answer)}\r\n{wait}"
                "Connection: close\r\n\r\n".encode()
                + answer
            )
            await writer.drain()
        writer.close()


def finished_session(root: Path, name: str, status: str = "complete") -> Path:
    session = root / "DEV1" / name
    session.mkdir(parents=True)
    shutil.copy(SAMPLES / "cafe-tv-cpu-only.bsprof", session / "capture.bsprof")
    (session / "capture.pb.gz").write_bytes(b"\x1f\x8b pprof of " + name.encode())
    rec = {
        "session": name,
        "status": status,
        "device": {"dir": "DEV1"},
        "app": {"name": "Café TV"},
        "start": "2026-11-23T10:00:00.000Z",
        "end": "2026-11-23T10:00:30.250Z",
    }
    (session / "session.json").write_text(json.dumps(rec))
    return session


async def pushing(pusher: PyroscopePusher, until_done, timeout: float = 10.0) -> None:
    task = asyncio.create_task(pusher.run())
    try:
        await until(until_done, timeout)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def rescanned(pusher: PyroscopePusher, done, times: int = 3):
    """A condition: ``done`` held when each of the pusher's last ``times`` scans of the disk
    began (what was sent is not sent again by a rescan)."""
    scans: list[bool] = []
    pending = pusher.pending

    def counted() -> list[Path]:
        scans.append(bool(done()))
        return pending()

    pusher.pending = counted
    return lambda: len(scans) >= times and all(scans[-times:])


async def test_each_finished_session_is_pushed_once_with_its_labels(tmp_path: Path) -> None:
    a = finished_session(tmp_path, "20261123T100000.000Z-aaaa")
    b = finished_session(tmp_path, "20261123T110000.000Z-bbbb")
    live = finished_session(tmp_path, "20261123T120000.000Z-cccc", status="streaming")
    async with FakePyroscope() as fake:
        pusher = PyroscopePusher(
            tmp_path, fake.url, name="roku.app", wall_clock=lambda: 1795428100.0, **FAST
        )
        marked = lambda: (a / MARKER).exists() and (b / MARKER).exists()  # noqa: E731
        await pushing(pusher, rescanned(pusher, marked))  # rescans: nothing is sent twice
    assert len(fake.pushes) == 2 and fake.requests == 2
    first = fake.pushes[0]
    assert first.parts["profile"] == (a / "capture.pb.gz").read_bytes()
    assert json.loads(first.parts["sample_type_config"])["wall"]["units"] == "samples"
    assert first.query == {
        "name": "roku.app{device=DEV1,app=Caf_TV}",
        "from": "1795428000",
        "until": "1795428031",
        "format": "pprof",
        "spyName": "rokuprof",
    }
    assert fake.pushes[1].parts["profile"] == (b / "capture.pb.gz").read_bytes()
    marker = json.loads((a / MARKER).read_text())
    assert marker["status"] == 200 and marker["at"] == "2026-11-23T10:01:40Z"  # the wall clock
    assert not (live / MARKER).exists()


async def test_errors_and_hangs_are_retried_refusals_are_not(tmp_path: Path) -> None:
    session = finished_session(tmp_path, "20261123T100000.000Z-aaaa")
    draws: list[float] = []
    async with FakePyroscope(script=[503, None, 429]) as fake:
        pusher = PyroscopePusher(tmp_path, fake.url, rng=lambda: draws.append(0.0) or 0.0, **FAST)
        await pushing(pusher, lambda: (session / MARKER).exists())
    assert len(fake.pushes) == 1 and fake.requests == 4 and pusher.stats.errors == 3
    assert len(draws) == 2  # a jitter draw per backoff (503, the hang), from the injected source
    assert json.loads((session / MARKER).read_text())["status"] == 200

    refused = finished_session(tmp_path, "20261123T110000.000Z-bbbb")
    async with FakePyroscope(script=[400]) as fake:
        pusher = PyroscopePusher(tmp_path, fake.url, **FAST)
        await pushing(pusher, rescanned(pusher, lambda: (refused / MARKER).exists()))
    assert fake.requests == 1 and fake.pushes == []
    assert json.loads((refused / MARKER).read_text()) | {"at": ""} == {
        "at": "",
        "status": 400,
        "refused": '{"message":"bad profile"}',
    }


async def test_an_endless_answer_is_read_up_to_its_cap(tmp_path: Path) -> None:
    session = finished_session(tmp_path, "20261123T100000.000Z-aaaa")
    async with FloodingAnswer(None) as peer:
        pusher = PyroscopePusher(tmp_path, f"http://127.0.0.1:{peer.port}", **FAST)
        await pushing(pusher, lambda: (session / MARKER).exists())
        await until(lambda: peer.gone, 5)
    assert json.loads((session / MARKER).read_text())["status"] == 200
    assert peer.connections == 1 and peer.gone[0] < peer.limit // 2


def test_ingest_params_and_urls() -> None:
    rec = {"device": {"dir": "x,y}"}, "start": "2026-11-23T10:00:00Z", "end": None}
    params = ingest_params("roku", rec)
    assert params["name"] == "roku{device=x_y,app=unknown}"
    assert int(params["until"]) > int(params["from"])
    assert check_url("http://127.0.0.1:4040") is None
    assert check_url("ftp://h") and check_url("http://h/?a=1") and check_url("4040")


def test_config_pyroscope_section() -> None:
    cfg = build_config({"pyroscope": {"url": "http://127.0.0.1:4040", "name": "tv"}}, env={})
    assert cfg.pyroscope.url == "http://127.0.0.1:4040" and cfg.pyroscope.name == "tv"
    assert "pprof" in cfg.capture.export  # what is pushed is the pprof export
    assert any(line.startswith("pyroscope: http://127.0.0.1:4040") for line in cfg.summary())
    with pytest.raises(ConfigError, match=r"pyroscope\.url: expected http"):
        build_config({"pyroscope": {"url": "127.0.0.1:4040"}}, env={})
    assert build_config({}, env={}).pyroscope.url is None


async def test_daemon_pushes_each_runs_pprof(tmp_path: Path) -> None:
    out = tmp_path / "out"
    async with FakePyroscope() as fake, SimulatedDevice(sim("PYRO1", seed=5)) as dev:
        cfg = daemon_config(out, [dev], None, pyroscope={"url": fake.url})
        async with Running(cfg, pyroscope={"rescan_seconds": 0.1}) as run:
            await until(lambda: any((s / MARKER).exists() for s in sessions(out)), 20)
            assert await run.finish() == 0
    [session] = sessions(out)
    assert fake.pushes[0].parts["profile"] == (session / "capture.pb.gz").read_bytes()
    assert record(session)["exports"]["pprof"]["file"] == "capture.pb.gz"
    assert fake.pushes[0].query["name"].startswith("roku{device=PYRO1,")
