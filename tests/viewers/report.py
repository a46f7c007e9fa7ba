"""rokuprof's own HTML report in headless Chromium (Debian ``chromium``), driven by ``report.mjs``
through npm ``playwright-core``.

``open_reports()`` opens each file (served from 127.0.0.1; every other request is blocked and
recorded) and returns what the page did and, with ``drive=True``, what it showed after each step
of a scripted session (metric switch, zoom, hover, search, sorting, filters, a time range); with
``shots``, a PNG of each view. ``model()`` reads the data embedded in a report file.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.viewers import VIEWERS, missing, need_command, need_npm

CHROMIUM = Path("/usr/bin/chromium")
SCRIPT = VIEWERS / "report.mjs"
TIMEOUT_S = 175  # the script gives up on its own a few seconds earlier
_DATA = re.compile(r'<script id="report-data" type="application/json">(.*?)</script>', re.S)


def need_browser() -> None:
    need_command("node", "apt-get install nodejs")
    if not CHROMIUM.exists():
        missing("chromium", "apt-get install chromium")
    need_npm("playwright-core")


def steps_with(directory: Path, module: str, params: dict) -> Path:
    """A ``--steps`` module for report.mjs: ``tests/viewers/<module>``'s steps called with these
    parameters (a view's steps take ``(page, helpers, params)``)."""
    path = directory / "steps.mjs"
    target = (VIEWERS / module).as_uri()
    path.write_text(
        f'import run from "{target}";\n'
        f"export default (page, helpers) => run(page, helpers, {json.dumps(params)});\n"
    )
    return path


def open_reports(
    paths: list[Path],
    *,
    drive: bool = False,
    deep: bool = False,
    shots: Path | None = None,
    steps: Path | None = None,
    show_idle: bool = False,
) -> list:
    """One result dict per file (see report.mjs); ``deep``: the steps for a very deep call path
    (zoom through its levels, expand the call tree, its leak site); ``steps``: a module of steps
    of its own (its default export drives the page and returns what it saw); ``show_idle``: open
    the pages as for a reader who chose to show idle frames (the page hides them by default), for
    checks that compare its figures with every function's."""
    need_browser()
    args = ["node", str(SCRIPT)]
    if drive:
        args.append("--drive")
    if deep:
        args.append("--deep")
    if steps is not None:
        args += ["--steps", str(steps)]
    if show_idle:
        args.append("--show-idle")
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        args += ["--shots", str(shots)]
    proc = subprocess.run(
        [*args, *map(str, paths)], capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    assert proc.returncode == 0, f"report.mjs failed: {proc.stderr}"
    return json.loads(proc.stdout)["results"]


def model(html: str) -> dict:
    """The data model embedded in a report page."""
    m = _DATA.search(html)
    assert m, "no report data in the page"
    return json.loads(m.group(1))


def problems(result: dict) -> list[str]:
    """Everything that says the page did not load cleanly."""
    out = [f"console {m['type']}: {m['text']}" for m in result["console"]]
    out += [f"page error: {e}" for e in result["pageErrors"]]
    out += [f"dialog: {d}" for d in result["dialogs"]]
    out += [f"request to {u} (blocked)" for u in result["blockedRequests"]]
    return out
