"""``rokuprof profile`` as a real process against the simulated Roku on loopback: package,
sideload, capture, scenario, exit-app, report, and the ``--baseline`` gate."""

from __future__ import annotations

import hashlib
import io
import itertools
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from rokuprof.app.manifest import parse_manifest
from rokuprof.profile.reader import ProfileReader
from rokuprof.sentry import validate_chunk
from rokuprof.simulator import SimulatedDevice
from tests.profile_helpers import device, profile
from tests.viewers.report import model

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_APP = ROOT / "samples" / "app"

#: Three Down presses 0.4 s apart, a Select, marks around them: about 2.2 s of run.
SCENARIO = """
[[steps]]
wait = 0.4

[[steps]]
mark = "browse"

[[steps]]
press = "Down"
repeat = 3
interval = 0.4

[[steps]]
mark = "details"

[[steps]]
press = "Select"

[[steps]]
wait = 0.8
"""


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root``: its digest and modification time."""
    return {
        str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).digest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def only_session(out: Path) -> Path:
    [session] = [p.parent for p in out.glob("*/*/session.json")]
    return session


@pytest.fixture
def app_copy(tmp_path: Path) -> Path:
    """The sample app in a directory of the user's own, with a VCS folder beside its files."""
    app = tmp_path / "myapp"
    shutil.copytree(SAMPLE_APP, app)
    (app / ".git").mkdir()
    (app / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (tmp_path / "scenario.toml").write_text(SCENARIO)
    return app


async def test_profile_sideloads_drives_ends_and_reports(tmp_path: Path, app_copy: Path) -> None:
    before = tree_state(app_copy)
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app_copy), "--scenario", "scenario.toml", "--mem", "-o", "out"
        )
        remote = list(dev.remote_log)
        installed = dev.installed
    assert status == 0, out + err
    assert tree_state(app_copy) == before  # the user's files untouched
    assert installed is not None
    assert {k: installed[k] for k in ("bsprof_enable", "bsprof_data_dest", "run_as_process")} == {
        "bsprof_enable": "1",
        "bsprof_data_dest": "network",
        "run_as_process": "1",
    }
    assert installed["bsprof_enable_mem"] == "1"
    assert installed["title"] == parse_manifest((app_copy / "manifest").read_text())["title"]

    # The keys reached the device in order, at their planned times (0.4 s apart).
    keys = [(t, value) for t, kind, value in remote if kind == "keypress"]
    assert [value for _, value in keys] == ["Down", "Down", "Down", "Select"]
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(keys)]
    assert all(0.3 < gap < 0.7 for gap in gaps[:2]), gaps
    assert [kind for _, kind, _ in remote][-1] == "exit-app"

    session = only_session(tmp_path / "out")
    record = json.loads((session / "session.json").read_bytes())
    assert record["status"] == "complete"
    assert [m["label"] for m in record["marks"]] == ["browse", "details"]
    browse, details = record["marks"]
    assert 0.7 < details["offset"] - browse["offset"] < 1.3  # three presses, 0.4 s apart
    reader = ProfileReader.from_bytes((session / "capture.bsprof").read_bytes())
    assert reader.complete  # the device ended the stream with its footer (exit-app)

    chunks = [json.loads(p.read_bytes()) for p in sorted((session / "chunks").glob("*.json"))]
    assert all(validate_chunk(c) == [] for c in chunks)
    sent = {name for c in chunks for name in c.get("measurements", {})}
    assert {"mark.browse", "mark.details", "cpu_usage", "memory_footprint"} <= sent

    report = session / "report.html"
    page = report.read_text()
    assert "browse" in page and "details" in page
    assert f"report: {report.relative_to(tmp_path)}" in out
    assert "installed: Install Success." in out and "mark: browse" in out
    assert "POST /exit-app/dev" in out
    assert dev.password not in out + err


async def test_a_refused_password_installs_nothing(tmp_path: Path, app_copy: Path) -> None:
    async with SimulatedDevice(device()) as dev:
        status, _, err = await profile(
            dev, tmp_path, str(app_copy), "--duration", "1", "-o", "out", password="wrong"
        )
        assert dev.installed is None and dev.runs == []
    assert status == 2
    assert err.strip().splitlines() == [err.strip()]  # one line
    assert "refused the developer password" in err and "wrong" not in err
    assert not list((tmp_path / "out").rglob("*"))  # checked writable, nothing written


async def test_checks_come_before_anything_is_installed(tmp_path: Path, app_copy: Path) -> None:
    (tmp_path / "bad.toml").write_text('[[steps]]\npress = "Dwn"\n')
    async with SimulatedDevice(device()) as dev:
        status, _, err = await profile(dev, tmp_path, str(app_copy), "--scenario", "bad.toml")
        assert (status, dev.installed) == (2, None)
        assert "step 1: press: 'Dwn' is not an ECP key; did you mean 'Down'?" in err
        (tmp_path / "deep.toml").write_text("a = " + "[" * 50_000 + "\n")
        status, _, err = await profile(dev, tmp_path, str(app_copy), "--scenario", "deep.toml")
        assert (status, dev.installed) == (2, None) and "Traceback" not in err  # exit 1 before
        assert err.strip() == (
            "error: deep.toml: not valid TOML: arrays or tables nested more than 100 deep "
            "(at line 1, column 105)"
        )
        status, _, err = await profile(dev, tmp_path, str(tmp_path / "nowhere"), "--duration", "1")
        assert (status, dev.installed) == (2, None) and "nowhere" in err
        status, _, err = await profile(dev, tmp_path, str(app_copy), "--fail-over", "10")
        assert status == 2 and "--fail-over needs --baseline" in err
        bad_link = "javascript:alert(1)//{path}"
        status, _, err = await profile(dev, tmp_path, str(app_copy), "--editor-url", bad_link)
        assert status == 2 and "a javascript: link is refused" in err
        assert dev.installed is None


async def test_the_gate_fails_a_slower_build_and_passes_the_same_one(
    tmp_path: Path, app_copy: Path
) -> None:
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app_copy), "--scenario", "scenario.toml", "-o", "base"
        )
    assert status == 0, out + err
    baseline = only_session(tmp_path / "base")

    gate = ("--baseline", str(baseline), "--fail-over", "50")
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app_copy), "--scenario", "scenario.toml", "-o", "same", *gate
        )
    assert status == 0, out + err
    assert "--fail-over 50 %: passed: no verdict regressed or unknown" in out

    slower = device(app_slower=(("describe", 4.0),))  # samples/app's ContentTask.brs
    async with SimulatedDevice(slower) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app_copy), "--scenario", "scenario.toml", "-o", "slow", *gate
        )
    assert status == 1, out + err
    verdict = out.split("--fail-over 50 %: failed: ")[-1].splitlines()[0]
    # A counter moved (CPU operations: judged with one run a side), and the line says by how
    # much and from what to what (per second of run when the two runs' lengths differ).
    assert re.match(
        r"describe CPU operations \+\d+\.\d % \([\d,]+(/s)? vs [\d,]+(/s)?\)", verdict
    ), verdict
    explained = [line for line in out.splitlines() if line.strip().startswith("describe: CPU")]
    assert explained and explained[0].rstrip().endswith("1 run vs 1 run, p = 1.000 → regressed")
    assert (only_session(tmp_path / "slow") / "report.html").exists()  # reported all the same


def test_the_packaged_zip_is_what_the_device_got(tmp_path: Path, app_copy: Path) -> None:
    """The zip profile builds (the same function, in-process) skips the VCS folder and keeps
    every other manifest line."""
    from rokuprof.app.manifest import ProfilerKeys
    from rokuprof.app.package import package_app

    packaged = package_app(app_copy, ProfilerKeys(lines=True))
    names = zipfile.ZipFile(io.BytesIO(packaged.zip_bytes)).namelist()
    assert "manifest" in names and not any(n.startswith(".git") for n in names)
    assert "scenario.toml" not in names  # the sample's .rokuignore
    original = (app_copy / "manifest").read_text().splitlines()
    shipped = zipfile.ZipFile(io.BytesIO(packaged.zip_bytes)).read("manifest").decode()
    kept = [line for line in original if not line.startswith(("bsprof_", "run_as_process"))]
    assert all(line in shipped.splitlines() for line in kept)
    assert "bsprof_enable_lines=1" in shipped and "rsg_version=1.2" in shipped


async def test_a_rokuignore_of_many_stars_is_matched_in_linear_time(
    tmp_path: Path, app_copy: Path
) -> None:
    """A pattern a backtracking matcher needs minutes for beside a name of 60 "a" (at 0e83a1a:
    killed after 150 s of CPU): the app is packaged, sideloaded and captured in seconds."""
    (app_copy / ".rokuignore").write_text("scenario.toml\n" + "*a" * 12 + "*b\n")
    (app_copy / ("a" * 60)).write_text("kept: no b in its name\n")
    (app_copy / ("a" * 60 + "b")).write_text("left out\n")
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app_copy), "--duration", "1", "-o", "out", timeout=30
        )
    assert status == 0, out + err
    assert json.loads((only_session(tmp_path / "out") / "session.json").read_text())["status"] == (
        "complete"
    )


async def test_the_report_shows_the_apps_source(tmp_path: Path, app_copy: Path) -> None:
    """profile passes the app it packaged to the report (report --source): the hot functions'
    lines of the user's files, with links to them (--editor-url)."""
    async with SimulatedDevice(device()) as dev:
        status, out, err = await profile(
            dev, tmp_path, str(app_copy), "--duration", "1.5", "--lines", "-o", "out",
            "--editor-url", "idea://open?file={path}&line={line}",
        )  # fmt: skip
    assert status == 0, out + err
    page = (only_session(tmp_path / "out") / "report.html").read_text()
    data = model(page)
    source, strings = data["source"], data["strings"]
    assert source["label"] == "myapp" and source["editor"] == "idea://open?file={path}&line={line}"
    files = {strings[f[0]]: f for f in source["files"]}
    scene = "pkg:/components/HomeScene.brs"
    shown = [line for _, lines in files[scene][2] for line in lines]
    text = (app_copy / "components" / "HomeScene.brs").read_text().splitlines()
    assert shown and all(line in text for line in shown)
    assert "sub loadContent(mode as String, itemId as String)" in shown
    paths = {strings[s]: p for s, p in source["paths"]}
    assert paths[scene] == str(app_copy.resolve() / "components" / "HomeScene.brs")
